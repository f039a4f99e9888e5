"""Command-line argument parsing for the admin tool."""
import argparse


def parse_args(argv=None):
    """Parse flags: --config PATH, --verbose, and a subcommand (migrate, serve, create-user)."""
    parser = argparse.ArgumentParser(prog="admin")
    parser.add_argument("--config", default="config.json", help="path to the configuration file")
    parser.add_argument("--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("migrate")
    sub.add_parser("serve")
    create = sub.add_parser("create-user")
    create.add_argument("email")
    return parser.parse_args(argv)

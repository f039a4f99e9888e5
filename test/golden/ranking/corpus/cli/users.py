"""Create users from the admin tool."""
import hashlib
import os


def hash_password(password, salt=None):
    """Hash a password with PBKDF2-SHA256 and a random salt."""
    salt = salt or os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, 200_000)
    return salt.hex() + ":" + digest.hex()


def create_user(db, email, password):
    """Insert a user; raises ValueError when the email is already taken."""
    if db.find_user(email):
        raise ValueError(f"user {email} already exists")
    return db.insert_user(email, hash_password(password))

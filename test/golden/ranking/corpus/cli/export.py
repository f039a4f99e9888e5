"""Export tables to CSV files."""
import csv


def export_csv(rows, path, columns):
    """Write rows (dicts) to a CSV file with a header line, in the given column order."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow(row)

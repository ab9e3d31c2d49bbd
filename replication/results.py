"""Results as JSON lines: each finished point appended and flushed at once, read back with resume in mind."""

import json
import os
import pathlib
import warnings


def append_record(path, record):
    """Append one JSON record as a line and push it to disk before returning."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as stream:
        stream.write(json.dumps(record, sort_keys=True) + "\n")
        stream.flush()
        os.fsync(stream.fileno())


def read_records(path, repair=False):
    """The records of a JSON-lines file; a truncated last line is reported and ignored.

    With repair=True the truncated tail is also cut from the file, so that appending goes on cleanly.
    A damaged line anywhere else is an error: it means the file was edited, not interrupted.
    """
    path = pathlib.Path(path)
    if not path.exists():
        return []
    text = path.read_text()
    lines = text.split("\n")
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            if number != len(lines):
                raise ValueError(f"{path}: line {number} is not valid JSON") from None
            warnings.warn(f"{path}: ignored a truncated last line ({len(line)} characters) left by an interrupted run",
                          stacklevel=2)
            if repair:
                path.write_text(text[: len(text) - len(line)])
            return records
    if repair and text and not text.endswith("\n"):
        with path.open("a") as stream:  # a complete last record whose newline was not written yet
            stream.write("\n")
    return records

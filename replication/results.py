"""Results as JSON lines: each finished point appended and flushed at once, read back with resume in mind."""

import json
import math
import os
import pathlib
import warnings


def strict(value):
    """value with every non-finite float replaced by null (strict JSON has no NaN); a record that held one says
    so under "null": "not finite", the reason its nulls stand for."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        cleaned = {key: strict(item) for key, item in value.items()}
        if cleaned != value and "null" not in cleaned and any(item is None for item in cleaned.values()):
            cleaned["null"] = "not finite"
        return cleaned
    if isinstance(value, (list, tuple)):
        return [strict(item) for item in value]
    return value


def dumps(content, **options):
    """Strict JSON of content (non-finite numbers as null, see strict)."""
    return json.dumps(strict(content), allow_nan=False, sort_keys=True, **options)


def append_record(path, record):
    """Append one JSON record as a line and push it to disk before returning."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as stream:
        stream.write(dumps(record) + "\n")
        stream.flush()
        os.fsync(stream.fileno())


def write_json(path, content):
    """Write a JSON file atomically: the old content or the new one, never half of either."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w") as stream:
        stream.write(dumps(content, indent=1))
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, path)


def replace_text(path, text):
    """Replace a file's content with text through a temporary file renamed over it: where the write fails (a
    full disk, a file-size limit) the original is left exactly as it was, and the error says so."""
    path = pathlib.Path(path)
    temporary = path.with_name(path.name + ".repair")
    try:
        with temporary.open("w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise OSError(f"{path}: could not repair its torn last line ({error}); the file is left as it was") from None


def write_text_if_changed(path, text):
    """Write text to path unless it already holds exactly that (the file and its date then stay)."""
    path = pathlib.Path(path)
    if not (path.exists() and path.read_text() == text):
        path.write_text(text)
    return path


class RunError(ValueError):
    """Input the harness refuses: a run folder, a record file or an option that cannot be used as asked
    (read-only, taken by another writer, not a run, damaged, out of range). The command line prints it as one
    line (exit status 2)."""


NUMBER = (int, float)


def is_a(value, kind):
    """isinstance, except that a bool is neither an int nor a float here."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return bool in kinds if isinstance(value, bool) else isinstance(value, kinds)


def kind_name(kind):
    """'int', 'a number', 'a number or null': what a schema entry admits, in words."""
    if isinstance(kind, tuple):
        return "a number or null" if type(None) in kind else "a number"
    return kind.__name__


def check_record(path, number, record, schema):
    """A record with every key of schema, each of its type ({key: type, or (type, ...), or a nested schema})."""
    if not isinstance(record, dict):
        raise ValueError(f"{path}: line {number} is not a record (got {json.dumps(record)})")
    for key, kind in schema.items():
        if key not in record:
            raise ValueError(f"{path}: line {number} has no key {key!r}")
        value = record[key]
        if isinstance(kind, dict):
            check_record(path, number, value, kind)
        elif not is_a(value, kind):
            raise ValueError(f"{path}: line {number}, key {key!r}: expected {kind_name(kind)}, got {json.dumps(value)}")
    return record


def read_records(path, repair=False, schema=None, check=None):
    """The records of a JSON-lines file; a truncated last line is reported and ignored.

    With repair=True the truncated tail is also cut from the file, so that appending goes on cleanly.
    A damaged line anywhere else is an error: it means the file was edited, not interrupted. With a schema
    (or a check(path, number, record) function), every record is validated and a bad one is an error naming
    the file, the line and the key.
    """
    path = pathlib.Path(path)
    if not path.exists():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start}); the file is damaged"
                         ) from None
    lines = text.split("\n")
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if number != len(lines):
                raise ValueError(f"{path}: line {number} is not valid JSON") from None
            warnings.warn(f"{path}: ignored a truncated last line ({len(line)} characters) left by an interrupted run",
                          stacklevel=2)
            if repair:
                replace_text(path, text[: len(text) - len(line)])
            return records
        if schema is not None:
            check_record(path, number, record, schema)
        if check is not None:
            check(path, number, record)
        records.append(record)
    if repair and text and not text.endswith("\n"):
        with path.open("a") as stream:  # a complete last record whose newline was not written yet
            stream.write("\n")
    return records

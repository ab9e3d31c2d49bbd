"""What every record file shares: one record per key (once_each), vectors of the right size, the session
records (runs.jsonl), JSON files read with their lists checked. Each study's own records are in its records module."""

from __future__ import annotations

import json
import math
import pathlib
import re
import zipfile
from typing import Annotated, Literal

import msgspec
import numpy as np

from oof_common.limits import MAX_NPIX, MAX_NZERN, MIN_NPIX
from replication.core import registry
from replication.core.results import NotStrictJSON, RunError, dumps, is_a, loads, read_records

RECORD_SCHEMA = 2
"""Version of the point and retrieval records written now (key "schema"; records without it are version 1, which
each study's records module migrates: `python -m replication migrate`)."""
OLDER_GRADIENTS = {"analytic": "adjoint"}
"""Gradient names version-1 records use for what is now called otherwise (the migrations read them)."""
MIGRATE = "python -m replication migrate --run <its folder>"
"""The command that brings a run's records written by older code into today's schema."""


def migrated_fit(record: dict) -> dict:
    """A point or retrieval record of version 1 (it names no schema) with its series in today's names
    (RECORD_SCHEMA): the adjoint's older name (OLDER_GRADIENTS), scipy's BFGS where it names no minimizer; any other
    record as it is."""
    if "schema" in record:
        return record
    gradient = record.get("gradient", "")
    return record | {"gradient": OLDER_GRADIENTS.get(gradient, gradient),
                     "minimizer": record.get("minimizer") or "scipy", "schema": RECORD_SCHEMA}


def check_schema(path, number, found, current, place: str = "line") -> None:
    """Refuse a record of another version than the one read now (found: its version, 1 where it says none), naming
    the migration that brings an older one up to date."""
    if isinstance(found, bool) or not isinstance(found, int):
        raise RunError(f"{path}: {place} {number}, key 'schema': expected an integer, got {json.dumps(found)[:80]}")
    if found != current:
        older = "older" if found < current else "newer"
        raise RunError(f"{path}: {place} {number}: written by {older} code (schema {found}; this code reads {current})"
                       + (f"; bring it up to date with `{MIGRATE}`" if found < current else ""))


class Record(msgspec.Struct, kw_only=True):
    """A record kind as a typed model (msgspec): each field the readers use, with its type; keys a model does not
    name are kept and not checked (an older or newer record's extras). A record is checked against its model as it is
    read and before it is written (as_written), so that what the model admits is what every reader handles."""


Number = float
"""A number (an int or a float; never a bool: models are checked strictly)."""
MaybeNumber = float | None
"""A number the writer may have recorded as null because it was not finite (see MAYBE_NUMBER)."""
Seconds = Annotated[float, msgspec.Meta(gt=0)]
"""A time (seconds), positive."""
Count = Annotated[int, msgspec.Meta(ge=0)]
"""A count (evaluations, iterations, repeats), not negative."""
Vector = list[float | None]
"""One number per parameter (null: not finite); its length is checked against the record's parameter count."""
GridSize = Annotated[int, msgspec.Meta(ge=MIN_NPIX, le=MAX_NPIX)]
"""A model grid's size (pixels a side), as make_setup accepts it."""
Order = Annotated[int, msgspec.Meta(ge=1, le=MAX_NZERN)]
"""A Zernike order, as make_setup accepts it."""
Orders = Annotated[list[Order], msgspec.Meta(min_length=1)]
"""The orders of a ladder, at least one."""
Seed = Annotated[int, msgspec.Meta(ge=0)]
"""A random generator's seed."""


class FitEnd(Record):
    """How a fit ended, as every record of one holds it: scipy's (or the on-device BFGS's) counts, whether it
    succeeded and why it stopped, the objective and the parameters there."""

    nit: Count
    nfev: Count
    success: bool
    message: str
    fun: MaybeNumber
    x: Vector


def check_typed(path, number, record, model: type[Record], place: str = "line") -> dict:
    """record checked against its model (strictly: no conversion of a string to a number or of a number to a bool);
    an error names the file, the place (a line, an item of a list) and the field, in one line."""
    try:
        msgspec.convert(record, type=model, strict=True)
    except msgspec.ValidationError as error:
        raise RunError(f"{path}: {place} {number}{field_problem(str(error))}") from None
    return record


def as_typed(path, number, record, model: type[Record], place: str = "line") -> Record:
    """record as its model's value (a reader's typed record), or check_typed's one-line refusal."""
    try:
        return msgspec.convert(record, type=model, strict=True)
    except msgspec.ValidationError as error:
        raise RunError(f"{path}: {place} {number}{field_problem(str(error))}") from None


WORDS = (("`float | null`", "a number or null"), ("`float`", "a number"), ("`array`", "a list"),
         ("`object`", "a record"), ("`array | null`", "a list or null"), ("`object | null`", "a record or null"))
"""msgspec's names of JSON kinds, in the words the harness's other refusals use."""


def field_problem(message: str) -> str:
    """msgspec's 'Expected `int`, got `str` - at `$.outcome.nit`' as ", key 'outcome.nit': expected int, got str";
    a missing field as " has no key 'outcome.nit'"."""
    what, _, where = message.partition(" - at `$")
    where = where.rstrip("`").lstrip(".")
    missing = re.fullmatch(r"Object missing required field `(.*)`", what)
    if missing:
        return f" has no key '{where + '.' if where else ''}{missing.group(1)}'"
    for kind, words in WORDS:
        what = what.replace(kind, words)
    what = what.replace("`", "")
    what = what[:1].lower() + what[1:]
    return f", key '{where}': {what}" if where else f": {what}"


MAYBE_NUMBER = (int, float, type(None))
"""A number the writer may have recorded as null because it was not finite (results.strict): a standard error or
Newton step of an indefinite Hessian, the objective of a fit that diverged. Read back as null and judged as such
(Account.judging_newton reads it as NaN: not at a minimum)."""


def once_each(key_of, what, identical_too=False, replaces=None):
    """A read_records check that refuses a second record of the same key (a point and series, a fit), naming both
    lines: a different one always (which would the report use?), an identical one where identical_too (a reference
    run holds each record once); except where replaces(earlier, record) says the later one replaces the earlier."""
    seen = {}

    def check(path, number, record):
        key = key_of(record)
        if key not in seen or (replaces is not None and replaces(seen[key][1], record)):
            seen[key] = (number, record)
            return
        first, earlier = seen[key]
        if identical_too or earlier != record:
            same = "the same record twice" if earlier == record else "two different records"
            raise RunError(f"{path}: lines {first} and {number} hold {same} of one {what} ({describe_key(key)}); "
                           "a run holds one record of each: keep the right one")

    return check


def describe_key(key):
    """A record's key in words: its parts joined, empty ones left out (a key of one part: that part)."""
    parts = key if isinstance(key, tuple) else (key,)
    return ", ".join(str(part) for part in parts if part not in ("", None))


def check_vectors(path, number, vectors, size, place="line"):
    """Each of vectors ({key: list or None}) a list of size numbers (null for a number that was not finite, read
    back as NaN in place)."""
    for key, vector in vectors.items():
        if vector is None:
            continue
        if not isinstance(vector, list) or len(vector) != size or not all(is_a(v, MAYBE_NUMBER) for v in vector):
            raise RunError(f"{path}: {place} {number}, key {key!r}: expected {size} numbers (one per parameter), "
                           f"got {json.dumps(vector)[:80]}")
        vector[:] = [math.nan if value is None else value for value in vector]  # recorded null: not finite


def as_written(path, number, record, validate):
    """record stamped with RECORD_SCHEMA, checked as a reader will read it back (its strict JSON, validate), before
    it is written: a record its own reader would refuse is a fault of the writer, raised here, not found later."""
    record = record | {"schema": RECORD_SCHEMA}
    validate(path, number, json.loads(dumps(record)))
    return record


def read_keyed(path, validate, key_of, what, repair, strict, replaces=None):
    """The records of a JSON-lines file, each validated, at most one per key (once_each; the caller drops the records
    replaced, where replaces allows any)."""
    unique = once_each(key_of, what, identical_too=strict, replaces=replaces)

    def check(path, number, record):
        validate(path, number, record)
        unique(path, number, record)

    return read_records(path, repair=repair, check=check)


def read_typed(path, validate, key_of, what, repair=False, strict=False, replaces=None) -> list:
    """The records of a JSON-lines file as their typed values: validate(path, number, record) returns a record's
    value (its model's, checked), key_of reads that value, at most one per key (once_each; the caller drops the records
    replaced, where replaces allows any)."""
    unique = once_each(key_of, what, identical_too=strict, replaces=replaces)
    values = []

    def check(path, number, record):
        value = validate(path, number, record)
        unique(path, number, value)
        values.append(value)

    read_records(path, repair=repair, check=check)
    return values


def latest_of_each(records: list, key_of) -> list:
    """records, keeping of each key only its last record, in the order read."""
    last = {key_of(record): number for number, record in enumerate(records)}
    return [record for number, record in enumerate(records) if last[key_of(record)] == number]


class Mirror(Record):
    """C6 of a run's own model code: the share of lines alike between the trees, over how many lines (of the modules
    that differ); the lines alike and those of byte-identical modules, where recorded."""

    share: Number
    total: Count
    same: Count | None = None
    identical_lines: Count | None = None


class ModelCode(Record):
    """The model code a session measured with (model_code.identity): its hash, each module's, and C6 of it."""

    hash: str
    modules: dict[str, str]
    mirror: Mirror | None = None


class Blas(Record):
    internal_api: str | None = None
    num_threads: int | None = None
    version: str | None = None
    architecture: str | None = None


Environment = msgspec.defstruct(
    "Environment", [("date", str), ("hostname", str), ("cpu", str), ("cpu_count", Annotated[int, msgspec.Meta(ge=1)]),
                    ("gpu", str | None), ("threads", Annotated[int, msgspec.Meta(ge=1)]), ("torch_threads", int),
                    ("python", str), ("git_commit", str | None),
                    *((key, str) for key in registry.version_keys()),
                    ("model_code", ModelCode | None, None), ("blas", list[Blas] | None, None),
                    ("allocator_env", dict[str, str | None] | None, None), ("malloc_kept", bool | None, None),
                    ("cuda_available", bool | None, None), ("cuda_version", str | None, None),
                    ("scipy_fft_workers", int | None, None),
                    ("threads_chosen_by", Literal["--threads", "resumed", "free cores"] | None, None),
                    ("others_busy_cores_at_start", Annotated[float, msgspec.Meta(ge=0)] | None, None)],
    bases=(Record,), kw_only=True, module=__name__)
"""What every session records of the machine and the software (environment.environment_record), in a runs.jsonl, a
cross-check or a bench: what the appendices print, and the model code the report compares with main's."""


RunRecord = msgspec.defstruct("RunRecord", [("run_id", str)], bases=(Environment,), kw_only=True, module=__name__)
"""A session's record in a runs.jsonl: its environment and its run id."""


def check_environment(path, number, record, place="line"):
    """An environment record (Environment), its machine's names in MACHINE_TEXT."""
    check_typed(path, number, record, Environment, place)
    check_machine_text(path, "", record, number)


def check_run_record(path, number, record):
    check_typed(path, number, record, RunRecord)
    check_machine_text(path, "", record, number)


def read_run_records(path: pathlib.Path) -> list[RunRecord]:
    """The session records of a retrieval's, the real maps' or the closure's runs.jsonl, validated and typed."""
    return [as_typed(path, number, record, RunRecord)
            for number, record in enumerate(read_records(path, check=check_run_record), 1)]


def load_json(path: pathlib.Path, lists: tuple[str, ...] = ()) -> dict | None:
    """A JSON results file (a record whose keys in lists hold lists of records), or None where it was not
    produced; a damaged one is an error naming the file and what is wrong."""
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not path.is_file():
        raise RunError(f"{path}: not a regular file (a link, a folder or a special file); a run's records are plain "
                       "files")
    try:
        content = loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError, NotStrictJSON) as error:
        raise RunError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(content, dict):
        raise RunError(f"{path}: not a record (got {type(content).__name__})")
    for key in lists:
        if not isinstance(content.get(key, []), list) or not all(isinstance(item, dict) for item in content.get(
                key, [])):
            raise RunError(f"{path}: key {key!r} must be a list of records")
    return content


MACHINE_TEXT = re.compile(r"(?:[^\W_]|[ ()+\-.,@/:])*")
"""The characters of a CPU's or a GPU's name as runs record and the report shows it: letters, digits, spaces and
()+-.,@/: (anything else a machine reports is written as a space, machine_text)."""


def machine_text(name):
    """A CPU's or GPU's name in the characters of MACHINE_TEXT (others as spaces, spaces collapsed)."""
    return " ".join(re.sub(r"[^ ()+\-.,@/:\w]|_", " ", str(name)).split())


def check_machine_text(path, prefix, record, number=None):
    """Refuse a record whose cpu or gpu name leaves MACHINE_TEXT (the report shows them as written)."""
    for key in ("cpu", "gpu"):
        value = record.get(key)
        if isinstance(value, str) and not MACHINE_TEXT.fullmatch(value):
            where = f"{path}: line {number}, key" if number is not None else f"{path}: key"
            raise RunError(f"{where} '{prefix}{key}': letters, digits, spaces and ()+-.,@/: only, got {value!r}")


def load_arrays(path: pathlib.Path) -> dict:
    """{name: array} of a NumPy .npz record (plain arrays only, no pickled objects), or a RunError naming the file
    where it is no such file."""
    path = pathlib.Path(path)
    if path.is_symlink() or not path.is_file():
        raise RunError(f"{path}: missing or not a regular file")
    try:  # the file opened here, so that it is closed whatever np.load makes of it
        with path.open("rb") as stream:
            saved = np.load(stream, allow_pickle=False)
            if not isinstance(saved, np.lib.npyio.NpzFile):
                raise ValueError("one .npy array, not an .npz archive")
            with saved:
                return {name: saved[name] for name in saved.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        raise RunError(f"{path}: not a readable NumPy .npz of plain arrays ({str(error)[:80]})") from None


def load_array(path: pathlib.Path, name: str, ndim: int) -> np.ndarray:
    """One array of numbers, `ndim` axes, from an .npz record, as float64; a RunError naming the file and the array
    where it is missing or is not that."""
    arrays = load_arrays(path)
    array = arrays.get(name)
    if array is None or array.dtype.kind not in "iuf" or array.ndim != ndim:
        found = "absent" if array is None else f"{array.dtype} of shape {array.shape}"
        raise RunError(f"{path}: array {name!r}: expected numbers in {ndim} axes, got {found}")
    return array.astype(np.float64)

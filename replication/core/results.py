"""Results as JSON lines: each finished point appended and flushed at once, read back with resume in mind."""

import contextlib
import dataclasses
import json
import math
import os
import pathlib
import stat
import warnings

from replication.core import paths


class RunError(ValueError):
    """Input the harness refuses: a run folder, a record file or an option that cannot be used as asked
    (read-only, taken by another writer, not a run, damaged, out of range, a link). The command line prints it as
    one line (exit status 2)."""


@dataclasses.dataclass(frozen=True)
class Guard:
    """Where the harness may write now: inside these folders (resolved), and into the committed report's and
    figures' folders only where committed (the rendering of the reference runs alone)."""

    folders: tuple
    committed: bool = False


_GUARDS = []
"""The guards in force, innermost last (writing_into)."""


def resolved(path):
    """path resolved through every link, or a RunError naming it (a link loop, an unreadable link)."""
    try:
        return pathlib.Path(path).resolve()
    except (OSError, RuntimeError) as error:
        raise RunError(f"{path}: cannot be followed ({error}); a link loop or a broken link?") from None


def links_inside(folder):
    """Every symbolic link inside folder (files and folders, not followed), sorted."""
    found = []
    for parent, folders, files in os.walk(folder, followlinks=False):
        found += [pathlib.Path(parent) / name for name in folders + files if os.path.islink(os.path.join(parent, name))]
    return sorted(found)


def refuse_links_inside(folder):
    """Refuse a folder holding a link anywhere inside it: a run holds its own files only, and a link would let a
    writer change a file elsewhere (a reference run's) or a reader take another run's records for this one's."""
    found = links_inside(folder)
    if found:
        raise RunError(f"{found[0]}: a link inside {folder}; a run folder holds its own files only (remove the link)")


@contextlib.contextmanager
def writing_into(*folders, committed=False):
    """Within the block every file the harness writes is checked first (check_target): it must lie, through every
    link, inside one of folders, outside the reference runs, and outside the committed report and figures unless
    committed. The folders are checked for links at once."""
    for folder in folders:
        if pathlib.Path(folder).exists():
            refuse_links_inside(folder)
    _GUARDS.append(Guard(tuple(resolved(folder) for folder in folders), committed))
    try:
        yield
    finally:
        _GUARDS.pop()


def check_target(path):
    """Refuse to write or replace the file at path where it, resolved through every link, lies inside the
    reference runs, inside the committed report or figures (unless the guard in force is the committed rendering),
    or outside the folders of the guard in force; where path is itself a link, exists as anything but a regular
    file (a folder, a FIFO, a device), or is a file with another hard link (writing it would change the other name's
    content too). Returns path."""
    path = pathlib.Path(path)
    target = resolved(path)
    guard = _GUARDS[-1] if _GUARDS else Guard(())
    if path.is_symlink():
        raise RunError(f"{path}: a link; the harness writes only files of its own (remove the link)")
    status = existing_status(path)
    if status is not None and not stat.S_ISREG(status.st_mode):
        raise RunError(f"{path}: not a regular file (a folder, a FIFO or a device); the harness writes only files of "
                       "its own")
    if status is not None and status.st_nlink > 1:
        raise RunError(f"{path}: a file with {status.st_nlink} hard links; writing it would change the other names' "
                       "content too (copy it to a file of its own)")
    if target.is_relative_to(paths.REFERENCE.resolve()):
        raise RunError(f"{path}: leads into the reference runs ({paths.REFERENCE}), which are read-only")
    if not guard.committed and any(target.is_relative_to(folder.resolve()) for folder in (paths.PAPER, paths.FIGURES)):
        raise RunError(f"{path}: leads into the committed report or figures, which only their rendering from the "
                       "reference runs writes (--reference-only)")
    if guard.folders and not any(target.is_relative_to(folder) for folder in guard.folders):
        raise RunError(f"{path}: leads outside {', '.join(map(str, guard.folders))}, the folder(s) being written")
    return path


def existing_status(path):
    """os.lstat of path, or None where nothing is there."""
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


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


class NotStrictJSON(ValueError):
    """A number that dumps never writes (NaN, Infinity, a literal too large for a float, an integer of more digits
    than Python converts): a record holding one was edited."""


def refuse_constant(name):
    """json's hook for NaN, Infinity and -Infinity: refused."""
    raise NotStrictJSON(f"{name} is not a number strict JSON holds")


def finite_number(text):
    """json's hook for a number with a fraction or an exponent: a float, refused where it overflows."""
    value = float(text)
    if not math.isfinite(value):
        raise NotStrictJSON(f"the number {text[:24]} is not finite")
    return value


def integer(text):
    """json's hook for an integer: refused where it has more digits than int() converts."""
    try:
        return int(text)
    except ValueError:  # more digits than int() converts (sys.get_int_max_str_digits)
        raise NotStrictJSON(f"an integer of {len(text)} digits") from None


def loads(text):
    """JSON as dumps writes it: a number it never writes is refused (NotStrictJSON, a ValueError), never read as an
    infinity, a NaN or a traceback; the writers record a number that is not finite as null."""
    return json.loads(text, parse_constant=refuse_constant, parse_float=finite_number, parse_int=integer)


def append_record(path, record):
    """Add one JSON record as a line and push it to disk before returning: the file with the new line is written
    beside it and renamed over it (write_atomically), so that an interruption leaves the old records or all of them,
    never a file written in place."""
    path = check_target(path)
    before = path.read_bytes() if path.exists() else b""
    write_atomically(path, before + (dumps(record) + "\n").encode())


def write_json(path, content):
    """Write a JSON file atomically: the old content or the new one, never half of either."""
    write_atomically(path, dumps(content, indent=1).encode())


def write_atomically(path, content: bytes):
    """Write bytes to path through a temporary file beside it, pushed to disk and renamed over it: the old content
    or the new one, never half of either."""
    with atomic_stream(path) as stream:
        stream.write(content)


@contextlib.contextmanager
def atomic_stream(path):
    """A binary stream onto a temporary file beside path (checked as path is, check_target), pushed to disk and
    renamed over path when the block ends; where the block fails (a full disk, an error) the temporary file is
    removed and path is left exactly as it was. Every file the harness writes goes through here."""
    path = check_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = check_target(path.with_name(path.name + ".tmp"))
    try:
        with temporary.open("wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def replace_text(path, text):
    """Replace a file's content with text (atomic_stream): where the write fails (a full disk, a file-size limit)
    the original is left exactly as it was, and the error says so."""
    try:
        write_atomically(path, text.encode("utf-8"))
    except OSError as error:
        raise OSError(f"{path}: could not repair its torn last line ({error}); the file is left as it was") from None


def write_text_if_changed(path, text):
    """Write text to path unless it already holds exactly that (the file and its date then stay)."""
    path = check_target(path)
    if not (path.exists() and path.read_text() == text):
        write_atomically(path, text.encode("utf-8"))
    return path


NUMBER = (int, float)


def is_a(value, kind):
    """isinstance, except that a bool is neither an int nor a float here."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return bool in kinds if isinstance(value, bool) else isinstance(value, kinds)


def read_records(path, repair=False, check=None):
    """The records of a JSON-lines file; a truncated last line is reported and ignored.

    With repair=True the truncated tail is also cut from the file, so that appending goes on cleanly.
    A damaged line anywhere else is an error: it means the file was edited, not interrupted. With a
    check(path, number, record) function (a record's typed model, core.records.check_typed, and what it adds),
    every record is validated and a bad one is an error naming the file, the line and the key.
    """
    path = pathlib.Path(path)
    if not path.exists():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise RunError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start}); the file is damaged"
                         ) from None
    lines = text.split("\n")
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = loads(line)
        except NotStrictJSON as error:
            raise RunError(f"{path}: line {number}: {error}; the writers never write such a number (one not finite "
                           "is recorded as null): the file was edited") from None
        except json.JSONDecodeError:
            if number != len(lines):
                raise RunError(f"{path}: line {number} is not valid JSON") from None
            warnings.warn(f"{path}: ignored a truncated last line ({len(line)} characters) left by an interrupted run",
                          stacklevel=2)
            if repair:
                replace_text(path, text[: len(text) - len(line)])
            return records
        if check is not None:
            check(path, number, record)
        records.append(record)
    if repair and text and not text.endswith("\n"):
        replace_text(path, text + "\n")  # a complete last record whose newline was not written yet
    return records


MANIFEST = ".written"
"""In a folder a command renders into again and again (a report's runs/, the figures' runs/): the files that command
wrote there last, one path a line relative to the folder. It removes as stale only files this list names."""


def owned_files(folder) -> set[str]:
    """The paths (relative to folder) the last rendering into folder wrote there (MANIFEST), none where it left no
    manifest (or the manifest is a link or not a regular file: then nothing is taken as ours)."""
    manifest = pathlib.Path(folder) / MANIFEST
    if manifest.is_symlink() or not manifest.is_file():
        return set()
    try:
        return {line for line in manifest.read_text(encoding="utf-8").splitlines() if line.strip()}
    except (OSError, UnicodeDecodeError):
        return set()


def refuse_overwriting_foreign(option, output, groups):
    """Refuse, in one line naming the first, to render over a file no rendering wrote: groups are (folder, the files
    of the kinds the rendering writes now present under it), a file being foreign where folder's MANIFEST does not
    name it (a person's REPORT.md or fig1 in a folder they named)."""
    for folder, present in groups:
        owned = owned_files(folder)
        for path in sorted(present):
            if pathlib.Path(path).relative_to(folder).as_posix() not in owned:
                raise RunError(f"{option} {output}: {path} is there and no rendering wrote it; move it, or name "
                               "another folder")


def add_to_manifest(folder, made):
    """Name the files made (paths under folder) in folder's MANIFEST beside those it names already."""
    folder = pathlib.Path(folder)
    write_manifest(folder, owned_files(folder) | {pathlib.Path(path).relative_to(folder).as_posix() for path in made})


def write_manifest(folder, names):
    """folder's MANIFEST naming names (paths relative to folder), one a line."""
    write_text_if_changed(pathlib.Path(folder) / MANIFEST, "".join(f"{name}\n" for name in sorted(names)))


def keep_only_what_was_made(folder, made, present):
    """After a rendering into folder: of the files present (paths under folder of the kinds it renders), remove those
    the previous rendering wrote (owned_files) and this one did not (made), leave every other one, and record made
    as the new manifest. Returns (removed, left): what was removed, and the files left that no rendering wrote
    (a person's), each a path."""
    folder = pathlib.Path(folder)
    previous = owned_files(folder)
    made = {pathlib.Path(path).relative_to(folder).as_posix() for path in made}
    removed, left = [], []
    for path in sorted(present):
        name = pathlib.Path(path).relative_to(folder).as_posix()
        if name in made:
            continue
        if name in previous and not pathlib.Path(path).is_symlink():
            check_target(path).unlink()
            removed.append(pathlib.Path(path))
        else:
            left.append(pathlib.Path(path))
    if made or previous:
        write_manifest(folder, made)
    return removed, left

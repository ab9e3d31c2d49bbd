"""Run folders: every measurement belongs to one run of one machine, and reference runs are read-only.

A run folder holds `run.json` (its name, creation date and machine) and one sub-folder per kind of result:
`sweep-<profile>/` (points.jsonl, runs.jsonl), `crosscheck/`, `bench/`; a report rendered for the run is
written beside them (`REPORT.md`, `figures/`). Your runs live under results/runs/ and are named after the
date and the machine; the committed reference runs live under results/reference/ and are never written.
"""

import contextlib
import datetime
import fcntl
import json
import os
import pathlib
import platform
import re

from replication.core import paths, results
from replication.core.records import Record, as_typed, check_machine_text, load_json, machine_text
from replication.core.results import RunError, is_a

MACHINE_KEYS = ("hostname", "cpu", "cpu_count", "gpu")
"""What identifies a machine: a run is resumed only on the machine that started it."""
RUN_FILE = "run.json"
LOCK_FILE = ".lock"
RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
"""A run folder's name: letters, digits, '.', '_' and '-', not opening with '.' (the report shows names in code spans
and links, and a hidden folder would never be listed)."""


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, or platform's guess elsewhere."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return machine_text(line.split(":", 1)[1])
    except OSError:
        pass
    return machine_text(platform.processor() or platform.machine())


def host_record():
    """This host: name, CPU model and logical cores (no GPU: asking for one needs torch, which readers never
    import; writers record the whole machine, environment.machine_record)."""
    return {"hostname": platform.node(), "cpu": cpu_model(), "cpu_count": os.cpu_count()}


def slug(text):
    """Lower-case letters, digits and dashes only: 'Intel(R) Xeon(R) Processor' -> 'xeon'."""
    text = re.sub(r"\((r|tm)\)|\b(processor|cpu|intel|nvidia corporation)\b|@.*", " ", str(text), flags=re.I)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"


def machine_label(machine: "Machine") -> str:
    """'AMD EPYC, 2 cores' or 'Intel Xeon, 16 cores + NVIDIA H200', for tables and legends."""
    cpu = " ".join(re.sub(r"\((R|TM)\)|\b(Processor|CPU)\b", " ", machine.cpu).split())
    label = f"{cpu}, {machine.cpu_count} cores"
    return label + (f" + {machine.gpu}" if machine.gpu else "")


def run_name(machine, date):
    """The folder name of a run: date, host, CPU and cores, and the GPU where there is one."""
    name = f"{date:%Y-%m-%d}_{slug(machine['hostname'])}_{slug(machine['cpu'])}-{machine['cpu_count']}c"
    return name + (f"_{slug(machine['gpu'])}" if machine.get("gpu") else "")


def is_reference(folder):
    """Whether folder is (inside) the committed reference runs."""
    return results.resolved(folder).is_relative_to(paths.REFERENCE.resolve())


def check_writable(folder, option="--run"):
    """Refuse a reference folder, a folder inside the committed report or figures, or a file where a folder is
    wanted, before any work is done (nothing is created by a refused command)."""
    folder = pathlib.Path(folder)
    if is_reference(folder):
        raise RunError(f"{option} {folder}: reference runs under {paths.REFERENCE} are read-only; "
                       f"write to a run of your own (the default, under {paths.RUNS})")
    if any(results.resolved(folder).is_relative_to(committed.resolve()) for committed in COMMITTED):
        raise RunError(f"{option} {folder}: inside the committed report or figures ({', '.join(map(str, COMMITTED))});"
                       f" measurements go into a run of your own (the default, under {paths.RUNS})")
    for parent in (folder, *folder.parents):
        if parent.exists() and not parent.is_dir():
            raise RunError(f"{option} {folder}: {parent} is a file, not a folder")
    return folder


COMMITTED = (paths.PAPER, paths.FIGURES)
"""The folders of the committed report and figures: only their own rendering from the reference runs writes
there (report and figures without runs of your own)."""


def check_output(path, option, committed=False):
    """Refuse an output path (followed through symlinks) inside the reference runs, or inside the committed
    report's and figures' folders unless committed (the rendering of the reference runs alone)."""
    resolved = results.resolved(path)
    if resolved.is_relative_to(paths.REFERENCE.resolve()):
        raise RunError(f"{option} {path}: inside the reference runs ({paths.REFERENCE}), which are read-only")
    if not committed and any(resolved.is_relative_to(folder.resolve()) for folder in COMMITTED):
        raise RunError(f"{option} {path}: inside the committed report or figures ({', '.join(map(str, COMMITTED))}), "
                       "which only their rendering from the reference runs writes (--reference-only); write your "
                       "report into your run's folder (the default) or elsewhere")
    return pathlib.Path(path)


def is_run_folder(folder) -> bool:
    """Whether folder is a run's own (it holds a run.json): what the harness writes there is its own."""
    return (pathlib.Path(folder) / RUN_FILE).is_file()


def run_of(folder):
    """The run folder holding folder (itself or the nearest parent with a run.json), or None: what a writer
    locks, whichever option named the folder."""
    for candidate in (pathlib.Path(folder), *pathlib.Path(folder).parents):
        if (candidate / RUN_FILE).is_file():
            return candidate
    return None


class Machine(Record):
    """The machine a run was made on, as its run.json records it."""

    hostname: str
    cpu: str
    cpu_count: int
    gpu: str | None = None


class RunInfo(Record):
    """A run's run.json as the read side holds it: when it was created (ISO), its machine, a contributor's note."""

    created: str
    machine: Machine
    note: str | None = None


def read_run_info(folder) -> RunInfo | None:
    """The run.json of a run folder, typed (read_run's checks first), or None where the folder is not a run."""
    info = read_run(folder)
    return None if info is None else as_typed(pathlib.Path(folder) / RUN_FILE, 1, info, RunInfo, "record")


def read_run(folder):
    """The run.json of a run folder, or None where the folder is not a run; a RunError where the run's name or
    its machine's names leave their character sets (RUN_NAME, MACHINE_TEXT)."""
    path = pathlib.Path(folder) / RUN_FILE
    if not path.is_file():
        return None
    check_run_name(pathlib.Path(folder))
    info = load_json(path)
    if not isinstance(info.get("machine"), dict):
        raise RunError(f"{path}: not a valid run record (no 'machine')")
    created = info.get("created")
    try:
        datetime.datetime.fromisoformat(created)
    except (TypeError, ValueError):
        raise RunError(f"{path}: key 'created' must be the run's start as an ISO date, got {created!r}") from None
    for key, kind in (("cpu", str), ("cpu_count", int), ("hostname", str)):
        if not is_a(info["machine"].get(key), kind):
            raise RunError(f"{path}: key 'machine.{key}' must be {kind.__name__}, got "
                           f"{json.dumps(info['machine'].get(key))[:80]}")
    gpu = info["machine"].setdefault("gpu", None)  # a run.json without the key: a machine without a GPU
    if gpu is not None and not isinstance(gpu, str):
        raise RunError(f"{path}: key 'machine.gpu' must be a GPU's name or null, got {json.dumps(gpu)[:80]}")
    check_machine_text(path, "machine.", info["machine"])
    return info


def check_run_name(folder):
    """Refuse a run folder whose name leaves RUN_NAME, in one line naming it."""
    if not RUN_NAME.fullmatch(folder.name):
        raise RunError(f"{folder}: a run's name uses letters, digits, '.', '_' and '-' only, not opening with '.' "
                       f"(got {folder.name!r})")


def same_machine(a: Machine, b: dict) -> bool:
    """Whether a run's machine a is the machine record b describes (on the keys of MACHINE_KEYS that b holds: a
    host record holds no GPU)."""
    return all(getattr(a, key) == b.get(key) for key in MACHINE_KEYS if key in b)


def runs_in(base):
    """The run folders directly under base, oldest first (by creation date, then name)."""
    base = pathlib.Path(base)
    found = [(info.created, folder.name, folder) for folder in sorted(base.iterdir())
             if folder.is_dir() and not folder.name.startswith(".")
             for info in [read_run_info(folder)] if info] if base.is_dir() else []
    return [folder for _, _, folder in sorted(found)]


def latest_run(machine=None, base=None):
    """The newest of this machine's runs under base (results/runs/ by default), or None; machine: a machine or host
    record (default: this host's)."""
    machine = machine or host_record()
    mine = [folder for folder in runs_in(base or paths.RUNS) if same_machine(read_run_info(folder).machine, machine)]
    return mine[-1] if mine else None


def create_run(folder, machine):
    """Make folder a run of machine (run.json written atomically); an existing run is left as it is."""
    folder = check_writable(folder)
    if read_run(folder):
        return folder
    check_run_name(folder)
    if folder.is_dir() and any(folder.iterdir()):
        raise RunError(f"--run {folder}: holds files but is not a run (no {RUN_FILE}); name a new or empty folder, "
                       "so that a run holds its own records only")
    folder.mkdir(parents=True, exist_ok=True)
    info = {"name": folder.name, "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": machine}
    results.write_atomically(folder / RUN_FILE, (json.dumps(info, indent=1, sort_keys=True) + "\n").encode())
    return folder


def new_run(machine, base=None):
    """A fresh run folder of machine under base, named after today's date and the machine."""
    base = pathlib.Path(base or paths.RUNS)
    name = run_name(machine, datetime.datetime.now(datetime.timezone.utc))
    folder, count = base / name, 1
    while folder.exists():
        count += 1
        folder = base / f"{name}-{count}"
    return create_run(folder, machine)


def current_run(machine, run=None, new=False, base=None):
    """The run a writer on machine (environment.machine_record) uses: the one named, a new one, or the machine's
    newest run (created if none)."""
    if run is not None:
        return create_run(run, machine)
    if not new:
        latest = latest_run(machine=machine, base=base)
        if latest is not None:
            return check_writable(latest, "this machine's newest run")
    return new_run(machine, base)


@contextlib.contextmanager
def exclusive(folder):
    """Hold an OS lock on folder while writing: a second writer is refused at once, naming the holder.

    The lock (flock on folder/.lock) is released by the OS when the process ends, even by kill -9.
    """
    folder = pathlib.Path(folder)
    if results.resolved(folder).is_relative_to(paths.REFERENCE.resolve()):
        raise RunError(f"{folder}: inside the reference runs ({paths.REFERENCE}), which are read-only")
    folder.mkdir(parents=True, exist_ok=True)
    results.refuse_links_inside(folder)  # before the lock file is opened: it must not be a link either
    with (folder / LOCK_FILE).open("a+") as stream, results.writing_into(folder):
        try:
            fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            stream.seek(0)
            holder = stream.read().strip() or "unknown"
            raise RunError(f"{folder}: another process (pid {holder}) is writing to this run; wait for it to end or "
                           f"use another run (--new-run)") from None
        stream.truncate(0)
        stream.write(str(os.getpid()))
        stream.flush()
        try:
            yield folder
        finally:
            stream.truncate(0)


def writer_of(folder):
    """The pid of the process writing to a run now (holding its lock), or None: read without taking the lock."""
    lock = pathlib.Path(folder) / LOCK_FILE
    if not lock.is_file() or lock.is_symlink():
        return None
    with lock.open() as stream:
        try:
            fcntl.flock(stream.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return stream.read().strip() or "unknown"
        fcntl.flock(stream.fileno(), fcntl.LOCK_UN)
    return None


def reference_runs(base=None):
    """The committed reference runs, in name order."""
    base = pathlib.Path(base or paths.REFERENCE)
    return sorted(runs_in(base), key=lambda folder: folder.name)


def check_same_settings(where, recorded, current, keys=None):
    """Refuse to resume results recorded under other settings, naming the first that differs: the one check
    every resumable writer (sweep, sharded sweep, bench, cross-check) makes before adding to what it finds.
    keys: the settings compared (default: every key of recorded); a key a record does not hold is not compared."""
    for key in keys or recorded:
        if key in recorded and recorded[key] != current.get(key):
            raise RunError(f"{where}: recorded under other settings: these results were started with {key} = "
                           f"{recorded[key]!r}, this command has {key} = {current.get(key)!r}; resume with the same "
                           "settings, or start another run (--new-run) so that the two never mix")

"""What every resumable measurement (the sweep, retrieval) does around its records: refuse to add to records made
under another identity, keep that identity in settings.json, record each session of measuring in runs.jsonl
under a run id, hold the threads, and show a progress bar with the time left."""

import contextlib
import os
import sys
import time
import uuid

from tqdm import tqdm

from replication.core import runs
from replication.core.environment import ThreadCount, thread_limits
from replication.core.load import contention_warning, free_cores, others_busy_now
from replication.core.options import cores, default_threads
from replication.core.records import load_json
from replication.core.results import append_record, read_records, write_json

SETTINGS_FILE, RUNS_FILE = "settings.json", "runs.jsonl"


def new_run_id():
    """A run id: the start time and a random suffix, '20261201T101500-3fa2c1'."""
    return f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"


def check_identity(folder, identity, records=(), before=None):
    """Refuse to add to folder's records under another identity (settings, machine, versions, data), naming the
    first key that differs: settings.json first, then every earlier session in runs.jsonl, then every record of the
    files named in records (each on the keys of identity it holds: a point's tol and objective), so that a folder
    whose settings.json and runs.jsonl were lost still refuses to mix. before: {key: value} a folder made before
    that key was recorded holds for it (what its records were made under), compared as if written."""
    before = before or {}
    settings = load_json(folder / SETTINGS_FILE)  # a damaged one refused in one line naming it
    if settings is not None:
        runs.check_same_settings(folder, before | settings, identity, tuple(identity))
    for record in read_records(folder / RUNS_FILE, repair=True):
        runs.check_same_settings(folder, before | record if isinstance(record, dict) else record, identity,
                                 tuple(identity))
    for name in records:
        for number, record in enumerate(read_records(folder / name, repair=True), 1):
            if isinstance(record, dict):  # anything else is refused by the file's own reader, naming the line
                runs.check_same_settings(f"{folder / name}: line {number}", before | record, identity,
                                         tuple(identity))


def record_identity(folder, identity):
    """Write settings.json where the folder has none yet (before the first record: the identity survives a lost
    runs.jsonl)."""
    if not (folder / SETTINGS_FILE).is_file():
        write_json(folder / SETTINGS_FILE, identity)


def chosen_threads(requested: int | None, folder=None) -> ThreadCount:
    """The threads a measuring command uses: the --threads given; else, where folder already holds settings.json
    with a thread count, that count (a resume measures as the run began); else default_threads() or fewer, as many
    as the cores other processes leave free now (a busy machine measures with 1 thread, whose times another
    process barely changes, rather than with 2, whose times it can slow 6-9x). Says so where it chose fewer."""
    if requested is not None:
        return requested if isinstance(requested, ThreadCount) else ThreadCount(requested)
    settings = load_json(folder / SETTINGS_FILE) if folder is not None else None
    if isinstance(settings, dict) and type(settings.get("threads")) is int and 1 <= settings["threads"] <= cores():
        return ThreadCount(settings["threads"], "resumed")
    ceiling = default_threads()
    others = others_busy_now() if ceiling > 1 else None
    count = min(ceiling, cores(), free_cores(others, os.cpu_count() or 1))  # others counted machine-wide
    if count < ceiling:
        print(f"threads: {count} (other processes keep {others:.1f} cores busy; --threads {ceiling} overrides)")
    return ThreadCount(count, "free cores", others)


@contextlib.contextmanager
def measuring(folder, environment, threads, total, description, unit, quiet=False):
    """A session of measuring into folder: the threads held, its environment appended to runs.jsonl under a new
    run id, a progress bar of `total` units; yields (run_id, bar)."""
    run_id = new_run_id()
    chose_now = getattr(threads, "chosen_by", None) == "free cores"  # from a load measured a moment ago
    warning = None if quiet or chose_now else contention_warning(threads)  # quiet: nobody to read it
    if warning:
        print(warning, file=sys.stderr)
    with thread_limits(threads):
        append_record(folder / RUNS_FILE, environment | {"run_id": run_id})
        bar = tqdm(total=total, disable=quiet, unit=unit, desc=description)
        try:
            yield run_id, bar
        finally:
            bar.close()

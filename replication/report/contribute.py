"""Contributing a run: its result files checked by every reader a reference run meets (the record readers, the
report, the figures, the audit), then copied into the references (read-only) in one step."""

import json
import os
import pathlib
import shutil
import tempfile

import numpy as np

from replication.core import paths
from replication.core.records import load_arrays, load_json, read_run_records
from replication.core.reduction.pyoof_fit import read_pyoof
from replication.core.results import NotStrictJSON, RunError, loads, read_records, writing_into
from replication.core.runs import RUN_FILE, exclusive, is_reference, read_run
from replication.report.figures import draw_all
from replication.report.render import load_runs, render_all
from replication.studies.bench.records import read_bench
from replication.studies.closure.records import CLOSURE_FILE, check_closure, read_bound, read_pyoof_closure
from replication.studies.crosscheck.records import read_crosscheck
from replication.studies.peers.records import read_peers_check
from replication.studies.real_maps.records import STARTS_FILE, read_real_maps, read_real_starts
from replication.studies.retrieval.records import read_retrieval
from replication.studies.sweep.audit import audit_run
from replication.studies.sweep.records import read_optima, read_points, read_sweep_sessions

RESULT_FILES = ("sweep-*/points.jsonl", "sweep-*/runs.jsonl", "sweep-*/settings.json", "sweep-*/optima.jsonl",
                "sweep-*/trajectories/*.npz", "shards/*/*/sweep-*/optima.jsonl",
                "shards/*/*/sweep-*/trajectories/*.npz",
                "crosscheck/crosscheck.json", "crosscheck/example.npz", "bench*/bench.json", "peers/check.json",
                "gpu.txt", "log.txt",
                "shards-*.json", "shards/*/*/run.json", "shards/*/*/sweep-*/points.jsonl",
                "shards/*/*/sweep-*/runs.jsonl", "shards/*/*/sweep-*/settings.json", "shards/*/*/finished-*.json",
                "retrieval-*/points.jsonl", "retrieval-*/runs.jsonl", "retrieval-*/settings.json",
                "real-maps/stages.jsonl", "real-maps/sources.jsonl", "real-maps/tapers.jsonl", "real-maps/starts.jsonl",
                "real-maps/runs.jsonl",
                "real-maps/settings.json", "real-maps/residuals-*.npz", "real-maps/surface-*.txt",
                "real-maps/surface-*.fits", "pyoof/pyoof.jsonl", "pyoof/pyoof-phase-*.npz", "closure/closure.jsonl",
                "closure/runs.jsonl", "closure/settings.json", "closure/pyoof/pyoof-closure.jsonl",
                "closure/pyoof/pyoof-phase-closure-*.npz", "closure/bound.jsonl")
"""What a run contributes as a reference run: its records, not what was rendered from them."""


def contributed_files(run):
    """The run's record files that a reference run takes: regular files inside the run only (a symlink is
    refused, wherever it points), each readable as what it claims to be (JSON lines, JSON), checked before any
    copy so that a damaged run is refused whole, naming the file and the line."""
    files = []
    for pattern in RESULT_FILES:
        for source in sorted(run.glob(pattern)):
            if source.is_symlink() or not source.is_file():
                raise RunError(f"{source}: not a regular file of the run (a link or a folder); a reference run takes "
                               "only the run's own record files")
            try:
                check_record_file(source)
            except RunError:
                raise
            except ValueError as error:
                raise RunError(f"{error}; a damaged run cannot become a reference run") from None
            files.append(source)
    return files


def check_surface_grid(path):
    """A written surface grid: numbers (NaN off the dish) in rows of one length."""
    try:
        grid = np.loadtxt(path, ndmin=2)
    except ValueError as error:
        raise RunError(f"{path}: not a surface grid ({error})") from None
    if not grid.size or not np.isfinite(grid).any():
        raise RunError(f"{path}: a surface grid without a finite value")


def check_fits(path):
    """A written FITS surface: a FITS file (its first card SIMPLE = T) of 2880-byte blocks."""
    with path.open("rb") as stream:
        start = stream.read(30)
    if not start.startswith(b"SIMPLE  =") or b"T" not in start[9:30] or path.stat().st_size % 2880:
        raise RunError(f"{path}: not a FITS file (a damaged surface cannot become part of a reference run)")


def check_record_file(path):
    """Refuse a damaged record file: every line of a .jsonl and the whole of a .json must be valid JSON, every
    point record valid as the report reads it, a run.json a run record."""
    if path.parent.name == "real-maps" and path.name in ("stages.jsonl", "sources.jsonl", "tapers.jsonl"):
        read_real_maps(path.parent, strict=True)
    if path.parent.name == "real-maps" and path.name == STARTS_FILE:
        read_real_starts(path.parent, strict=True)
    if path.suffix == ".npz":
        check_arrays(path)
    if path.name == CLOSURE_FILE:
        read_records(path, check=check_closure)
    if path.suffix == ".txt" and path.name.startswith("surface-"):
        check_surface_grid(path)
    if path.suffix == ".fits":
        check_fits(path)
    if path.name == "points.jsonl" and path.parent.name.startswith("retrieval-"):
        read_retrieval(path, strict=True)  # a retrieval's records, not a sweep's points
    elif path.name == "points.jsonl":
        read_points(path, strict=True)
    if path.name == RUN_FILE:
        read_run(path.parent)
    for kind, reader in READERS.items():
        if path.match(kind):
            reader(path)
    text = path.read_text(errors="replace") if path.suffix in (".jsonl", ".json") else None
    lines = text.splitlines() if path.suffix == ".jsonl" else [text] if path.suffix == ".json" else []
    for number, line in enumerate(lines, 1):
        try:
            loads(line)
        except (json.JSONDecodeError, NotStrictJSON) as error:
            raise RunError(f"{path}: line {number} is not valid JSON ({getattr(error, 'msg', error)}); a damaged run "
                           "cannot become a reference run") from None


READERS = {"sweep-*/optima.jsonl": lambda path: read_optima(path, strict=True), "*/runs.jsonl": read_run_records,
           "sweep-*/runs.jsonl": read_sweep_sessions,
           "crosscheck/crosscheck.json": read_crosscheck, "bench*/bench.json": read_bench,
           "peers/check.json": read_peers_check, "pyoof/pyoof.jsonl": lambda path: read_pyoof(path, strict=True),
           "closure/pyoof/pyoof-closure.jsonl": lambda path: read_pyoof_closure(path, strict=True),
           "closure/bound.jsonl": lambda path: read_bound(path, strict=True),
           "*/settings.json": load_json}
"""The reader the report uses for each record file beside the points (a file it refuses is refused here)."""


READER_FAULTS = (KeyError, TypeError, IndexError, ValueError, AttributeError, ZeroDivisionError)
"""What a reader raises on a record its model admits but it cannot use."""


def check_readable_by_every_reader(run):
    """Refuse a run any reader a reference run meets cannot read (a record its models admit but the report's tables,
    the figures or the audit cannot use), in one line naming the reader: the run is rendered and drawn in memory
    beside no reference run, and audited, and what fails there fails here."""
    with tempfile.TemporaryDirectory() as empty:
        empty = pathlib.Path(empty)
        readers = (("the report", lambda: render_all([run], empty, output=empty / "out",
                                                     figures=empty / "out" / "figures")),
                   ("the figures", lambda: draw_all(load_runs([run], empty), empty / "drawn")),
                   ("the audit", lambda: audit_run(run)))
        for reader, read in readers:
            try:
                with writing_into(empty):
                    read()
            except RunError:
                raise
            except READER_FAULTS as error:
                raise RunError(f"{run}: {reader} cannot read this run ({type(error).__name__}: {error}); a damaged "
                               "run cannot become a reference run") from None


def check_arrays(path):
    """Refuse an .npz record that NumPy cannot read as plain arrays (no pickled objects)."""
    try:
        load_arrays(path)
    except RunError as error:
        raise RunError(f"{error}; a damaged run cannot become a reference run") from None


def contribute(run, note, reference=None):
    """Copy a run's records into a new reference run folder (never over an existing one); returns it.

    Under the run's lock, the copy is made in a staging folder private to this process (a unique hidden name beside
    the reference runs, which the readers skip) and renamed into place in one step, so a reference run appears
    complete or not at all; a failure removes that staging folder only, never another contribute's.
    """
    run = pathlib.Path(run)
    info = read_run(run)
    if info is None:
        raise RunError(f"--run {run}: not a run folder (no {RUN_FILE})")
    if is_reference(run):
        raise RunError(f"--run {run}: already a reference run")
    if not note.strip():
        raise RunError("--note: say in a sentence what the run is (machine, what was measured)")
    target = pathlib.Path(reference or paths.REFERENCE) / run.name
    if target.exists():
        raise RunError(f"{target}: a reference run of that name exists; reference runs are never overwritten")
    with exclusive(run):
        sources = contributed_files(run)
        check_readable_by_every_reader(run)
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = pathlib.Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
        try:
            for source in sources:
                destination = staging / source.relative_to(run)
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, destination)
            (staging / RUN_FILE).write_text(json.dumps(info | {"note": note.strip()}, indent=1, sort_keys=True)
                                            + "\n")
            publish(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    return target


def publish(staging, target):
    """Rename the complete staging folder to target in one step; refused where target exists by then (another
    contribute of a run of that name published first: rename would replace an empty folder, so it is checked
    first, and the rename itself fails on a folder with content)."""
    if target.exists() or target.is_symlink():
        raise RunError(f"{target}: a reference run of that name appeared meanwhile; reference runs are never "
                       "overwritten")
    try:
        os.rename(staging, target)
    except OSError as error:
        raise RunError(f"{target}: could not publish the reference run ({error.strerror}); nothing was published"
                       ) from None

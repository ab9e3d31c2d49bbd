"""The load other processes put on the machine while something is measured: recorded with every timed point and
bench row, so that a time measured on a busy machine says so (torch with 2 threads slows down far more than
NumPy when another process holds a core). No torch here: the read side uses it."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import pathlib
import statistics
import time

import msgspec
from msgspec import UNSET

from replication.core.fit_records import Load

PROC_STAT = pathlib.Path("/proc/stat")
BUSY_FIELDS = (0, 1, 2, 5, 6, 7)
"""The fields of /proc/stat's cpu line that count as busy: user, nice, system, irq, softirq, steal (guest time is
inside user)."""
LOADED_CORES = 0.5
"""Other processes busy on average on at least this many cores during a measurement: it was measured on a loaded
machine, and the report says so."""
MIN_WINDOW_S = 1.0
"""Seconds a measurement must last for its load reading to judge the machine by: /proc/stat counts in ticks of
10 ms, so over 0.1 s a tick or two on each core reads as 0.2-0.4 busy cores (points of a few tens of ms read 0-1
cores on a quiet machine); from 1 s on the reading is good to a few hundredths of a core."""


def cpu_seconds() -> tuple[float, float] | None:
    """(busy CPU seconds of the whole machine since boot, this process's own CPU seconds, its threads and children
    included); None where /proc/stat cannot be read (not Linux)."""
    try:
        fields = PROC_STAT.read_text().splitlines()[0].split()[1:]
    except (OSError, IndexError):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    own = os.times()
    busy = sum(int(fields[k]) for k in BUSY_FIELDS if k < len(fields)) / ticks
    return busy, own.user + own.system + own.children_user + own.children_system


@contextlib.contextmanager
def watching_load():
    """Yields a dict filled, when the block ends, with the machine's 1-minute load average at its start, the cores
    other processes kept busy on average during it (None where the machine does not say) and its length (s)."""
    found: dict = {}
    start, wall = cpu_seconds(), time.perf_counter()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    try:
        yield found
    finally:
        end, elapsed = cpu_seconds(), time.perf_counter() - wall
        others = None
        if start is not None and end is not None and elapsed > 0:
            others = max(0.0, ((end[0] - start[0]) - (end[1] - start[1])) / elapsed)
        found |= {"load_1min": load, "others_busy_cores": others, "seconds": elapsed}


CONTENTION_WARNING = (
    "warning: other processes keep {others:.1f} of {cores} cores busy; measuring with {threads} threads on them "
    "slows torch far more than NumPy (one competing process on 2 cores: torch's fit 4.4x slower with 2 threads, "
    "not slower with 1; NumPy's unchanged), so the speed-ups will read low. Quiet the machine, or measure with "
    "--threads {free} (a new run); the records and the report say how loaded the machine was.")
"""What a measuring session prints where the machine is busy before it starts (the numbers: npix 256, n = 5, on a
2-core AMD EPYC, docs/replicate.md)."""


def others_busy_now(window_s: float = 0.3) -> float | None:
    """The cores other processes keep busy on average over the next window_s seconds (None where the machine does
    not say)."""
    with watching_load() as load:
        time.sleep(window_s)
    return load["others_busy_cores"]


def free_cores(others: float | None, cores: int) -> int:
    """The cores other processes leave free, at least 1: a core counts as taken from LOADED_CORES of it busy on
    (others 0.4 of 2 cores: 2 free; 0.5-1.49: 1 free)."""
    taken = 0 if others is None else math.floor(others + 1 - LOADED_CORES)
    return max(1, cores - taken)


def contention_warning(threads: int, window_s: float = 0.3) -> str | None:
    """The warning to print before measuring with `threads` threads where other processes keep at least
    LOADED_CORES cores busy over window_s seconds (None where the machine is quiet or does not say)."""
    if threads <= 1:
        return None
    others, cores = others_busy_now(window_s), os.cpu_count() or 1
    if others is None or others < LOADED_CORES:
        return None
    free = free_cores(others, cores)
    return CONTENTION_WARNING.format(others=others, cores=cores, threads=threads, free=free) if free < threads else None


def judged(load: Load | None) -> float | None:
    """The cores others kept busy during a measurement, where it was recorded and lasted long enough to tell
    (MIN_WINDOW_S; a reading that does not say how long it lasted is taken as it is); None where not."""
    if not load or load.others_busy_cores is None:
        return None
    return load.others_busy_cores if load.seconds is UNSET or load.seconds >= MIN_WINDOW_S else None


@dataclasses.dataclass(frozen=True)
class LoadSummary:
    """What the records' loads say: how many were recorded, how many judged (lasting MIN_WINDOW_S at least), how
    many of those on a loaded machine (LOADED_CORES), the median and largest number of cores others kept busy over
    them; loaded True where any was."""

    recorded: int
    judged: int
    loaded_count: int
    median: float | None
    largest: float | None
    text: str = ""
    """The summary in words, where the report gave it some."""

    @property
    def loaded(self) -> bool:
        return self.loaded_count > 0


def load_summary(loads: list[Load | None]) -> LoadSummary:
    """The summary of the loads recorded (None: a point that recorded none)."""
    recorded = [load for load in loads if load and load.others_busy_cores is not None]
    cores = [value for value in map(judged, recorded) if value is not None]
    return LoadSummary(recorded=len(recorded), judged=len(cores), loaded_count=sum(c >= LOADED_CORES for c in cores),
                       median=statistics.median(cores) if cores else None, largest=max(cores) if cores else None)


def point_load(record) -> Load | None:
    """A sweep point's (a MeasuredPoint's) load reading, with its window: as recorded, or, where the point predates
    recording it, its fits' total seconds (a lower bound: the window also held the warm-up, the evaluations timed
    and the optimum's search)."""
    load = None if record.estimated else record.load
    if not load or load.seconds is not UNSET:
        return load or None
    return msgspec.structs.replace(load, seconds=sum(record.total_s.each))


def run_loads(run) -> list[Load | None]:
    """The load recorded with each point of a run's sweeps (None where a point holds none), with its window."""
    return [point_load(record) for series, _ in run.sweeps.values() for points in series.values()
            for record in points.values()]


def measured_quiet(run) -> bool:
    """Whether no point of the run's sweeps was measured on a loaded machine (True where none recorded its load)."""
    return not load_summary(run_loads(run)).loaded

"""The audit of a run: every recorded time to target and end distance recomputed from the kept trajectories and the
sweep's optima alone, and compared with what the sweep recorded.

A time to target is the setup's seconds plus the seconds of a fit's first evaluation within optimum.TARGET standard
errors (Mahalanobis, the optimum's sandwich covariance) of the point's optimum, and its evaluations to target that
evaluation's count (where the point recorded them); the end distance is the first
repeat's end point's distance from it (the repeat run to its end). Points that kept no trajectories (runs made before
they were kept) are counted as not auditable, never as agreeing.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib

from replication.core import optimum
from replication.studies.sweep.records import MeasuredPoint, optimum_key, point_key, read_optima, read_points
from replication.studies.sweep.trajectories import read_trajectories

RELATIVE = 1e-9
"""Largest relative difference between a recomputed and a recorded value that counts as the same."""


@dataclasses.dataclass
class Audit:
    """What an audit found: values recomputed and agreeing, the differences (one line each), points that could not
    be audited (recorded before kept trajectories, or without an optimum)."""

    checked: int = 0
    differences: list = dataclasses.field(default_factory=list)
    not_auditable: int = 0


def same(recorded, recomputed) -> bool:
    """Whether two times or distances agree: both None, or both numbers within RELATIVE of each other."""
    if recorded is None or recomputed is None:
        return recorded is None and recomputed is None
    return math.isclose(recorded, recomputed, rel_tol=RELATIVE, abs_tol=0.0)


def audit_point(folder: pathlib.Path, record: MeasuredPoint, best: optimum.Optimum, audit: Audit, where: str) -> None:
    """Recompute one point's times to target (one per repeat) and end distance and note each difference."""
    found = read_trajectories(folder, record.trajectories, record.nparams)
    setups = record.setup_s.each
    for r, (trajectory, setup_s) in enumerate(zip(found, setups, strict=True)):
        recomputed = optimum.time_to_target(setup_s, trajectory, best)
        recorded = record.target.times[r]
        audit.checked += 1
        if not same(recorded, recomputed):
            audit.differences.append(f"{where}: repeat {r + 1}: time to target recorded {recorded}, recomputed "
                                     f"{recomputed}")
        if record.target.evaluations:  # where the point recorded them
            counted = optimum.evaluations_to_target(trajectory, best)
            audit.checked += 1
            if record.target.evaluations[r] != counted:
                audit.differences.append(f"{where}: repeat {r + 1}: evaluations to target recorded "
                                         f"{record.target.evaluations[r]}, recounted {counted}")
    end = optimum.end_distance(best, record.outcome.x)
    audit.checked += 1
    if not same(record.target.end_distance, end):
        audit.differences.append(f"{where}: end distance recorded {record.target.end_distance}, recomputed "
                                 f"{end}")


def audit_sweep(folder: pathlib.Path, audit: Audit) -> None:
    """Audit every measured point of one sweep folder timed to a target."""
    optima = read_optima(folder / "optima.jsonl")
    for record in read_points(folder / "points.jsonl"):
        if record.estimated or not record.target:
            continue
        key = optimum_key(record)
        if not record.trajectories or key not in optima:
            audit.not_auditable += 1
            continue
        where = f"{folder / 'points.jsonl'}: " + " ".join(map(str, point_key(record)))
        audit_point(folder, record, optimum.Optimum.of(optima[key]), audit, where)


def sweep_folders(run: pathlib.Path) -> list[pathlib.Path]:
    """A run's sweep folders, its shards' included."""
    return sorted(path for path in [*run.glob("sweep-*"), *run.glob("shards/*/*/sweep-*")] if path.is_dir())


def audit_run(run: pathlib.Path) -> Audit:
    """Audit every sweep of a run folder."""
    audit = Audit()
    for folder in sweep_folders(pathlib.Path(run)):
        audit_sweep(folder, audit)
    return audit


def summary(run: pathlib.Path, audit: Audit) -> str:
    """The audit in a few lines: the differences, then a count."""
    lines = list(audit.differences)
    lines.append(f"{run}: {audit.checked} value(s) recomputed, {len(audit.differences)} differ from the record"
                 + (f"; {audit.not_auditable} point(s) not auditable (recorded before kept trajectories)"
                    if audit.not_auditable else ""))
    return "\n".join(lines)

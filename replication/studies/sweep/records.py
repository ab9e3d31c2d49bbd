"""The sweep's records: a point (points.jsonl, with its target and trajectories entries) and a point's
optimum (optima.jsonl), their schemas, keys and readers."""

from __future__ import annotations

import json
import pathlib
from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from replication.core.fit_records import Account, Load, NamedSeries, OptimumRecord, check_optimum, series_of
from replication.core.objectives import DEFAULT
from replication.core.records import (
    RECORD_SCHEMA,
    Count,
    FitEnd,
    GridSize,
    MaybeNumber,
    Number,
    Order,
    Record,
    RunRecord,
    Seconds,
    Vector,
    as_typed,
    check_machine_text,
    check_schema,
    check_typed,
    check_vectors,
    latest_of_each,
    migrated_fit,
    read_typed,
)
from replication.core.results import NUMBER, RunError, dumps, is_a, read_records
from replication.core.series import Series


class Times(Record):
    """A point's times over its repeats (seconds): their median, and each repeat's where recorded."""

    median: Seconds
    all: list[Seconds] | None = None

    @property
    def each(self) -> list[float]:
        """Each repeat's time (seconds); the median alone where the repeats were not recorded."""
        return self.all or [self.median]


class SetupTimes(Times, kw_only=True):
    """A point's setup times (seconds): as Times, but a setup may take no time the clock can see."""

    median: Annotated[float, msgspec.Meta(ge=0)]
    all: list[Annotated[float, msgspec.Meta(ge=0)]] | None = None


class Outcome(FitEnd):
    """How a timed fit ended, as scipy (or the on-device BFGS) returned it, with BFGS's errors and its exact
    account (UNSET: recorded before the account; None: the objective was not finite there)."""

    stderr: Vector
    convergence: Account | UnsetType | None = UNSET


class Target(Record):
    """A measured point's times to its optimum, one per repeat (null: never within `se` standard errors), and the
    evaluations each took to get there (absent in points measured before they were recorded); which repeats were
    stopped there (the later ones, where the first, run to its end, came within it; absent where none was: points
    measured before repeats stopped at the target); the first repeat's end distance."""

    se: Number
    times: list[Seconds | None]
    reached: Count
    end_distance: MaybeNumber
    stopped: list[bool] | UnsetType = UNSET
    evaluations: list[Annotated[int, msgspec.Meta(ge=1)] | None] | UnsetType = UNSET


class Trajectories(Record):
    """Where a point's fits' trajectories are kept (trajectories.write_trajectories), one per repeat."""

    file: str
    sha256: str
    repeats: Count


class Point(NamedSeries, kw_only=True):
    """What every point record holds (an estimated point: no more); a measured one is a MeasuredPoint, in today's
    schema (older records are migrated once: migrated_point); node: the node that measured it, in a sharded sweep
    (set as it is read)."""

    npix: GridSize
    nzern: Order
    nparams: Annotated[int, msgspec.Meta(ge=1)]
    estimated: bool
    fit_s: Times
    objective: str = DEFAULT
    data_sha256: str | None = None
    node: str | None = None

    @property
    def grid_point(self) -> tuple[int, int]:
        """(npix, nzern)."""
        return self.npix, self.nzern

    @property
    def end_distance(self) -> float | None:
        """Where its first repeat ended: Mahalanobis distance from the point's optimum (standard errors); None for
        an estimate, a point recorded before times to target, or one whose optimum was not polished."""
        return None


class MeasuredPoint(Point, kw_only=True):
    """A measured point: its times, its tolerance, how its last repeat's fit ended; its times to the target and its
    time limit, its trajectories and the machine's load (each absent in points of runs made before it was
    recorded: the history runs time to the optimiser's stop), and for a series
    started from a matrix made per grid, the seconds that matrix took once (grid_start_s, on no fit's clock). Each
    of these is absent where the point predates it, never null: the writer never writes null there."""

    setup_s: SetupTimes
    total_s: Times
    tol: Number
    outcome: Outcome
    target: Target | UnsetType = UNSET
    trajectories: Trajectories | UnsetType = UNSET
    load: Load | UnsetType = UNSET
    time_limit_s: Seconds | UnsetType = UNSET
    stopped_at_limit: bool | UnsetType = UNSET
    grid_start_s: Seconds | UnsetType = UNSET

    @property
    def end_distance(self) -> float | None:
        return self.target.end_distance if self.target else None


def check_point(path: pathlib.Path, number: int, record: dict) -> Point:
    """A point record as read, typed and validated to what the report uses: an error names the file, the line and
    the key; a record of an older version is refused, naming the migration (migrated_point)."""
    check_typed(path, number, record, Point)
    check_schema(path, number, record.get("schema", 1), RECORD_SCHEMA)
    series_of(path, number, record)
    point = as_typed(path, number, record, Point if record["estimated"] else MeasuredPoint)
    if point.estimated:
        return point
    outcome = point.outcome
    vectors = {"outcome.x": outcome.x, "outcome.stderr": outcome.stderr}
    if outcome.convergence:
        vectors |= {"outcome.convergence.stderr": outcome.convergence.stderr,
                    "outcome.convergence.stderr_sandwich": outcome.convergence.stderr_sandwich}
    check_vectors(path, number, vectors, point.nparams)
    if point.target:
        check_target_record(path, number, point)
    if point.trajectories and point.trajectories.repeats != len(point.total_s.all or []):
        raise RunError(f"{path}: line {number}, key 'trajectories.repeats': one trajectory per repeat "
                       f"({len(point.total_s.all or [])}), got {point.trajectories.repeats}")
    if (point.time_limit_s is UNSET) != (point.stopped_at_limit is UNSET):
        raise RunError(f"{path}: line {number}, key 'stopped_at_limit': a point run to a time limit says whether its "
                       "fit was stopped there, and only such a point")
    return point


def check_target_record(path, number, point: MeasuredPoint):
    """A point's target record: one time or null per repeat, each positive and at most that repeat's total time."""
    target, totals = point.target, point.total_s.all or []
    times = target.times
    if len(times) != len(totals) or target.reached != sum(t is not None for t in times):
        raise RunError(f"{path}: line {number}, key 'target.times': one time or null per repeat ({len(totals)}), "
                       f"reached = the times given; got {dumps(msgspec.to_builtins(target))[:80]}")
    for time, total in zip(times, totals, strict=True):
        if time is not None and not (is_a(time, NUMBER) and 0 < time <= total * (1 + 1e-9)):
            raise RunError(f"{path}: line {number}, key 'target.times': a time to the optimum lies in (0, that "
                           f"repeat's total {total}], got {time}")
    evaluations = target.evaluations
    if evaluations is not UNSET and (len(evaluations) != len(times) or any(
            (e is None) != (t is None) for e, t in zip(evaluations, times, strict=True))):
        raise RunError(f"{path}: line {number}, key 'target.evaluations': one count per repeat ({len(times)}), null "
                       f"exactly where its time to the optimum is; got {evaluations}")
    stopped = target.stopped
    if stopped is not UNSET and (len(stopped) != len(times) or stopped[0]
                    or any(s and t is None for s, t in zip(stopped, times, strict=True))):
        raise RunError(f"{path}: line {number}, key 'target.stopped': one flag per repeat ({len(times)}), the first "
                       f"run to its end (false), a repeat stopped at the target with a time to it; got {stopped}")


SweepSession = msgspec.defstruct(
    "SweepSession", [("profile", str), ("tol", Annotated[float, msgspec.Meta(gt=0)]), ("unavailable", list[str], []),
                     ("objective", str | None, None)], bases=(RunRecord,), kw_only=True, module=__name__)
"""A sweep's session in its runs.jsonl: the environment, and what the sweep measured under (its profile, tol and
objective, None in sessions that did not record it: the sweep folder's name says it) and what this machine could not
run."""


def check_sweep_session(path: pathlib.Path, number: int, record: dict) -> None:
    check_typed(path, number, record, SweepSession)
    check_machine_text(path, "", record, number)


def read_sweep_sessions(path: pathlib.Path) -> list[SweepSession]:
    """The session records of a sweep's runs.jsonl, validated and typed."""
    return [as_typed(path, number, record, SweepSession)
            for number, record in enumerate(read_records(path, check=check_sweep_session), 1)]


def read_points(path: pathlib.Path, repair: bool = False, strict: bool = False) -> list[Point]:
    """The point records of a sweep's points.jsonl, validated and in today's schema (MeasuredPoint where measured);
    two different records of one point and series are refused (identical ones too where strict: a contributed run),
    except an estimate followed by the point's measurement, which replaces it (older sweeps estimated the
    points over their budget; a resumed sweep measures them, to a time limit)."""
    points = read_typed(path, check_point, point_key, "point and series", repair, strict, replaces=measures_estimate)
    return latest_of_each(points, point_key)


def migrated_point(record: dict) -> dict:
    """A point record of version 1 in today's schema: its series in today's names (migrated_fit) and the default
    objective where it names none (records made before objectives were recorded fitted the default); a record of
    today's schema as it is."""
    if "schema" in record:
        return record
    return migrated_fit(record) | {"objective": record.get("objective", DEFAULT)}


def as_read(record: dict) -> Point:
    """A point record as its reader reads it back: through its JSON, validated, stamped with today's schema as
    as_written stamps it (where it is not already)."""
    return check_point(pathlib.Path("points.jsonl"), 1, json.loads(dumps({"schema": RECORD_SCHEMA} | record)))


def measured_keys(points: list[Point]) -> set:
    """The point keys of the measured points (an older sweep's estimate is not finished: a resumed sweep measures
    it)."""
    return {point_key(point) for point in points if not point.estimated}


def measures_estimate(earlier: Point, point: Point) -> bool:
    """Whether a point may replace an earlier one of its point and series: a measurement of an estimated point."""
    return earlier.estimated and not point.estimated


def key_of(series: Series, npix: int, nzern: int) -> tuple:
    """What identifies a point: implementation, precision, gradient variant, minimizer, grid size and order."""
    return series.impl, series.dtype, series.gradient, series.minimizer, npix, nzern


def point_key(point: Point) -> tuple:
    """A point's key (key_of)."""
    return key_of(point.series, point.npix, point.nzern)


def optimum_key(record: OptimumRecord | Point) -> tuple:
    """What identifies an optimum: the point, the objective and the data."""
    return record.npix, record.nzern, record.objective, record.data_sha256


def read_optima(path: pathlib.Path, repair: bool = False, strict: bool = False) -> dict[tuple, OptimumRecord]:
    """{optimum_key: record} of a sweep's optima.jsonl, validated ({} where absent)."""
    optima = read_typed(path, check_optimum, optimum_key, "optimum", repair, strict)
    return {optimum_key(optimum): optimum for optimum in optima}

"""The cold-start retrieval's records (retrieval-<profile>/points.jsonl): schema, keys and reader."""

from __future__ import annotations

import pathlib
from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from replication.core.fit_records import Account, HeldOptimum, NamedSeries, check_optimum, series_of
from replication.core.objectives import DEFAULT
from replication.core.records import (
    FitEnd,
    GridSize,
    MaybeNumber,
    Number,
    Order,
    Record,
    Seconds,
    Seed,
    Vector,
    check_typed,
    check_vectors,
    read_keyed,
)
from replication.core.results import RunError
from replication.core.series import Series

FROM_TRUTH, PLAIN, STAGED = "from the truth", "cold start", "cold start, orders raised"
"""How a fit starts: at the truth (the judge of the others), at zero aberration, or at zero aberration fitting the
Zernike orders 2, 3, ... up to the point's in turn, each from the last one's result (as OOF software does)."""


STARTS = (FROM_TRUTH, PLAIN, STAGED)


class RetrievalOutcome(FitEnd):
    stderr: Vector | None = None
    convergence: Account | None = None


class RetrievalRecord(NamedSeries, kw_only=True):
    """One fit of the retrieval: its truth (npix, nzern, rms, seed), series and start, its time and how it ended;
    the truth-started one also holds phase_stderr_rms, the cold starts (since 2026-12-02) their distance from the
    judge's optimum and time to it, every record since 2026-12-03 its run's settings (STAMPED)."""

    npix: GridSize
    nzern: Order
    rms: Number
    seed: Seed
    start: str
    total_s: Seconds
    outcome: RetrievalOutcome
    phase_error_rms: MaybeNumber
    truth: Vector | None = None
    phase_stderr_rms: Number | None = None
    distance: MaybeNumber | UnsetType = UNSET
    target_s: Seconds | UnsetType | None = UNSET
    profile: str | None = None
    tol: Number | None = None
    threads: Annotated[int, msgspec.Meta(ge=1)] | None = None


def check_retrieval_record(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a retrieval record as read: an error names the file, the line and the key."""
    check_typed(path, number, record, RetrievalFit)
    if record["start"] not in STARTS:
        raise RunError(f"{path}: line {number}, key 'start': one of {', '.join(STARTS)}, got {record['start']!r}")
    series_of(path, number, record)
    outcome = record["outcome"]
    vectors = {"truth": record.get("truth"), "outcome.x": outcome["x"], "outcome.stderr": outcome.get("stderr")}
    if outcome.get("convergence") is not None:
        vectors |= {f"outcome.convergence.{key}": outcome["convergence"].get(key)
                    for key in ("stderr", "stderr_sandwich")}
    check_vectors(path, number, vectors, len(outcome["x"]))
    if record["start"] == FROM_TRUTH:
        check_typed(path, number, record, TruthStarted)
        if "optimum" in record:  # fits since 2026-12-02: the optimum the truth's cold starts are judged against
            check_typed(path, number, record, Judge)
            check_optimum(path, number, record["optimum"] | {key: record[key] for key in ("npix", "nzern")}
                          | {"objective": DEFAULT, "data_sha256": record["data_sha256"]})
    elif "distance" in record:  # cold starts since 2026-12-02: distance from the judge's optimum, time to it
        check_typed(path, number, record, Judged)
        if record["target_s"] is not None and not record["target_s"] <= record["total_s"]:
            raise RunError(f"{path}: line {number}, key 'target_s': the time to the target must lie in (0, total_s = "
                           f"{record['total_s']}], got {record['target_s']}")


class TruthStarted(Record):
    """What a fit from the truth (the judge of the cold starts) also holds."""

    phase_stderr_rms: Number


class Judge(Record):
    """What a fit from the truth holding the optimum its cold starts are judged against also holds."""

    data_sha256: str
    optimum: dict


class Judged(Record):
    """What a cold start judged against the judge's optimum also holds (since 2026-12-02)."""

    distance: MaybeNumber
    target_s: Seconds | None


class RetrievalFit(RetrievalRecord, kw_only=True):
    """A retrieval record as read, in today's schema (its gradient's name today's, its minimizer named); the judge's
    optimum typed where it holds one; distance and target_s UNSET in cold starts made before 2026-12-02."""

    data_sha256: str | None = None
    optimum: HeldOptimum | UnsetType = UNSET

    @property
    def truth_point(self) -> tuple:
        """The truth it fitted: (npix, nzern, rms, seed)."""
        return self.npix, self.nzern, self.rms, self.seed

    @property
    def key(self) -> tuple:
        """What identifies it: its truth, series and start."""
        return (*self.truth_point, self.series, self.start)

    @property
    def judged_by_distance(self) -> bool:
        """Whether a cold start records its distance from the judge's optimum (runs since 2026-12-02)."""
        return self.distance is not UNSET


def read_retrieval(path: pathlib.Path, repair: bool = False, strict: bool = False) -> list[RetrievalFit]:
    """The records of a retrieval run's points.jsonl, validated and typed in today's schema; two different fits of
    one truth, series and start are refused (identical ones too where strict)."""
    records = read_keyed(path, check_retrieval_record, record_key, "truth, series and start", repair, strict)
    return [as_retrieval_fit(record) for record in records]


def as_retrieval_fit(record: dict) -> RetrievalFit:
    """A validated retrieval record in today's schema: the older gradient names renamed."""
    series = Series.of(record)
    return msgspec.convert(record | {"gradient": series.gradient, "minimizer": series.minimizer}, RetrievalFit)


def truth_key(record: dict) -> tuple:
    """The truth a record as written fitted: (npix, nzern, rms, seed)."""
    return record["npix"], record["nzern"], record["rms"], record["seed"]


def record_key(record: dict) -> tuple:
    """What identifies a record as written: its truth, series and start (RetrievalFit.key)."""
    return (*truth_key(record), Series.of(record), record["start"])

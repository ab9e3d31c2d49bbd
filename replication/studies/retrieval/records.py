"""The cold-start retrieval's records (retrieval-<profile>/points.jsonl): schema, keys and reader."""

from __future__ import annotations

import pathlib
from typing import Annotated

import msgspec
from msgspec import UNSET, UnsetType

from replication.core.fit_records import Account, HeldOptimum, NamedSeries, check_held, series_of
from replication.core.records import (
    RECORD_SCHEMA,
    FitEnd,
    GridSize,
    MaybeNumber,
    Number,
    Order,
    Record,
    Seconds,
    Seed,
    Vector,
    as_typed,
    check_schema,
    check_typed,
    check_vectors,
    read_typed,
)
from replication.core.results import RunError

FROM_TRUTH, PLAIN, STAGED = "from the truth", "cold start", "cold start, orders raised"
"""How a fit starts: at the truth (the judge of the others), at zero aberration, or at zero aberration fitting the
Zernike orders 2, 3, ... up to the point's in turn, each from the last one's result (as OOF software does)."""


STARTS = (FROM_TRUTH, PLAIN, STAGED)


class RetrievalOutcome(FitEnd):
    stderr: Vector | None = None
    convergence: Account | None = None


class RetrievalRecord(NamedSeries, kw_only=True):
    """One fit of the retrieval: its truth (npix, nzern, rms, seed), series and start, its time and how it ended;
    the truth-started one also holds phase_stderr_rms, the cold starts of runs that judge by distance their distance
    from the judge's optimum and time to it, and records of runs that stamp them their run's settings (STAMPED)."""

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


def check_retrieval_record(path: pathlib.Path, number: int, record: dict) -> RetrievalFit:
    """A retrieval record as read, typed and validated: an error names the file, the line and the key; a record of an
    older version is refused, naming the migration (core.records.migrated_fit)."""
    check_typed(path, number, record, RetrievalFit)
    check_schema(path, number, record.get("schema", 1), RECORD_SCHEMA)
    series_of(path, number, record)
    fit = as_typed(path, number, record, RetrievalFit)
    if fit.start not in STARTS:
        raise RunError(f"{path}: line {number}, key 'start': one of {', '.join(STARTS)}, got {fit.start!r}")
    outcome = fit.outcome
    vectors = {"truth": fit.truth, "outcome.x": outcome.x, "outcome.stderr": outcome.stderr}
    if outcome.convergence is not None:
        vectors |= {"outcome.convergence.stderr": outcome.convergence.stderr,
                    "outcome.convergence.stderr_sandwich": outcome.convergence.stderr_sandwich}
    check_vectors(path, number, vectors, len(outcome.x))
    if fit.start == FROM_TRUTH:
        check_typed(path, number, record, TruthStarted)
        if fit.optimum:  # the optimum the truth's cold starts are judged against (runs that judge by distance)
            check_typed(path, number, record, Judge)
            check_held(path, number, fit.optimum, "optimum.")
    elif fit.judged_by_distance:
        check_typed(path, number, record, Judged)
        if fit.target_s is not None and not fit.target_s <= fit.total_s:
            raise RunError(f"{path}: line {number}, key 'target_s': the time to the target must lie in (0, total_s = "
                           f"{fit.total_s}], got {fit.target_s}")
    return fit


class TruthStarted(Record):
    """What a fit from the truth (the judge of the cold starts) also holds."""

    phase_stderr_rms: Number


class Judge(Record):
    """What a fit from the truth holding the optimum its cold starts are judged against also holds."""

    data_sha256: str
    optimum: HeldOptimum


class Judged(Record):
    """What a cold start judged against the judge's optimum also holds."""

    distance: MaybeNumber
    target_s: Seconds | None


class RetrievalFit(RetrievalRecord, kw_only=True):
    """A retrieval record as read, in today's schema; the judge's
    optimum typed where it holds one; distance and target_s UNSET in cold starts of runs judged by the objective
    (the older rule: SAME_OPTIMUM_NLL)."""

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
        """Whether a cold start records its distance from the judge's optimum (else it is judged by the older rule)."""
        return self.distance is not UNSET


def read_retrieval(path: pathlib.Path, repair: bool = False, strict: bool = False) -> list[RetrievalFit]:
    """The records of a retrieval run's points.jsonl, validated and typed in today's schema; two different fits of
    one truth, series and start are refused (identical ones too where strict)."""
    return read_typed(path, check_retrieval_record, lambda fit: fit.key, "truth, series and start", repair, strict)

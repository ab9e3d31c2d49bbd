"""Retrieval from a cold start, read side (no torch): how each fit ended against a fit of the same data started at
the truth, and the tables the report shows (claims.retrieval judges C3 and C4 on them). `measure` runs the fits."""

import dataclasses
import math
import statistics

from replication.core.judging import Ratio, wilson
from replication.core.optimum import TARGET
from replication.core.series import NUMPY, TORCH_CPU
from replication.studies.retrieval.profiles import JUDGE
from replication.studies.retrieval.records import FROM_TRUTH, PLAIN, STAGED

SAME_OPTIMUM_NLL = 0.5
"""The older rule only (cold starts that record no distance): largest objective (negative log-likelihood) above the
truth-started fit's at which a fit that ended at a minimum counted as the same optimum. Half a Cauchy unit is about 3
true standard errors along one parameter (the Cauchy curvature is ~10x too small for this noise), so it let fits 9 SE
away count: cold starts that record their distance are judged by it (ending)."""


def ending(record, judge):
    """How a cold-start fit ended against the truth-started fit of the same data: "global optimum" (its end within
    optimum.TARGET standard errors of the judge's polished optimum, Mahalanobis under its sandwich covariance, with
    amp's sign folded: amp -> -amp leaves the beams unchanged), "local minimum" (at a minimum by the exact account,
    farther away), "stopped before the optimum", "not at a minimum" or "not finite". Cold starts that record no
    distance (the older rule): at a minimum with an objective within SAME_OPTIMUM_NLL of the judge's or below it."""
    outcome, account = record.outcome, record.outcome.convergence
    if record.judged_by_distance and record.distance is not None and record.distance <= TARGET:
        return "global optimum"
    if account is None or outcome.fun is None:
        return "not finite"
    if not account.at_optimum:
        return "not at a minimum" if math.isnan(account.judging_newton) else "stopped before the optimum"
    if record.judged_by_distance:
        return "local minimum"
    return "global optimum" if outcome.fun <= judge.outcome.fun + SAME_OPTIMUM_NLL else "local minimum"


def time_to_solution(record, end):
    """(seconds, reached) of a cold start: its time to the judge's optimum, or (no distance recorded) its time
    to stop where it ended at the global optimum; a fit that never reached it counts at its total time (a bound)."""
    if record.judged_by_distance:
        return (record.target_s, True) if record.target_s is not None else (record.total_s, False)
    return record.total_s, end == "global optimum"


def judged(records):
    """[(record, its judge, ending)] for every cold-start record whose truth has a judge."""
    judges = {r.truth_point: r for r in records if (r.series, r.start) == JUDGE}
    return [(r, judges[r.truth_point], ending(r, judges[r.truth_point])) for r in records
            if r.start != FROM_TRUTH and r.truth_point in judges]


def method_label(series, start):
    """A method's name in tables: its series, with the staged start said."""
    return series.label + (" (orders raised)" if start == STAGED else "")


def median_of_finite(values):
    """The median of the values recorded (a phase error is null where the fit's end was not finite), None where
    none was."""
    kept = [value for value in values if value is not None]
    return statistics.median(kept) if kept else None


@dataclasses.dataclass
class Fits:
    """The cold starts of one method at one aberration size (or one point): how many were made, and of each its
    phase error (rad rms over the dish; None where its end was not finite), the judge's, and for those that reached
    the global optimum their time to solution (s), iterations and evaluations."""

    made: int = 0
    errors: list = dataclasses.field(default_factory=list)
    judge_errors: list = dataclasses.field(default_factory=list)
    times: list = dataclasses.field(default_factory=list)
    nit: list = dataclasses.field(default_factory=list)
    nfev: list = dataclasses.field(default_factory=list)

    def add(self, record, judge, end):
        self.made += 1
        self.errors.append(record.phase_error_rms)
        self.judge_errors.append(judge.phase_error_rms)
        if end == "global optimum":
            self.times.append(time_to_solution(record, end)[0])
            self.nit.append(record.outcome.nit)
            self.nfev.append(record.outcome.nfev)

    @property
    def at_optimum(self) -> int:
        """How many reached the global optimum."""
        return len(self.times)


@dataclasses.dataclass(frozen=True)
class SuccessCell:
    """One method at one aberration size: fits at the global optimum of those made, its Wilson interval, the median
    phase error (rad rms) and the truth-started fits'."""

    made: int
    at_optimum: int
    interval: tuple
    error: float | None
    judge_error: float | None


@dataclasses.dataclass(frozen=True)
class SuccessRow:
    rms: float
    cells: dict


def success_table(records) -> list[SuccessRow]:
    """Per rms and method over every point and seed: fits that reached the global optimum, of those made, and
    the median phase error of those (radians rms over the dish) against the truth-started fits'."""
    rows = {}
    for record, judge, end in judged(records):
        rows.setdefault(record.rms, {}).setdefault((record.series, record.start), Fits()).add(record, judge, end)
    return [SuccessRow(rms, {method: SuccessCell(f.made, f.at_optimum, wilson(f.at_optimum, f.made),
                                                 median_of_finite(f.errors), median_of_finite(f.judge_errors))
                             for method, f in cells.items()})
            for rms, cells in sorted(rows.items())]


@dataclasses.dataclass(frozen=True)
class PointCell:
    """One method at one point and aberration size: fits at the global optimum of those made, their median time to
    solution (s), iterations and evaluations (None where none reached it), the median phase error (rad rms)."""

    made: int
    at_optimum: int
    s: float | None
    nit: float | None
    nfev: float | None
    error: float | None


@dataclasses.dataclass(frozen=True)
class PointRow:
    npix: int
    nzern: int
    rms: float
    cells: dict
    stderr: float | None
    """The truth-started fits' median phase standard error (rad rms)."""


def median_or_none(values):
    return statistics.median(values) if values else None


def point_table(records) -> list[PointRow]:
    """Per (npix, nzern, rms) and method: share at the global optimum, median time to solution of those (s),
    median iterations and evaluations, median phase error and the truth-started fits' phase standard error."""
    rows, stderr = {}, {}
    for record, judge, end in judged(records):
        key = (record.npix, record.nzern, record.rms)
        rows.setdefault(key, {}).setdefault((record.series, record.start), Fits()).add(record, judge, end)
        stderr.setdefault(key, []).append(judge.phase_stderr_rms)
    return [PointRow(npix, nzern, rms, {method: PointCell(f.made, f.at_optimum, median_or_none(f.times),
                                                         median_or_none(f.nit), median_or_none(f.nfev),
                                                         median_of_finite(f.errors)) for method, f in cells.items()},
                     median_of_finite(stderr[(npix, nzern, rms)]))
            for (npix, nzern, rms), cells in sorted(rows.items())]


def speedup_ratios(records, slow=NUMPY, fast=TORCH_CPU):
    """{(npix, nzern): median over truths of time(slow) / time(fast)} of the plain cold starts, over the truths where
    both reached the global optimum: the ratios C3 and C4 judge, as the sweep's from starts at the truth. A cold start
    stuck in another minimum never reaches the optimum at any time (its share is the success table's), so the
    speed-up is that of the fits that succeed. Cold starts judged by distance: times to the judge's optimum; the
    others: times to stop."""
    times = {}
    for record, _, end in judged(records):
        if record.start == PLAIN:
            times.setdefault(record.truth_point, {})[record.series] = time_to_solution(record, end)
    by_point = {}
    for (npix, nzern, _, _), pair in times.items():
        if slow in pair and fast in pair and pair[slow][1] and pair[fast][1]:
            ratio = pair[slow][0] / pair[fast][0]
            by_point.setdefault((npix, nzern), []).append(Ratio(ratio, ratio, ratio))
    return {key: Ratio(statistics.median(values), min(values), max(values)) for key, values in sorted(by_point.items())}


def endings_count(records):
    """{ending: count} over every judged cold-start fit."""
    counts = {}
    for _, _, end in judged(records):
        counts[end] = counts.get(end, 0) + 1
    return dict(sorted(counts.items()))

"""A point's time to solution and the speed-up between two series at a grid point, from the sweep's point records
(a bound where a fit never reached its target): what the sweep, the peers and the real maps' speed-up line read."""

import math
import statistics

import numpy as np
from msgspec import UNSET

from replication.core.judging import AT_LEAST, AT_MOST, UNDETERMINED, Ratio
from replication.core.simulation import identifiable


def timed_to_target(record):
    """Whether a measured point records each repeat's time to its optimum (runs that time to a target): its time is then
    a time to solution, else (older runs) the time the optimiser took to stop."""
    return not record.estimated and bool(record.target)


def repeat_times(record):
    """(seconds per repeat, whether every repeat reached the optimum) of a measured point: each repeat's time to
    solution, a repeat that never came within the target counted at its total time (a lower bound); a point
    recorded before the targets: each repeat's time to stop, reached where the fit is a solution (how_it_ended)."""
    totals = record.total_s.each
    if timed_to_target(record):
        times = record.target.times
        return [t if t is not None else total for t, total in zip(times, totals, strict=True)], None not in times
    return list(totals), is_solution(record)


def seconds(record):
    """Median time to solution of a point (setup + fit up to the first evaluation within the target of the point's
    optimum; a repeat that never got there at its total time, then a bound), measured or estimated; the time to stop
    where the point records no target (the history runs, timed to the optimiser's stop)."""
    if record.estimated:
        return record.fit_s.median
    return statistics.median(repeat_times(record)[0]) if timed_to_target(record) else record.total_s.median


def stop_seconds(record):
    """Median seconds from the start to the optimiser's stop (setup + fit): what the paper's script timed; over the
    repeats run to their end (ended_repeats)."""
    return record.fit_s.median if record.estimated else statistics.median(ended_repeats(record, "total_s"))


def ended_repeats(record, times="total_s"):
    """A measured point's seconds (times: "total_s", "fit_s" or "setup_s") of the repeats run to the minimizer's own
    stop: every repeat but those stopped at the target (timing.time_fit's), whose time to stop is not their own."""
    seconds = getattr(record, times).each
    stopped = (record.target and record.target.stopped) or [False] * len(seconds)
    return [value for value, early in zip(seconds, stopped, strict=True) if not early]


def stopped_at_limit(record):
    """Whether a point's fit was stopped at the sweep's time limit (points that record their limit; such a fit is its
    point's only one): not allowed to end, so its end is not its own (C5a, C5b leave it out) and its time, where it
    never reached the target, is a bound."""
    return not record.estimated and bool(record.stopped_at_limit)


def how_it_ended(record):
    """Why a point's time is not a time to solution, in a few words, or None where it is one.

    Points timed to the target: a solution where every repeat came within the target of the point's optimum, else
    censored (its time a bound). Older points: measured fits with an exact account are solutions when they ended at
    the optimum (Account.at_optimum); fits recorded before the account, when neither scipy nor torchmin
    flagged a failure other than precision loss (scipy's word for a line search that can no longer see a decrease,
    at the optimum or not). Estimated points are predictions, judged by the fit they were predicted from.
    """
    if not identifiable(record.npix, record.nzern):
        return "not identifiable (rank-deficient design)"
    if record.estimated:
        return None
    targeted = timed_to_target(record)
    if targeted and record.target.reached == len(record.target.times):
        return None
    if stopped_at_limit(record):
        return f"stopped at its time limit ({record.time_limit_s:g} s) before the target (time a bound)"
    outcome = record.outcome
    if outcome.convergence is not UNSET:
        if outcome.convergence is None:
            return "objective not finite"
        if not np.isfinite(outcome.convergence.judging_newton):
            return "not at a minimum (Hessian not positive definite)"
        if not outcome.convergence.at_optimum:
            return "stopped before the optimum"
    if targeted:
        return f"never within {record.target.se:g} SE of the optimum (time a bound)"
    if outcome.success or "precision loss" in outcome.message:
        return None
    return f"failed: {outcome.message}"


def is_solution(record):
    """Whether a point's time counts as a time to solution (see how_it_ended)."""
    return how_it_ended(record) is None


def ratio_of(slow, fast):
    """The speed-up between two measured points timed alike (Ratio), or None where neither fit reached the target."""
    a, a_reached = repeat_times(slow)
    b, b_reached = repeat_times(fast)
    value = seconds(slow) / seconds(fast)
    pairs = [x / y for x in a for y in b]
    if a_reached and b_reached:
        return Ratio(value, min(pairs), max(pairs))
    if b_reached:
        return Ratio(value, min(pairs), math.inf, AT_LEAST)
    if a_reached:
        return Ratio(value, 0.0, max(pairs), AT_MOST)
    return Ratio(math.nan, 0.0, math.inf, UNDETERMINED)


def comparable(a, b, measured_only=True):
    """Whether two points of one grid point enter a ratio: both measured (or measured_only False), timed on the same
    node, both identifiable, and both timed alike (to the target, or both to the optimiser's stop)."""
    if measured_only and (a.estimated or b.estimated):
        return False
    if a.node != b.node or not identifiable(a.npix, a.nzern):
        return False
    return a.estimated or b.estimated or timed_to_target(a) == timed_to_target(b)


def speedups(series, slow, fast, measured_only=True):
    """{(npix, nzern): Ratio of seconds(slow) / seconds(fast)} over points both series have, timed on the same node.
    Points timed to the target: every pair enters, a censored fit's as a bound (a pair where neither fit reached the
    target has no ratio, see complete_sizes); older points: both fits solutions (how_it_ended), time to stop."""
    a, b = series.get(slow, {}), series.get(fast, {})
    ratios = {}
    for key in sorted(set(a) & set(b)):
        if not comparable(a[key], b[key], measured_only):
            continue
        if a[key].estimated or b[key].estimated:
            value = seconds(a[key]) / seconds(b[key])
            ratios[key] = Ratio(value, value, value)
        elif timed_to_target(a[key]) or (is_solution(a[key]) and is_solution(b[key])):
            ratio = ratio_of(a[key], b[key])
            if ratio.kind != UNDETERMINED:
                ratios[key] = ratio
    return ratios

"""Retrieval from a cold start, read side (no torch): how each fit ended against a fit of the same data started at
the truth, and the tables the report shows (claims.retrieval judges C3 and C4 on them). `measure` runs the fits."""

import math
import statistics

from replication.core.judging import Ratio, wilson
from replication.core.optimum import TARGET
from replication.core.series import NUMPY, TORCH_CPU
from replication.studies.retrieval.profiles import JUDGE
from replication.studies.retrieval.records import FROM_TRUTH, PLAIN, STAGED

SAME_OPTIMUM_NLL = 0.5
"""Runs before 2026-12-02 only: largest objective (negative log-likelihood) above the truth-started fit's at which a
fit that ended at a minimum counted as the same optimum. Half a Cauchy unit is about 3 true standard errors along
one parameter (the Cauchy curvature is ~10x too small for this noise), so it let fits 9 SE away count: runs since
judge by distance (ending)."""


def ending(record, judge):
    """How a cold-start fit ended against the truth-started fit of the same data: "global optimum" (its end within
    optimum.TARGET standard errors of the judge's polished optimum, Mahalanobis under its sandwich covariance, with
    amp's sign folded: amp -> -amp leaves the beams unchanged), "local minimum" (at a minimum by the exact account,
    farther away), "stopped before the optimum", "not at a minimum" or "not finite". Runs before 2026-12-02 (no
    distance recorded): at a minimum with an objective within SAME_OPTIMUM_NLL of the judge's or below it."""
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
    """(seconds, reached) of a cold start: its time to the judge's optimum, or (runs before 2026-12-02) its time
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


def success_table(records):
    """Per rms and method over every point and seed: fits that reached the global optimum, of those made, and
    the median phase error of those (radians rms over the dish) against the truth-started fits'."""
    rows = {}
    for record, judge, end in judged(records):
        cell = rows.setdefault(record.rms, {}).setdefault((record.series, record.start),
                                                          {"made": 0, "global": 0, "errors": [], "judge": []})
        cell["made"] += 1
        cell["global"] += end == "global optimum"
        cell["errors"].append(record.phase_error_rms)
        cell["judge"].append(judge.phase_error_rms)
    return [{"rms": rms, "cells": {method: {"made": c["made"], "global": c["global"],
                                            "interval": wilson(c["global"], c["made"]),
                                            "error": median_of_finite(c["errors"]),
                                            "judge_error": median_of_finite(c["judge"])}
                                   for method, c in cells.items()}}
            for rms, cells in sorted(rows.items())]


def point_table(records):
    """Per (npix, nzern, rms) and method: share at the global optimum, median time to solution of those (s),
    median iterations and evaluations, median phase error and the truth-started fits' phase standard error."""
    rows = {}
    for record, judge, end in judged(records):
        key = (record.npix, record.nzern, record.rms)
        cell = rows.setdefault(key, {"cells": {}, "stderr": []})["cells"].setdefault(
            (record.series, record.start), {"made": 0, "times": [], "nit": [], "nfev": [], "errors": []})
        cell["made"] += 1
        cell["errors"].append(record.phase_error_rms)
        if end == "global optimum":
            cell["times"].append(time_to_solution(record, end)[0])
            cell["nit"].append(record.outcome.nit)
            cell["nfev"].append(record.outcome.nfev)
        rows[key]["stderr"].append(judge.phase_stderr_rms)
    table = []
    for (npix, nzern, rms), row in sorted(rows.items()):
        cells = {method: {"made": c["made"], "global": len(c["times"]),
                          "s": statistics.median(c["times"]) if c["times"] else None,
                          "nit": statistics.median(c["nit"]) if c["nit"] else None,
                          "nfev": statistics.median(c["nfev"]) if c["nfev"] else None,
                          "error": median_of_finite(c["errors"])} for method, c in row["cells"].items()}
        table.append({"npix": npix, "nzern": nzern, "rms": rms, "cells": cells,
                      "stderr": median_of_finite(row["stderr"])})
    return table


def speedup_ratios(records, slow=NUMPY, fast=TORCH_CPU):
    """{(npix, nzern): median over truths of time(slow) / time(fast)} of the plain cold starts, over the truths where
    both reached the global optimum: the ratios C3 and C4 judge, as the sweep's from starts at the truth. A cold start
    stuck in another minimum never reaches the optimum at any time (its share is the success table's), so the
    speed-up is that of the fits that succeed. Runs since 2026-12-02: times to the judge's optimum; older runs: times
    to stop."""
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

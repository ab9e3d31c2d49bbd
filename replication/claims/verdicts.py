"""The verdict of each claim from the numbers it is judged on (each graded by its rule in RULES)."""

import math
import statistics

import numpy as np

from replication.claims import C3_ORDERS, C4_MIN_NPIX, C4_ORDERS, CLAIMS, SAME_SOLUTION_STDERR, parameter_count
from replication.core.judging import (
    NOT_MEASURED,
    UNDETERMINED,
    absolute_range,
    aggregate,
    as_ratios,
    share_verdict,
    slope_range,
    weakest_size,
)
from replication.studies.sweep.read import complete_sizes

RULES = {claim.id: claim.rule for claim in CLAIMS}
"""Each claim's rule, made from claims.CLAIMS: the verdict functions grade with it, the report prints its text."""


def verdict_c1(ratios):
    """C1, up to ~100x NumPy -> torch on a GPU: the median over Zernike orders at the largest grid size with a
    measured ratio (one outlier cannot set it); >= 50 reproduced, >= 10 partly. The largest single ratio and its
    point are kept beside it. Bounds (censored fits) enter as bounds (aggregate)."""
    ratios = as_ratios(ratios)
    if not ratios:
        return {"value": None, "verdict": NOT_MEASURED, "npix": None, "max": None, "point": None}
    npix = max(key[0] for key in ratios)
    value = aggregate(statistics.median, [v for key, v in ratios.items() if key[0] == npix])
    point = max((key for key in ratios if ratios[key].kind != UNDETERMINED), key=ratios.get, default=None)
    return {"value": value, "verdict": RULES["C1"].grade(value), "npix": npix,
            "max": ratios[point] if point else None, "point": point,
            "orders": sorted(key[1] for key in ratios if key[0] == npix)}


def verdict_c2(ratios, min_npix=256):
    """C2, GPU ~10x CPU torch for npix >= 256: the smallest per-size median ratio there (RULES["C2"]), and each
    size's."""
    value, medians = weakest_size(ratios, min_npix)
    return {"value": value, "verdict": RULES["C2"].grade(value), "by_npix": medians}


def verdict_c3(ratios, min_npix=128):
    """C3, CPU torch ~10x NumPy for intermediate and large grids: the smallest per-size median ratio over
    npix >= 128 (RULES["C3"]), each size's median over the orders C3_ORDERS only."""
    value, medians = weakest_size({key: ratio for key, ratio in as_ratios(ratios).items() if key[1] in C3_ORDERS},
                                  min_npix)
    return {"value": value, "verdict": RULES["C3"].grade(value), "by_npix": medians}


def verdict_c4(ratios):
    """C4, speed-up independent of the number of parameters: the slope of log(speed-up) against log(P) over the
    fixed set of orders C4_ORDERS only (other orders a run measured are ignored, so the verdict does not depend on
    them), at the largest grid (npix >= C4_MIN_NPIX) with every order of the set where the verdict is determined (a
    value, or bounds that leave one verdict), else at the largest such grid; "open_above" lists the larger sizes
    passed over because bounds left their verdict undetermined there. |slope| <= 0.3
    reproduced, <= 0.6 partly. A slope of 1 is a speed-up proportional to P (finite differences' P + 1
    evaluations against one gradient). The spread (max / min over the set) is kept beside it. Where a ratio is a
    bound, the slope is known only within a range ("known"): graded at both ends (Rule.grade_range); "repeats" is the
    slope's range over the repeats' ranges."""
    by_npix = {}
    for (npix, nzern), value in as_ratios(ratios).items():
        if nzern in C4_ORDERS:
            by_npix.setdefault(npix, {})[nzern] = value
    candidates = sorted(npix for npix, values in by_npix.items() if npix >= C4_MIN_NPIX
                        and len(values) == len(C4_ORDERS))
    if not candidates:
        return {"value": None, "verdict": NOT_MEASURED, "npix": None, "by_nzern": {}, "spread": None,
                "known": None, "repeats": None, "open_above": []}
    slopes = {npix: slope_at(npix, dict(sorted(by_npix[npix].items()))) for npix in candidates}
    chosen = max((npix for npix in candidates if slopes[npix]["verdict"] != UNDETERMINED), default=candidates[-1])
    return slopes[chosen] | {"open_above": [npix for npix in candidates if npix > chosen]}


def slope_at(npix, values):
    """C4's slope and verdict at one grid size, from its ratios at the orders C4_ORDERS ({nzern: Ratio})."""
    log_p = np.log([parameter_count(n) for n in values])
    known = slope_range(log_p, [r.floor for r in values.values()], [r.ceiling for r in values.values()])
    repeats = slope_range(log_p, [r.low for r in values.values()], [r.high for r in values.values()])
    exact = not any(r.is_bound for r in values.values())
    slope = float(np.polyfit(log_p, np.log(list(values.values())), 1)[0]) if exact else None
    verdict = UNDETERMINED if any(map(math.isnan, known)) else RULES["C4"].grade_range(*absolute_range(*known))
    spread = max(values.values()) / min(values.values()) if exact else None
    return {"value": slope, "verdict": verdict, "npix": npix, "by_nzern": values, "spread": spread,
            "known": known, "repeats": repeats}


VERDICTS = {"C1": verdict_c1, "C2": verdict_c2, "C3": verdict_c3, "C4": verdict_c4}
"""The verdict function of each claim judged on times to solution (claims.Claim.ratio)."""


def judge_timed(series):
    """{claim: verdict} of every claim judged on times to solution, on a sweep's series: the claim's speed-up
    (claims.Claim.ratio) at every point both series measured (complete_sizes: censored ones as bounds), judged by
    its verdict function."""
    return {claim.id: VERDICTS[claim.id](complete_sizes(series, *claim.ratio))
            for claim in CLAIMS if claim.timed}


def verdict_c5a(crosscheck_fits, sweep_differences):
    """C5a, the implementations agree: each float64 fit within SAME_SOLUTION_STDERR standard error of the other fits
    of the same data, over the cross-check's fits and the sweep's; all reproduced, >= 90% partly; the worst pair
    kept. Runs since 2026-12-02: every pair of fits, by the Mahalanobis distance under the point's optimum. Older
    runs: against the NumPy fit, where both fits are solutions (a comparison of two fits stopped short of the
    optimum says where each stopped, not whether the implementations agree)."""
    rows = [row for row in list(crosscheck_fits) + list(sweep_differences) if row["comparable"]]
    result = share_verdict([row["max_stderr"] <= SAME_SOLUTION_STDERR for row in rows], RULES["C5a"])
    result["worst"] = max(rows, key=lambda row: row["max_stderr"]) if rows else None
    result["not_comparable"] = sum(not row["comparable"] for row in list(crosscheck_fits) + list(sweep_differences))
    result["comparisons"] = [(comparison_key(row), row["max_stderr"]) for row in rows]
    return result


def comparison_key(row) -> tuple:
    """What makes a C5a pair the same comparison in another run: the same two series fitted to the same data (the
    cross-check's or the sweep's, whose data are seeded by their point alone) at the same point."""
    return (row.get("source", "sweep"), str(row["series"]), str(row.get("against", "")), row["npix"], row["nzern"])


def distinct_comparisons(results) -> dict:
    """C5a over several runs' results with each comparison counted once (refits of the same data are one
    comparison, passing only where every run's pair of it passes): {passed, total, pairs (as counted per run),
    worst (the largest distance, standard errors)}."""
    worst = {}
    for result in results:
        for key, distance in result.get("comparisons", []):
            worst[key] = max(worst.get(key, distance), distance)
    return {"passed": sum(distance <= SAME_SOLUTION_STDERR for distance in worst.values()), "total": len(worst),
            "pairs": sum(result["total"] for result in results), "worst": max(worst.values(), default=None)}


def verdict_c5b(fit_endings):
    """C5b, the fits reached the optimum: each measured fit with an exact account (cross-check and sweep) ended
    at the optimum (optimum.ended_at_target); all reproduced, >= 90% partly."""
    return share_verdict(list(fit_endings), RULES["C5b"])


def verdict_c6(mirror_total):
    """C6, readable port: share of lines identical between the trees once library names are folded, over the
    modules that differ at all (byte-identical modules call no array-library function that differs and are
    counted apart); >= 0.8 reproduced, >= 0.6 partly."""
    return {"value": mirror_total["share"], "verdict": RULES["C6"].grade(mirror_total["share"])}

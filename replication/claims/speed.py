"""The paper's claims judged on times to solution, C1-C4: each claim's verdict from a run's speed-ups (NumPy over
torch at each grid size and order, a bound where a fit never reached its target), its words in a cell and over
several runs, and the other rules a referee could defend for it (METHODS.md's sensitivity table)."""

import dataclasses
import math
import statistics

import numpy as np

from replication.claims.claim import (
    C3_ORDERS,
    C4_MIN_NPIX,
    C4_ORDERS,
    Alternative,
    Claim,
    parameter_count,
)
from replication.claims.timed_words import (
    at_size,
    bound_caveats,
    c1_orders,
    cores_of,
    gpu_seconds,
    per_size_text,
    size_text,
    slope_brief,
    slope_text,
    slope_words,
)
from replication.core import point_times
from replication.core.format import times, value_range
from replication.core.judging import (
    NOT_MEASURED,
    UNDETERMINED,
    Ratio,
    Rule,
    Verdict,
    absolute_range,
    aggregate,
    as_ratios,
    slope_range,
    weakest_npix,
    weakest_size,
)
from replication.core.objectives import CAUCHY, Objective
from replication.core.series import NUMPY, NUMPY_ADJOINT, TORCH_ADJOINT, TORCH_CPU, TORCH_CUDA
from replication.studies.sweep import read as sweep_read


@dataclasses.dataclass(frozen=True, kw_only=True)
class LargestSize(Verdict):
    """C1's verdict: the median over orders at the largest grid size (npix), the largest single ratio (max) at its
    point (npix, nzern), the orders at that size."""

    npix: int | None = None
    max: Ratio | None = None
    point: tuple | None = None
    orders: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True, kw_only=True)
class WeakestSize(Verdict):
    """C2's and C3's verdict: the smallest of the per-size medians, each size's in by_npix ({npix: Ratio})."""

    by_npix: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Slope(Verdict):
    """C4's verdict: the slope of log(speed-up) against log(P) at one grid size (npix), from its ratios by order
    (by_nzern); spread (max / min); known (the range the bounds leave it); repeats (its range over the repeats'
    ranges); open_above (larger sizes passed over because bounds left their verdict open)."""

    npix: int | None = None
    by_nzern: dict = dataclasses.field(default_factory=dict)
    spread: float | None = None
    known: tuple | None = None
    repeats: tuple | None = None
    open_above: list = dataclasses.field(default_factory=list)

    def extent(self):
        """The range the absolute slope is known to lie in."""
        return absolute_range(*self.known)


def verdict_c1(ratios) -> LargestSize:
    """C1, up to ~100x NumPy -> torch on a GPU: the median over Zernike orders at the largest grid size with a
    measured ratio (one outlier cannot set it); >= 50 reproduced, >= 10 partly. The largest single ratio and its
    point are kept beside it. Bounds (censored fits) enter as bounds (aggregate)."""
    ratios = as_ratios(ratios)
    if not ratios:
        return LargestSize()
    npix = max(key[0] for key in ratios)
    value = aggregate(statistics.median, [v for key, v in ratios.items() if key[0] == npix])
    point = max((key for key in ratios if ratios[key].kind != UNDETERMINED), key=ratios.get, default=None)
    return LargestSize(value=value, verdict=C1.rule.grade(value), npix=npix, max=ratios[point] if point else None,
                       point=point, orders=sorted(key[1] for key in ratios if key[0] == npix))


def verdict_c2(ratios, min_npix=256) -> WeakestSize:
    """C2, GPU ~10x CPU torch for npix >= 256: the smallest per-size median ratio there, and each size's."""
    value, medians = weakest_size(ratios, min_npix)
    return WeakestSize(value=value, verdict=C2.rule.grade(value), by_npix=medians)


def verdict_c3(ratios, min_npix=128, rule: Rule | None = None) -> WeakestSize:
    """C3, CPU torch ~10x NumPy for intermediate and large grids: the smallest per-size median ratio over
    npix >= 128, each size's median over the orders C3_ORDERS only; graded by C3's rule (or rule)."""
    value, medians = weakest_size({key: ratio for key, ratio in as_ratios(ratios).items() if key[1] in C3_ORDERS},
                                  min_npix)
    return WeakestSize(value=value, verdict=(rule or C3.rule).grade(value), by_npix=medians)


def verdict_c4(ratios) -> Slope:
    """C4, speed-up independent of the number of parameters: the slope of log(speed-up) against log(P) over the
    fixed set of orders C4_ORDERS only (other orders a run measured are ignored, so the verdict does not depend on
    them), at the largest grid (npix >= C4_MIN_NPIX) with every order of the set where the verdict is determined (a
    value, or bounds that leave one verdict), else at the largest such grid; open_above lists the larger sizes
    passed over because bounds left their verdict undetermined there. |slope| <= 0.3 reproduced, <= 0.6 partly. A
    slope of 1 is a speed-up proportional to P (finite differences' P + 1 evaluations against one gradient). Where a
    ratio is a bound, the slope is known only within a range (known): graded at both ends (Rule.grade_range)."""
    by_npix = {}
    for (npix, nzern), value in as_ratios(ratios).items():
        if nzern in C4_ORDERS:
            by_npix.setdefault(npix, {})[nzern] = value
    candidates = sorted(npix for npix, values in by_npix.items() if npix >= C4_MIN_NPIX
                        and len(values) == len(C4_ORDERS))
    if not candidates:
        return Slope()
    slopes = {npix: slope_at(npix, dict(sorted(by_npix[npix].items()))) for npix in candidates}
    chosen = max((npix for npix in candidates if slopes[npix].verdict != UNDETERMINED), default=candidates[-1])
    return dataclasses.replace(slopes[chosen], open_above=[npix for npix in candidates if npix > chosen])


def slope_at(npix, values) -> Slope:
    """C4's slope and verdict at one grid size, from its ratios at the orders C4_ORDERS ({nzern: Ratio})."""
    log_p = np.log([parameter_count(n) for n in values])
    known = slope_range(log_p, [r.floor for r in values.values()], [r.ceiling for r in values.values()])
    repeats = slope_range(log_p, [r.low for r in values.values()], [r.high for r in values.values()])
    exact = not any(r.is_bound for r in values.values())
    slope = float(np.polyfit(log_p, np.log(list(values.values())), 1)[0]) if exact else None
    verdict = UNDETERMINED if any(map(math.isnan, known)) else C4.rule.grade_range(*absolute_range(*known))
    spread = max(values.values()) / min(values.values()) if exact else None
    return Slope(value=slope, verdict=verdict, npix=npix, by_nzern=values, spread=spread, known=known,
                 repeats=repeats)


def ratios_of(claim: Claim, run, objective: Objective = CAUCHY) -> dict:
    """A timed claim's speed-ups on a run's sweep under one objective: {(npix, nzern): Ratio} at every point both
    series measured (censored ones as bounds)."""
    return sweep_read.complete_sizes(run.judged(objective)[1], *claim.ratio)


def judge_timed(series) -> dict:
    """{claim id: verdict} of every claim judged on times to solution, on a sweep's series."""
    return {claim.id: VERDICTS[claim.id](sweep_read.complete_sizes(series, *claim.ratio)) for claim in TIMED}


def evaluate_c1(run, objective: Objective) -> LargestSize:
    c1 = verdict_c1(ratios_of(C1, run, objective))
    return c1.worded(c1.npix and f"{times(c1.value)} at npix {c1.npix} (max {times(c1.max, False)} at npix "
                                 f"{c1.point[0]}, n = {c1.point[1]}); NumPy on {cores_of(run, objective)}")


def evaluate_c2(run, objective: Objective) -> WeakestSize:
    c2 = verdict_c2(ratios_of(C2, run, objective))
    return c2.worded(c2.by_npix and f"{per_size_text(c2.by_npix)}; torch-cpu on {cores_of(run, objective)}")


def words_c3(c3: WeakestSize) -> str:
    return f"{times(c3.value)} at npix {weakest_npix(c3.by_npix)}"


def evaluate_c3(run, objective: Objective) -> WeakestSize:
    c3 = verdict_c3(ratios_of(C3, run, objective))
    return c3.worded(c3.by_npix and words_c3(c3))


def evaluate_c4(run, objective: Objective) -> Slope:
    c4 = verdict_c4(ratios_of(C4, run, objective))
    return c4.worded(c4.npix and slope_text(c4))


def reason_timed(ratio: tuple, last: str):
    """Why a claim judged on the speed-up ratio (slower, faster) could not be judged on a run's sweep, in a few
    words, last where nothing else explains it (a function of run and objective)."""

    def reason(run, objective: Objective) -> str:
        series = run.judged(objective)[1]
        if ratio[1] == TORCH_CUDA and TORCH_CUDA not in series:
            return "no GPU series in this run"
        if not {NUMPY, TORCH_CPU} <= set(series):
            return "NumPy and torch-cpu were not both timed"
        solved = point_times.speedups(series, NUMPY, TORCH_CPU)
        old_rule = not sweep_read.timed_to_targets(series) and sweep_read.left_out(series)
        if ratio == (NUMPY, TORCH_CPU) and not solved and old_rule:
            return "no point where both NumPy's and torch-cpu's fits are solutions"
        if ratio != (NUMPY, TORCH_CUDA) and old_rule:
            return "no grid size large enough where every measured pair of fits is a pair of solutions"
        return last

    return reason


def off_yardstick_note(run, objective: Objective) -> list[str]:
    """The note of a sweep whose points' optima were recorded with the inverse Hessian as their covariance: those
    points are not judged."""
    off = run.off_yardstick.get(run.judged(objective)[0])
    return [f"{off} point(s) of this sweep not judged: their optimum's covariance is the inverse Hessian (recorded "
            "by older code), not the sandwich every rule judges on"] if off else []


def timed_notes(run, objective: Objective, found: Verdict) -> list[str]:
    return off_yardstick_note(run, objective) if found.verdict != NOT_MEASURED else []


def c4_caveats(measured, objective: Objective) -> list[str]:
    """C4's runs whose bounds leave the slope open, and its slope with the exact gradient on both sides."""
    notes = []
    open_ends = [found.known for _, _, found in measured if found.value is None and not math.isfinite(found.known[0])]
    both = sum(not math.isfinite(known[1]) for known in open_ends)
    if len(open_ends) > both:
        notes.append(f"on {len(open_ends) - both} run(s) the bounds leave the slope unknown from below")
    if both:
        notes.append(f"on {both} run(s) the bounds leave the slope open both ways")
    same = [verdict_c4(sweep_read.complete_sizes(run.judged(objective)[1], NUMPY_ADJOINT, TORCH_ADJOINT))
            for _, run, _ in measured]
    same = [found.value for found in same if found.value is not None]
    if same:
        notes.append("with the exact gradient on both sides, slope " + value_range(same, lambda v: f"{v:.2f}"))
    return notes


def c1_today(run, objective: Objective) -> Verdict:
    found = verdict_c1(ratios_of(C1, run, objective))
    return found.worded(found.npix and size_text(found.value, found.npix))


def c1_every_order(run, objective: Objective) -> Verdict:
    """C1's median at the largest grid that has every order the run measured anywhere (not only some)."""
    ratios = as_ratios(ratios_of(C1, run, objective))
    orders = {nzern for _, nzern in ratios}
    complete = [npix for npix in {npix for npix, _ in ratios}
                if {nzern for size, nzern in ratios if size == npix} == orders]
    return median_at(ratios, max(complete), C1.rule) if complete else Verdict()


def median_at(ratios: dict, npix: int, rule: Rule) -> Verdict:
    """The median over orders of the speed-ups at one grid size, graded by rule."""
    value = aggregate(statistics.median, [v for (size, _), v in ratios.items() if size == npix])
    return Verdict(value=value, verdict=rule.grade(value), text=size_text(value, npix))


def c3_from(min_npix: int, bar: float | None = None):
    """C3's smallest per-size median over npix >= min_npix, graded by C3's rule (with another bar for reproduced)."""

    def judge(run, objective: Objective) -> Verdict:
        rule = dataclasses.replace(C3.rule, reproduced=bar) if bar else None
        found = verdict_c3(ratios_of(C3, run, objective), min_npix, rule)
        if found.value is None:
            return Verdict()
        return Verdict(value=found.value, verdict=found.verdict,
                       text=size_text(found.value, weakest_npix(found.by_npix)))

    return judge


def c3_largest(run, objective: Objective) -> Verdict:
    """C3's median over its orders (C3_ORDERS) at the largest grid measured (C1's reading of 'large grids')."""
    ratios = {key: ratio for key, ratio in as_ratios(ratios_of(C3, run, objective)).items() if key[1] in C3_ORDERS}
    sizes = [npix for npix, _ in ratios if npix >= 128]
    return median_at(ratios, max(sizes), C3.rule) if sizes else Verdict()


def c4_today(run, objective: Objective) -> Verdict:
    found = verdict_c4(ratios_of(C4, run, objective))
    return found.worded(found.npix and slope_words(found))


def c4_at(npix: int):
    """C4's slope at one grid size, where the run has every order C4 takes there."""

    def judge(run, objective: Objective) -> Verdict:
        values = {nzern: value for (size, nzern), value in as_ratios(ratios_of(C4, run, objective)).items()
                  if size == npix and nzern in C4_ORDERS}
        if len(values) != len(C4_ORDERS):
            return Verdict()
        found = slope_at(npix, dict(sorted(values.items())))
        return found.worded(slope_words(found))

    return judge


C4_SIZES = (128, 256, 512, 1024, 2048)
"""The grid sizes at which C4's slope is shown in the sensitivity table, where a run has its orders."""


def timed_claim(claim_id, *words, ratio, evaluate, reason="not measured in this run", **how) -> Claim:
    """A claim judged on times to solution: its words, rule and speed-up, judged by evaluate on a run's sweep
    (reason: why not measured where the sweep has both series)."""
    return Claim(claim_id, *words, ratio=ratio, evaluate=evaluate, notes=timed_notes,
                 reason=reason_timed(ratio, reason), **how)


C1 = timed_claim(
    "C1", "Up to ~100x faster time-to-solution with PyTorch on a GPU than with the NumPy implementation.",
    "~100x on a GPU", "~100x, GPU torch / NumPy (K20c)", ">= 50x",
    "NumPy / torch-cuda ratio of the run (both timed on its host, the threads shown), median over Zernike "
    "orders at the largest grid size measured (the largest single ratio shown beside it)", 50, 10,
    ratio=(NUMPY, TORCH_CUDA), evaluate=evaluate_c1, brief=at_size(lambda found: found.npix),
    scope=c1_orders, caveats=bound_caveats(lambda found: found.npix),
    alternatives=(Alternative("largest grid measured (today's)", True, c1_today),
                  Alternative("largest grid with every order measured", False, c1_every_order)))
C2 = timed_claim(
    "C2", "The GPU PyTorch run is ~10x faster than the CPU-only PyTorch run for grid sizes N >= 256.",
    "GPU ~10x CPU torch", "~10x, GPU / CPU torch, npix >= 256", ">= 5x, each npix",
    "torch-cpu / torch-cuda ratio of the run, median over Zernike orders at each npix >= 256, smallest of "
    "those medians (the claim must hold at every such size; sizes where a fit of a measured pair is not "
    "a solution are left out, here and in C3, C4)", 5, 2, ratio=(TORCH_CPU, TORCH_CUDA), evaluate=evaluate_c2,
    brief=at_size(lambda found: weakest_npix(found.by_npix)),
    caveats=gpu_seconds)
C3 = timed_claim(
    "C3", "CPU-only PyTorch is about an order of magnitude faster than NumPy for intermediate and large grids.",
    "CPU torch ~10x NumPy", "~10x, CPU torch / NumPy", ">= 5x, each npix",
    "NumPy / torch-cpu ratio of the run, median over the fixed orders n = " + ", ".join(map(str, C3_ORDERS))
    + " (those measured) at each npix >= 128, smallest of those medians", 5, 2, ratio=(NUMPY, TORCH_CPU),
    evaluate=evaluate_c3, words=words_c3, brief=at_size(lambda found: weakest_npix(found.by_npix)),
    caveats=bound_caveats(lambda found: weakest_npix(found.by_npix)),
    alternatives=(Alternative("weakest grid of npix >= 128, bar 5x (today's)", True, c3_from(128)),
                  Alternative("weakest grid of npix >= 256", False, c3_from(256)),
                  Alternative("largest grid measured", False, c3_largest),
                  Alternative("weakest grid of npix >= 128, bar 7x", False, c3_from(128, bar=7))),
    reason="no measured pair at npix >= 128")
C4 = timed_claim(
    "C4", "The improvement is largely independent of the number of model parameters (Zernike order up to 8).",
    "independent of the order", "independent of P (n <= 8)", "abs(slope) <= 0.3",
    "absolute slope of log(NumPy / torch-cpu speed-up) against log(parameters P), over the fixed orders n = "
    + ", ".join(map(str, C4_ORDERS)) + " only (P = " + ", ".join(str(parameter_count(n)) for n in C4_ORDERS)
    + f"), at the largest grid of npix >= {C4_MIN_NPIX} that has them all (1: a speed-up proportional to "
    "P; the spread max / min shown beside it)", 0.3, 0.6, upper=True, ratio=(NUMPY, TORCH_CPU),
    evaluate=evaluate_c4, words=slope_text, brief=slope_brief,
    reason=f"no grid of npix >= {C4_MIN_NPIX} with every order n = " + ", ".join(map(str, C4_ORDERS)) + " measured",
    caveats=c4_caveats,
    alternatives=(Alternative("largest grid where the verdict is determined (today's)", True, c4_today),
                  *(Alternative(f"at npix {npix}", False, c4_at(npix)) for npix in C4_SIZES
                    if npix >= C4_MIN_NPIX)))
TIMED = (C1, C2, C3, C4)
"""The paper's claims judged on times to solution, in the report's order."""
VERDICTS = {C1.id: verdict_c1, C2.id: verdict_c2, C3.id: verdict_c3, C4.id: verdict_c4}
"""The verdict function of each, on a sweep's speed-ups."""

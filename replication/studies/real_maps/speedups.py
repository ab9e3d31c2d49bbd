"""The real maps' speed-ups (studies.real_maps.measure's stages): each series' times to a stage's optimum summed
over the ladder (a bound where a fit never got there), the ratios of paired repeats with their spread, over the stages
both series solved and by time to stop; the stages' rows and the two trees' agreement for the appendix; the simulated
speed-ups set beside them. Read side: no torch."""

from __future__ import annotations

import dataclasses
import statistics

from replication.core import point_times
from replication.core.optimum import TARGET
from replication.core.series import NUMPY, TORCH_ADJOINT, TORCH_CPU, Series

RATIOS = ((NUMPY, TORCH_CPU, "NumPy differences / torch autograd (the paper's)"),
          (NUMPY, TORCH_ADJOINT, "NumPy differences / torch adjoint"),
          (TORCH_CPU, TORCH_ADJOINT, "torch autograd / torch adjoint"))
"""The speed-ups the report gives on real maps: (slower series, faster series, what it compares)."""
SIMULATED_NPIX = 256
"""The grid size of the simulated sweeps set beside the real maps (the real fits' model grid)."""


def ladder_times(stages, chosen: Series):
    """Per repeat, (seconds to solution summed over the stages, whether every stage reached its optimum): where one
    did not, its total time stands in and the sum is a lower bound."""
    repeats = {}
    for stage in stages:
        for fit in stage.fits:
            if fit.series == chosen:
                seconds, whole = repeats.get(fit.repeat, (0.0, True))
                repeats[fit.repeat] = (seconds + (fit.target_s if fit.reached else fit.total_s), whole and fit.reached)
    return [repeats[r] for r in sorted(repeats)]


@dataclasses.dataclass(frozen=True)
class Spread:
    """Ratios (or times) summarised: the lowest, the median, the highest; stages: how many stages they pool, where
    that is said."""

    low: float
    median: float
    high: float
    stages: int | None = None

    @classmethod
    def of(cls, values, stages: int | None = None) -> Spread:
        values = sorted(values)
        return cls(values[0], statistics.median(values), values[-1], stages)


@dataclasses.dataclass(frozen=True)
class SpeedUp:
    """A speed-up on real maps: kind "value" where both ladders reached every optimum, "at least" where only the
    slower one missed one (its time is a lower bound), "at most" where only the faster one did, "undetermined" where
    both did; over all stages (spread of repeat pairs), over the stages both solved (per_stage), by time to stop
    (stop); what: the series compared, in words."""

    kind: str
    spread: Spread
    what: str = ""
    slow: Series | None = None
    fast: Series | None = None
    per_stage: Spread | None = None
    stop: Spread | None = None


def ratio(slow, fast) -> SpeedUp | None:
    """The speed-up of fast over slow from two ladders' times per repeat (SpeedUp, over all stages); None where
    either was not run."""
    pairs = list(zip(slow, fast, strict=False))
    if not pairs:
        return None
    slow_whole, fast_whole = all(w for _, w in slow), all(w for _, w in fast)
    kind = {(True, True): "value", (False, True): "at least", (True, False): "at most",
            (False, False): "undetermined"}[(slow_whole, fast_whole)]
    return SpeedUp(kind, Spread.of(a / b for (a, _), (b, _) in pairs))


def stage_ratio(stages, slow: Series, fast: Series) -> Spread | None:
    """The speed-up over the stages where both series reached the optimum in every repeat: the ratios of their
    times to it, repeat by repeat, pooled (a Spread with its stages), or None where no stage qualifies."""
    values, count = [], 0
    for stage in stages:
        a = [f for f in stage.fits if f.series == slow]
        b = [f for f in stage.fits if f.series == fast]
        if a and b and all(f.reached for f in a + b):
            count += 1
            values += [x.target_s / y.target_s for x, y in zip(sorted(a, key=lambda f: f.repeat),
                                                               sorted(b, key=lambda f: f.repeat), strict=False)]
    return Spread.of(values, count) if values else None


def stop_ratio(stages, slow: Series, fast: Series) -> Spread | None:
    """The ratio of times to stop (what the paper's script timed), stage by stage and repeat by repeat, pooled over
    every stage whichever minimum each fit ended in, or None."""
    values = []
    for stage in stages:
        a = sorted((f for f in stage.fits if f.series == slow), key=lambda f: f.repeat)
        b = sorted((f for f in stage.fits if f.series == fast), key=lambda f: f.repeat)
        values += [x.total_s / y.total_s for x, y in zip(a, b, strict=False)]
    return Spread.of(values) if values else None


@dataclasses.dataclass(frozen=True)
class StageCell:
    """One series at one stage: fits that reached the optimum, of those made; their median time to it (s; None
    unless all did), else the median total time (a bound), their median time to stop (s), the evaluations of the
    first; where its own minimum lies (standard errors from the optimum; its objective above the optimum's)."""

    reached: int
    fits: int
    target_s: float | None
    bound_s: float | None
    stop_s: float | None
    nfev: int | None
    distance: float | None
    excess: float | None


@dataclasses.dataclass(frozen=True)
class StageRow:
    order: int
    fun: float | None
    nparams: int
    cells: dict


def stage_row(stage, series_order) -> StageRow:
    """One stage for the appendix: the optimum's objective and, per series, whether its fits reached it, their
    median time to it (or the bound), their median time to stop, and its own minimum's distance and objective."""
    minima = {m.series: m for m in stage.minima}
    best = stage.optimum.fun
    cells = {}
    for chosen in series_order:
        fits = [f for f in stage.fits if f.series == chosen]
        minimum = minima.get(chosen)
        hit = [f for f in fits if f.reached]
        cells[chosen] = StageCell(
            reached=len(hit), fits=len(fits),
            target_s=statistics.median(f.target_s for f in hit) if len(hit) == len(fits) and fits else None,
            bound_s=statistics.median(f.total_s for f in fits) if fits and len(hit) < len(fits) else None,
            stop_s=statistics.median(f.total_s for f in fits) if fits else None,
            nfev=fits[0].outcome.nfev if fits else None,
            distance=None if minimum is None else minimum.distance,
            excess=None if minimum is None or minimum.fun is None or best is None else minimum.fun - best)
    return StageRow(stage.order, best, len(stage.optimum.x), cells)


@dataclasses.dataclass(frozen=True)
class Agreement:
    """At one stage, the distance between the two series' fits (standard errors) and whether both reached the
    optimum."""

    order: int
    distance: float | None
    both: bool


def agreement(stages, a: Series = NUMPY, b: Series = TORCH_CPU) -> list[Agreement]:
    """Per stage, the distance between the two series' fits and whether both reached the optimum."""
    rows = []
    for stage in stages:
        for pair in stage.pairs:
            if {pair.a.series, pair.b.series} == {a, b}:
                ends = {m.series: m.distance for m in stage.minima}
                both = all(ends.get(s) is not None and ends[s] <= TARGET for s in (a, b))
                rows.append(Agreement(stage.order, pair.distance, both))
    return rows


def ratio_short(found):
    """A speed-up's short cell: over all stages, the median over repeat pairs and their range (a bound marked)."""
    return ratio_text(found).split("; ")[0].removeprefix("all stages: ")


def ratio_text(found):
    """A speed-up's cell: over all stages, the median over repeat pairs and their range, a bound marked as one; then
    over the stages both series solved, the pooled median and range."""
    if found is None:
        return "not measured"
    if found.kind == "undetermined":
        text = "all stages: undetermined (both missed an optimum)"
    else:
        sign = {"value": "", "at least": ">= ", "at most": "<= "}[found.kind]
        spread = found.spread
        text = (f"all stages: {sign}{spread.median:.3g}x ({spread.low:.3g}-{spread.high:.3g})"
                + (", a bound" if sign else ""))
    per_stage = found.per_stage
    if per_stage is None:
        text += "; no stage solved by both"
    else:
        text += (f"; stages solved by both ({per_stage.stages}): {per_stage.median:.3g}x "
                 f"({per_stage.low:.3g}-{per_stage.high:.3g})")
    stop = found.stop
    if stop is not None:
        text += (f"; time to stop, every stage (the paper's measure): {stop.median:.3g}x "
                 f"({stop.low:.3g}-{stop.high:.3g})")
    return text


@dataclasses.dataclass(frozen=True)
class Simulated:
    """The simulated speed-ups set beside the real maps' (NumPy / torch autograd at their grid size): their spread
    over the orders measured, the run they come from and what they time."""

    spread: Spread
    orders: list[int]
    title: str = ""
    measure: str = ""


def simulated_beside(run) -> Simulated | None:
    """The run's own simulated speed-ups at the real fits' grid size (NumPy / torch autograd; times to solution where
    its sweep recorded them, else to the optimiser's stop of fits at the optimum) over its orders, or None."""
    values = {key: value for key, value in point_times.speedups(run.series, NUMPY, TORCH_CPU).items()
              if key[0] == SIMULATED_NPIX}
    if not values:
        return None
    return Simulated(Spread.of(values.values()), sorted(key[1] for key in values))

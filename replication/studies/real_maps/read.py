"""What the report says of the real maps' fits (studies.real_maps.measure): per source, which series reached each
stage's optimum, their times to it (a bound where a fit never got there), the speed-ups with the spread of the
repeats, the two trees' agreement, the residuals and the surface. Read side: no torch."""

from __future__ import annotations

import statistics

import numpy as np

from replication.core import point_times
from replication.core.optimum import TARGET
from replication.core.records import load_array
from replication.core.reduction import sources as real_sources
from replication.core.reduction.phases import compare_phases, our_phase
from replication.core.results import RunError
from replication.core.series import NUMPY, TORCH_ADJOINT, TORCH_CPU, Series
from replication.studies.real_maps.findings import (
    budget_line,
    higher_orders_line,
    multistart_line,
    optics_line,
    plural,
    terms_line,
)
from replication.studies.real_maps.records import (
    read_pyoof,
    read_real_maps,
)

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


def ratio(slow, fast):
    """The speed-up of fast over slow from two ladders' times per repeat: {kind, low, median, high}; kind "value"
    where both reached every optimum, "at least" where only the slower one missed one (its time is a lower bound),
    "at most" where only the faster one did, "undetermined" where both did; None where either was not run."""
    pairs = list(zip(slow, fast, strict=False))
    if not pairs:
        return None
    values = sorted(a / b for (a, _), (b, _) in pairs)
    slow_whole, fast_whole = all(w for _, w in slow), all(w for _, w in fast)
    kind = {(True, True): "value", (False, True): "at least", (True, False): "at most",
            (False, False): "undetermined"}[(slow_whole, fast_whole)]
    return {"kind": kind, "low": values[0], "median": statistics.median(values), "high": values[-1]}


def stage_ratio(stages, slow: Series, fast: Series):
    """The speed-up over the stages where both series reached the optimum in every repeat: the ratios of their
    times to it, repeat by repeat, pooled ({low, median, high, stages}), or None where no stage qualifies."""
    values, count = [], 0
    for stage in stages:
        a = [f for f in stage.fits if f.series == slow]
        b = [f for f in stage.fits if f.series == fast]
        if a and b and all(f.reached for f in a + b):
            count += 1
            values += [x.target_s / y.target_s for x, y in zip(sorted(a, key=lambda f: f.repeat),
                                                               sorted(b, key=lambda f: f.repeat), strict=False)]
    if not values:
        return None
    values.sort()
    return {"low": values[0], "median": statistics.median(values), "high": values[-1], "stages": count}


def stop_ratio(stages, slow: Series, fast: Series):
    """The ratio of times to stop (what the paper's script timed), stage by stage and repeat by repeat, pooled over
    every stage whichever minimum each fit ended in: {low, median, high}, or None."""
    values = []
    for stage in stages:
        a = sorted((f for f in stage.fits if f.series == slow), key=lambda f: f.repeat)
        b = sorted((f for f in stage.fits if f.series == fast), key=lambda f: f.repeat)
        values += [x.total_s / y.total_s for x, y in zip(a, b, strict=False)]
    if not values:
        return None
    values.sort()
    return {"low": values[0], "median": statistics.median(values), "high": values[-1]}


def stage_row(stage, series_order):
    """One stage for the appendix: the optimum's objective and, per series, whether its fits reached it, their
    median time to it (or the bound), their median time to stop, and its own minimum's distance and objective."""
    minima = {m.series: m for m in stage.minima}
    best = stage.optimum.fun
    cells = {}
    for chosen in series_order:
        fits = [f for f in stage.fits if f.series == chosen]
        minimum = minima.get(chosen)
        hit = [f for f in fits if f.reached]
        cells[chosen] = {
            "reached": len(hit), "fits": len(fits),
            "target_s": statistics.median(f.target_s for f in hit) if len(hit) == len(fits) and fits else None,
            "bound_s": statistics.median(f.total_s for f in fits) if fits and len(hit) < len(fits) else None,
            "stop_s": statistics.median(f.total_s for f in fits) if fits else None,
            "nfev": fits[0].outcome.nfev if fits else None,
            "distance": None if minimum is None else minimum.distance,
            "excess": None if minimum is None or minimum.fun is None or best is None else minimum.fun - best}
    return {"order": stage.order, "fun": best, "nparams": len(stage.optimum.x), "cells": cells}


def agreement(stages, a: Series = NUMPY, b: Series = TORCH_CPU):
    """Per stage, the distance between the two series' fits (standard errors) and whether both reached the
    optimum: [{order, distance, both}]."""
    rows = []
    for stage in stages:
        for pair in stage.pairs:
            if {pair.a.series, pair.b.series} == {a, b}:
                ends = {m.series: m.distance for m in stage.minima}
                both = all(ends.get(s) is not None and ends[s] <= TARGET for s in (a, b))
                rows.append({"order": stage.order, "distance": pair.distance, "both": both})
    return rows


def source_summary(name, stages, source, taper):
    """Everything the report shows of one source."""
    stages = sorted(stages, key=lambda s: s.order)
    series_order = list(dict.fromkeys(f.series for s in stages for f in s.fits))
    ladders = {chosen: ladder_times(stages, chosen) for chosen in series_order}
    ratios = [{"what": what, "slow": slow, "fast": fast, "per_stage": stage_ratio(stages, slow, fast),
               "stop": stop_ratio(stages, slow, fast), **found}
              for slow, fast, what in RATIOS
              if slow in ladders and fast in ladders and (found := ratio(ladders[slow], ladders[fast]))]
    known = {s.name: s for s in real_sources.SOURCES}
    rows = [stage_row(s, series_order) for s in stages]
    title = source.title if source else known[name].title if name in known else name
    short = source.short_name if source else known[name].short if name in known else name
    return {"name": name, "title": title, "short": short, "source": source, "taper": taper,
            "series": series_order, "stages": rows,
            "reached": {chosen: sum(row["cells"][chosen]["reached"] == row["cells"][chosen]["fits"] > 0 for row in rows)
                        for chosen in series_order},
            "ladders": {chosen: {"median": statistics.median(t for t, _ in times), "whole": all(w for _, w in times)}
                        for chosen, times in ladders.items() if times},
            "ratios": ratios, "agreement": agreement(stages),
            "numpy_ratios": [next((r for r in ratios if (r["slow"], r["fast"]) == (slow, fast)), None)
                             for slow, fast, _ in RATIOS if slow == NUMPY]}


def ratio_short(found):
    """A speed-up's short cell: over all stages, the median over repeat pairs and their range (a bound marked)."""
    return ratio_text(found).split("; ")[0].removeprefix("all stages: ")


def ratio_text(found):
    """A speed-up's cell: over all stages, the median over repeat pairs and their range, a bound marked as one; then
    over the stages both series solved, the pooled median and range."""
    if found is None:
        return "not measured"
    if found["kind"] == "undetermined":
        text = "all stages: undetermined (both missed an optimum)"
    else:
        sign = {"value": "", "at least": ">= ", "at most": "<= "}[found["kind"]]
        text = (f"all stages: {sign}{found['median']:.3g}x ({found['low']:.3g}-{found['high']:.3g})"
                + (", a bound" if sign else ""))
    per_stage = found.get("per_stage")
    if per_stage is None:
        text += "; no stage solved by both"
    else:
        text += (f"; stages solved by both ({per_stage['stages']}): {per_stage['median']:.3g}x "
                 f"({per_stage['low']:.3g}-{per_stage['high']:.3g})")
    stop = found.get("stop")
    if stop is not None:
        text += (f"; time to stop, every stage (the paper's measure): {stop['median']:.3g}x "
                 f"({stop['low']:.3g}-{stop['high']:.3g})")
    return text


def real_maps_section(run):
    """The real maps' section of a run (None where it has no real-maps folder)."""
    folder = run.folder / "real-maps"
    if not (folder / real_sources.STAGES_FILE).is_file():
        return None
    stages, sources, tapers = read_real_maps(folder)
    names = list(dict.fromkeys(s.source for s in stages))
    by_name = {s.source: s for s in sources}
    taper_of = {t.source: t for t in tapers}
    summaries = [source_summary(name, [s for s in stages if s.source == name], by_name.get(name),
                                taper_of.get(name)) for name in names]
    for summary, name in zip(summaries, names, strict=True):
        summary["pyoof"] = pyoof_summary(run.folder / "pyoof", by_name.get(name),
                                         [s for s in stages if s.source == name])
    return {"folder": folder, "target": TARGET, "sources": summaries, "simulated": simulated_beside(run)}


def simulated_beside(run):
    """The run's own simulated speed-ups at the real fits' grid size (NumPy / torch autograd; times to solution where
    its sweep recorded them, else to the optimiser's stop of fits at the optimum): {low, median, high, orders} over its
    orders, or None."""
    values = {key: value for key, value in point_times.speedups(run.series, NUMPY, TORCH_CPU).items()
              if key[0] == SIMULATED_NPIX}
    if not values:
        return None
    ordered = sorted(values.values())
    return {"low": ordered[0], "median": statistics.median(ordered), "high": ordered[-1],
            "orders": sorted(key[1] for key in values)}


def other_minima(sources):
    """(stages where some series ended in another local minimum than the optimum, stages in all, the largest
    objective excess of such a minimum)."""
    rows = [row for source in sources for row in source["stages"]]
    missed = [row for row in rows if any(cell["distance"] is None or cell["distance"] > TARGET
                                         for cell in row["cells"].values())]
    excess = [cell["excess"] for row in missed for cell in row["cells"].values() if cell["excess"] is not None]
    return len(missed), len(rows), max(excess, default=None)


def same_optimum_agreement(sources):
    """(stages where NumPy and torch autograd both reached the optimum, the largest distance between their fits
    there in standard errors, the largest distance anywhere)."""
    rows = [row for source in sources for row in source["agreement"] if row["distance"] is not None]
    both = [row["distance"] for row in rows if row["both"]]
    return len(both), max(both, default=None), max((row["distance"] for row in rows), default=None)


OBJECTIVE_WORDS = {"gaussian": "least squares in noise units", "cauchy": "the Cauchy likelihood at the noise's scale"}
"""How a sentence names a real-maps objective."""


def findings(section):
    """What the real maps show that the simulations do not, as sentences with their numbers."""
    sources = section["sources"]
    lines = []
    missed, total, excess = other_minima(sources)
    if total:
        lines.append(f"Local minima: in {missed} of {total} stages at least one series, started from the same "
                     "point as the others, ended in another local minimum than the stage's best"
                     + (f" (its objective higher by up to {excess:.3g})" if excess is not None else "") + ".")
    both, closest, widest = same_optimum_agreement(sources)
    if both:
        lines.append(f"Agreement: where NumPy and torch autograd reached the same optimum ({plural(both, 'stage')}), "
                     f"their fits lie at most {closest:.2g} standard errors apart; in the other stages up to "
                     f"{widest:.3g}.")
    for source in sources:
        record = source["source"]
        if record is None:
            continue
        short = source["short"]
        along_v, along_u = record.noise_along
        rms = ", ".join(f"{value:.2g}" for value in record.residual_rms)
        lag = record.residual_lag1
        lines.append(f"{short}: residual rms {rms} noise units (in focus, -dz, +dz; 1 for a perfect model), "
                     f"neighbouring residuals correlated at {lag.u:.2f} along u and {lag.v:.2f} along v: "
                     "structure the model does not hold, not noise.")
        if record.config is None:
            lines.append(f"{short}: fitted before 2026-12-03 with the SRT's central blockage at "
                         f"{real_sources.LEGACY_BLOCKAGE:.4g} m radius, half the subreflector's (the configurations "
                         "now give 3.953 m); its surface and residuals are those of that telescope, until the run is "
                         "made again.")
        other = record.other_objective
        if other:
            words = OBJECTIVE_WORDS[other.objective]
            if other.widths:
                words = (f"the Cauchy likelihood at the residuals' scale (re-estimated at each stage's start: "
                         f"{other.widths[-1]:.2g} noise units at n = {record.order})")
            lines.append(f"{short}: fitted by {OBJECTIVE_WORDS[record.objective]}; the same ladder of orders "
                         f"fitted by {words} instead moves the surface by "
                         f"{other.surface_difference_rms_um:.0f} um rms (n = {record.order}), against "
                         f"{record.surface_rms_um:.0f} um rms of surface error: the choice of loss matters.")
        if record.uncertainty_median_um is not None:
            lines.append(uncertainty_line(short, record))
        if record.higher_orders:
            lines.append(higher_orders_line(short, record.higher_orders, record))
        if record.optics:
            lines.append(optics_line(short, record.optics))
        if record.uncertainty_median_um is not None and budget_line(short, record):
            lines.append(budget_line(short, record))
        if record.multistart:
            lines.append(multistart_line(short, record.multistart))
        if record.terms_effect:
            lines.append(terms_line(short, record.terms_effect, record))
        if record.dropped:
            offsets = [record.x[-3 + k] * record.scale for k in range(3)]
            lines.append(f"{short}: the noise is not white: differences of neighbouring pixels along v are "
                         f"{along_v / along_u:.2f} of those along u (white noise: 1); baselines "
                         f"{', '.join(f'{o:.0f}' for o in offsets)} counts (fitted); "
                         f"{plural(record.dropped, 'dropped sample')} masked.")
    return lines


def pyoof_summary(folder, source_summary_record, stages):
    """pyoof's fits of one source beside ours: its time to stop over the orders, how each order ended, and its
    last phase against ours (rms, and the rms difference under the closest variant)."""
    path = folder / "pyoof.jsonl"
    if not path.is_file():
        return None
    name = source_summary_record.source if source_summary_record else None
    fits = sorted((r for r in read_pyoof(path) if r.source == name), key=lambda r: r.order)
    if not fits:
        return None
    last = fits[-1]
    phases = load_array(folder / f"pyoof-phase-{name}.npz", "phase", 3)
    if len(phases) < len(fits):
        raise RunError(f"{folder / f'pyoof-phase-{name}.npz'}: {len(phases)} phase(s) for {len(fits)} order(s) "
                       "fitted")
    theirs = phases[len(fits) - 1]
    stage = next((s for s in stages if s.order == last.order), None)
    if stage is None:
        return None
    ours = our_phase(stage.optimum.x, last.order, theirs.shape[0])
    differences = compare_phases(ours, theirs)
    closest = min(differences, key=differences.get)
    return {"version": last.pyoof, "order": last.order, "seconds": sum(r.seconds for r in fits),
            "nfev": sum(r.nfev for r in fits), "limited": [r.order for r in fits if r.status == 0],
            "ours_rms": float(np.sqrt(np.nanmean(ours**2))),
            "theirs_rms": float(np.sqrt(np.nanmean((theirs - np.nanmean(theirs)) ** 2))),
            "closest": closest, "difference": differences[closest]}


def pyoof_lines(section):
    """One sentence per source that pyoof also fitted: its time, how it ended, its phase against ours."""
    lines = []
    for source in section["sources"]:
        peer = source.get("pyoof")
        if peer is None:
            continue
        limited = (f"order{'s' if len(peer['limited']) > 1 else ''} {', '.join(map(str, peer['limited']))} stopped at "
                   "its evaluation limit" if peer["limited"] else "every order ended by its own tolerance")
        lines.append(f"pyoof {peer['version']} on the {source['short']} maps (its own model and fit: least squares, "
                     f"finite-difference Jacobian, maps normalised to their peaks): n = 1..{peer['order']} in "
                     f"{peer['seconds']:.3g} s and {peer['nfev']} evaluations, time to stop ({limited}). Its phase "
                     f"at n = {peer['order']}: {peer['theirs_rms']:.3g} rad rms, ours {peer['ours_rms']:.3g}; pyoof's "
                     f"{peer['closest']} lies closest to ours, {peer['difference']:.2g} rad rms apart.")
    return lines


def uncertainty_line(short, record):
    """The sentence on a source's surface uncertainty; its ratio to independent pixels' only where recorded (a fit
    of n = 1 has no surface beyond the tilts and piston removed, so no ratio)."""
    line = (f"{short}: the surface's uncertainty (1 sigma) is {record.uncertainty_median_um:.2g} um "
            f"(median over the dish; its map in {record.surface_fits or 'no FITS file'})")
    if record.uncertainty_inflation is None:
        return line + "."
    return line + (f", {record.uncertainty_inflation:.2g}x what independent pixels would give: the residuals "
                   f"correlate over {record.uncertainty_reach} pixels.")

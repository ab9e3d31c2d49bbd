"""What the report says of a closure folder (studies.closure.measure): how many seeds recovered the known surface,
and whether the misses are the optimizer's or the noise's. Read side: no torch."""

from __future__ import annotations

import collections
import dataclasses
import math
import pathlib
import statistics
import types

import numpy as np

from replication.core.judging import wilson
from replication.core.optimum import TARGET
from replication.core.records import load_array
from replication.core.reduction.phases import compare_phases, our_phase
from replication.core.results import RunError, loads
from replication.studies.closure.maps import NOISE
from replication.studies.closure.records import (
    BOUND_FILE,
    CLOSURE_FILE,
    COVERAGE_GOAL,
    GOAL_SHARE,
    PYOOF_CLOSURE_FILE,
    TAPER_MATCH,
    WITHIN_UM,
    read_bound,
    read_closure,
    read_pyoof_closure,
)


@dataclasses.dataclass(frozen=True)
class FisherBound:
    """What the Fisher information predicts for the seeds reduced (fisher_bound): over how many seeds, the share our
    reductions reached within WITHIN_UM, the mean share it predicts for least squares without whitening and for the
    efficient estimator, and the median rms error (um) of each."""

    seeds: int
    reached: float
    ls_share: float
    bound_share: float
    ls_um: float
    bound_um: float


@dataclasses.dataclass(frozen=True)
class PyoofBeside:
    """pyoof's reductions of the seeds it shares with ours (pyoof_closure): how many, its version and highest order,
    its median time and ours (s), the range of pyoof's over ours, its orders stopped at its evaluation limit of those
    fitted, the median phase error of its and ours against the truth, the truth's phase (rad rms), its convention
    closest to the truth's."""

    seeds: int
    version: str
    order: int
    seconds: float
    ours_s: float
    ratio: list[float]
    limited: int
    fitted_orders: int
    theirs_rad: float
    ours_rad: float
    truth_rad: float
    closest: str


@dataclasses.dataclass(frozen=True)
class ClosureSummary:
    """What a closure folder shows: how many seeds recovered the known surface within WITHIN_UM (with the 95% Wilson
    interval of the fraction, and whether that is at least GOAL_SHARE of them), the median and worst surface errors
    (um), how often the taper was chosen right, the median time of a reduction (s), how many fits ended without
    scipy's success, how many seeds were whitened along the scans, pyoof and the Fisher bound beside them; of the
    seeds that record it, how the reductions stand against the truth-start optimum (certification); of those whose
    truth went beyond the fitted orders, what the order rule chose and how much of the dish the uncertainty covers
    (coverage); as the report shows it, the run it comes from and every noise level's summary."""

    seeds: int
    within: int
    within_um: float
    interval: tuple
    goal: float
    meets_goal: bool
    median_um: float | None
    worst_um: float | None
    taper_right: int
    taper_match: float
    median_s: float
    failed: int
    npix: int
    noise: float
    orders: list[int]
    truth_um: float
    whitened: int
    pyoof: PyoofBeside | None
    bound: FisherBound | None
    certified: int = 0
    at_optimum: int | None = None
    missed: int | None = None
    noise_limited: int | None = None
    predicted_um: float | None = None
    beyond: int = 0
    truth_order: int | None = None
    panels_um: float | None = None
    chosen_orders: list[int] = dataclasses.field(default_factory=list)
    chosen_counts: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    truncation_um: float | None = None
    misfit_um: float | None = None
    stated_um: float | None = None
    covered_statistical: float | None = None
    covered_total: float | None = None
    covered_seeds: int = 0
    coverage_goal: float = COVERAGE_GOAL
    title: str = ""
    appendix: str = ""
    levels: list = dataclasses.field(default_factory=list)


def closure_summary(folder) -> ClosureSummary | None:
    """What a closure folder shows (ClosureSummary), None where there is none."""
    path = pathlib.Path(folder) / CLOSURE_FILE
    if not path.is_file():
        return None
    records = read_closure(path)
    if not records:
        return None
    errors = [r.surface_error_um for r in records]
    finite = [e for e in errors if e is not None]
    within = sum(e is not None and e <= WITHIN_UM for e in errors)
    return ClosureSummary(
        seeds=len(records), within=within, within_um=WITHIN_UM, interval=wilson(within, len(records)),
        goal=GOAL_SHARE, meets_goal=within >= GOAL_SHARE * len(records),
        median_um=statistics.median(finite) if finite else None, worst_um=max(finite) if finite else None,
        taper_right=sum(abs(r.sigma - r.true_sigma) <= TAPER_MATCH + 1e-12 for r in records), taper_match=TAPER_MATCH,
        median_s=statistics.median(r.seconds for r in records), failed=sum(not r.success for r in records),
        npix=records[0].npix, noise=records[0].noise, orders=records[0].orders,
        truth_um=statistics.median(r.truth_surface_um for r in records),
        whitened=sum(r.whitened_along is not None for r in records),
        pyoof=pyoof_closure(pathlib.Path(folder) / "pyoof", records),
        bound=fisher_bound(pathlib.Path(folder) / BOUND_FILE, records), **certification(records), **coverage(records))


def coverage(records) -> dict:
    """Of the seeds whose truth went beyond the fitted orders (closure.covered): their truth's order, the orders the
    rule chose (and how often each), the median truncation and misfit systematics, the median stated total
    uncertainty (um rms: the statistical, the truncation and the misfit in quadrature), the median shares of the dish
    within 2 sigma of the statistical and of the total uncertainty, and how many seeds the total covers over at least
    COVERAGE_GOAL of the dish (ClosureSummary's fields); {} where none."""
    beyond = [r for r in records if r.covered_total is not None]
    if not beyond:
        return {}
    chosen = collections.Counter(r.chosen_order for r in beyond)
    return dict(beyond=len(beyond), truth_order=beyond[0].truth_order, panels_um=beyond[0].panels_um,
                chosen_orders=sorted(chosen), chosen_counts=sorted(chosen.items()),
                truncation_um=statistics.median(r.truncation_um or 0.0 for r in beyond),
                misfit_um=statistics.median(r.misfit_um or 0.0 for r in beyond),
                stated_um=statistics.median(math.hypot(r.predicted_error_um or 0.0, r.truncation_um or 0.0,
                                                       r.misfit_um or 0.0) for r in beyond),
                covered_statistical=statistics.median(r.covered_statistical for r in beyond),
                covered_total=statistics.median(r.covered_total for r in beyond),
                covered_seeds=sum(r.covered_total >= COVERAGE_GOAL for r in beyond))


def summary_lines(found: ClosureSummary | None) -> list[str]:
    """What a closure folder found, in a few lines for the terminal (none where there is nothing): the seeds within
    WITHIN_UM, the errors, what the covariance and the Fisher information predict, the taper, the fits scipy flags as
    failed."""
    if not found:
        return []
    low, high = found.interval
    seeds = found.seeds
    lines = [f"{found.within} of {seeds} seed(s) within {found.within_um:g} um of the known surface "
             f"(95% interval {low:.0%}-{high:.0%}; goal {found.goal:.0%}: "
             f"{'met' if found.meets_goal else 'not met'}); surface error median "
             f"{number_um(found.median_um)}, worst {number_um(found.worst_um)}"]
    predicted, bound = found.predicted_um, found.bound
    if predicted is not None or bound:
        lines.append("predicted: " + "; ".join(part for part in (
            predicted is not None and f"the fits' covariance {number_um(predicted)} (median)",
            bound and f"the Fisher information {number_um(bound.ls_um)} for least squares "
                      f"{'without whitening' if found.whitened else '(this reduction)'}, "
                      f"{number_um(bound.bound_um)} for the efficient estimator (median rms, {bound.seeds} "
                      "seed(s))") if part))
    if found.beyond:
        chosen = ", ".join(map(str, found.chosen_orders))
        panels = f" with panel pistons of {found.panels_um:g} um rms" if found.panels_um else ""
        lines.append(f"truth to n = {found.truth_order}{panels}, fitted to n = {found.orders[-1]}: the order rule "
                     f"chose n = {chosen}; systematics: truncation {found.truncation_um:.3g} um, the model's misfit "
                     f"{found.misfit_um:.3g} um (medians); error within 2 sigma over "
                     f"{found.covered_statistical:.0%} of the dish with the statistical uncertainty alone, "
                     f"{found.covered_total:.0%} with the systematics (medians); over at least "
                     f"{found.coverage_goal:.0%} of it in {found.covered_seeds} of {found.beyond} seed(s)")
    lines.append(f"taper within {found.taper_match:g} of the truth in {found.taper_right} of {seeds}; "
                 f"whitened along the scans in {found.whitened} of {seeds}; "
                 f"{found.failed} reduction(s) with a stage scipy flags as failed; median "
                 f"{found.median_s:.3g} s a reduction")
    return lines


def number_um(value) -> str:
    return "none finite" if value is None else f"{value:.3g} um"


def closure_noise(folder) -> float | None:
    """The noise a closure folder's maps were made at, as its settings.json says (None where it says none: the
    report then reads the folder's records, and refuses a damaged one there)."""
    noise = closure_settings(folder).get("noise")
    return noise if number_like(noise) else None


def closure_beyond_words(folder) -> str:
    """What a closure folder's truths hold beyond the fitted orders, as its settings.json says, in a few words for a
    run's title ('panel pistons 30 um', 'truth to n = 7'); '' where nothing."""
    settings = closure_settings(folder)
    panels, order = settings.get("panels_um"), settings.get("truth_order")
    words = [f"panel pistons {panels:g} um"] if number_like(panels) and panels else []
    return ", ".join(words + ([f"truth to n = {order}"] if isinstance(order, int) and not isinstance(order, bool)
                              else []))


def closure_settings(folder) -> dict:
    """A closure folder's settings.json as a dict ({} where absent, a link or unreadable: the records say the
    rest, and are refused where damaged)."""
    path = pathlib.Path(folder) / "settings.json"
    try:
        settings = loads(path.read_text()) if path.is_file() and not path.is_symlink() else {}
    except (OSError, ValueError):
        return {}
    return settings if isinstance(settings, dict) else {}


def number_like(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def certification(records):
    """Of the seeds that record it (closure.certified): how many ended at the optimum a start at the truth reaches
    (within TARGET standard errors), how many of those missing WITHIN_UM miss it at that optimum too (the
    estimator's own error at this noise, no optimizer's), and the median error the fits' covariance predicts."""
    checked = [r for r in records if r.optimum_distance_se is not None]
    if not checked:
        return {}
    missed = [r for r in checked if r.surface_error_um is None or r.surface_error_um > WITHIN_UM]
    predicted = [r.predicted_error_um for r in checked if r.predicted_error_um is not None]
    return dict(certified=len(checked), at_optimum=sum(r.optimum_distance_se <= TARGET for r in checked),
                missed=len(missed),
                noise_limited=sum(r.truth_start_error_um is not None and r.truth_start_error_um > WITHIN_UM
                                  for r in missed),
                predicted_um=statistics.median(predicted) if predicted else None)


def fisher_bound(path, records):
    """What the Fisher information predicts for the seeds reduced (bound.py's records made from the same maps), or
    None: over those seeds, the mean share within WITHIN_UM it predicts for least squares without whitening and for
    the efficient estimator (the Cramer-Rao bound), the median rms error of each, and the share our reductions
    reached."""
    if not path.is_file():
        return None
    pairs = same_maps(read_bound(path), "order", records)
    if not pairs:
        return None
    reached = [r.surface_error_um is not None and r.surface_error_um <= WITHIN_UM for _, r in pairs]
    return FisherBound(seeds=len(pairs), reached=sum(reached) / len(pairs),
                       ls_share=statistics.fmean(fit.ls_share for fit, _ in pairs),
                       bound_share=statistics.fmean(fit.bound_share for fit, _ in pairs),
                       ls_um=statistics.median(fit.ls_rms_um for fit, _ in pairs),
                       bound_um=statistics.median(fit.bound_rms_um for fit, _ in pairs))


def pyoof_closure(folder, records):
    """pyoof's reductions of the seeds it shares with ours (the same maps: seed, npix, highest order and noise;
    pyoof_peer --closure-seeds), or None: how many, its time against ours seed by seed (median of each, and the range
    of pyoof / ours), how many of its orders stopped at its evaluation limit, and each one's last phase against the
    truth's (radians rms over the dish, tilts and piston removed; pyoof's under the convention closest to the
    truth's, phases.PHASE_VARIANTS)."""
    folder = pathlib.Path(folder)
    path = folder / PYOOF_CLOSURE_FILE
    if not path.is_file():
        return None
    pairs = same_maps(read_pyoof_closure(path), "max_order", records)
    if not pairs:
        return None
    rows = [seed_beside_pyoof(folder, fit, record) for fit, record in pairs]
    conventions = [row.closest for row in rows]
    ratios = [row.theirs_s / row.ours_s for row in rows]
    return PyoofBeside(seeds=len(rows), version=pairs[0][0].pyoof, order=pairs[0][0].max_order,
                       seconds=statistics.median(row.theirs_s for row in rows),
                       ours_s=statistics.median(row.ours_s for row in rows), ratio=[min(ratios), max(ratios)],
                       limited=sum(len(fit.limited) for fit, _ in pairs),
                       fitted_orders=sum(fit.max_order for fit, _ in pairs),
                       theirs_rad=statistics.median(row.theirs_rad for row in rows),
                       ours_rad=statistics.median(row.ours_rad for row in rows),
                       truth_rad=statistics.median(row.truth_rad for row in rows),
                       closest=max(set(conventions), key=conventions.count))


def maps_of(record, order) -> tuple:
    """What makes a closure seed's maps (maps.simulated_maps): seed, grid, highest order, noise."""
    return record.seed, record.npix, order, record.noise


def same_maps(fits, order_key, records) -> list[tuple]:
    """(fit, our record) for each fit made from the very maps one of our records reduced (maps_of; a fit's highest
    order under order_key); the others left out."""
    ours = {maps_of(r, r.orders[-1]): r for r in records}
    return [(fit, ours[key]) for fit in fits if (key := maps_of(fit, getattr(fit, order_key))) in ours]


def seed_beside_pyoof(folder, fit, record):
    """One seed: pyoof's and our times (s) and last phases against the truth's (radians rms over the dish)."""
    path = folder / f"pyoof-phase-closure-{fit.seed}.npz"
    if not path.is_file() or path.is_symlink():
        raise RunError(f"{folder / PYOOF_CLOSURE_FILE}: seed {fit.seed} has no phase file of its own ({path.name}); "
                       "re-run pyoof_peer --closure-seeds into a new folder")
    theirs = load_array(path, "phase", 2)
    if theirs.shape[0] != theirs.shape[1]:
        raise RunError(f"{path}: pyoof's phase is not a square grid (shape {theirs.shape})")
    order = record.orders[-1]
    truth = our_phase(record.truth, order, theirs.shape[0])
    ours = our_phase(record.x, order, theirs.shape[0])
    against_truth = compare_phases(truth, theirs)
    closest = min(against_truth, key=against_truth.get)
    return types.SimpleNamespace(theirs_s=fit.seconds, ours_s=record.seconds, closest=closest,
                                 theirs_rad=against_truth[closest],
                                 ours_rad=float(np.sqrt(np.nanmean((ours - truth) ** 2))),
                                 truth_rad=float(np.sqrt(np.nanmean(truth**2))))


def closure_shown(summaries):
    """The closure test the report shows from the runs' closure_summaries, or None: at each noise level, your newest
    run's that has one, else the newest
    reference run's; the one at the SRT's noise (closure.maps.NOISE) told in full where there is one, else the first
    found, with every level's summary in `levels` (the noisiest first). Runs whose truths go beyond the fitted orders
    are closure_beyond's, not a level."""
    levels = {}
    for summary in summaries:
        if not summary.beyond and summary.noise not in levels:
            levels[summary.noise] = summary
    if not levels:
        return None
    main = levels.get(NOISE, next(iter(levels.values())))
    return dataclasses.replace(main, levels=sorted(levels.values(), key=lambda level: -level.noise))


def closure_beyond(summaries):
    """The closure runs whose truths go beyond the fitted orders, from the runs' closure_summaries: for each kind of
    truth (its order and panel
    pistons), your newest run's, else the newest reference run's; panel truths first, then by the truth's order."""
    kinds = {}
    for summary in summaries:
        if summary.beyond:
            kinds.setdefault((summary.panels_um or 0.0, summary.truth_order), summary)
    return sorted(kinds.values(), key=lambda summary: (-(summary.panels_um or 0.0), summary.truth_order))


def closure_summaries(all_runs):
    """The closure summary of every run with one, titled with the run and its appendix: yours first, newest first
    (read once, for closure_shown and closure_beyond)."""
    found = []
    for run in sorted(all_runs, key=lambda run: (run.own, run.info.created), reverse=True):
        summary = closure_summary(run.folder / "closure")
        if summary:
            found.append(dataclasses.replace(summary, title=run.title, appendix=f"runs/{run.appendix_name}.md"))
    return found

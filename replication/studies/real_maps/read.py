"""What the report says of the real maps' fits (studies.real_maps.measure): per source, which series reached each
stage's optimum, their times to it (a bound where a fit never got there), the speed-ups with the spread of the
repeats, the two trees' agreement, the residuals and the surface. Read side: no torch."""

from __future__ import annotations

import dataclasses
import pathlib

import numpy as np

from replication.core.format import um
from replication.core.optimum import TARGET
from replication.core.records import load_array
from replication.core.reduction import sources as real_sources
from replication.core.reduction.phases import compare_phases, our_phase
from replication.core.reduction.pyoof_fit import read_pyoof
from replication.core.results import RunError
from replication.core.series import NUMPY
from replication.studies.real_maps.findings import (
    additions_line,
    budget_line,
    higher_orders_line,
    multistart_line,
    optics_line,
    plural,
    terms_line,
)
from replication.studies.real_maps.records import (
    read_real_maps,
)
from replication.studies.real_maps.speedups import (
    RATIOS,
    Agreement,
    Simulated,
    SpeedUp,
    StageRow,
    agreement,
    ladder_times,
    ratio,
    stage_ratio,
    stage_row,
    stop_ratio,
)


@dataclasses.dataclass(frozen=True)
class SourceSummary:
    """Everything the report shows of one source: its names, its source record and taper (None where not written
    yet), the series fitted, its stages' rows, per series the stages it reached in every fit, the speed-ups (RATIOS;
    numpy_ratios: those from NumPy, None where not measured), the two trees' agreement, pyoof's fits beside it."""

    name: str
    title: str
    short: str
    source: object
    taper: object
    series: list
    stages: list[StageRow]
    reached: dict
    ratios: list[SpeedUp]
    agreement: list[Agreement]
    numpy_ratios: list
    pyoof: PyoofSummary | None = None


def source_summary(name, stages, source, taper) -> SourceSummary:
    """Everything the report shows of one source."""
    stages = sorted(stages, key=lambda s: s.order)
    series_order = list(dict.fromkeys(f.series for s in stages for f in s.fits))
    ladders = {chosen: ladder_times(stages, chosen) for chosen in series_order}
    ratios = [dataclasses.replace(found, what=what, slow=slow, fast=fast, per_stage=stage_ratio(stages, slow, fast),
                                  stop=stop_ratio(stages, slow, fast))
              for slow, fast, what in RATIOS
              if slow in ladders and fast in ladders and (found := ratio(ladders[slow], ladders[fast]))]
    known = {s.name: s for s in real_sources.SOURCES}
    rows = [stage_row(s, series_order) for s in stages]
    title = source.title if source else known[name].title if name in known else name
    short = source.short_name if source else known[name].short if name in known else name
    return SourceSummary(
        name=name, title=title, short=short, source=source, taper=taper, series=series_order, stages=rows,
        reached={chosen: sum(row.cells[chosen].reached == row.cells[chosen].fits > 0 for row in rows)
                 for chosen in series_order},
        ratios=ratios, agreement=agreement(stages),
        numpy_ratios=[next((r for r in ratios if (r.slow, r.fast) == (slow, fast)), None)
                      for slow, fast, _ in RATIOS if slow == NUMPY])


@dataclasses.dataclass(frozen=True)
class RealMapsSection:
    """The real maps' section of a run: its folder, the target (standard errors) a fit reached an optimum within,
    each source's summary; as the main report shows it (render.real_maps_shown), also the run's title and appendix,
    the simulated speed-ups beside it, its findings and pyoof's lines, whether per-map terms were fitted, its
    figures, each source's row of what an engineer can act on and whether the model holds the maps (act_on)."""

    folder: pathlib.Path
    target: float
    sources: list[SourceSummary]
    title: str = ""
    appendix: str = ""
    simulated: Simulated | None = None
    findings: list[str] = dataclasses.field(default_factory=list)
    pyoof: list[str] = dataclasses.field(default_factory=list)
    terms: bool = False
    figures: list = dataclasses.field(default_factory=list)
    act_on: list = dataclasses.field(default_factory=list)
    holds: str = ""


def real_maps_section(run) -> RealMapsSection | None:
    """The real maps' section of a run (None where it has no real-maps folder)."""
    folder = run.folder / "real-maps"
    if not (folder / real_sources.STAGES_FILE).is_file():
        return None
    stages, sources, tapers = read_real_maps(folder)
    names = list(dict.fromkeys(s.source for s in stages))
    by_name = {s.source: s for s in sources}
    taper_of = {t.source: t for t in tapers}
    summaries = []
    for name in names:
        own = [s for s in stages if s.source == name]
        summary = source_summary(name, own, by_name.get(name), taper_of.get(name))
        summaries.append(dataclasses.replace(summary, pyoof=pyoof_summary(run.folder / "pyoof", by_name.get(name),
                                                                          own)))
    return RealMapsSection(folder, TARGET, summaries)


def other_minima(sources):
    """(stages where some series ended in another local minimum than the optimum, stages in all, the largest
    objective excess of such a minimum)."""
    rows = [row for source in sources for row in source.stages]
    missed = [row for row in rows if any(cell.distance is None or cell.distance > TARGET
                                         for cell in row.cells.values())]
    excess = [cell.excess for row in missed for cell in row.cells.values() if cell.excess is not None]
    return len(missed), len(rows), max(excess, default=None)


def same_optimum_agreement(sources):
    """(stages where NumPy and torch autograd both reached the optimum, the largest distance between their fits
    there in standard errors, the largest distance anywhere)."""
    rows = [row for source in sources for row in source.agreement if row.distance is not None]
    both = [row.distance for row in rows if row.both]
    return len(both), max(both, default=None), max((row.distance for row in rows), default=None)


OBJECTIVE_WORDS = {"gaussian": "least squares in noise units", "cauchy": "the Cauchy likelihood at the noise's scale"}
"""How a sentence names a real-maps objective."""


def source_findings(short, record) -> list[str]:
    """What one source's record shows, as sentences: its residuals, the loss, the uncertainty,
    the order truncation, the optics, the budget, the random starts, the per-map terms, the model's additions, the
    noise and the dropped samples."""
    rms = ", ".join(f"{value:.2g}" for value in record.residual_rms)
    lag = record.residual_lag1
    lines = [f"{short}: residual rms {rms} noise units (in focus, -dz, +dz; 1 for a perfect model), neighbouring "
             f"residuals correlated at {lag.u:.2f} along u and {lag.v:.2f} along v: structure the model does not "
             "hold, not noise."]
    other = record.other_objective
    if other:
        words = OBJECTIVE_WORDS[other.objective]
        if other.widths:
            words = (f"the Cauchy likelihood at the residuals' scale (re-estimated at each stage's start: "
                     f"{other.widths[-1]:.2g} noise units at n = {record.order})")
        lines.append(f"{short}: fitted by {OBJECTIVE_WORDS[record.objective]}; the same ladder of orders fitted by "
                     f"{words} instead moves the surface by {other.surface_difference_rms_um:.0f} um rms "
                     f"(n = {record.order}), against {record.surface_rms_um:.0f} um rms of surface error: the choice "
                     "of loss matters.")
    if record.uncertainty_median_um is not None:
        lines.append(uncertainty_line(short, record))
    for present, sentence in ((record.higher_orders, lambda: higher_orders_line(short, record.higher_orders, record)),
                              (record.optics, lambda: optics_line(short, record.optics)),
                              (record.uncertainty_median_um is not None, lambda: budget_line(short, record)),
                              (record.multistart, lambda: multistart_line(short, record.multistart)),
                              (record.terms_effect, lambda: terms_line(short, record.terms_effect, record)),
                              (record.additions, lambda: additions_line(short, record.additions))):
        text = sentence() if present else None
        if text:  # budget_line says nothing where the record holds no part but the statistical
            lines.append(text)
    if record.dropped and record.noise_along and record.scale is not None:
        along_v, along_u = record.noise_along
        offsets = [record.x[-3 + k] * record.scale for k in range(3)]
        lines.append(f"{short}: the noise is not white: differences of neighbouring pixels along v are "
                     f"{along_v / along_u:.2f} of those along u (white noise: 1); baselines "
                     f"{', '.join(f'{o:.0f}' for o in offsets)} counts (fitted); "
                     f"{plural(record.dropped, 'dropped sample')} masked.")
    return lines


def findings(section):
    """What the real maps show that the simulations do not, as sentences with their numbers."""
    sources = section.sources
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
        if source.source is not None:
            lines += source_findings(source.short, source.source)
    return lines


@dataclasses.dataclass(frozen=True)
class PyoofSummary:
    """pyoof's fits of one source: its version, its last order, its seconds and evaluations over the orders, the
    orders stopped at its evaluation limit, its last phase's rms and ours (rad), its variant closest to ours and how
    far apart they lie (rad rms)."""

    version: str
    order: int
    seconds: float
    nfev: int
    limited: list[int]
    ours_rms: float
    theirs_rms: float
    closest: str
    difference: float


def pyoof_summary(folder, source_summary_record, stages) -> PyoofSummary | None:
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
    return PyoofSummary(version=last.pyoof, order=last.order, seconds=sum(r.seconds for r in fits),
                        nfev=sum(r.nfev for r in fits), limited=[r.order for r in fits if r.status == 0],
                        ours_rms=float(np.sqrt(np.nanmean(ours**2))),
                        theirs_rms=float(np.sqrt(np.nanmean((theirs - np.nanmean(theirs)) ** 2))),
                        closest=closest, difference=differences[closest])


def pyoof_lines(section):
    """One sentence per source that pyoof also fitted: its time, how it ended, its phase against ours."""
    lines = []
    for source in section.sources:
        peer = source.pyoof
        if peer is None:
            continue
        limited = (f"order{'s' if len(peer.limited) > 1 else ''} {', '.join(map(str, peer.limited))} stopped at "
                   "its evaluation limit" if peer.limited else "every order ended by its own tolerance")
        lines.append(f"pyoof {peer.version} on the {source.short} maps (its own model and fit: least squares, "
                     f"finite-difference Jacobian, maps normalised to their peaks): n = 1..{peer.order} in "
                     f"{peer.seconds:.3g} s and {peer.nfev} evaluations, time to stop ({limited}). Its phase "
                     f"at n = {peer.order}: {peer.theirs_rms:.3g} rad rms, ours {peer.ours_rms:.3g}; pyoof's "
                     f"{peer.closest} lies closest to ours, {peer.difference:.2g} rad rms apart.")
    return lines


def uncertainty_line(short, record):
    """The sentence on a source's surface uncertainty; its ratio to independent pixels' only where recorded (a fit
    of n = 1 has no surface beyond the tilts and piston removed, so no ratio)."""
    line = (f"{short}: the surface's uncertainty (1 sigma) is {um(record.uncertainty_median_um)} um "
            f"(median over the dish; its map in {record.surface_fits or 'no FITS file'})")
    if record.uncertainty_inflation is None:
        return line + "."
    return line + (f", {record.uncertainty_inflation:.2g}x what independent pixels would give: the residuals "
                   f"correlate over {record.uncertainty_reach} pixels.")

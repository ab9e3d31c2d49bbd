"""A run's appendix: its sweeps' timing tables, the cross-check, the retrieval, the benches and the figures drawn
from it."""

import dataclasses
import pathlib

import numpy as np

from replication.claims import mechanism as claim_mechanism
from replication.claims.retrieval import JUDGED, retrieval_claims
from replication.claims.speed import judge_timed
from replication.core import judging, point_times
from replication.core.fit_records import record_objective
from replication.core.format import plain, relative, times
from replication.core.load import LOADED_CORES, MIN_WINDOW_S, load_summary, run_loads
from replication.core.objectives import CAUCHY
from replication.core.paths import ROOT
from replication.core.series import JAX, NUMPY, TORCH_ADJOINT, TORCH_CPU, TORCH_CUDA, ordered
from replication.report.cells import left_out_text
from replication.studies.bench.read import (
    allocator_effect,
    bench_profiles,
    bench_targets,
    compiled_reading,
    fastest_floors,
)
from replication.studies.peers import read as peers_read
from replication.studies.real_maps.read import real_maps_section
from replication.studies.retrieval import read as cold_start
from replication.studies.retrieval.profiles import RETRIEVAL_PROFILES
from replication.studies.sweep import read as sweep_read
from replication.studies.sweep.figures import (
    OTHER_SERIES_FIGURE,
    TIME_VS_GRID_SIZE,
    TIME_VS_ZERNIKE_ORDER,
    other_panels,
)


def seconds_cell(record):
    """Median seconds of a point: to the target, then to the optimiser's stop where the point records a target
    ("0.12 / 0.15"; a fit that never reached it ">= 12 / 12 †", a bound); estimated values carry a tilde, older fits
    that are not solutions a dagger."""
    if record is None:
        return ""
    value = point_times.seconds(record)
    if record.estimated:
        return f"~{value:.3g} (est.)"
    solved = point_times.is_solution(record)
    if point_times.timed_to_target(record):
        stop = point_times.stop_seconds(record)
        return f"{'' if solved else '>= '}{value:.3g} / {stop:.3g}" + ("" if solved else " †")
    return f"{value:.3g}" + ("" if solved else " †")


RATIO_COLUMNS = ((NUMPY, TORCH_CPU), (NUMPY, TORCH_CUDA), (TORCH_CPU, TORCH_CUDA))


def timing_rows(series):
    """Rows of the timing table: per (npix, nzern) each series' seconds and the speed-ups (solutions only)."""
    keys = sorted({key for points in series.values() for key in points})
    names = ordered(series)
    ratio_columns = [pair for pair in RATIO_COLUMNS if all(name in series for name in pair)]
    rows = []
    for key in keys:
        cells = [seconds_cell(series[name].get(key)) for name in names]
        ratios = [point_times.speedups(series, slow, fast).get(key) for slow, fast in ratio_columns]
        rows.append({"npix": key[0], "nzern": key[1], "cells": cells, "ratios": [times(r) for r in ratios]})
    return names, [f"{a} / {b}" for a, b in ratio_columns], rows


def retrieval_section(run, appendix):
    """What the report shows of a run's cold-start retrieval (its largest profile), or None without one: how the
    fits ended, per aberration size and per point, and C3, C4 judged on the cold-start fits beside the sweep's."""
    name, records = run.retrieval_shown
    if not name:
        return None
    success = cold_start.success_table(records)
    methods = sorted({method for row in success for method in row.cells}, key=lambda m: (m[0].sort_key(), m[1]))
    cold = retrieval_claims(records)
    truth = judge_timed(run.series)
    judged_claims = []
    for claim in JUDGED:
        cells = [retrieval_cell(claim, verdict) for verdict in (cold[claim], truth[claim.id])]
        judged_claims.append({"claim": claim.id, "short": claim.short, "cold": cells[0], "truth": cells[1]})
    return {"title": run.title, "appendix": appendix, "folder": shown(run.folder / name),
            "profile": name.removeprefix("retrieval-"), "fits": len(cold_start.judged(records)),
            "methods": [{"key": method, "label": cold_start.method_label(*method)} for method in methods],
            "success": success, "points": cold_start.point_table(records), "claims": judged_claims,
            "endings": cold_start.endings_count(records), "same_optimum": cold_start.SAME_OPTIMUM_NLL,
            "by_distance": any(record.judged_by_distance for record in records),
            "settings": RETRIEVAL_PROFILES.get(name.removeprefix("retrieval-"))}


def retrieval_cell(claim, found) -> str:
    """A claim's verdict judged on the retrievals or on the sweep, in a cell: its value in its words, its verdict."""
    if found.verdict == judging.NOT_MEASURED:
        return judging.NOT_MEASURED
    return f"{claim.words(found)}: **{found.verdict}**"


def fit_row(fit):
    """A cross-check fit (with its exact account) as the convergence table shows it."""
    account = fit.convergence
    scale = record_objective(fit).covariance_scale(fit.fun, 3 * fit.npix ** 2, len(fit.x))
    ratio = np.sqrt(scale) * np.array(fit.stderr_bfgs, dtype=float) / np.array(account.stderr, dtype=float)
    finite = ratio[np.isfinite(ratio)]
    return {"impl": fit.series.label, "npix": fit.npix, "nzern": fit.nzern, "objective": fit.objective,
            "nit": fit.nit, "nfev": fit.nfev, "success": fit.success, "message": fit.message,
            "grad_norm": account.grad_norm, "newton": account.judging_newton, "decrease": account.expected_decrease,
            "rounding": account.rounding, "at_optimum": account.at_optimum,
            "bfgs_ratio": (float(finite.min()), float(finite.max())) if finite.size else None}


def shown(folder):
    """A folder as the report names it: relative to the repository where it lies inside it."""
    folder = pathlib.Path(folder).resolve()
    return folder.relative_to(ROOT).as_posix() if folder.is_relative_to(ROOT) else str(folder)


def environment_of(run):
    """The environment record describing a run's software: its judged sweep's first, else its cross-check's."""
    name = run.judged(CAUCHY)[0]
    if name and run.sweeps[name][1]:
        return run.sweeps[name][1][0]
    if run.crosscheck:
        return run.crosscheck.environment
    if run.bench:
        return run.bench.environments[0]
    return None


def crosscheck_summary(run):
    """The cross-check in one line's numbers: checks passed, the check closest to its tolerance, the failures."""
    checks = run.crosscheck.checks if run.crosscheck else []
    if not checks:
        return None
    finite = [c for c in checks if c.value is not None and np.isfinite(c.value) and c.tolerance > 0]
    closest = max(finite, key=lambda c: c.value / c.tolerance) if finite else None
    return {"passed": sum(c.passed for c in checks), "total": len(checks), "closest": closest,
            "failed": [c for c in checks if not c.passed], "dropped": run.crosscheck.repeated}


def sweep_sections(run):
    """Each sweep of a run: its timing table (non-solutions marked), records and how its fits ended."""
    sweeps = []
    for name, (series, records) in run.sweeps.items():
        if series:
            names, ratio_columns, rows = timing_rows(series)
            sweeps.append({"profile": name.removeprefix("sweep-").removesuffix("-least-squares"),
                           "objective": sweep_read.sweep_objective(name),
                           "folder": shown(run.folder / (name if (run.folder / name).is_dir() else "shards")),
                           "names": names, "ratio_columns": ratio_columns, "rows": rows, "runs": records,
                           "targeted": sweep_read.timed_to_targets(series),
                           "left_out": left_out_text(series), "convergence": sweep_read.convergence_rows(series)})
    return sweeps


def run_figures(run, figures, start):
    """The run's own figures (paths relative to start) that figures.draw_run draws."""
    if not run.series:
        return []
    folder = figures / "runs" / run.appendix_name
    drawn = [TIME_VS_GRID_SIZE, TIME_VS_ZERNIKE_ORDER] + ([OTHER_SERIES_FIGURE] if other_panels(run) else [])
    return [relative(figure.path(folder), start) for figure in drawn]


def run_load(run):
    """How busy other processes kept the machine while the run's sweeps were measured (core.load.load_summary),
    with its text."""
    summary = load_summary(run_loads(run))
    long = f"the {summary.judged} points that lasted {MIN_WINDOW_S:g} s or more (shorter ones cannot tell)"
    if not summary.recorded:
        text = "load not recorded (made before the load was)"
    elif not summary.judged:
        text = f"load not judged: no point lasted {MIN_WINDOW_S:g} s (shorter ones cannot tell)"
    elif not summary.loaded:
        text = f"quiet: other processes kept at most {summary.largest:.2f} cores busy over {long}"
    else:
        text = (f"**measured on a loaded machine**: at {summary.loaded_count} of {long} other processes kept >= "
                f"{LOADED_CORES} cores busy (up to {summary.largest:.1f}); its times are slower than a quiet machine's")
    return dataclasses.replace(summary, text=text)


def peer_floors(run):
    """{npix: ms} of the fastest FFT floor the run's bench measured (its peers' bench first) at the threads of its
    judged sweep, for the algorithmic limits; {} where the sweep ran with more than one thread count or no bench
    row has its count."""
    threads = run.judged_threads()
    if len(threads) != 1:
        return {}
    count = next(iter(threads))
    return fastest_floors(run.bench_peers, count) or fastest_floors(run.bench, count)


@dataclasses.dataclass(frozen=True)
class RunSection:
    """What an appendix (and the report's tables of runs) shows of one run: its names and note, its machine and
    environment, its sweeps' tables, checks, comparisons, benches, retrieval and real maps; as render.context adds
    them, how its model code stands (cells.run_code) and whether its sweep is judged by the older rule."""

    title: str
    folder: str
    folder_name: str
    own: bool
    note: str | None
    nodes: object
    appendix: str
    decomposition: object
    peers: object
    peers_check: object
    bench_peers: object
    machine: object
    environment: object
    profile: object
    load: object
    sweeps: list
    crosscheck: object
    crosscheck_checks: list
    crosscheck_summary: object
    crosscheck_fits: list
    bench: object
    bench_targets: object
    bench_profiles: object
    allocator: object
    compiled: object
    figures: list
    retrieval: dict | None
    real_maps: object
    code: object = None
    old_rule: bool = False


def run_sections(run, figures, start) -> RunSection:
    """What an appendix shows of one run: its sweeps' tables, checks, comparisons and benches."""
    note = run.info.note
    return RunSection(
        title=run.title, folder=shown(run.folder), folder_name=run.folder.name, own=run.own,
        note=note and plain(note), nodes=run.nodes, appendix=f"runs/{run.appendix_name}.md",
        decomposition=claim_mechanism.decomposition(run.series),
        peers=peers_read.peers(run.series, peer_floors(run)), peers_check=run.peers_check,
        bench_peers=run.bench_peers, machine=run.machine, environment=environment_of(run), profile=run.profile,
        load=run_load(run), sweeps=sweep_sections(run), crosscheck=run.crosscheck,
        crosscheck_checks=run.crosscheck.checks if run.crosscheck else [], crosscheck_summary=crosscheck_summary(run),
        crosscheck_fits=[fit_row(fit) for fit in (run.crosscheck.fits if run.crosscheck else []) if fit.convergence],
        bench=run.bench, bench_targets=bench_targets(run.bench), bench_profiles=bench_profiles(run.bench),
        allocator=allocator_effect(run.bench, run.bench_default), compiled=compiled_reading(run.bench_compile),
        figures=run_figures(run, figures, start), retrieval=retrieval_section(run, f"runs/{run.appendix_name}.md"),
        real_maps=real_maps_section(run))


JAX_POINTS = (256, 512)
"""The grid sizes at which The answer sets torch against the JAX peer (those of the peer targets)."""


def against_scipy_bfgs(run):
    """The other minimizers of torch autograd against scipy's BFGS, for a run timed to the target: {title, appendix,
    lines} (peers_read.against_scipy's sentences), or None."""
    if not sweep_read.timed_to_targets(run.series):
        return None
    lines = [text for other, what in peers_read.AGAINST_SCIPY
             for text in [peers_read.against_scipy(run.series, other, what)] if text]
    return {"title": run.title, "appendix": run.appendix_name, "lines": lines} if lines else None


def against_jax(run, code=None):
    """The JAX line of The answer for a run that timed the peer and whose peer passed its gate: per torch
    gradient, the range of its time to solution over JAX's at npix JAX_POINTS (fits at the optimum only), and the
    commits of the run's model code (code: its run_code), since runs differ in code as well as machine; or None."""
    if JAX not in run.series or not (run.peers_check and run.peers_check.passed):
        return None
    ranges = []
    for series, what in ((TORCH_ADJOINT, "exact adjoint"), (TORCH_CPU, "autograd")):
        ratios = [value for (npix, _), value in point_times.speedups(run.series, series, JAX).items()
                  if npix in JAX_POINTS]
        if ratios:
            ranges.append({"what": what, "low": times(min(ratios), False), "high": times(max(ratios), False)})
    commits = ", ".join(commit[:7] for commit in (code.commits if code else []))
    return {"title": run.title, "appendix": run.appendix_name, "ranges": ranges,
            "code": f"model code of commit {commits}" if commits else "model code not recorded"} if ranges else None


@dataclasses.dataclass(frozen=True)
class ShownFigure:
    """A figure as a page shows it: its path from the page and its caption (None where it draws nothing)."""

    path: str
    caption: str | None

    def numbered(self, index: int) -> "ShownFigure":
        """The caption opened with 'Figure N: ' ('Figure N (the paper's figure): ...' where it opens with a
        parenthesis)."""
        joint = "" if self.caption.startswith("(") else ":"
        return dataclasses.replace(self, caption=f"Figure {index}{joint} {self.caption}")


@dataclasses.dataclass
class ReportContext:
    """Everything the report's pages show (each template reads these names), read from the run folders."""

    first_screen: object  # screen.FirstScreen (screen imports this module)
    older_rule: list
    design: list
    retired: list
    mechanism: str | None
    environments: list
    mirror_commit: str | None
    answer_figure: ShownFigure | None
    claim_tables: list
    claims: tuple
    rules: object
    judged_runs: list
    independence: list
    sensitivity: object
    runs: list
    claim_runs: list
    decomposed: object
    unidentifiable: list
    mirror_rows: list
    mirror_total: object
    identical: object
    mirror_sources: dict
    profiles: dict
    figures: list
    same_solution: float
    stopped_at_optimum: float
    target_se: float
    optimum_tol: float
    model: str
    reference_folder: str
    own: bool
    retrievals: list
    against_jax: list
    against_scipy: list
    closure: object
    closure_beyond: list
    srt_noise: float
    jax_points: tuple
    retrieval_figure: ShownFigure | None
    real_maps: object

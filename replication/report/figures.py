"""Which run each figure shows, and every figure drawn: the answer, each run's own figures, the retrieval and the
real maps."""

import matplotlib
import matplotlib.figure
import matplotlib.ticker

from replication.claims import CLAIMS, design
from replication.claims.answer_figure import answer_figure
from replication.claims.mechanism import decomposition_run, speedup_decomposition
from replication.core.plotting import STYLE, Figure, appendix_folder
from replication.core.series import TORCH_CUDA
from replication.report.load import judges_claims
from replication.studies.crosscheck.figures import agreement, crosscheck_run, distances, example_fit, fit_distances
from replication.studies.crosscheck.records import read_example
from replication.studies.real_maps.figures import draw_real_maps
from replication.studies.retrieval.figures import retrieval, retrieval_run
from replication.studies.sweep.figures import (
    TIME_VS_GRID_SIZE,
    figure_run,
    other_series,
    speedup_vs_grid_size,
    time_vs_grid_size,
    time_vs_zernike_order,
)


def paper_figures_run(all_runs):
    """The run whose times the paper's figures (time against grid size and order) draw: the run the design names to
    answer the claims (yours first), else the run holding the most of the paper's series."""
    shown = design.answering(all_runs)
    return shown if shown is not None and shown.series else figure_run(all_runs)


GPU_HISTORY = Figure(TIME_VS_GRID_SIZE.stem, lambda run: "history, the only GPU measurement (older code, not "
                     "judged): " + TIME_VS_GRID_SIZE.caption(run).removeprefix("(the paper's figure): "))
"""The GPU history run's own time against grid size (drawn with its appendix's figures), shown as history."""


def gpu_history(all_runs):
    """The history runs of the design with a GPU series, whose figure stands apart from the judged evidence."""
    return [run for run, _ in design.beside(all_runs, None)[1] if TORCH_CUDA in run.series]


def draw_run(run, folder):
    """A run's own figures, for its appendix: the paper's figures 1 and 2 of that run and its other series."""
    if not run.series:
        return []
    target = appendix_folder(folder, run)
    return time_vs_grid_size(run, target) + time_vs_zernike_order(run, target) + other_series(run, target)


def draw_all(all_runs, output):
    """Draw every figure the runs have results for; returns the paths written.

    Figures 1 and 2 show the paper's series of one run (paper_figures_run); figure 3 every run's speed-ups; figures
    4 and 5 the cross-check of one run (crosscheck_run); each run's own figures go under runs/<its appendix's
    name>/ (the GPU history's time against grid size, which the report shows apart, among them).
    """
    paths = []
    with matplotlib.rc_context(STYLE):
        if any(run.series for run in all_runs):
            paths += answer_figure(all_runs, output)
        shown = paper_figures_run(all_runs)
        if shown is not None:
            paths += time_vs_grid_size(shown, output)
            paths += time_vs_zernike_order(shown, output)
            paths += speedup_vs_grid_size([run for run in all_runs if judges_claims(run)], output)
        decomposed = decomposition_run(all_runs)
        if decomposed is not None:
            paths += speedup_decomposition(decomposed, output)
        checked = crosscheck_run(all_runs)
        if checked is not None:
            example = checked.folder / "crosscheck" / "example.npz"
            if example.exists():
                paths += example_fit(read_example(example), output, checked.title)
            found = fit_distances(checked)
            paths += distances(found, output, checked.title) if found else \
                agreement(checked.crosscheck.fits, output, checked.title)
        retrieved = retrieval_run(all_runs)
        if retrieved is not None:
            paths += retrieval(retrieved, output)
        paths += draw_real_maps(all_runs, output)
        for claim in CLAIMS:  # the figures of claims added with their own (claims.ADDED)
            if claim.draw is not None and claim.shows(all_runs) is not None:
                paths += claim.draw(all_runs, output)
        for run in all_runs:
            paths += draw_run(run, output)
    return paths

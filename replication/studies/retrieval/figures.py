"""The cold-start retrieval's figure: the share of cold starts that reach the global optimum against the
aberration's size."""

import matplotlib.ticker
from matplotlib.lines import Line2D

from replication.core.plotting import Figure, save, shown_run, spaced, subplots
from replication.core.series import (
    series_colour,
)
from replication.studies.retrieval.read import method_label, point_table, success_table

METHOD_STYLES = {"cold start": "-", "cold start, orders raised": "--"}


RETRIEVAL = Figure("fig8_retrieval", lambda run: f"retrieval from zero aberration; {run.title}")


def retrieval(run, folder):
    """Figure 8: retrieval from a cold start against the aberration's size: the share of fits that reached the
    global optimum (every point and seed), the median time to solution of those at the run's largest point, and
    the median phase error left (all fits) beside the truth-started fits' phase standard error."""
    name, records = run.retrieval_shown
    success, points = success_table(records), point_table(records)
    largest = max((row.npix, row.nzern) for row in points)
    figure, axes = subplots(1, 3, figsize=(12, 3.6))
    methods = sorted({method for row in success for method in row.cells}, key=lambda m: (m[0].sort_key(), m[1]))
    for index, (series, start) in enumerate(methods):  # markers of decreasing size: coinciding lines stay visible
        style = {"color": series_colour(series), "linestyle": METHOD_STYLES.get(start, "-"),
                 "marker": "osD^v"[index % 5], "markersize": 7 - index, "markerfacecolor": "none",
                 "linewidth": 2.5 - 0.4 * index, "alpha": 0.85, "label": method_label(series, start)}
        shares = [(row.rms, row.cells[(series, start)]) for row in success if (series, start) in row.cells]
        axes[0].plot([r for r, _ in shares], [c.at_optimum / c.made for _, c in shares], **style)
        timed = [(row.rms, row.cells[(series, start)].s) for row in points
                 if (row.npix, row.nzern) == largest and (series, start) in row.cells]
        timed = [(r, s) for r, s in timed if s is not None]
        axes[1].plot([r for r, _ in timed], [s for _, s in timed], **style)
        axes[2].plot([r for r, _ in shares], [c.error for _, c in shares], **style)
    axes[2].plot([row.rms for row in success], [max(c.judge_error for c in row.cells.values())
                                                   for row in success],
                 color="grey", linestyle=":", marker="x", label="fits from the truth")
    axes[0].set(xscale="log", xlabel="true aberration (rad rms over the dish)", ylabel="share at the global optimum",
                ylim=(-0.05, 1.05), title="reached the global optimum")
    axes[1].set(xscale="log", yscale="log", xlabel="true aberration (rad rms over the dish)",
                ylabel="seconds (median, solutions only)",
                title=f"time to solution, npix {largest[0]}, n = {largest[1]}")
    axes[2].set(xscale="log", yscale="log", xlabel="true aberration (rad rms over the dish)",
                ylabel="rad rms over the dish (median)", title="phase error left")
    sizes = sorted({row.rms for row in success})
    labelled = spaced(sizes, 1.3)
    for axis in axes:
        axis.set_xticks(sizes, [f"{size:g}" if size in labelled else "" for size in sizes])
        axis.minorticks_off()
    for axis in axes[1:]:  # log y: ticks at 1, 2 and 5 of each decade, so that a narrow range still has several
        axis.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}"))
    axes[0].legend(fontsize=7, loc="lower left")
    axes[2].legend(handles=[Line2D([], [], color="grey", linestyle=":", marker="x", label="fits from the truth")],
                   fontsize=7)
    figure.suptitle(f"Retrieval from zero aberration ({name}); {run.title}")
    figure.tight_layout()
    return save(figure, folder, RETRIEVAL.stem)


def retrieval_run(all_runs):
    """The run whose retrieval figure 8 shows: your first run that has one with a judged cold start, else the
    reference run with the largest retrieval profile (the newest, by its start, among equals); a retrieval of fits
    from the truth only has nothing to draw."""
    order = {"retrieval-smoke": 0, "retrieval-quick": 1, "retrieval-full": 2}
    return shown_run([run for run in all_runs if run.retrieval_shown[0] and point_table(run.retrieval_shown[1])],
                     lambda run: order[run.retrieval_shown[0]])

"""The sweep's figures: time against grid size and Zernike order per series, the other series, the speed-up
against grid size, the decomposition of the speed-up, and how far apart the fits ended."""

import matplotlib
import matplotlib.figure
import matplotlib.ticker
from matplotlib.lines import Line2D

from replication.core.judging import UNDETERMINED, per_size_medians
from replication.core.plotting import Figure, draw_ratio, run_style, save, shown_run, subplots
from replication.core.point_times import is_solution, repeat_times, seconds
from replication.core.series import (
    NUMPY,
    OTHER_SERIES,
    PAPER_SERIES,
    TORCH_CPU,
    series_colour,
)
from replication.core.simulation import identifiable
from replication.studies.sweep.read import complete_sizes, time_measure, timed_to_targets

PAPER_ORDERS = (2, 3, 4)
"""The Zernike orders of the paper's figure of time against grid size, one panel each."""


def plot_series(axis, points, name, x_of):
    """One series' times against x: measured solutions joined by a solid line, estimated points hollow and joined
    to their neighbours by a dotted one only, fits that are not solutions (sweep.read.how_it_ended) as crosses, off
    the line."""
    colour = series_colour(name)
    keys = sorted((key for key in points if identifiable(*key)), key=x_of)  # a rank-deficient point is no fit
    solved = [key for key in keys if is_solution(points[key])]
    measured = [key for key in solved if not points[key].estimated]
    if len(measured) < len(solved):
        axis.plot([x_of(k) for k in solved], [seconds(points[k]) for k in solved], ":", color=colour, linewidth=1.2)
    axis.plot([x_of(k) for k in measured], [seconds(points[k]) for k in measured], "-", color=colour, linewidth=1.5,
              label=str(name))
    for key in keys:
        if key in solved:
            hollow = points[key].estimated
            axis.plot(x_of(key), seconds(points[key]), "o", color=colour, markersize=4.5,
                      markerfacecolor="white" if hollow else colour)
            if not hollow:  # the spread of the repeats
                spread = repeat_times(points[key])[0]
                axis.plot([x_of(key)] * 2, [min(spread), max(spread)], "-", color=colour, linewidth=3, alpha=0.4)
        else:
            axis.plot(x_of(key), seconds(points[key]), "x", color=colour, markersize=6)


def marks_drawn(run, names, keep):
    """(whether an estimated point, whether a fit that is not a solution) is among the points drawn: keep(key)
    selects them; the legend explains only the marks that appear."""
    drawn = [record for name in names for key, record in run.series.get(name, {}).items()
             if keep(key) and identifiable(*key)]
    return (any(record.estimated for record in drawn), any(not is_solution(record) for record in drawn))


def series_legend(figure, names, marks):
    """One legend under the figure: the series' colours, then what the markers that appear mean (marks: (estimated
    drawn, non-solution drawn), or a bool for both)."""
    estimated, unsolved = (marks, marks) if isinstance(marks, bool) else marks
    handles = [Line2D([], [], color=series_colour(name), linewidth=2) for name in names]
    labels = [str(name) for name in names]
    if estimated:
        handles.append(Line2D([], [], color="black", marker="o", markerfacecolor="white", linestyle=":"))
        labels.append("estimated, not run (dotted)")
    if unsolved:
        handles.append(Line2D([], [], color="black", marker="x", linestyle=""))
        labels.append("never reached its target (time a bound) or not a solution")
    figure.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.01),
                  ncol=min(4, max(1, len(labels))))


def plot_panels(run, names, fixed, values, x_label):
    """A row of panels of one run: the points whose key[fixed] is each value, against the other key."""
    figure, axes = subplots(1, len(values), figsize=(3.6 * len(values), 3.3), squeeze=False, sharey=True)
    for axis, value in zip(axes.flat, values, strict=True):
        for name in names:
            selected = {k: v for k, v in run.series.get(name, {}).items() if k[fixed] == value}
            if selected:
                plot_series(axis, selected, name, lambda k: k[1 - fixed])
        axis.set(yscale="log", xlabel=x_label,
                 title=f"Zernike order n = {value}" if fixed == 1 else f"npix = {value}")
    axes[0, 0].set_ylabel(f"{time_measure(run.series)} (s)")
    return figure, axes


def log_size_axis(axis, sizes):
    axis.set_xscale("log")
    axis.set_xticks(sizes, minor=False)
    axis.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    axis.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())


def grid_size_orders(run, names=PAPER_SERIES):
    """The Zernike orders the time-against-grid-size figure draws a panel for: the paper's n = 2, 3, 4 that the
    run measured, else its three lowest."""
    keys = {k for n in names if n in run.series for k in run.series[n]}
    return [n for n in PAPER_ORDERS if n in {k[1] for k in keys}] or sorted({k[1] for k in keys})[:3]


def paper_figure_caption(run):
    """Figure 1's caption: the orders and series drawn, and the run."""
    series = ", ".join(str(name) for name in PAPER_SERIES if name in run.series)
    orders = ", ".join(map(str, grid_size_orders(run)))
    return (f"(the paper's figure): {time_measure(run.series)} against grid size at n = {orders}; {series}; "
            f"{run.title}{estimated_words(run)}")


def estimated_words(run):
    """'; hollow points on dotted lines: estimated, not run' where the run's paper series hold an estimate."""
    estimated = any(record.estimated for name in PAPER_SERIES for record in run.series.get(name, {}).values())
    return "; hollow points on dotted lines: estimated, not run" if estimated else ""


TIME_VS_GRID_SIZE = Figure("fig1_time_vs_grid_size", paper_figure_caption)
TIME_VS_ZERNIKE_ORDER = Figure("fig2_time_vs_zernike_order", lambda run: (
    f"{time_measure(run.series)} against the Zernike order; {run.title}{estimated_words(run)}"))
SPEEDUP_VS_GRID_SIZE = Figure("fig3_speedup_vs_grid_size", lambda: "NumPy / torch-cpu against grid size: each run "
                              "judged by time to target in a colour, the runs of the older rule (time to stop) in "
                              "grey (median over orders; open triangles: bounds)")
OTHER_SERIES_FIGURE = Figure("fig7_other_series", lambda run: (
    f"the series the paper did not draw, {time_measure(run.series)}; {run.title}"))
def time_vs_grid_size(run, folder, names=PAPER_SERIES):
    """Figure 1 as the paper drew it: time-to-solution against grid size for NumPy and torch (CPU, GPU), one
    panel per Zernike order n = 2, 3, 4, one run."""
    names = [n for n in names if n in run.series]
    keys = {k for n in names for k in run.series[n]}
    orders = grid_size_orders(run, names)
    sizes = sorted({k[0] for k in keys})
    figure, axes = plot_panels(run, names, 1, orders, "grid size npix (pixels)")
    for axis in axes.flat:
        log_size_axis(axis, sizes)
    series_legend(figure, names, marks_drawn(run, names, lambda key: key[1] in orders))
    figure.suptitle(f"{time_measure(run.series).capitalize()} against grid size (median of repeats, bar: their "
                    f"range; setup + fit)\n{run.title}", y=1.06)
    return save(figure, folder, TIME_VS_GRID_SIZE.stem)


def time_vs_zernike_order(run, folder, names=PAPER_SERIES):
    """Figure 2 as the paper drew it: time-to-solution against Zernike order at the smallest grid, at npix 256 and
    512 where measured (C2 and C4 are judged there), and at the largest, of one run."""
    names = [n for n in names if n in run.series]
    sizes = sorted({k[0] for n in names for k in run.series[n]})
    chosen = sorted({sizes[0], *(npix for npix in (256, 512) if npix in sizes), sizes[-1]})
    figure, _ = plot_panels(run, names, 0, chosen, "Zernike order n")
    series_legend(figure, names, marks_drawn(run, names, lambda key: key[0] in chosen))
    figure.suptitle(f"{time_measure(run.series).capitalize()} against Zernike order at fixed grid size (bar: range "
                    f"of repeats)\n{run.title}", y=1.06)
    return save(figure, folder, TIME_VS_ZERNIKE_ORDER.stem)


def other_panels(run):
    """(question, series present) of the other-series figure: the questions the run can answer."""
    panels = [(title, [n for n in names if n in run.series]) for title, names in OTHER_SERIES]
    return [(title, names) for title, names in panels if len(names) > 1 and any(
        n not in PAPER_SERIES for n in names)]


def other_series(run, folder):
    """The series the paper did not draw, one panel per question (float32, the on-device BFGS, the gradient
    variants, the JAX peer), each beside the series it is compared with, against grid size at one order."""
    panels = other_panels(run)
    if not panels:
        return []
    orders = {k[1] for title, names in panels for n in names for k in run.series[n]}
    nzern = 4 if 4 in orders else min(orders)
    figure, axes = subplots(1, len(panels), figsize=(3.8 * len(panels), 3.3), squeeze=False, sharey=True)
    for axis, (title, names) in zip(axes.flat, panels, strict=True):
        sizes = set()
        for name in names:
            selected = {k: v for k, v in run.series[name].items() if k[1] == nzern}
            sizes |= {k[0] for k in selected}
            if selected:
                plot_series(axis, selected, name, lambda k: k[0])
        log_size_axis(axis, sorted(sizes))
        axis.set(yscale="log", xlabel="grid size npix (pixels)", title=f"{title}, n = {nzern}")
        axis.legend(fontsize=6.5, loc="upper left")
    axes[0, 0].set_ylabel(f"{time_measure(run.series)} (s)")
    figure.suptitle(f"The series the paper did not draw (crosses: not a solution)\n{run.title}", y=1.06)
    return save(figure, folder, OTHER_SERIES_FIGURE.stem)


def speedup_vs_grid_size(all_runs, folder):
    """Figure: C3's ratio, NumPy / torch-cpu, against grid size for every run (median over orders of the ratios the
    rules judge, error bars the range over repeats, bounds as open triangles), with the paper's 10x."""
    figure, axis = subplots(figsize=(6.5, 4.0))
    drawn, today, older = set(), 0, 0
    for run in all_runs:
        by_npix = per_size_medians(complete_sizes(run.series, NUMPY, TORCH_CPU), 0)
        if not by_npix:
            continue
        sizes, medians = list(by_npix), list(by_npix.values())
        if timed_to_targets(run.series):  # judged by today's rule: a colour and a legend entry each
            colour, label, marker = matplotlib.colormaps["tab10"](today % 10), run.short_title, run_style(today)[1]
            today += 1
        else:  # judged by the older rule (time to stop): grey, one legend entry for all of them
            colour, label, marker = "silver", None if older else "older rule (time to the optimiser's stop)", "."
            older += 1
        draw_ratio(axis, sizes, medians, colour, label, marker)
        drawn |= {npix for npix, m in zip(sizes, medians, strict=True) if m.kind != UNDETERMINED}
    axis.axhline(10, color="grey", linestyle="--", linewidth=1)
    axis.text(0.02, 10 * 1.08, "paper: ~10x", color="grey", fontsize=8, transform=axis.get_yaxis_transform())
    axis.axhline(1, color="black", linewidth=0.8)
    axis.set(xscale="log", yscale="log", xlabel="grid size npix (pixels)", ylabel="NumPy / torch-cpu",
             title="C3's speed-up in every run: median over orders (open triangles: bounds)")
    if drawn:
        axis.set_xticks(sorted(drawn))
    axis.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    axis.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    if axis.get_legend_handles_labels()[0]:  # a run with no ratio yet draws the axes and the lines only
        axis.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2)
    return save(figure, folder, SPEEDUP_VS_GRID_SIZE.stem)


def figure_run(all_runs):
    """The run whose figures 1 and 2 the main report shows: your first run, else the reference run holding the
    most of the paper's series (the newest, by its start, among equals)."""
    return shown_run([run for run in all_runs if run.series],
                     lambda run: sum(name in run.series for name in PAPER_SERIES))

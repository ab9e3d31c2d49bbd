"""The figures, one function per figure, drawn only from recorded results."""


import matplotlib
import matplotlib.figure
import matplotlib.ticker
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.lines import Line2D

from replication.claims import parameter_count
from replication.claims.mechanism import decomposition
from replication.core.judging import AT_LEAST, AT_MOST, UNDETERMINED, VALUE, per_size_medians
from replication.core.results import check_target
from replication.core.series import (
    NUMPY,
    NUMPY_ADJOINT,
    OTHER_SERIES,
    PAPER_SERIES,
    TORCH_ADJOINT,
    TORCH_CPU,
    TORCH_CUDA,
    TORCH_DIFFERENCES,
    Series,
    series_colour,
)
from replication.core.simulation import identifiable, judging_stderr
from replication.report.load import judges_claims
from replication.studies.crosscheck.records import crosscheck_fits, fit_series
from replication.studies.sweep.read import complete_sizes, is_solution, repeat_times, seconds, speedups

PAPER_ORDERS = (2, 3, 4)
"""The Zernike orders of the paper's figure of time against grid size, one panel each."""

STYLE = {"figure.dpi": 110, "savefig.dpi": 110, "font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
         "legend.fontsize": 8, "axes.titlesize": 10, "svg.hashsalt": "oof-replication"}
"""The one place the figures' look is set; a fixed hash salt makes the SVG ids the same on every render."""
RATIO_COLOURS = {(NUMPY, TORCH_CPU): "tab:orange", (NUMPY, TORCH_CUDA): "tab:green",
                 (TORCH_CPU, TORCH_CUDA): "tab:purple"}
RUN_STYLES = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1, 1, 1)), "v"))
"""Line style and marker of each run, in the report's order: yours first, then the references."""
FORMATS = ("png", "svg")
METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}
"""No date or library version in the files: the same results always give the same bytes."""


def subplots(*args, **options):
    """A figure and its axes, as pyplot.subplots makes them, but owned by no GUI: drawing the figures changes no
    global state (no backend chosen at import, no window)."""
    figure = matplotlib.figure.Figure(figsize=options.pop("figsize", None))
    FigureCanvasAgg(figure)  # the raster canvas every figure is drawn on, whatever pyplot's backend is
    return figure, figure.subplots(*args, **options)


def save(figure, folder, name):
    """Write a figure in every format, cropped to its drawn extent; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    # The extent found once for every format: bbox_inches="tight" draws each figure twice per format.
    extent = figure.get_tightbbox(figure.canvas.get_renderer()).padded(matplotlib.rcParams["savefig.pad_inches"])
    paths = []
    for extension in FORMATS:
        path = check_target(folder / f"{name}.{extension}")
        figure.savefig(path, bbox_inches=extent, metadata=METADATA[extension])
        paths.append(path)
    return paths


def run_style(index):
    return RUN_STYLES[index % len(RUN_STYLES)]


def appendix_folder(folder, run):
    """Where a run's own figures go: <figures>/runs/<name>/ (the name of its appendix too)."""
    return folder / "runs" / run.appendix_name


def plot_series(axis, points, name, x_of):
    """One series' times against x: solutions joined by a line (estimated points hollow), fits that are not
    solutions (analysis.how_it_ended) as crosses, off the line."""
    colour = series_colour(name)
    keys = sorted((key for key in points if identifiable(*key)), key=x_of)  # a rank-deficient point is no fit
    solved = [key for key in keys if is_solution(points[key])]
    axis.plot([x_of(k) for k in solved], [seconds(points[k]) for k in solved], "-", color=colour, linewidth=1.5,
              label=str(name))
    for key in keys:
        if key in solved:
            hollow = points[key]["estimated"]
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
    return (any(record["estimated"] for record in drawn), any(not is_solution(record) for record in drawn))


def series_legend(figure, names, marks):
    """One legend under the figure: the series' colours, then what the markers that appear mean (marks: (estimated
    drawn, non-solution drawn), or a bool for both)."""
    estimated, unsolved = (marks, marks) if isinstance(marks, bool) else marks
    handles = [Line2D([], [], color=series_colour(name), linewidth=2) for name in names]
    labels = [str(name) for name in names]
    if estimated:
        handles.append(Line2D([], [], color="black", marker="o", markerfacecolor="white", linestyle=""))
        labels.append("estimated, not run")
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
    axes[0, 0].set_ylabel("time to solution (s)")
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


def time_vs_grid_size(run, folder, names=PAPER_SERIES, name="fig1_time_vs_grid_size"):
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
    figure.suptitle(f"Time to solution against grid size (median of repeats, bar: their range; setup + fit)\n"
                    f"{run.title}", y=1.06)
    return save(figure, folder, name)


def time_vs_zernike_order(run, folder, names=PAPER_SERIES, name="fig2_time_vs_zernike_order"):
    """Figure 2 as the paper drew it: time-to-solution against Zernike order at the smallest grid, at npix 256 and
    512 where measured (C2 and C4 are judged there), and at the largest, of one run."""
    names = [n for n in names if n in run.series]
    sizes = sorted({k[0] for n in names for k in run.series[n]})
    chosen = sorted({sizes[0], *(npix for npix in (256, 512) if npix in sizes), sizes[-1]})
    figure, _ = plot_panels(run, names, 0, chosen, "Zernike order n")
    series_legend(figure, names, marks_drawn(run, names, lambda key: key[0] in chosen))
    figure.suptitle(f"Time to solution against Zernike order at fixed grid size (bar: range of repeats)\n{run.title}",
                    y=1.06)
    return save(figure, folder, name)


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
    axes[0, 0].set_ylabel("time to solution (s)")
    figure.suptitle(f"The series the paper did not draw (crosses: not a solution)\n{run.title}", y=1.06)
    return save(figure, folder, "fig7_other_series")




def speedup_vs_grid_size(all_runs, folder):
    """Figure: C3's ratio, NumPy / torch-cpu, against grid size for every run (median over orders of the ratios the
    rules judge, error bars the range over repeats, bounds as open triangles), with the paper's 10x."""
    figure, axis = subplots(figsize=(6.5, 4.0))
    drawn = set()
    for index, run in enumerate(all_runs):
        by_npix = per_size_medians(complete_sizes(run.series, NUMPY, TORCH_CPU), 0)
        if not by_npix:
            continue
        sizes, medians = list(by_npix), list(by_npix.values())
        marker = run_style(index)[1]
        colour = matplotlib.colormaps["tab10"](index % 10)
        draw_ratio(axis, sizes, medians, colour, run.short_title, marker)
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
    axis.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2)
    return save(figure, folder, "fig3_speedup_vs_grid_size")


def gpu_run(all_runs):
    """The run whose GPU ratios the answer's figure draws: the newest with a torch-cuda series, or None."""
    with_gpu = [run for run in all_runs if TORCH_CUDA in run.series]
    return max(with_gpu, key=lambda run: (run.own, run.info["created"])) if with_gpu else None


def answer_runs(all_runs):
    """(the run of the CPU ratios, the run of the GPU ratios) the answer's figure draws: the decomposition's run
    (it has the same-gradient series) else the figures' run; the newest run with a GPU series."""
    return decomposition_run(all_runs) or figure_run(all_runs), gpu_run(all_runs)


def draw_ratio(axis, xs, ratios, colour, label, marker="o"):
    """Ratios (analysis.Ratio) against xs: values joined by a line with their range over repeats as error bars,
    bounds as open triangles pointing where the value may lie (never on the line)."""
    values = [(x, r) for x, r in zip(xs, ratios, strict=True) if r.kind == VALUE]
    if values:
        x, r = zip(*values, strict=True)
        axis.errorbar(x, [float(v) for v in r], yerr=[[float(v) - v.low for v in r], [v.high - float(v) for v in r]],
                      color=colour, marker=marker, markersize=4, capsize=2, linewidth=1.5, label=label)
    for x, r in zip(xs, ratios, strict=True):
        if r.kind in (AT_LEAST, AT_MOST):
            axis.plot(x, float(r), "^" if r.kind == AT_LEAST else "v", color=colour, markerfacecolor="none",
                      markersize=7)


def answer_plan(all_runs):
    """What the answer's figure draws, without drawing (the report's caption reads it too): {"cpu": the run of the
    CPU ratios, "gpu": of the GPU ratios, "npix": panel (b)'s grid, "a": [(label, sizes, median Ratios, colour)],
    "b": [(label, P, Ratios, colour)], "guide": (P, ratios of a slope-1 line) or None}."""
    cpu_run, gpu = answer_runs(all_runs)
    plan = {"cpu": cpu_run, "gpu": gpu, "npix": None, "a": [], "b": [], "guide": None}
    for run, pairs in ((cpu_run, [(NUMPY, TORCH_CPU)]), (gpu, [(NUMPY, TORCH_CUDA), (TORCH_CPU, TORCH_CUDA)])):
        for slow, fast in pairs if run is not None else []:
            by_npix = per_size_medians(speedups(run.series, slow, fast), 0)
            if by_npix:
                plan["a"].append((f"{slow} / {fast}", list(by_npix), list(by_npix.values()),
                                  RATIO_COLOURS[(slow, fast)]))
    if cpu_run is None:
        return plan
    c4 = decomposition(cpu_run.series).get("c4", {})
    npix = next((found["npix"] for found in c4.values() if found["npix"]), None)
    plan["npix"] = npix = npix or max((k[0] for k in speedups(cpu_run.series, NUMPY, TORCH_CPU)), default=None)
    for (slow, fast), colour, text in (((NUMPY, TORCH_CPU), "tab:orange", "paper's: NumPy differences / autograd"),
                                       ((NUMPY_ADJOINT, TORCH_ADJOINT), "tab:blue", "exact gradient both sides"),
                                       ((NUMPY, TORCH_DIFFERENCES), "tab:red", "differences both sides")):
        ratios = {k[1]: v for k, v in speedups(cpu_run.series, slow, fast).items() if k[0] == npix}
        if len(ratios) >= 2:
            orders = sorted(ratios)
            plan["b"].append((text, [parameter_count(n) for n in orders], [ratios[n] for n in orders], colour))
    if plan["b"]:
        _, counts, ratios, _ = plan["b"][0]
        plan["guide"] = (counts, [float(ratios[0]) * count / counts[0] for count in counts])
    return plan


def answer_figure(all_runs, folder):
    """The answer's figure (answer_plan): (a) the paper's three speed-ups against grid size (median over orders,
    with the range over repeats), with the paper's 10x and 100x; (b) NumPy / torch against the parameter count P at
    one grid size, log-log, with a slope-1 guide and the same ratio with one gradient on both sides."""
    plan = answer_plan(all_runs)
    figure, (left, right) = subplots(1, 2, figsize=(11, 4.0))
    for label, sizes, medians, colour in plan["a"]:
        draw_ratio(left, sizes, medians, colour, label)
    for value, text in ((10, "paper: ~10x (CPU)"), (100, "paper: ~100x (GPU)")):
        left.axhline(value, color="grey", linestyle="--", linewidth=1)
        left.text(0.02, value * 1.08, text, color="grey", fontsize=8, transform=left.get_yaxis_transform())
    left.axhline(1, color="black", linewidth=0.8)
    left.set(xscale="log", yscale="log", xlabel="grid size npix (pixels)", ylabel="speed-up (ratio of times)",
             title="(a) speed-up against grid size, median over orders")
    sizes = sorted({npix for _, found, _, _ in plan["a"] for npix in found})  # ticks after the scale is set
    if sizes:
        left.set_xticks(sizes)
    left.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    left.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    if plan["a"]:
        left.legend(fontsize=7, loc="lower right")
    for label, counts, ratios, colour in plan["b"]:
        draw_ratio(right, counts, ratios, colour, label)
    if plan["guide"]:
        right.plot(*plan["guide"], color="grey", linestyle=":", label="slope 1 (speed-up proportional to P)")
    right.set(xscale="log", yscale="log", xlabel="parameters P", ylabel="speed-up (ratio of times)",
              title=f"(b) speed-up against P at npix {plan['npix']}")
    if plan["guide"]:
        right.set_xticks(plan["guide"][0])
    right.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    right.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    if plan["b"]:
        right.legend(fontsize=7, loc="upper left")
    return save(figure, folder, "fig0_answer")


def answer_caption(plan):
    """The answer figure's caption, naming only what it draws and from which runs."""
    parts = []
    if plan["a"]:
        runs = [run.short_title for run in (plan["cpu"], plan["gpu"]) if run is not None]
        parts.append(f"(a) {', '.join(label for label, *_ in plan['a'])}; {'; '.join(dict.fromkeys(runs))}")
    if plan["b"]:
        parts.append(f"(b) npix {plan['npix']}: {', '.join(label for label, *_ in plan['b'])}, and a slope-1 guide; "
                     f"{plan['cpu'].short_title}")
    return ("The answer in one figure. " + ". ".join(parts) + ". Error bars: range over repeats; open triangles: "
            "bounds") if parts else None


FACTOR_COLOURS = {"algorithm": "tab:blue", "library": "tab:orange", "autograd": "tab:red", "device": "tab:green",
                  "whole": "black"}


def speedup_decomposition(run, folder):
    """Figure 6: the NumPy -> torch speed-up split into measured factors per grid size (one run), log scale."""
    result = decomposition(run.series)
    names = [name for name, *_ in result["factors"]] + ["whole"]
    sizes = list(result["rows"])
    figure, axis = subplots(figsize=(6.5, 3.8))
    width = 0.8 / len(names)
    for offset, name in enumerate(names):
        found = [result["rows"][npix][name] for npix in sizes]
        values = [float(r) if r is not None and r.kind != UNDETERMINED else np.nan for r in found]
        positions = np.arange(len(sizes)) + (offset - (len(names) - 1) / 2) * width
        bars = axis.bar(positions, np.array(values) - 1, width, bottom=1, color=FACTOR_COLOURS[name], label=name)
        for bar, ratio in zip(bars, found, strict=True):
            if ratio is not None and ratio.is_bound:  # a bound, not a value: hatched
                bar.set_hatch("//")
                bar.set_alpha(0.5)
    axis.axhline(1, color="black", linewidth=0.8)
    axis.set_yscale("log")
    axis.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}x"))
    axis.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axis.set_xticks(np.arange(len(sizes)), [str(npix) for npix in sizes])
    axis.set(xlabel="grid size npix (pixels)", ylabel="speed-up factor (ratio of times to solution)",
             title=f"Where the NumPy -> torch speed-up comes from (median over orders)\n{run.title}")
    axis.legend(fontsize=7, ncol=len(names), loc="upper center", bbox_to_anchor=(0.5, -0.18))
    return save(figure, folder, "fig6_speedup_decomposition")


def zernike_phase(params, nzern, npix=256):
    """The aperture phase (radians) of the fitted Zernike terms on the dish, NaN outside."""
    import reference_numpy
    from reference_numpy.aperture import aperture_grid, dish_mask

    x, y = aperture_grid(npix, 0.5)  # a grid spanning just the dish
    basis = reference_numpy.zernike_basis(nzern, x, y)[1:]
    phase = np.tensordot(params[: basis.shape[0]], basis, axes=1)
    return np.where(dish_mask(x, y), phase, np.nan)


def example_fit(example, folder, title):
    """Figure 4: the observed and model beams, residuals, and the retrieved phase next to the truth."""
    npix, nzern = int(example["npix"]), int(example["nzern"])
    crop = slice(3 * npix // 8, npix - 3 * npix // 8)  # the central quarter holds the beams
    data, model = example["data"][:, crop, crop], example["model"][:, crop, crop]
    figure, axes = subplots(3, 4, figsize=(12, 8.4))
    titles = ("in focus", "defocus -dz", "defocus +dz")
    peak = data.max()
    for k in range(3):
        for row, (image, name) in enumerate(((data[k], "observed"), (model[k], "model"),
                                             (data[k] - model[k], "residual"))):
            axis = axes[row, k]
            shown = axis.imshow(image.T / peak, origin="lower", cmap="RdBu_r" if row == 2 else "viridis")
            axis.set_title(f"{name}, {titles[k]}")
            axis.grid(False)
            axis.set_xticks([])
            axis.set_yticks([])
            figure.colorbar(shown, ax=axis, fraction=0.046, label="power / observed peak")
    phases = [zernike_phase(params, nzern) for params in (example["truth"], example["fitted"])]
    limit = max(np.nanmax(np.abs(phase)) for phase in phases)
    for row, (phase, name) in enumerate(zip(phases, ("true phase", "retrieved phase"), strict=True)):
        axis = axes[row, 3]
        shown = axis.imshow(phase.T, origin="lower", cmap="twilight_shifted", extent=(-1, 1, -1, 1),
                            vmin=-limit, vmax=limit)
        axis.set(title=name, xlabel="x (dish radii)", ylabel="y (dish radii)")
        axis.grid(False)
        figure.colorbar(shown, ax=axis, fraction=0.046, label="radians")
    difference = zernike_phase(example["fitted"] - example["truth"], nzern)
    shown = axes[2, 3].imshow(difference.T, origin="lower", cmap="RdBu_r", extent=(-1, 1, -1, 1))
    axes[2, 3].set(title="retrieved - true", xlabel="x (dish radii)", ylabel="y (dish radii)")
    axes[2, 3].grid(False)
    figure.colorbar(shown, ax=axes[2, 3], fraction=0.046, label="radians")
    figure.suptitle(f"Phase retrieval from zero aberration (npix {npix}, central quarter shown; n_max {nzern}, "
                    f"{int(example['nit'])} BFGS iterations, torch-cpu; {title})")
    figure.tight_layout()
    return save(figure, folder, "fig4_example_fit")


def fit_distances(run):
    """{series label: [distance (standard errors) of each fit's end from its point's optimum]} of a run's Cauchy
    fits: the cross-check's and the judged sweep's (each point's last repeat); {} where the run records none."""
    found = {}
    for fit in crosscheck_fits(run.crosscheck):
        if fit.get("objective", "cauchy") == "cauchy" and fit.get("distance") is not None:
            found.setdefault(fit_series(fit).label, []).append(fit["distance"])
    for name, points in run.series.items():
        for record in points.values():
            end = (record.get("target") or {}).get("end_distance")
            if end is not None:
                found.setdefault(name.label, []).append(end)
    return found


def distances(found, folder, title):
    """Figure: where every fit ended, as its distance from its point's optimum (standard errors, Mahalanobis under
    the optimum's covariance), per series, log scale, with the 0.1 target the times to solution use."""
    names = sorted(found)
    figure, axis = subplots(figsize=(7.0, 3.6))
    floor = 1e-12
    for index, name in enumerate(names):
        values = np.maximum(np.array(found[name], dtype=float), floor)
        offsets = np.linspace(-0.25, 0.25, values.size) if values.size > 1 else np.zeros(1)
        axis.plot(index + offsets, values, "o", markersize=3, alpha=0.7, color=series_colour(Series.parse(name)))
    axis.axhline(0.1, color="grey", linestyle="--", linewidth=1)
    axis.text(len(names) - 0.5, 0.13, "target: 0.1", color="grey", fontsize=8, ha="right")
    axis.set_yscale("log")
    axis.set_xticks(range(len(names)), names, rotation=90, fontsize=7)
    axis.set(ylabel="distance from the optimum (SE)",
             title=f"Where every fit ended (cross-check and sweep, Cauchy; floor {floor:g})\n{title}")
    return save(figure, folder, "fig5_agreement")


def agreement(fits, folder, title):
    """Figure 5: NumPy minus torch fitted parameters of the cross-check's Cauchy fits, in units of the standard
    error: exact (from the Hessian at the NumPy fit) where recorded, else BFGS's estimate."""
    fits = [fit for fit in fits if fit.get("objective", "cauchy") == "cauchy"]
    figure, axis = subplots(figsize=(6.5, 3.6))
    for fit in fits:
        if fit_series(fit) == NUMPY:
            continue
        objective = "cauchy"
        reference = next(f for f in fits if fit_series(f) == NUMPY and (f["npix"], f["nzern"]) ==
                         (fit["npix"], fit["nzern"]) and f.get("objective", "cauchy") == objective)
        stderr = judging_stderr(reference["convergence"]) if reference.get("convergence") else fit["stderr"]
        shift = (np.array(reference["x"]) - np.array(fit["x"])) / np.array(stderr, dtype=float)
        axis.plot(np.arange(shift.size), shift, ("o" if fit_series(fit) == TORCH_CPU else "^") + "-", markersize=4,
                  label=f"numpy - {fit_series(fit).label}, npix {fit['npix']}, n {fit['nzern']}")
    axis.axhspan(-0.1, 0.1, color="grey", alpha=0.15, label="tolerance: 0.1 standard error")
    axis.set(xlabel="parameter index (Zernike terms, then x0, y0, amp)", ylabel="difference / standard error",
             title=f"Same data, NumPy vs torch, Cauchy likelihood (cross-check)\n{title}")
    axis.legend(fontsize=6, loc="best", ncol=2)
    return save(figure, folder, "fig5_agreement")


METHOD_STYLES = {"cold start": "-", "cold start, orders raised": "--"}


def spaced(values, factor):
    """The values (increasing, positive) kept for a tick label on a log axis: each at least factor times the last
    one kept, so that no two labels crowd each other."""
    kept = []
    for value in values:
        if not kept or value >= factor * kept[-1]:
            kept.append(value)
    return kept


def retrieval(run, folder):
    """Figure 8: retrieval from a cold start against the aberration's size: the share of fits that reached the
    global optimum (every point and seed), the median time to solution of those at the run's largest point, and
    the median phase error left (all fits) beside the truth-started fits' phase standard error."""
    from replication.studies.retrieval.read import method_label, point_table, success_table

    name, records = run.retrieval_shown
    success, points = success_table(records), point_table(records)
    largest = max((row["npix"], row["nzern"]) for row in points)
    figure, axes = subplots(1, 3, figsize=(12, 3.6))
    methods = sorted({method for row in success for method in row["cells"]}, key=lambda m: (m[0].sort_key(), m[1]))
    for index, (series, start) in enumerate(methods):  # markers of decreasing size: coinciding lines stay visible
        style = {"color": series_colour(series), "linestyle": METHOD_STYLES.get(start, "-"),
                 "marker": "osD^v"[index % 5], "markersize": 7 - index, "markerfacecolor": "none",
                 "linewidth": 2.5 - 0.4 * index, "alpha": 0.85, "label": method_label(series, start)}
        shares = [(row["rms"], row["cells"][(series, start)]) for row in success if (series, start) in row["cells"]]
        axes[0].plot([r for r, _ in shares], [c["global"] / c["made"] for _, c in shares], **style)
        timed = [(row["rms"], row["cells"][(series, start)]["s"]) for row in points
                 if (row["npix"], row["nzern"]) == largest and (series, start) in row["cells"]]
        timed = [(r, s) for r, s in timed if s is not None]
        axes[1].plot([r for r, _ in timed], [s for _, s in timed], **style)
        axes[2].plot([r for r, _ in shares], [c["error"] for _, c in shares], **style)
    axes[2].plot([row["rms"] for row in success], [max(c["judge_error"] for c in row["cells"].values())
                                                   for row in success],
                 color="grey", linestyle=":", marker="x", label="fits from the truth")
    axes[0].set(xscale="log", xlabel="true aberration (rad rms over the dish)", ylabel="share at the global optimum",
                ylim=(-0.05, 1.05), title="reached the global optimum")
    axes[1].set(xscale="log", yscale="log", xlabel="true aberration (rad rms over the dish)",
                ylabel="seconds (median, solutions only)",
                title=f"time to solution, npix {largest[0]}, n = {largest[1]}")
    axes[2].set(xscale="log", yscale="log", xlabel="true aberration (rad rms over the dish)",
                ylabel="rad rms over the dish (median)", title="phase error left")
    sizes = sorted({row["rms"] for row in success})
    labelled = spaced(sizes, 1.3)
    for axis in axes:
        axis.set_xticks(sizes, [f"{size:g}" if size in labelled else "" for size in sizes])
        axis.minorticks_off()
    axes[0].legend(fontsize=7, loc="lower left")
    axes[2].legend(handles=[Line2D([], [], color="grey", linestyle=":", marker="x", label="fits from the truth")],
                   fontsize=7)
    figure.suptitle(f"Retrieval from zero aberration ({name}); {run.title}")
    figure.tight_layout()
    return save(figure, folder, "fig8_retrieval")


def shown_run(candidates, rank=lambda run: 0):
    """The run a figure shows among candidates: your first, else the reference run of the highest rank, the newest
    (by its start) among equals; None where there is none."""
    own = [run for run in candidates if run.own]
    return own[0] if own else max(candidates, key=lambda run: (rank(run), run.info["created"]), default=None)


def retrieval_run(all_runs):
    """The run whose retrieval figure 8 shows: your first run that has one, else the reference run with the
    largest retrieval profile (the newest, by its start, among equals)."""
    order = {"retrieval-smoke": 0, "retrieval-quick": 1, "retrieval-full": 2}
    return shown_run([run for run in all_runs if run.retrieval_shown[0]], lambda run: order[run.retrieval_shown[0]])


def figure_run(all_runs):
    """The run whose figures 1 and 2 the main report shows: your first run, else the reference run holding the
    most of the paper's series (the newest, by its start, among equals)."""
    return shown_run([run for run in all_runs if run.series],
                     lambda run: sum(name in run.series for name in PAPER_SERIES))


def decomposition_run(all_runs):
    """The run whose speed-up decomposition figure 6 and the main report show: your first run that has one, else
    the reference run whose decomposition judges C4 for the most gradients (the newest, by its start, among equals)."""
    return shown_run([run for run in all_runs if decomposition(run.series)], lambda run: sum(
        verdict["npix"] is not None for verdict in decomposition(run.series)["c4"].values()))


def crosscheck_run(all_runs):
    """The run whose cross-check figures 4 and 5 show: your first run that has one, else the reference run with
    the newest kind of cross-check (schema), the newest (by its start) among equals."""
    return shown_run([run for run in all_runs if run.crosscheck], lambda run: (run.crosscheck.get("schema", 1), any(
        "distance" in fit for fit in run.crosscheck.get("fits", []))))


def real_maps_run(all_runs):
    """The run whose real-maps figures the main report shows: your first run that has real-maps fits, else the
    newest reference run that has them."""
    return shown_run([run for run in all_runs if (run.folder / "real-maps" / "sources.jsonl").is_file()])


def surface_map(record):
    """The surface error (micrometres, tilts and piston removed) of a real-maps source record on the dish's block
    of the model grid (NaN off the dish), and the block's extent in metres."""
    import reference_numpy
    from replication.studies.real_maps import measure as real_maps

    source = real_maps.source_named(record["source"])
    telescope = source.telescope
    setup = reference_numpy.make_setup(record["npix"], record["order"], telescope=telescope, sigma=record["sigma"],
                                       offsets=True, oversamp=telescope.oversamp_for_sky_step(record["npix"],
                                                                                              record["step"]))
    image = np.full(setup.box[0] * setup.box[1], np.nan)
    image[setup.index] = real_maps.surface_error(record["x"], setup, source.wavelength)
    spacing = 4 * setup.oversamp / (setup.npix - 1) * telescope.radius
    extent = spacing * setup.box[0] / 2
    return image.reshape(setup.box), (-extent, extent, -extent, extent)


def real_maps_surface(run, sources, folder):
    """Figure 9: the surface error each source's fit implies, tilts and piston removed, on the dish."""
    figure, axes = subplots(1, len(sources), figsize=(4.6 * len(sources), 4.0), squeeze=False)
    for axis, record in zip(axes[0], sources, strict=True):
        image, extent = surface_map(record)
        limit = float(np.nanmax(np.abs(image)))
        shown = axis.imshow(image.T, origin="lower", cmap="RdBu_r", vmin=-limit, vmax=limit, extent=extent)
        axis.set(title=f"{record['title']}\nn = {record['order']}: {record['surface_rms_um']:.0f} um rms",
                 xlabel="x (m)", ylabel="y (m)")
        axis.grid(False)
        figure.colorbar(shown, ax=axis, fraction=0.046, label="surface error (um)")
    figure.suptitle(f"Surface error from the real maps (tilts and piston removed); {run.title}")
    figure.tight_layout()
    return save(figure, folder, "fig9_real_maps_surface")


def real_maps_residuals(run, sources, folder):
    """Figure 10: each map's residual (data - model) in units of its noise, at each source's last fit."""
    from replication.studies.real_maps import measure as real_maps

    figure, axes = subplots(len(sources), 3, figsize=(11, 3.5 * len(sources)), squeeze=False)
    titles = ("in focus", "-dz", "+dz")
    for row, record in zip(axes, sources, strict=True):
        short = real_maps.source_named(record["source"]).short
        with np.load(run.folder / "real-maps" / f"residuals-{record['source']}.npz") as saved:
            residual = saved["residual"].astype(np.float64)
        for k, axis in enumerate(row):
            shown = axis.imshow(residual[k], origin="lower", cmap="RdBu_r", vmin=-10, vmax=10)
            axis.set(title=f"{short}, {titles[k]}: rms {record['residual_rms'][k]:.1f}")
            axis.set_xticks([])
            axis.set_yticks([])
            axis.grid(False)
        figure.colorbar(shown, ax=row.tolist(), fraction=0.02, label="(data - model) / noise")
    figure.suptitle(f"Residuals of the real maps' last fits (rows v, columns u; colour clipped at 10 sigma); "
                    f"{run.title}")
    return save(figure, folder, "fig10_real_maps_residuals")


def draw_real_maps(all_runs, folder):
    """Figures 9 and 10 where a run has real-maps fits."""
    from replication.studies.real_maps.records import read_real_maps

    run = real_maps_run(all_runs)
    if run is None:
        return []
    _, sources, _ = read_real_maps(run.folder / "real-maps")
    return real_maps_surface(run, sources, folder) + real_maps_residuals(run, sources, folder)


def draw_run(run, folder):
    """A run's own figures, for its appendix: the paper's figures 1 and 2 of that run and its other series."""
    if not run.series:
        return []
    target = appendix_folder(folder, run)
    return time_vs_grid_size(run, target) + time_vs_zernike_order(run, target) + other_series(run, target)


def draw_all(all_runs, output):
    """Draw every figure the runs have results for; returns the paths written.

    Figures 1 and 2 show the paper's series of one run (figure_run); figure 3 every run's speed-ups; figures 4 and
    5 the cross-check of one run (crosscheck_run); each run's own figures go under
    runs/<its appendix's name>/.
    """
    paths = []
    with matplotlib.rc_context(STYLE):
        if any(run.series for run in all_runs):
            paths += answer_figure(all_runs, output)
        shown = figure_run(all_runs)
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
                with np.load(example) as saved:
                    paths += example_fit(dict(saved), output, checked.title)
            found = fit_distances(checked)
            paths += distances(found, output, checked.title) if found else \
                agreement(crosscheck_fits(checked.crosscheck), output, checked.title)
        retrieved = retrieval_run(all_runs)
        if retrieved is not None:
            paths += retrieval(retrieved, output)
        paths += draw_real_maps(all_runs, output)
        for run in all_runs:
            paths += draw_run(run, output)
    return paths

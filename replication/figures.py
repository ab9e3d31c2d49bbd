"""The figures, one function per figure, drawn only from recorded results."""

import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D

from replication.analysis import decomposition, seconds, series_order, speedups

PAPER_ORDERS = (2, 3, 4)
"""The Zernike orders of the paper's figure of time against grid size, one panel each."""

STYLE = {"figure.dpi": 110, "savefig.dpi": 110, "font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
         "legend.fontsize": 8, "axes.titlesize": 10, "svg.hashsalt": "oof-replication"}
"""The one place the figures' look is set; a fixed hash salt makes the SVG ids the same on every render."""
SERIES_COLOURS = {"numpy": "tab:blue", "torch-cpu": "tab:orange", "torch-cpu (float32)": "goldenrod",
                  "torch-cuda": "tab:green", "torch-cuda (float32)": "yellowgreen", "numpy [analytic]": "tab:cyan",
                  "torch-cpu [analytic]": "tab:red", "torch-cpu [finite-differences]": "tab:pink",
                  "torch-cuda [analytic]": "darkgreen", "torch-cuda [finite-differences]": "olive",
                  "torch-cpu [on-device BFGS]": "tab:brown", "torch-cuda [on-device BFGS]": "darkslategrey",
                  "torch-cuda (float32) [on-device BFGS]": "cadetblue", "jax": "tab:purple"}
"""Colour of each implementation, the same in every run."""
RATIO_COLOURS = {("numpy", "torch-cpu"): "tab:orange", ("numpy", "torch-cuda"): "tab:green",
                 ("torch-cpu", "torch-cuda"): "tab:purple"}
RUN_STYLES = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1, 1, 1)), "v"))
"""Line style and marker of each run, in the report's order: yours first, then the references."""
FORMATS = ("png", "svg")
METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}
"""No date or library version in the files: the same results always give the same bytes."""


def save(figure, folder, name):
    """Write a figure in every format; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for extension in FORMATS:
        path = folder / f"{name}.{extension}"
        figure.savefig(path, bbox_inches="tight", metadata=METADATA[extension])
        paths.append(path)
    plt.close(figure)
    return paths


def run_style(index):
    return RUN_STYLES[index % len(RUN_STYLES)]


def plot_series(axis, points, name, x_of, index):
    """One implementation's times in one run against x, estimated points hollow."""
    colour = SERIES_COLOURS.get(name, "grey")
    line, marker = run_style(index)
    keys = sorted(points, key=x_of)
    x = [x_of(k) for k in keys]
    y = [seconds(points[k]) for k in keys]
    axis.plot(x, y, linestyle=line, color=colour, linewidth=1.8 if index == 0 else 1.1)
    for xi, yi, key in zip(x, y, keys, strict=True):
        hollow = points[key]["estimated"]
        axis.plot(xi, yi, marker, color=colour, markerfacecolor="white" if hollow else colour, markersize=4.5)


def legends(figure, all_runs, names, colours):
    """Two legends under the figure, one above the other: the colours (implementations or ratios), then
    the runs' line styles."""
    colour_handles = [Line2D([], [], color=colours.get(name, "grey"), linewidth=2) for name in names]
    run_handles = [Line2D([], [], color="black", linestyle=run_style(i)[0], marker=run_style(i)[1])
                   for i in range(len(all_runs))]
    first = figure.legend(colour_handles, [str(name) for name in names], loc="upper center",
                          bbox_to_anchor=(0.5, -0.01), ncol=min(5, max(1, len(names))), title="colour")
    below = first.get_window_extent(figure.canvas.get_renderer()).transformed(figure.transFigure.inverted()).y0
    figure.legend(run_handles, [run.title for run in all_runs], loc="upper center", bbox_to_anchor=(0.5, below - 0.01),
                  title="line style: run (hollow markers: estimated, not run)")


def series_names(all_runs):
    """Every implementation series present in any run, in the report's order."""
    return series_order({name: None for run in all_runs for name in run.series})


def plot_panel(axis, all_runs, fixed, value):
    """Every run's series on one panel: the points whose key[fixed] (0: npix, 1: nzern) is value, against the
    other key."""
    for index, run in enumerate(all_runs):
        for name, points in run.series.items():
            selected = {k: v for k, v in points.items() if k[fixed] == value}
            if selected:
                plot_series(axis, selected, name, lambda k: k[1 - fixed], index)


def time_vs_grid_size(all_runs, folder):
    """Figure 1: time-to-solution against grid size, one panel per Zernike order (the paper's n = 2, 3, 4)."""
    present = sorted({k[1] for run in all_runs for points in run.series.values() for k in points})
    orders = [n for n in PAPER_ORDERS if n in present] or present
    sizes = sorted({k[0] for run in all_runs for points in run.series.values() for k in points})
    figure, axes = plt.subplots(1, len(orders), figsize=(3.6 * len(orders), 3.4), squeeze=False, sharey=True)
    for axis, nzern in zip(axes.flat, orders, strict=True):
        plot_panel(axis, all_runs, fixed=1, value=nzern)
        axis.set(xscale="log", yscale="log", title=f"Zernike order n = {nzern}", xlabel="grid size npix (pixels)")
        axis.set_xticks(sizes, minor=False)
        axis.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        axis.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    axes[0, 0].set_ylabel("time to solution (s)")
    legends(figure, all_runs, series_names(all_runs), SERIES_COLOURS)
    figure.suptitle("Time-to-solution of a BFGS fit against grid size (median of repeats; setup + fit)", y=1.02)
    return save(figure, folder, "fig1_time_vs_grid_size")


def time_vs_zernike_order(all_runs, folder):
    """Figure 2: time-to-solution against Zernike order at the smallest, a middle and the largest grid."""
    sizes = sorted({k[0] for run in all_runs for points in run.series.values() for k in points})
    chosen = sorted({sizes[0], sizes[len(sizes) // 2], sizes[-1]})
    figure, axes = plt.subplots(1, len(chosen), figsize=(3.6 * len(chosen), 3.4), squeeze=False, sharey=True)
    for axis, npix in zip(axes.flat, chosen, strict=True):
        plot_panel(axis, all_runs, fixed=0, value=npix)
        axis.set(yscale="log", title=f"npix = {npix}", xlabel="Zernike order n")
    axes[0, 0].set_ylabel("time to solution (s)")
    legends(figure, all_runs, series_names(all_runs), SERIES_COLOURS)
    figure.suptitle("Time-to-solution against Zernike order at fixed grid size", y=1.02)
    return save(figure, folder, "fig2_time_vs_zernike_order")


SPEED_UPS = tuple(RATIO_COLOURS)


def speedup_vs_grid_size(all_runs, folder):
    """Figure 3: speed-up ratios against grid size (median over Zernike orders), with the paper's 10x, 100x."""
    figure, axis = plt.subplots(figsize=(6.5, 4.0))
    for index, run in enumerate(all_runs):
        for slow, fast in SPEED_UPS:
            ratios = speedups(run.series, slow, fast)
            if not ratios:
                continue
            sizes = sorted({k[0] for k in ratios})
            median = [np.median([v for k, v in ratios.items() if k[0] == npix]) for npix in sizes]
            line, marker = run_style(index)
            axis.plot(sizes, median, linestyle=line, marker=marker, color=RATIO_COLOURS[(slow, fast)])
    sizes = sorted({k[0] for run in all_runs for points in run.series.values() for k in points})
    for value, text in ((10, "paper: ~10x"), (100, "paper: ~100x")):
        axis.axhline(value, color="grey", linestyle="--", linewidth=1)
        axis.text(sizes[0] if sizes else 32, value * 1.08, text, color="grey", fontsize=8)
    axis.axhline(1, color="black", linewidth=0.8)
    axis.set_xscale("log")
    axis.set_xticks(sizes)
    axis.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    axis.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    axis.set(yscale="log", xlabel="grid size npix (pixels)",
             ylabel="speed-up (ratio of times to solution)", title="Speed-ups, median over Zernike orders (measured)")
    names = [f"{slow} / {fast}" for slow, fast in SPEED_UPS]
    legends(figure, all_runs, names, {f"{slow} / {fast}": c for (slow, fast), c in RATIO_COLOURS.items()})
    return save(figure, folder, "fig3_speedup_vs_grid_size")


FACTOR_COLOURS = {"algorithm": "tab:blue", "library": "tab:orange", "autograd": "tab:red", "device": "tab:green",
                  "whole": "black"}


def speedup_decomposition(run, folder):
    """Figure 6: the NumPy -> torch speed-up split into measured factors per grid size (one run), log scale."""
    result = decomposition(run.series)
    names = [name for name, *_ in result["factors"]] + ["whole"]
    sizes = list(result["rows"])
    figure, axis = plt.subplots(figsize=(6.5, 3.8))
    width = 0.8 / len(names)
    for offset, name in enumerate(names):
        values = [result["rows"][npix][name] or np.nan for npix in sizes]
        positions = np.arange(len(sizes)) + (offset - (len(names) - 1) / 2) * width
        axis.bar(positions, np.array(values) - 1, width, bottom=1, color=FACTOR_COLOURS[name], label=name)
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
    figure, axes = plt.subplots(3, 4, figsize=(12, 8.4))
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


def agreement(crosscheck, folder, title):
    """Figure 5: NumPy minus torch fitted parameters, in units of the standard error: exact (from the Hessian
    at the NumPy fit) where recorded, else BFGS's estimate; one line style per objective."""
    fits = crosscheck["fits"]
    figure, axis = plt.subplots(figsize=(6.5, 3.6))
    for fit in fits:
        if fit["impl"] == "numpy":
            continue
        objective = fit.get("objective", "cauchy")
        reference = next(f for f in fits if f["impl"] == "numpy" and (f["npix"], f["nzern"]) ==
                         (fit["npix"], fit["nzern"]) and f.get("objective", "cauchy") == objective)
        stderr = reference["convergence"]["stderr"] if reference.get("convergence") else fit["stderr"]
        shift = (np.array(reference["x"]) - np.array(fit["x"])) / np.array(stderr)
        line = "-" if objective == "cauchy" else ":"
        axis.plot(np.arange(shift.size), shift, ("o" if fit["impl"] == "torch-cpu" else "^") + line, markersize=4,
                  label=f"numpy - {fit['impl']}, npix {fit['npix']}, n {fit['nzern']}, {objective}")
    axis.axhspan(-0.1, 0.1, color="grey", alpha=0.15, label="tolerance: 0.1 standard error")
    axis.set(xlabel="parameter index (Zernike terms, then x0, y0, amp)", ylabel="difference / standard error",
             title=f"Same data, NumPy (finite differences) vs torch (autograd)\n{title}")
    axis.legend(fontsize=6, loc="best", ncol=2)
    return save(figure, folder, "fig5_agreement")


def draw_all(all_runs, output):
    """Draw every figure the runs have results for; returns the paths written.

    Figures 4 and 5 show the cross-check of the first run that has one (yours, where you have one).
    """
    paths = []
    with plt.rc_context(STYLE):
        if any(run.series for run in all_runs):
            paths += time_vs_grid_size(all_runs, output)
            paths += time_vs_zernike_order(all_runs, output)
            paths += speedup_vs_grid_size(all_runs, output)
        decomposed = next((run for run in all_runs if decomposition(run.series)), None)
        if decomposed is not None:
            paths += speedup_decomposition(decomposed, output)
        checked = next((run for run in all_runs if run.crosscheck), None)
        if checked is not None:
            example = checked.folder / "crosscheck" / "example.npz"
            if example.exists():
                with np.load(example) as saved:
                    paths += example_fit(dict(saved), output, checked.title)
            paths += agreement(checked.crosscheck, output, checked.title)
    return paths

"""The figures, one function per figure, drawn only from recorded results."""

import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt
import numpy as np

from replication.analysis import load_json, load_sweep, seconds, speedups
from replication.paths import RESULTS

STYLE = {"figure.dpi": 110, "savefig.dpi": 110, "font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
         "legend.fontsize": 8, "axes.titlesize": 10}
"""The one place the figures' look is set."""
SERIES_STYLE = {"numpy": ("tab:blue", "o", "-"), "torch-cpu": ("tab:orange", "s", "-"),
                "torch-cuda": ("tab:green", "^", "-"), "torch-cpu (float32)": ("tab:orange", "s", ":"),
                "torch-cuda (float32)": ("tab:green", "^", ":")}
HOST_COLOURS = {"numpy": "tab:purple", "torch-cpu": "tab:brown"}
"""Colours of the CPU series measured on the GPU host, to tell them from this machine's."""
FORMATS = ("png", "svg")


def save(figure, folder, name):
    """Write a figure in every format; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for extension in FORMATS:
        path = folder / f"{name}.{extension}"
        figure.savefig(path, bbox_inches="tight", metadata={"Date": None} if extension == "svg" else None)
        paths.append(path)
    plt.close(figure)
    return paths


def plot_series(axis, points, name, x_of, host=""):
    """One implementation's times against x, estimated points hollow."""
    colour, marker, line = SERIES_STYLE.get(name, ("grey", "x", "-"))
    if host:
        colour = HOST_COLOURS.get(name.split(" ")[0], colour)
    keys = sorted(points, key=x_of)
    x = [x_of(k) for k in keys]
    y = [seconds(points[k]) for k in keys]
    axis.plot(x, y, line, color=colour, label=name + host)
    for xi, yi, key in zip(x, y, keys, strict=True):
        hollow = points[key]["estimated"]
        axis.plot(xi, yi, marker, color=colour, markerfacecolor="white" if hollow else colour)


def merged(sweeps):
    """[(series name, host suffix, points)] of several sweep folders (a GPU host's series marked)."""
    return [(name, suffix, points) for suffix, series in sweeps for name, points in series.items()]


def time_vs_grid_size(sweeps, folder):
    """Figure 1: time-to-solution against grid size, one panel per Zernike order."""
    orders = sorted({k[1] for _, _, points in merged(sweeps) for k in points})
    columns = min(4, len(orders))
    rows = int(np.ceil(len(orders) / columns))
    figure, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.9 * rows), squeeze=False, sharey=True)
    for axis, nzern in zip(axes.flat, orders, strict=False):
        for name, suffix, points in merged(sweeps):
            selected = {k: v for k, v in points.items() if k[1] == nzern}
            if selected:
                plot_series(axis, selected, name, lambda k: k[0], suffix)
        axis.set(xscale="log", yscale="log", title=f"Zernike order n = {nzern}", xlabel="grid size npix (pixels)")
        axis.set_xticks(sorted({k[0] for _, _, p in merged(sweeps) for k in p}), minor=False)
        axis.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        axis.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    for axis in axes[:, 0]:
        axis.set_ylabel("time to solution (s)")
    for axis in axes.flat[len(orders):]:
        axis.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, title="hollow markers: estimated, not run", loc="upper center",
                  ncol=min(4, len(labels)), bbox_to_anchor=(0.5, -0.02))
    figure.suptitle("Time-to-solution of a BFGS fit (median of repeats; setup + fit)", y=1.02)
    return save(figure, folder, "fig1_time_vs_grid_size")


def time_vs_zernike_order(sweeps, folder):
    """Figure 2: time-to-solution against Zernike order at the smallest, a middle and the largest grid."""
    sizes = sorted({k[0] for _, _, p in merged(sweeps) for k in p})
    chosen = sorted({sizes[0], sizes[len(sizes) // 2], sizes[-1]})
    figure, axes = plt.subplots(1, len(chosen), figsize=(3.4 * len(chosen), 3.0), squeeze=False, sharey=True)
    for axis, npix in zip(axes.flat, chosen, strict=True):
        for name, suffix, points in merged(sweeps):
            selected = {k: v for k, v in points.items() if k[0] == npix}
            if selected:
                plot_series(axis, selected, name, lambda k: k[1], suffix)
        axis.set(yscale="log", title=f"npix = {npix}", xlabel="Zernike order n")
    axes[0, 0].set_ylabel("time to solution (s)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, title="hollow markers: estimated, not run", loc="upper center",
                  ncol=min(4, len(labels)), bbox_to_anchor=(0.5, -0.02))
    return save(figure, folder, "fig2_time_vs_zernike_order")


SPEED_UPS = (("numpy", "torch-cpu"), ("numpy", "torch-cuda"), ("torch-cpu", "torch-cuda"))


def speedup_vs_grid_size(sweeps, folder):
    """Figure 3: speed-up ratios against grid size (median over Zernike orders), with the paper's 10x, 100x."""
    figure, axis = plt.subplots(figsize=(5.5, 3.8))
    for suffix, series in sweeps:
        for slow, fast in SPEED_UPS:
            ratios = speedups(series, slow, fast)
            if not ratios:
                continue
            sizes = sorted({k[0] for k in ratios})
            median = [np.median([v for k, v in ratios.items() if k[0] == npix]) for npix in sizes]
            axis.plot(sizes, median, "o-" if "cuda" not in fast else "^-", label=f"{slow} / {fast}{suffix}")
    sizes = sorted({k[0] for _, series in sweeps for points in series.values() for k in points})
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
    axis.legend(loc="lower right", fontsize=7)
    return save(figure, folder, "fig3_speedup_vs_grid_size")


def zernike_phase(params, nzern, npix=256):
    """The aperture phase (radians) of the fitted Zernike terms on the dish, NaN outside."""
    import reference_numpy
    from reference_numpy.aperture import aperture_grid, dish_mask

    x, y = aperture_grid(npix, 0.5)  # a grid spanning just the dish
    basis = reference_numpy.zernike_basis(nzern, x, y)[1:]
    phase = np.tensordot(params[: basis.shape[0]], basis, axes=1)
    return np.where(dish_mask(x, y), phase, np.nan)


def example_fit(example, folder):
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
                    f"{int(example['nit'])} BFGS iterations, torch-cpu)")
    figure.tight_layout()
    return save(figure, folder, "fig4_example_fit")


def agreement(crosscheck, folder):
    """Figure 5: NumPy minus torch fitted parameters, in units of the standard error."""
    fits = crosscheck["fits"]
    figure, axis = plt.subplots(figsize=(6.5, 3.6))
    for fit in fits:
        if fit["impl"] == "numpy":
            continue
        reference = next(f for f in fits if f["impl"] == "numpy" and (f["npix"], f["nzern"]) ==
                         (fit["npix"], fit["nzern"]))
        shift = (np.array(reference["x"]) - np.array(fit["x"])) / np.array(fit["stderr"])
        axis.plot(np.arange(shift.size), shift, "o-" if fit["impl"] == "torch-cpu" else "^--", markersize=4,
                  label=f"numpy - {fit['impl']}, npix {fit['npix']}, n {fit['nzern']}")
    axis.axhspan(-0.1, 0.1, color="grey", alpha=0.15, label="tolerance: 0.1 standard error")
    axis.set(xlabel="parameter index (Zernike terms, then x0, y0, amp)", ylabel="difference / standard error",
             title="Fits from the same data: NumPy (finite differences) vs torch (autograd)")
    axis.legend(fontsize=7, loc="best")
    return save(figure, folder, "fig5_agreement")


def draw_all(results, output, gpu_results=None, crosscheck_folder=None):
    """Draw every figure whose results exist; returns the paths written."""
    gpu_results = gpu_results if gpu_results is not None else RESULTS / "h200"
    crosscheck_folder = crosscheck_folder if crosscheck_folder is not None else RESULTS / "crosscheck"
    sweeps = [("", load_sweep(results)[0])]
    if gpu_results.exists():
        sweeps.append((" [GPU host]", load_sweep(gpu_results)[0]))
    paths = []
    with plt.rc_context(STYLE):
        if any(series for _, series in sweeps):
            paths += time_vs_grid_size(sweeps, output)
            paths += time_vs_zernike_order(sweeps, output)
            paths += speedup_vs_grid_size(sweeps, output)
        if (crosscheck_folder / "example.npz").exists():
            paths += example_fit(np.load(crosscheck_folder / "example.npz"), output)
        crosscheck = load_json(crosscheck_folder / "crosscheck.json")
        if crosscheck:
            paths += agreement(crosscheck, output)
    return paths



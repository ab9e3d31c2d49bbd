"""The cross-check's figures: an example fit (phase and beams), the fits' agreement in standard errors, and figure 5:
where every fit ended (the cross-check's, and the sweep's where the run records their distances)."""

import numpy as np
from msgspec import UNSET

import reference_numpy
from reference_numpy.aperture import aperture_grid, dish_mask
from replication.core.objectives import CAUCHY
from replication.core.plotting import Figure, save, shown_run, subplots
from replication.core.series import (
    NUMPY,
    TORCH_CPU,
    Series,
    series_colour,
)
from replication.studies.crosscheck.records import Example

EXAMPLE_FIT = Figure("fig4_example_fit", lambda run: f"a retrieval from zero aberration; {run.title}")
AGREEMENT = Figure("fig5_agreement", lambda run: ("where the fits ended, as their distance from their point's optimum "
                                                  "(the sweep's: each point's last repeat)"
                                                  if fit_distances(run) else "NumPy against torch fits, Cauchy")
                   + f"; {run.title}")
"""Figure 5 is drawn from the fits' distances to their optima where the run records them (distances), else from
the cross-check's parameter differences (crosscheck.figures.agreement)."""


def zernike_phase(params, nzern, npix=256):
    """The aperture phase (radians) of the fitted Zernike terms on the dish, NaN outside."""
    x, y = aperture_grid(npix, 0.5)  # a grid spanning just the dish
    basis = reference_numpy.zernike_basis(nzern, x, y)[1:]
    phase = np.tensordot(params[: basis.shape[0]], basis, axes=1)
    return np.where(dish_mask(x, y), phase, np.nan)


def example_fit(example: Example, folder, title):
    """Figure 4: the observed and model beams, residuals, and the retrieved phase next to the truth."""
    npix, nzern = example.npix, example.nzern
    crop = slice(3 * npix // 8, npix - 3 * npix // 8)  # the central quarter holds the beams
    data, model = example.data[:, crop, crop], example.model[:, crop, crop]
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
    phases = [zernike_phase(params, nzern) for params in (example.truth, example.fitted)]
    limit = max(np.nanmax(np.abs(phase)) for phase in phases)
    for row, (phase, name) in enumerate(zip(phases, ("true phase", "retrieved phase"), strict=True)):
        axis = axes[row, 3]
        shown = axis.imshow(phase.T, origin="lower", cmap="twilight_shifted", extent=(-1, 1, -1, 1),
                            vmin=-limit, vmax=limit)
        axis.set(title=name, xlabel="x (dish radii)", ylabel="y (dish radii)")
        axis.grid(False)
        figure.colorbar(shown, ax=axis, fraction=0.046, label="radians")
    difference = zernike_phase(example.fitted - example.truth, nzern)
    shown = axes[2, 3].imshow(difference.T, origin="lower", cmap="RdBu_r", extent=(-1, 1, -1, 1))
    axes[2, 3].set(title="retrieved - true", xlabel="x (dish radii)", ylabel="y (dish radii)")
    axes[2, 3].grid(False)
    figure.colorbar(shown, ax=axes[2, 3], fraction=0.046, label="radians")
    figure.suptitle(f"Phase retrieval from zero aberration (npix {npix}, central quarter shown; n_max {nzern}, "
                    f"{example.nit} BFGS iterations, torch-cpu; {title})")
    figure.tight_layout()
    return save(figure, folder, EXAMPLE_FIT.stem)


def agreement(fits, folder, title):
    """Figure 5: NumPy minus torch fitted parameters of the cross-check's Cauchy fits, in units of the standard
    error: exact (from the Hessian at the NumPy fit) where recorded, else BFGS's estimate."""
    fits = [fit for fit in fits if fit.objective == CAUCHY.name]
    figure, axis = subplots(figsize=(6.5, 3.6))
    for fit in fits:
        if fit.series == NUMPY:
            continue
        reference = next(f for f in fits if f.series == NUMPY and f.grid_point == fit.grid_point)
        stderr = reference.convergence.judging_stderr if reference.convergence else fit.stderr
        shift = (np.array(reference.x) - np.array(fit.x)) / np.array(stderr, dtype=float)
        axis.plot(np.arange(shift.size), shift, ("o" if fit.series == TORCH_CPU else "^") + "-", markersize=4,
                  label=f"numpy - {fit.series.label}, npix {fit.npix}, n {fit.nzern}")
    axis.axhspan(-0.1, 0.1, color="grey", alpha=0.15, label="tolerance: 0.1 standard error")
    axis.set(xlabel="parameter index (Zernike terms, then x0, y0, amp)", ylabel="difference / standard error",
             title=f"Same data, NumPy vs torch, Cauchy likelihood (cross-check)\n{title}")
    axis.legend(fontsize=6, loc="best", ncol=2)
    return save(figure, folder, AGREEMENT.stem)


def crosscheck_run(all_runs):
    """The run whose cross-check figures 4 and 5 show: your first run that has one, else the reference run whose
    cross-check was written in today's schema (not migrated) and times each fit to its target, the newest (by its
    start) among equals."""
    return shown_run([run for run in all_runs if run.crosscheck], lambda run: (run.crosscheck.migrated is None, any(
        fit.target_s is not UNSET for fit in run.crosscheck.fits)))


def fit_distances(run):
    """{series label: [distance (standard errors) of each fit's end from its point's optimum]} of a run's Cauchy
    fits: the cross-check's and the judged sweep's (each point's last repeat); {} where the run records none."""
    found = {}
    for fit in run.crosscheck.fits if run.crosscheck else []:
        if fit.objective == CAUCHY.name and fit.distance is not None:
            found.setdefault(fit.series.label, []).append(fit.distance)
    for name, points in run.series.items():
        for record in points.values():
            if record.end_distance is not None:
                found.setdefault(name.label, []).append(record.end_distance)
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
             title=f"Where the fits ended (cross-check; sweep: each point's last repeat; Cauchy; floor {floor:g})"
                   f"\n{title}")
    return save(figure, folder, AGREEMENT.stem)

"""The real maps' figures: the surface error each source's fit implies, and each map's residuals in noise units."""

import numpy as np

import reference_numpy
from replication.core.plotting import Figure, save, shown_run, subplots
from replication.core.records import load_array
from replication.core.reduction import sources as real_sources
from replication.core.reduction.sources import SOURCES_FILE
from replication.core.results import RunError
from replication.studies.real_maps.records import read_real_maps

SURFACE = Figure("fig9_real_maps_surface", lambda run: "the surface error each source's last fit implies (tilts and "
                 "piston removed), oriented as the residuals' figure below draws the maps (the aperture's x along "
                 f"their v, vertical; y along u); {run.title}")
RESIDUALS = Figure("fig10_real_maps_residuals",
                   lambda run: f"residuals of the last fits, in units of each map's noise; {run.title}")


def surface_map(record):
    """The surface error (micrometres along the normal, tilts and piston removed) of a
    real-maps source record on the dish's block of the model grid (NaN off the dish), and the block's extent in
    metres."""
    telescope = record.telescope
    setup = reference_numpy.make_setup(record.npix, record.order, telescope=telescope, sigma=record.sigma,
                                       offsets=True, oversamp=telescope.oversamp_for_sky_step(record.npix, record.step))
    image, spacing = real_sources.surface_grid(record.x, setup, record.wavelength)
    rows, cols = (spacing * size / 2 for size in setup.box)
    return image, (-cols, cols, -rows, rows)


def real_maps_surface(run, sources, folder):
    """Figure 9: the surface error each source's fit implies, tilts and piston removed, on the dish."""
    figure, axes = subplots(1, len(sources), figsize=(4.6 * len(sources), 4.0), squeeze=False)
    for axis, record in zip(axes[0], sources, strict=True):
        try:
            image, extent = surface_map(record)
        except ValueError as error:  # the model refuses the grid the record describes
            raise RunError(f"{run.folder / 'real-maps' / SOURCES_FILE}: source {record.source}: its model grid "
                           f"cannot be made ({error})") from None
        limit = float(np.nanmax(np.abs(image)))
        shown = axis.imshow(image, origin="lower", cmap="RdBu_r", vmin=-limit, vmax=limit, extent=extent)
        axis.set(title=f"{record.title}\nn = {record.order}: {record.surface_rms_um:.0f} um rms",
                 xlabel="y (m), along the maps' u", ylabel="x (m), along the maps' v")
        axis.grid(False)
        figure.colorbar(shown, ax=axis, fraction=0.046, label="surface error along the normal (um)")
    figure.suptitle(f"Surface error from the real maps (tilts and piston removed); {run.title}")
    figure.tight_layout()
    return save(figure, folder, SURFACE.stem)


def real_maps_residuals(run, sources, folder):
    """Figure 10: each map's residual (data - model) in units of its noise, at each source's last fit."""
    figure, axes = subplots(len(sources), 3, figsize=(11, 3.5 * len(sources)), squeeze=False)
    titles = ("in focus", "-dz", "+dz")
    for row, record in zip(axes, sources, strict=True):
        short = record.short_name
        residual = load_array(run.folder / "real-maps" / f"residuals-{record.source}.npz", "residual", 3)
        for k, axis in enumerate(row):
            shown = axis.imshow(residual[k], origin="lower", cmap="RdBu_r", vmin=-10, vmax=10)
            axis.set(title=f"{short}, {titles[k]}: rms {record.residual_rms[k]:.1f}")
            axis.set_xticks([])
            axis.set_yticks([])
            axis.grid(False)
        figure.colorbar(shown, ax=row.tolist(), fraction=0.02, label="(data - model) / noise")
    figure.suptitle(f"Residuals of the real maps' last fits (rows v, columns u; colour clipped at 10 sigma); "
                    f"{run.title}")
    return save(figure, folder, RESIDUALS.stem)


def real_maps_run(all_runs):
    """The run whose real-maps figures the main report shows: your first run that has real-maps fits, else the
    newest reference run that has them."""
    return shown_run([run for run in all_runs if (run.folder / "real-maps" / "sources.jsonl").is_file()])


def draw_real_maps(all_runs, folder):
    """Figures 9 and 10 where a run has real-maps fits."""
    run = real_maps_run(all_runs)
    if run is None:
        return []
    _, sources, _ = read_real_maps(run.folder / "real-maps")
    return real_maps_surface(run, sources, folder) + real_maps_residuals(run, sources, folder)

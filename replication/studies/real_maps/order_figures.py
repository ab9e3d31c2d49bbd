"""A source's fit order by order, drawn into its run folder: at each order fitted, the three maps, the model at that
order's optimum and their residuals in units of each map's noise (orders-<source>/n<order>.png and .svg), so that a
user sees where the model stops holding the maps and what each order adds."""

from __future__ import annotations

import pathlib

import numpy as np

import reference_numpy
from replication.core.plotting import save, subplots
from replication.core.reduction.sources import Observation, map_region, setup_for
from replication.studies.real_maps.records import RealStage

MAP_TITLES = ("in focus", "-dz", "+dz")
RESIDUAL_LIMIT = 5.0
"""The residual panels' colour range, in noise units (either side of 0)."""


def order_maps(observation: Observation, x, order: int, npix: int) -> tuple[np.ndarray, np.ndarray]:
    """(the model's three maps at x on the maps' pixels, (data - model) / noise; NaN at a dropped sample)."""
    setup = setup_for(reference_numpy, observation, order, npix)
    rows, cols = map_region(npix, observation.maps.shape[1:])
    model = np.asarray(reference_numpy.beam_maps(np.asarray(x, dtype=np.float64), setup))[:, rows, cols]
    residual = (observation.maps - model) / np.array(observation.noise)[:, None, None]
    return model, np.where(observation.dropped, np.nan, residual)


def order_figure(observation: Observation, x, order: int, npix: int, folder: pathlib.Path) -> list[pathlib.Path]:
    """One order's figure: rows the maps (in focus, -dz, +dz), columns the data, the model (the data's colour scale)
    and the residual (clipped at RESIDUAL_LIMIT noise units); written as n<order> under folder."""
    model, residual = order_maps(observation, x, order, npix)
    figure, axes = subplots(3, 3, figsize=(10, 9.5), squeeze=False)
    for k, row in enumerate(axes):
        data = observation.maps[k]
        low, high = float(np.nanmin(data)), float(np.nanmax(data))
        rms = float(np.sqrt(np.nanmean(residual[k] ** 2)))
        panels = ((data, "data", dict(vmin=low, vmax=high, cmap="viridis")),
                  (model[k], "model", dict(vmin=low, vmax=high, cmap="viridis")),
                  (residual[k], f"residual: rms {rms:.2g}",
                   dict(vmin=-RESIDUAL_LIMIT, vmax=RESIDUAL_LIMIT, cmap="RdBu_r")))
        for axis, (image, what, style) in zip(row, panels, strict=True):
            shown = axis.imshow(image, origin="lower", **style)
            axis.set(title=f"{MAP_TITLES[k]}: {what}")
            axis.set_xticks([])
            axis.set_yticks([])
            axis.grid(False)
        figure.colorbar(shown, ax=row[-1], fraction=0.046, label="(data - model) / noise")
    figure.suptitle(f"{observation.source.title}, Zernike order n = {order} (rows v, columns u; the residuals "
                    f"clipped at {RESIDUAL_LIMIT:g} noise units)")
    return save(figure, folder, f"n{order}")


def draw_orders(folder: pathlib.Path, observation: Observation, stages: list[RealStage],
                npix: int) -> list[pathlib.Path]:
    """Every order's figure of one source (its stage records, each with its optimum), under
    folder/orders-<source>/; each order's model as its stage fitted it (Observation.at_stage: the per-map terms only
    at the last order)."""
    into = folder / f"orders-{observation.source.name}"
    last = max((stage.order for stage in stages), default=0)
    paths = []
    for stage in sorted(stages, key=lambda stage: stage.order):
        paths += order_figure(observation.at_stage(stage.order, last), stage.optimum.x, stage.order, npix, into)
    return paths

"""The closure test of the real-maps reduction: maps of a telescope like the SRT simulated with a known surface
(about 1 rad rms of Zernike terms n = 2..5), scan-correlated noise and baselines, reduced by the same code as the
real maps from a cold start (the taper chosen by likelihood, orders 1..5 raised one at a time), and the surface
found compared with the one put in (micrometres rms, tilts and piston removed). Nothing is tuned to it: each seed
draws its own surface and noise."""

from __future__ import annotations

import math
import pathlib
import time

import numpy as np

import reference_numpy
import torch_impl
from replication.core import measurement, optimum, series
from replication.core.environment import environment_record, thread_limits
from replication.core.implementations import of
from replication.core.optimum import finite_or_none
from replication.core.records import as_written
from replication.core.results import append_record, read_records
from replication.studies.real_maps.correlated import bandwidth, correlated_covariance
from replication.studies.real_maps.ladder import choose_taper, fit_ladder, residual_maps
from replication.studies.real_maps.records import CLOSURE_FILE, check_closure
from replication.studies.real_maps.sources import (
    NPIX,
    ORDERS,
    SOURCES,
    TAPER_TOL,
    TERM_SIZES,
    TOL,
    map_region,
    observation_of,
    setup_for,
    surface_error,
)
from replication.studies.real_maps.surface import surface_uncertainty

STEP = 3.273e-5
"""The maps' sky step (radians): the SRT maps' own."""
SHAPE = (100, 100)
"""The maps' pixels (rows v, columns u), as the SRT's."""
SURFACE_RADIANS = 1.0
"""The known surface's phase rms over the dish (radians)."""
TRUE_SIGMA = 0.73
"""The illumination taper the maps are made with (dish radii): between two of the grid's widths, so that the
reduction must fit it, not pick it."""
NOISE = 0.002
"""The noise's standard deviation, a fraction of the in-focus peak (the SRT maps': about 0.0019)."""
SCAN_CORRELATION = 0.9
"""Correlation of neighbouring noise samples along each scan line (the maps' columns: v varies fastest)."""
BASELINE = 0.01
"""Each map's baseline offset, a fraction of the in-focus peak (a draw of this standard deviation)."""
MAP_TERMS = {"pointing": 0.3, "defocus_scale": 0.02, "gains": 0.03}
"""The standard deviations of the per-map terms each truth draws (make_setup's order): each out-of-focus map's
pointing (a phase tilt, radians per dish radius: 0.3 is about 4 arcsec on the SRT at 22 GHz), the feed offset's
scale d (2%) and each out-of-focus map's gain g (3%): a telescope that is not exactly as its configuration says."""
def known_truth(setup, rng):
    """A truth: Zernike terms n = 2..max drawn at random and scaled to SURFACE_RADIANS rms over the dish (tilts
    and piston 0), a centred illumination of amplitude 1, per-map terms drawn as MAP_TERMS says, zero offsets
    (added to the maps apart)."""
    params = np.zeros(setup.nparams)
    terms = setup.basis.shape[0]
    coefficients = rng.standard_normal(terms)
    coefficients[:2] = 0.0
    phase = coefficients @ np.asarray(setup.basis)
    coefficients *= SURFACE_RADIANS / float(np.sqrt(np.mean((phase - phase.mean()) ** 2)))
    params[:terms] = coefficients
    params[setup.amp_index] = 1.0
    spreads = [MAP_TERMS[name] for name, size in TERM_SIZES.items() for _ in range(size)]
    params[setup.amp_index + 1:setup.amp_index + 1 + len(spreads)] = spreads * rng.standard_normal(len(spreads))
    return params


def scan_noise(rng, shape):
    """Unit-variance noise of (3, rows, cols) maps correlated along each scan line: v varies fastest in the SRT's
    files, so a scan runs down a column (along the rows, axis 1): an AR(1) process of SCAN_CORRELATION."""
    white = rng.standard_normal(shape)
    noise = np.empty(shape)
    noise[:, 0] = white[:, 0]
    keep = math.sqrt(1 - SCAN_CORRELATION**2)
    for row in range(1, shape[1]):
        noise[:, row] = SCAN_CORRELATION * noise[:, row - 1] + keep * white[:, row]
    return noise


def simulated_maps(seed, npix=NPIX, order=ORDERS[-1]):
    """(maps (3, rows, cols) in units of the in-focus peak, the truth's parameters, its setup) of one seed: the
    SRT's telescope (the shipped configuration), the maps' step and size, the known surface, baselines and
    scan-correlated noise."""
    source = SOURCES[0]
    telescope = source.telescope
    setup = reference_numpy.make_setup(npix, order, telescope=telescope, sigma=TRUE_SIGMA, offsets=True,
                                       oversamp=telescope.oversamp_for_sky_step(npix, STEP),
                                       **dict.fromkeys(MAP_TERMS, True))
    rng = np.random.default_rng(seed)
    truth = known_truth(setup, rng)
    beams = np.asarray(reference_numpy.beam_maps(truth, setup))
    rows, cols = map_region(npix, SHAPE)
    maps = beams[:, rows, cols] / beams[0].max()
    maps += BASELINE * rng.standard_normal(3)[:, None, None] + NOISE * scan_noise(rng, maps.shape)
    return maps, truth, setup


def reduce_seed(seed, npix=NPIX, orders=ORDERS, tol=TOL):
    """One seed made and reduced as the real maps are (taper by likelihood, then the ladder of orders with torch's
    exact adjoint, from a cold start), timed: its record."""
    maps, truth, truth_setup = simulated_maps(seed, npix, orders[-1])
    observation = observation_of(SOURCES[0], maps, STEP)
    start = time.perf_counter()
    observation, _ = choose_taper(observation, orders, npix, tol)
    stages = fit_ladder(of(series.TORCH_ADJOINT), observation, orders, npix, tol)
    seconds = time.perf_counter() - start
    found = np.asarray(stages[-1]["x"])
    wavelength = SOURCES[0].wavelength
    fitted_setup = setup_for(reference_numpy, observation, orders[-1], npix)
    truth_surface = surface_error(truth, truth_setup, wavelength)
    error = rms(surface_error(found, fitted_setup, wavelength) - truth_surface)
    return {"seed": seed, "npix": npix, "orders": list(orders), "sigma": observation.sigma, "true_sigma": TRUE_SIGMA,
            "seconds": seconds, "success": all(stage["success"] for stage in stages),
            "surface_error_um": error if math.isfinite(error) else None,
            "truth_surface_um": rms(truth_surface), "x": [float(v) for v in found], "truth": [float(v) for v in truth]
            } | certified(observation, found, truth, orders[-1], npix, tol, truth_surface)


def rms(values) -> float:
    return float(np.sqrt(np.mean(np.asarray(values) ** 2)))


def certified(observation, found, truth, order, npix, tol, truth_surface) -> dict:
    """What tells an optimizer's miss from the estimator's own error (untimed): the optimum a fit started at the
    truth reaches (its Zernike terms the truth's, the rest the reduction's), polished, with the distance of the
    reduction's end from it (standard errors) and how much lower its objective is; its surface error (micrometres
    rms: the estimator's error at this noise, which no optimizer can beat); and the error the fit's own covariance
    predicts (rms over the dish of the surface's uncertainty, correlated residuals respected)."""
    setup = setup_for(of(series.TORCH_ADJOINT), observation, order, npix)
    data = torch_impl.prepare_data(observation.maps, setup, observation.dropped, smaller=True)
    start = found.copy()
    start[:setup.basis.shape[0]] = truth[:setup.basis.shape[0]]
    result = torch_impl.fit(setup, data, start, tol=tol, gamma=observation.gamma, objective=observation.objective,
                            gradient="adjoint")
    best = optimum.polish(torch_impl, result.x, setup, data, observation.gamma, observation.objective)
    ended = optimum.polish(torch_impl, found, setup, data, observation.gamma, observation.objective)
    residual = residual_maps(observation, found, order, npix)
    (covariance,) = correlated_covariance(found, setup, data, observation.gamma, observation.objective,
                                          bandwidth(residual))
    wavelength = observation.source.wavelength
    predicted = surface_uncertainty(covariance, setup, wavelength).reshape(-1)[setup.index]
    return {"optimum_distance_se": finite_or_none(float(best.distances(found)[0])),
            "optimum_lower_by": finite_or_none(ended.fun - best.fun),
            "truth_start_error_um": finite_or_none(rms(surface_error(best.x, setup, wavelength) - truth_surface)),
            "predicted_error_um": finite_or_none(rms(predicted))}


IDENTITY = ("npix", "orders", "tol", "noise", "scan_correlation", "surface_radians", "true_sigma", "step", "taper_tol",
            "map_terms")
"""What a closure folder's seeds are made and reduced under."""


def run_closure(folder: pathlib.Path, seeds: int, npix: int = NPIX, orders=ORDERS, threads: int = 2,
                tol: float = TOL, quiet: bool = False) -> int:
    """Reduce seeds 0..seeds-1 (those not done) into folder, each written as it ends; returns how many now."""
    with thread_limits(threads):
        environment = environment_record(threads) | {
            "kind": "closure", "npix": npix, "orders": list(orders), "tol": tol, "noise": NOISE,
            "scan_correlation": SCAN_CORRELATION, "surface_radians": SURFACE_RADIANS, "true_sigma": TRUE_SIGMA,
            "step": STEP, "taper_tol": TAPER_TOL, "map_terms": MAP_TERMS}
    identity = {key: environment[key] for key in IDENTITY}
    path = folder / CLOSURE_FILE
    measurement.check_identity(folder, identity, records=(CLOSURE_FILE,))
    done = {record["seed"] for record in read_records(path, repair=True, check=check_closure)}
    todo = [seed for seed in range(seeds) if seed not in done]
    if not todo:
        print(f"{path}: all {seeds} seeds are done; nothing to run")
        return 0
    measurement.record_identity(folder, identity)
    with measurement.measuring(folder, environment, threads, len(todo), "closure", "seed", quiet) as (run_id, bar):
        for seed in todo:
            record = reduce_seed(seed, npix, orders, tol) | {"run_id": run_id, **identity}
            append_record(path, as_written(path, 0, record, check_closure))
            bar.update()
    return len(todo)

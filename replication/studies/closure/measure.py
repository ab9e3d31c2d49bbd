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
from replication.core.reduction.correlated import bandwidth, correlated_covariance
from replication.core.reduction.ladder import choose_taper, fit_ladder, residual_maps
from replication.core.reduction.misfit import misfit
from replication.core.reduction.scan_noise import WHITEN_DEFAULT, WHITEN_MODES, whitened_residual, whitens
from replication.core.reduction.sources import (
    NPIX,
    ORDERS,
    TAPER_TOL,
    TOL,
    observation_of,
    rms,
    setup_for,
    surface_error,
)
from replication.core.reduction.surface import surface_uncertainty
from replication.core.reduction.truncation import higher_orders_and_moves
from replication.core.results import append_record
from replication.studies.closure.maps import (
    EQUAL_NOISE,
    MAP_TERMS,
    NOISE,
    SCAN_CORRELATION,
    SOURCE,
    STEP,
    SURFACE_RADIANS,
    TRUE_SIGMA,
    check_grid,
    check_noise,
    check_noise_ratios,
    check_panels,
    check_seeds,
    panel_surface,
    simulated_maps,
)
from replication.studies.closure.records import CLOSURE_FILE, check_closure, read_closure


def reduce_seed(seed, npix=NPIX, orders=ORDERS, tol=TOL, noise=NOISE, truth_order=None, noise_ratios=EQUAL_NOISE,
                per_map_noise=False, panels_um=0.0, whiten=WHITEN_DEFAULT):
    """One seed made (at that noise, a fraction of the in-focus peak; its known surface up to truth_order, the
    ladder's last order where None, with panel pistons of panels_um rms where asked) and reduced as the real maps are
    (taper by likelihood, then the ladder of orders with torch's exact adjoint, from a cold start), timed: its
    record; where the truth goes beyond the ladder or the basis, what the order rule makes of it and whether the
    stated uncertainty covers the error (covered). whiten: yes, no or auto (WHITEN_MODES)."""
    truth_order = orders[-1] if truth_order is None else truth_order
    maps, truth, truth_setup = simulated_maps(seed, npix, truth_order, noise, noise_ratios, panels_um)
    observation = observation_of(SOURCE, maps, STEP).with_per_map_noise(per_map_noise)
    observation = observation.whitened(whitens(whiten, observation.noise_correlation))
    start = time.perf_counter()
    observation, _ = choose_taper(observation, orders, npix, tol)
    stages = fit_ladder(of(series.TORCH_ADJOINT), observation, orders, npix, tol)
    seconds = time.perf_counter() - start
    found = np.asarray(stages[-1].x)
    wavelength = SOURCE.wavelength
    fitted_setup = setup_for(reference_numpy, observation, orders[-1], npix)
    truth_surface = surface_error(truth, truth_setup, wavelength) + panel_surface(seed, truth_setup, panels_um)
    error = rms(surface_error(found, fitted_setup, wavelength) - truth_surface)
    account, predicted = certified(observation, found, truth, orders[-1], npix, tol, truth_surface)
    record = {"seed": seed, "npix": npix, "orders": list(orders), "sigma": observation.sigma, "true_sigma": TRUE_SIGMA,
              "seconds": seconds, "success": all(stage.success for stage in stages),
              "surface_error_um": error if math.isfinite(error) else None,
              "truth_surface_um": rms(truth_surface), "x": [float(v) for v in found],
              "truth": [float(v) for v in truth], "noise_correlation": list(observation.noise_correlation),
              "whitened_along": None if observation.scan is None else observation.scan.axis} | account
    if truth_order > orders[-1] or panels_um:
        errors = surface_error(found, fitted_setup, wavelength) - truth_surface
        record |= covered(observation, found, orders[-1], npix, tol, errors, predicted) | {"truth_order": truth_order}
    return record | ({"panels_um": panels_um} if panels_um else {})


def covered(observation, found, order, npix, tol, errors, statistical) -> dict:
    """Whether the stated uncertainty covers a surface's error (micrometres on each dish pixel): the statistical
    (the fit's covariance, correlated residuals respected) alone, and with the two systematics added in quadrature:
    the order truncation (the surface's move to the order the order rule chooses, pixel by pixel) and the model's
    misfit (misfit.misfit: the panel-scale surface the residuals' excess implies, the same on every pixel); the share
    of the dish where the error is within 2 sigma of each, the order chosen and each systematic's rms."""
    found_orders, moves = higher_orders_and_moves(observation, found, order, npix, tol)
    chosen = found_orders["chosen"] if found_orders else order
    systematic = moves.get(chosen)
    systematic = np.zeros_like(errors) if systematic is None else systematic
    beyond = misfit(observation, found, order, residual_maps(observation, found, order, npix), npix)["misfit_um"]
    total = np.sqrt(statistical**2 + systematic**2 + beyond**2)
    return {"chosen_order": chosen, "truncation_um": rms(systematic), "misfit_um": beyond,
            "covered_statistical": float(np.mean(np.abs(errors) <= 2 * statistical)),
            "covered_total": float(np.mean(np.abs(errors) <= 2 * total))}


def certified(observation, found, truth, order, npix, tol, truth_surface) -> dict:
    """What tells an optimizer's miss from the estimator's own error (untimed): the optimum a fit started at the
    truth reaches (its Zernike terms the truth's, the rest the reduction's), polished, with the distance of the
    reduction's end from it (standard errors) and how much lower its objective is; its surface error (micrometres
    rms: the estimator's error at this noise, which no optimizer can beat); and the error the fit's own covariance
    predicts (rms over the dish of the surface's uncertainty, correlated residuals respected); and that uncertainty
    on each dish pixel beside the record."""
    setup = setup_for(of(series.TORCH_ADJOINT), observation, order, npix)
    data = observation.prepared(torch_impl, setup)
    start = found.copy()
    start[:setup.basis.shape[0]] = truth[:setup.basis.shape[0]]
    result = torch_impl.fit(setup, data, start, tol=tol, gamma=observation.gamma, objective=observation.objective,
                            gradient="adjoint")
    best = optimum.polish(torch_impl, result.x, setup, data, observation.gamma, observation.objective)
    ended = optimum.polish(torch_impl, found, setup, data, observation.gamma, observation.objective)
    residual = whitened_residual(residual_maps(observation, found, order, npix), observation.scan)
    (covariance,) = correlated_covariance(found, setup, data, observation.gamma, observation.objective,
                                          bandwidth(residual))
    wavelength = observation.source.wavelength
    predicted = surface_uncertainty(covariance, setup, wavelength).reshape(-1)[setup.index]
    return {"optimum_distance_se": finite_or_none(float(best.distances(found)[0])),
            "optimum_lower_by": finite_or_none(ended.fun - best.fun),
            "truth_start_error_um": finite_or_none(rms(surface_error(best.x, setup, wavelength) - truth_surface)),
            "predicted_error_um": finite_or_none(rms(predicted))}, predicted


IDENTITY_BEFORE = {"whiten": "no"}
"""What a closure folder made before a setting was recorded holds for it (its seeds were reduced so)."""


def check_whiten(whiten: str) -> str:
    """The whitening mode (WHITEN_MODES), or a ValueError naming it."""
    if whiten not in WHITEN_MODES:
        raise ValueError(f"whiten: must be one of {', '.join(WHITEN_MODES)}, got {whiten!r}")
    return whiten


def closure_identity(npix: int = NPIX, orders=ORDERS, tol: float = TOL, noise: float = NOISE,
                     truth_order: int | None = None, noise_ratios=EQUAL_NOISE, per_map_noise: bool = False,
                     panels_um: float = 0.0, whiten: str = WHITEN_DEFAULT) -> dict:
    """What a closure folder's seeds are made and reduced under: a resume, or a bound, under other values is refused
    (a truth beyond the ladder's orders or with panel pistons, where asked, is part of it; folders made before the
    maps' noise ratios, the per-map weighting and the whitening hold none, and resume under their defaults,
    IDENTITY_BEFORE)."""
    beyond = {} if truth_order is None or truth_order == orders[-1] else {"truth_order": truth_order}
    beyond |= {"panels_um": check_panels(panels_um)} if panels_um else {}
    return {"npix": check_grid(npix), "orders": list(orders), "tol": tol, "noise": check_noise(noise),
            "scan_correlation": SCAN_CORRELATION, "surface_radians": SURFACE_RADIANS, "true_sigma": TRUE_SIGMA,
            "step": STEP, "taper_tol": TAPER_TOL, "map_terms": MAP_TERMS,
            "noise_ratios": list(check_noise_ratios(noise_ratios)), "per_map_noise": bool(per_map_noise),
            "whiten": check_whiten(whiten)} | beyond


def run_closure(folder: pathlib.Path, seeds: int, npix: int = NPIX, orders=ORDERS, threads: int = 2,
                tol: float = TOL, quiet: bool = False, noise: float = NOISE, truth_order: int | None = None,
                noise_ratios=EQUAL_NOISE, per_map_noise: bool = False, panels_um: float = 0.0,
                whiten: str = WHITEN_DEFAULT) -> int:
    """Reduce seeds 0..seeds-1 (those not done) into folder, each written as it ends, the maps made at that noise (a
    fraction of the in-focus peak; a folder holds one level: a resume at another is refused); returns how many now."""
    identity = closure_identity(npix, orders, tol, noise, truth_order, noise_ratios, per_map_noise, panels_um, whiten)
    with thread_limits(threads):
        environment = environment_record(threads) | {"kind": "closure"} | identity
    path = folder / CLOSURE_FILE
    measurement.check_identity(folder, identity, records=(CLOSURE_FILE,), before=IDENTITY_BEFORE)
    done = {record.seed for record in read_closure(path, repair=True)}
    todo = [seed for seed in range(check_seeds(seeds)) if seed not in done]
    if not todo:
        print(f"{path}: all {seeds} seeds are done; nothing to run")
        return 0
    measurement.record_identity(folder, identity)
    with measurement.measuring(folder, environment, threads, len(todo), "closure", "seed", quiet) as (run_id, bar):
        for seed in todo:
            record = reduce_seed(seed, npix, orders, tol, noise, truth_order, noise_ratios, per_map_noise,
                                 panels_um, whiten) | {
                "run_id": run_id, **identity}
            append_record(path, as_written(path, 0, record, check_closure))
            bar.update()
    return len(todo)

"""The model's misfit as a surface: the structure beyond the fitted orders that the residuals' excess over the noise
implies. A fit's statistical uncertainty and its order truncation (truncation.py) say nothing of a surface error no
Zernike order holds (panels set askew: steps at every panel's edge); the residuals do. Beside the fitted model, small
random surfaces at the panels' scale, with every fitted Zernike term taken out of them (probes), change the maps by
a known amount per pixel; the squared residuals regressed on that response (their level where the probes move
nothing is the noise's) give the rms phase such structure would need to explain them (a quadratic estimator), stated
in micrometres along the normal. Where the misfit has another cause (illumination, baselines, optics the model
lacks), the same number is the room the residuals leave: the reduction states it as a systematic beside the others."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.ndimage

import reference_numpy
from replication.core.reduction.scan_noise import whitened_residual
from replication.core.reduction.sources import (
    NPIX,
    Observation,
    map_region,
    normal_factor,
    setup_for,
)

PROBES = 32
"""Random surfaces the maps' response is averaged over: with 8, the misfit of six closure seeds with the same 30 um of
panel pistons read 0-39 um (whitened as below: 9-35 um), with 32 (whitened) 17-38 um."""
PROBE_SCALE = 0.05
"""The probes' correlation length (dish radii: 1.6 m on the SRT, whose 1008 panels lie in 14 rings about 2 m wide):
white noise on the dish smoothed by a Gaussian of this width, the fitted Zernike terms and piston removed, scaled to
1 rad rms. Finer probes scatter more of their power beyond the maps and read a larger surface from the same
residuals: on closure maps with panel pistons of 30 um rms (5.6 m rings), 0.03 reads 30-40 um, 0.05 reads 22-26 um,
0.1 reads 13-19 um."""
PROBE_STEP = 1e-3
"""The probes' phase (radians rms) in the central difference that gives the maps' response: small enough that the
maps respond linearly (the SRT's panel errors of tens of micrometres are a few hundredths of a radian)."""
PROBE_SEED = 20261205
"""The probes' random stream: the same probes for every source and seed."""


def probe_surfaces(setup, count: int = PROBES, scale: float | None = None) -> np.ndarray:
    """(count, dish pixels) phase screens of 1 rad rms at the panels' scale (PROBE_SCALE), each orthogonal on the
    dish pixels to the setup's Zernike basis, piston included: the part of a surface no fitted order holds."""
    rng = np.random.default_rng(PROBE_SEED)
    width = (PROBE_SCALE if scale is None else scale) / (4 * setup.oversamp / (setup.npix - 1))  # in grid pixels
    basis = np.vstack([np.ones(len(setup.index)), np.asarray(setup.basis)]).T
    probes = []
    for _ in range(count):
        white = scipy.ndimage.gaussian_filter(rng.standard_normal(setup.box), width)
        screen = white.reshape(-1)[np.asarray(setup.index)]
        screen = screen - basis @ np.linalg.lstsq(basis, screen, rcond=None)[0]
        probes.append(screen / np.sqrt(np.mean(screen**2)))
    return np.array(probes)


def map_response(observation: Observation, x, setup) -> np.ndarray:
    """(3, rows, cols): the mean over the probes of each map pixel's squared change (noise units) per rad^2 of probe
    phase, at the fit's optimum x on its setup (the reference tree's; NaN at a dropped sample), each change whitened
    along the scans where the observation whitens them (as misfit compares the residuals): central differences of
    the reference tree's beams, the probe added as one more basis row (as the closure adds a known surface)."""
    rows, cols = map_region(setup.npix, observation.maps.shape[1:])
    noise = np.array(observation.noise)[:, None, None]
    at = setup.basis.shape[0]
    total = np.zeros(observation.maps.shape)
    for probe in probe_surfaces(setup):
        probed = dataclasses.replace(setup, basis=np.vstack([np.asarray(setup.basis), probe]))
        maps = [np.asarray(reference_numpy.beam_maps(np.insert(np.asarray(x, dtype=np.float64), at, sign * PROBE_STEP),
                                                     probed))[:, rows, cols] for sign in (1.0, -1.0)]
        change = np.where(observation.dropped, np.nan, (maps[0] - maps[1]) / (2 * PROBE_STEP) / noise)
        total += whitened_residual(change, observation.scan) ** 2
    return total / PROBES


def misfit(observation: Observation, x, order: int, residual: np.ndarray, npix: int = NPIX) -> dict:
    """The model's misfit at the optimum x, from its residual maps (data - model in noise units, NaN at a dropped
    sample: ladder.residual_maps), whitened along the scans where the observation whitens them (independent samples
    then: scan-correlated ones made the estimate scatter several times as much from seed to seed): the squared
    residuals regressed on the probes' response (map_response),
    r^2 = level + phase^2 response, so that the noise's own level is measured where the probes move nothing rather
    than taken from the border band's estimate (on the closure's maps the squared residuals sit 5-15% below it).
    {misfit_um (micrometres rms along the normal over the dish: the panel-scale surface the residuals' excess
    implies, 0 where there is none), phase_rad (its rms phase), level (the squared residuals' level where nothing is
    implied, noise units squared), excess (the mean squared excess the misfit accounts for per sample), probes,
    probe_scale (dish radii)}."""
    setup = setup_for(reference_numpy, observation, order, npix)
    response = map_response(observation, x, setup)
    residual = whitened_residual(residual, observation.scan)
    compared = np.isfinite(residual) & np.isfinite(response)
    weight, squared = response[compared], residual[compared] ** 2
    spread = weight - weight.mean() if weight.size else weight
    if not np.any(spread != 0):  # no sample compared, or none the probes move apart: the residuals imply nothing
        return {"misfit_um": 0.0, "phase_rad": 0.0, "level": float(squared.mean()) if squared.size else 1.0,
                "excess": 0.0, "probes": PROBES, "probe_scale": PROBE_SCALE}
    phase_squared = max(float(np.sum(spread * (squared - squared.mean())) / np.sum(spread**2)), 0.0)
    to_um = 1e6 * observation.source.wavelength / (4 * math.pi) * math.sqrt(float(np.mean(normal_factor(setup) ** 2)))
    return {"misfit_um": math.sqrt(phase_squared) * to_um, "phase_rad": math.sqrt(phase_squared),
            "level": float(squared.mean() - phase_squared * weight.mean()),
            "excess": phase_squared * float(weight.mean()), "probes": PROBES, "probe_scale": PROBE_SCALE}

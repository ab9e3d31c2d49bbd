"""The closure test's maps (studies.closure.measure): a telescope like the SRT observed with a known surface, per-map
terms, baselines and scan-correlated noise, one draw per seed. NumPy only, so that a peer's environment without torch
(pyoof's) fits the very same maps."""

from __future__ import annotations

import math

import numpy as np

import reference_numpy
from replication.core.reduction.sources import NPIX, ORDERS, SOURCES, TERM_SIZES, map_region

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
"""The noise's standard deviation by default, a fraction of the in-focus peak (the SRT maps': about 0.0019)."""
NOISE_RANGE = (1e-6, 0.1)
"""The noise levels a closure may ask (fractions of the in-focus peak): above 0, for the reduction's objective is in
units of the noise it estimates, and at most 0.1, where the out-of-focus beams (0.1-0.2 of the peak) drown."""
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


def check_noise(noise: float) -> float:
    """The noise level (a fraction of the in-focus peak), or a ValueError naming the range."""
    low, high = NOISE_RANGE
    if not isinstance(noise, (int, float)) or isinstance(noise, bool) or not low <= noise <= high:
        raise ValueError(f"noise: must be a number between {low:g} and {high:g} (a fraction of the in-focus peak), "
                         f"got {noise!r}")
    return float(noise)


EQUAL_NOISE = (1.0, 1.0, 1.0)
"""Each map's noise as a multiple of the level, by default: the same in all three."""


def check_noise_ratios(ratios) -> tuple:
    """Each map's noise as a multiple of the level (in focus, -dz, +dz): three numbers in [0.1, 10], or a ValueError
    naming them."""
    values = tuple(ratios)
    if len(values) != 3 or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0.1 <= v <= 10
                                   for v in values):
        raise ValueError(f"map noise: must be three numbers between 0.1 and 10 (each map's noise as a multiple of "
                         f"the level), got {values!r}"[:200])
    return tuple(float(v) for v in values)


MAX_SEEDS = 100_000
"""Most seeds one closure command takes: at ~20 s a seed, already weeks of work (a count beyond it is a typo)."""


def check_seeds(seeds: int) -> int:
    """A count of seeds, or a ValueError naming the range."""
    if not isinstance(seeds, int) or isinstance(seeds, bool) or not 1 <= seeds <= MAX_SEEDS:
        raise ValueError(f"seeds: must be an integer between 1 and {MAX_SEEDS}, got {seeds!r}")
    return seeds


def check_grid(npix: int) -> int:
    """The model's grid, or a ValueError where it cannot hold the closure's maps (SHAPE): a smaller grid would fit
    wrapped fragments of them."""
    if not isinstance(npix, int) or isinstance(npix, bool) or npix < max(SHAPE):
        raise ValueError(f"npix: must hold the closure's {SHAPE[0]} x {SHAPE[1]} maps (at least {max(SHAPE)}), "
                         f"got {npix!r}")
    return npix


def simulated_maps(seed, npix=NPIX, order=ORDERS[-1], noise=NOISE, noise_ratios=EQUAL_NOISE):
    """(maps (3, rows, cols) in units of the in-focus peak, the truth's parameters, its setup) of one seed: the
    SRT's telescope (the shipped configuration), the maps' step and size, the known surface, baselines and
    scan-correlated noise of standard deviation `noise` (a fraction of the peak) times each map's ratio. The draws
    do not depend on the noise level: a seed at another level has the same surface, baselines and noise pattern,
    scaled."""
    noise, npix, ratios = check_noise(noise), check_grid(npix), np.array(check_noise_ratios(noise_ratios))
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
    maps += BASELINE * rng.standard_normal(3)[:, None, None] + (noise * ratios[:, None, None]) * scan_noise(rng,
                                                                                                        maps.shape)
    return maps, truth, setup

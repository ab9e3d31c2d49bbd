"""The closure test's maps (studies.closure.measure): a telescope like the SRT observed with a known surface, per-map
terms, baselines and scan-correlated noise, one draw per seed. NumPy only, so that a peer's environment without torch
(pyoof's) fits the very same maps."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

import reference_numpy
from replication.core.reduction.sources import NPIX, ORDERS, SOURCES, TERM_SIZES, map_region, normal_factor, rms

SOURCE = SOURCES[0].without_legs()
"""The dish the closure's maps are made on and reduced with: the shipped SRT's, without its support legs, which pyoof
0.2.3 (the closure's peer) cannot state (its block_manual draws legs along the axes only, the SRT's lie along the
diagonals): pyoof and this project then fit the model the maps were made with."""
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


PANEL_RINGS = 5
"""Rings of panels of a panel-type truth, of equal width from the central blockage to the rim (5.6 m on the SRT)."""
PANEL_WIDTH = 0.2
"""A panel's length along its ring (dish radii: 6.4 m on the SRT), which sets each ring's number of sectors."""
PANELS_MAX_UM = 1000.0
"""Largest rms a panel-type truth may ask (micrometres): beyond it the phase wraps at 22 GHz."""


def check_panels(panels_um: float) -> float:
    """A panel-type truth's rms (micrometres, 0 for none), or a ValueError naming the range."""
    if not isinstance(panels_um, (int, float)) or isinstance(panels_um, bool) or not 0 <= panels_um <= PANELS_MAX_UM:
        raise ValueError(f"panels: must be a number between 0 and {PANELS_MAX_UM:g} (micrometres rms), got "
                         f"{panels_um!r}")
    return float(panels_um)


def panel_index(setup) -> tuple[np.ndarray, int]:
    """(each dish pixel's panel, the number of panels): PANEL_RINGS rings from the blockage to the rim, each cut into
    sectors about PANEL_WIDTH long (at least 6), numbered ring by ring."""
    x, y = np.asarray(setup.x), np.asarray(setup.y)
    edges = np.linspace(setup.telescope.blockage / setup.telescope.radius, 1.0, PANEL_RINGS + 1)
    ring = np.clip(np.searchsorted(edges, np.hypot(x, y), side="right") - 1, 0, PANEL_RINGS - 1)
    sectors = np.maximum(6, np.round(np.pi * (edges[:-1] + edges[1:]) / PANEL_WIDTH)).astype(int)
    sector = np.floor((np.arctan2(y, x) + np.pi) / (2 * np.pi) * sectors[ring]).astype(int) % sectors[ring]
    first = np.concatenate([[0], np.cumsum(sectors)[:-1]])
    return first[ring] + sector, int(sectors.sum())


def panel_surface(seed, setup, panels_um):
    """A panel-type surface error on the setup's dish pixels (micrometres along the normal; zeros for panels_um 0):
    each panel (panel_index) moved by its own random piston (a draw of its own stream: the seed's other draws
    unchanged), the mean and tilt over the dish removed (a reduction reads those as piston and pointing), scaled to
    panels_um rms. No Zernike order holds it: steps at every panel's edge."""
    x, y = np.asarray(setup.x), np.asarray(setup.y)
    if not check_panels(panels_um):
        return np.zeros(x.shape)
    panel, count = panel_index(setup)
    surface = np.random.default_rng((seed, 1)).standard_normal(count)[panel]
    design = np.stack([np.ones_like(x), x, y], axis=1)
    surface -= design @ np.linalg.lstsq(design, surface, rcond=None)[0]
    return surface * (panels_um / rms(surface))


def with_surface(truth, setup, surface_um, wavelength):
    """(parameters, setup) whose model adds a surface error (micrometres along the normal on the dish pixels) to the
    truth's aperture phase: the setup's basis with one more row, the surface's phase (4 pi / wavelength times the
    path, the normal displacement over normal_factor), at coefficient 1. beam_maps then makes the maps of that
    telescope with the reference tree's own forward model."""
    phase = surface_um / normal_factor(setup) * 4 * math.pi / (1e6 * wavelength)
    extended = dataclasses.replace(setup, basis=np.vstack([np.asarray(setup.basis), phase]))
    return np.insert(truth, setup.basis.shape[0], 1.0), extended


def simulated_maps(seed, npix=NPIX, order=ORDERS[-1], noise=NOISE, noise_ratios=EQUAL_NOISE, panels_um=0.0):
    """(maps (3, rows, cols) in units of the in-focus peak, the truth's parameters, its setup) of one seed: the
    SRT's telescope (the shipped configuration), the maps' step and size, the known surface (with panel_surface's
    pistons of panels_um rms added where asked: not in the truth's parameters), baselines and scan-correlated noise
    of standard deviation `noise` (a fraction of the peak) times each map's ratio. The draws do not depend on the
    noise level: a seed at another level has the same surface, baselines and noise pattern, scaled."""
    noise, npix, ratios = check_noise(noise), check_grid(npix), np.array(check_noise_ratios(noise_ratios))
    source = SOURCE
    telescope = source.telescope
    setup = reference_numpy.make_setup(npix, order, telescope=telescope, sigma=TRUE_SIGMA, offsets=True,
                                       oversamp=telescope.oversamp_for_sky_step(npix, STEP),
                                       **dict.fromkeys(MAP_TERMS, True))
    rng = np.random.default_rng(seed)
    truth = known_truth(setup, rng)
    panels = panel_surface(seed, setup, panels_um)
    beams = np.asarray(reference_numpy.beam_maps(*with_surface(truth, setup, panels, source.wavelength))
                       if panels_um else reference_numpy.beam_maps(truth, setup))
    rows, cols = map_region(npix, SHAPE)
    maps = beams[:, rows, cols] / beams[0].max()
    maps += BASELINE * rng.standard_normal(3)[:, None, None] + (noise * ratios[:, None, None]) * scan_noise(rng,
                                                                                                        maps.shape)
    return maps, truth, setup

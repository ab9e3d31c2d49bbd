"""The aperture plane: grid, dish, defocus screens, illumination, phase and complex field."""

import math

import numpy as np

from oof_common.constants import DEFOCUS_ORDER, MAP_POINTED
from oof_common.telescope import defocus_path_factor


def aperture_grid(npix, oversamp):
    """Coordinates x, y (dish radii) of an npix x npix grid over [-2*oversamp, 2*oversamp].

    Both ends are included (as in the paper's code), so for even npix no pixel sits at the origin
    and the origin is not the FFT centre pixel. x varies along axis 0, y along axis 1.
    """
    t = np.linspace(-2 * oversamp, 2 * oversamp, npix, dtype=np.float64)
    return np.meshgrid(t, t, indexing="ij")


def dish_mask(x, y, blockage=0.0, legs=(0, 0.0, 0.0, 0.0, math.inf)):
    """True on the dish: r <= 1 dish radius, r >= blockage (dish radii) where a central blockage hides the middle,
    and outside the support legs' shadows (legs: Telescope.leg_shadows, in dish radii)."""
    r = np.hypot(x, y)
    mask = (r <= 1.0) if blockage == 0 else (r <= 1.0) & (r >= blockage)
    return mask & ~leg_shadow(x, y, *legs) if legs[0] else mask


def leg_shadow(x, y, count, width, angle, start, end=math.inf):
    """True in the shadow of `count` support legs (dish radii): strips of full width `width` from `start` out to
    `end`, the first along `angle` (radians from the x axis towards y), the others evenly spaced around the
    centre."""
    shadow = np.zeros(x.shape, dtype=bool)
    for leg in range(count):
        theta = angle + 2 * math.pi * leg / count
        along = x * math.cos(theta) + y * math.sin(theta)
        across = y * math.cos(theta) - x * math.sin(theta)
        shadow |= (along >= start) & (along <= end) & (np.abs(across) <= width / 2)
    return shadow


def defocus_screens(x, y, dz, wavelength, focal_length, radius, effective_focal_length=None):
    """Phase screens (radians) of the three maps: feed offsets 0, -dz, +dz (metres); the path difference of a
    prime-focus dish, or of a two-mirror one where its effective focal length is given (telescope.py)."""
    r = np.hypot(x, y) * radius
    b = None if effective_focal_length is None else r / (2 * effective_focal_length)
    s = defocus_path_factor(r / (2 * focal_length), b)
    return np.stack([2 * np.pi * s * (offset * dz) / wavelength for offset in DEFOCUS_ORDER])


def map_phase_terms(x, y, screens, pointing, defocus_scale):
    """The phase terms that act on single maps (radians per unit coefficient), as (Q, 3, dish pixels): where
    pointing, a tilt along x and one along y of each out-of-focus map alone (4 terms: those maps' pointing against
    the in-focus map's, which the Zernike tilts hold); where defocus_scale, the three defocus screens together (the
    feed's offset scaled by 1 + d). Q = 0 where neither."""
    terms = []
    if pointing:
        for k in MAP_POINTED:
            for axis in (x, y):
                term = np.zeros_like(screens)
                term[k] = axis
                terms.append(term)
    if defocus_scale:
        terms.append(screens)
    return np.stack(terms) if terms else np.zeros((0, *screens.shape), dtype=screens.dtype)


def map_screens(terms, screens, phase_terms):
    """Each map's phase screen (3, dish pixels; radians) with the fitted per-map terms (Q,) added: the defocus
    screens plus sum_j terms_j phase_terms_j (a leading batch axis of terms, (K, Q), gives (K, 3, dish pixels))."""
    if phase_terms.shape[0] == 0:
        return screens
    return screens + np.tensordot(terms, phase_terms, axes=1)


def illumination(x, y, x0, y0, amp, sigma, rho, diff):
    """Gaussian illumination amplitude centred on (x0, y0), width sigma (dish radii)."""
    dx = x - x0
    dy = y - y0
    return amp * np.exp(-(dx**2 + dy**2 + rho * dx * dy + diff * (dx**2 - dy**2)) / (2 * sigma**2))


def aperture_phase(coeffs, basis):
    """Aperture phase (radians): the fitted Zernike terms, sum_j c_j Z_j (piston excluded)."""
    return coeffs @ basis


def aperture_field(amplitude, phase, screens):
    """Complex aperture field of the three maps, A exp(i (Phi + screen_k))."""
    return amplitude * np.exp(1j * (phase + screens))

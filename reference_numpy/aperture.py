"""The aperture plane: grid, dish, defocus screens, illumination, phase and complex field."""

import numpy as np

from .constants import DEFOCUS_ORDER
from .telescope import defocus_path_factor


def aperture_grid(npix, oversamp):
    """Coordinates x, y (dish radii) of an npix x npix grid over [-2*oversamp, 2*oversamp].

    Both ends are included (as in the paper's code), so for even npix no pixel sits at the origin
    and the origin is not the FFT centre pixel. x varies along axis 0, y along axis 1.
    """
    t = np.linspace(-2 * oversamp, 2 * oversamp, npix, dtype=np.float64)
    return np.meshgrid(t, t, indexing="ij")


def dish_mask(x, y, blockage=0.0):
    """True on the dish: r <= 1 dish radius, and r >= blockage (dish radii) where a central blockage hides the
    middle."""
    r = np.hypot(x, y)
    return (r <= 1.0) if blockage == 0 else (r <= 1.0) & (r >= blockage)


def defocus_screens(x, y, dz, wavelength, focal_length, radius, effective_focal_length=None):
    """Phase screens (radians) of the three maps: feed offsets 0, -dz, +dz (metres); the path difference of a
    prime-focus dish, or of a two-mirror one where its effective focal length is given (telescope.py)."""
    r = np.hypot(x, y) * radius
    b = None if effective_focal_length is None else r / (2 * effective_focal_length)
    s = defocus_path_factor(r / (2 * focal_length), b)
    return np.stack([2 * np.pi * s * (offset * dz) / wavelength for offset in DEFOCUS_ORDER])


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

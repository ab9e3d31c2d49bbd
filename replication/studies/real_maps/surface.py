"""The surface error a reduction finds, as files an engineer reads: its 1-sigma uncertainty from the optimum's
covariance, and both as a FITS file (astropy, an extra) whose header says how the grid lies on the dish and pairs
with the maps."""

from __future__ import annotations

import importlib.util
import math
import pathlib

import numpy as np

from replication.core.results import atomic_stream
from replication.studies.real_maps.sources import TILTS

FITS_AXES = (("DISH-Y", "aperture y (m); pairs with the maps' u"),
             ("DISH-X", "aperture x (m); pairs with the maps' v"))
"""FITS axis 1 (columns) and axis 2 (rows) of a written surface: the grid of sources.surface_grid, as figure 9 and
figure 10 draw it."""


def fits_available() -> bool:
    """Whether astropy (the `fits` extra) is installed: the FITS surface is written only then."""
    return importlib.util.find_spec("astropy") is not None


def surface_uncertainty(covariance: np.ndarray, setup, wavelength: float) -> np.ndarray:
    """The 1-sigma uncertainty (micrometres) of the surface error at each dish pixel of sources.surface_grid's grid
    (NaN off the dish): the surface is linear in the Zernike coefficients, s = k (B - mean B) c with
    k = 1e6 wavelength / 4 pi, so var(s_p) = k^2 b_p' C b_p with C the coefficients' block of the optimum's
    covariance (tilts and piston left out, as in the surface)."""
    basis = np.asarray(setup.basis, dtype=np.float64)[TILTS:]
    centred = basis - basis.mean(axis=1, keepdims=True)
    block = np.asarray(covariance, dtype=np.float64)[TILTS:basis.shape[0] + TILTS, TILTS:basis.shape[0] + TILTS]
    variance = np.einsum("ip,ij,jp->p", centred, block, centred)
    scale = 1e6 * wavelength / (4 * math.pi)
    image = np.full(setup.box[0] * setup.box[1], np.nan)
    image[setup.index] = scale * np.sqrt(np.clip(variance, 0.0, None))
    return image.reshape(setup.box)


def write_surface_fits(path: pathlib.Path, surface: np.ndarray, uncertainty: np.ndarray, spacing: float,
                       words: dict) -> pathlib.Path:
    """The surface (primary HDU) and its uncertainty (extension UNCERT), micrometres, NaN off the dish, written
    atomically: axis 1 the aperture's y, axis 2 its x (FITS_AXES), each centred on the dish's axis with the pixel
    spacing (m) as its step; words (source, order, objective, taper) go into the header as they are."""
    from astropy.io import fits  # the `fits` extra, behind fits_available()

    hdus = fits.HDUList([fits.PrimaryHDU(surface.astype(np.float32)),
                         fits.ImageHDU(uncertainty.astype(np.float32), name="UNCERT")])
    for hdu, what in zip(hdus, ("surface error", "1-sigma uncertainty of the surface error"), strict=True):
        header = hdu.header
        header["BUNIT"] = ("um", "micrometres, normal to the dish")
        header.add_comment(f"{what} (micrometres, normal incidence: wavelength x phase / 4 pi; tilts and piston "
                           "removed; NaN off the dish)")
        header.add_comment("axis 1: the aperture's y, pairing with the maps' u (their columns); axis 2: its x, "
                           "pairing with the maps' v (their rows); both increase with the index, as figures 9 and "
                           "10 draw them")
        for axis, (name, comment) in enumerate(FITS_AXES, 1):
            size = surface.shape[2 - axis]
            header[f"CTYPE{axis}"] = (name, comment)
            header[f"CUNIT{axis}"] = "m"
            header[f"CRPIX{axis}"] = ((size + 1) / 2, "the dish's axis")
            header[f"CRVAL{axis}"] = 0.0
            header[f"CDELT{axis}"] = (spacing, "pixel spacing on the dish (m)")
        for key, (value, comment) in words.items():
            header[key] = (value, comment)
    with atomic_stream(path) as stream:
        hdus.writeto(stream)
    return path

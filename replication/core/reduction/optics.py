"""The optics in a fitted aperture phase, in the units an engineer moves them by, and the panel surface left once
they are removed.

A surface error of the primary is corrected panel by panel; part of what a reduction finds is corrected instead by
moving the feed or the subreflector, and an engineer reads that part in millimetres, not as a surface. The fitted
phase (every Zernike term, tilts included) is projected, by least squares over the dish's pixels, onto:

- a piston (no physical meaning: the surface's mean);
- the pointing: a plane tilt of the wavefront, the beam's offset on the sky (arcsec) along the aperture's x and y;
- the axial focus: the phase an axial feed offset makes, the path factor of the defocus screens
  (oof_common.telescope.defocus_path_factor, prime focus or two-mirror) per millimetre of offset, so the value is the
  offset the in-focus map behaves as if taken at, in the sense of the +dz map's offset (moving the feed by minus it
  refocuses);
- the coma: Zernike Z(3,-1) and Z(3,1), given as their path at the dish's rim (mm).

A lateral offset of the subreflector makes coma and pointing together, in a proportion set by the two mirrors'
geometry, which the configuration does not hold: the coma is given as a path, not as a displacement. Everything
is linear in the fitted Zernike coefficients, so each value's standard error comes from their covariance.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from oof_common.telescope import defocus_path_factor
from reference_numpy.zernike import zernike_indices
from replication.core.records import MaybeNumber, Number, Record, Vector
from replication.core.reduction.sources import normal_factor, rms


class Optics(Record):
    """A source's optics terms (optics.optics_terms), each with its standard error: the axial focus as a feed
    offset (mm, in the sense of the +dz map's offset; None below order 2), the pointing (arcsec; aperture x, y), the
    coma's path at the rim (mm; Z(3,-1), Z(3,1); empty below order 3), and the rms of the panel surface left
    (micrometres)."""

    focus_mm: MaybeNumber
    focus_se_mm: MaybeNumber
    pointing_arcsec: Vector
    pointing_se_arcsec: Vector
    coma_mm: Vector
    coma_se_mm: Vector
    panel_rms_um: Number

ARCSEC = 180 / math.pi * 3600
"""Arcseconds per radian."""
COMA = ((3, -1), (3, 1))
"""The Zernike terms (n, l) given as coma."""


@dataclasses.dataclass(frozen=True)
class Regressors:
    """The phase (radians) per unit of each optics term on the dish pixels (rows of `matrix`), by name; `scale`
    turns each term's fitted value into the units it is given in."""

    names: tuple[str, ...]
    matrix: np.ndarray
    scale: np.ndarray


def optics_regressors(setup, wavelength: float) -> Regressors:
    """The optics terms' phases on the dish pixels of a reference_numpy setup: piston; pointing x, y (per radian
    on the sky: 2 pi x / wavelength, x in metres); the axial focus (per metre of feed offset: 2 pi s(r) / wavelength,
    s the defocus screens' path factor) where the setup fits order 2 or more; each coma term (per radian of its
    coefficient, scaled to the term's largest path on the dish) where it fits order 3 or more."""
    telescope = setup.telescope
    x = np.asarray(setup.x, dtype=np.float64) * telescope.radius
    y = np.asarray(setup.y, dtype=np.float64) * telescope.radius
    wavenumber = 2 * math.pi / wavelength
    names, rows, scale = ["piston", "pointing x", "pointing y"], [np.ones_like(x), wavenumber * x, wavenumber * y], \
        [1.0, ARCSEC, ARCSEC]
    if setup.nzern >= 2:
        r = np.hypot(x, y)
        effective = telescope.effective_focal_length
        path = defocus_path_factor(r / (2 * telescope.focal_length),
                                   None if effective is None else r / (2 * effective))
        names.append("focus")
        rows.append(wavenumber * path)
        scale.append(1e3)
    if setup.nzern >= 3:
        basis = np.asarray(setup.basis, dtype=np.float64)
        for n, l in COMA:
            row = basis[zernike_row(setup, n, l)]
            names.append(f"Z({n},{l})")
            rows.append(row)
            scale.append(1e3 * np.max(np.abs(row)) / wavenumber)
    return Regressors(tuple(names), np.stack(rows), np.array(scale))


def zernike_row(setup, n: int, l: int) -> int:
    """The row of the setup's basis (piston left out) that holds Z(n, l)."""
    return zernike_indices(setup.nzern)[1:].index((n, l))


def projection(regressors: Regressors) -> np.ndarray:
    """The least-squares projection (terms, dish pixels): the terms' values that best make a phase on the dish."""
    return np.linalg.pinv(regressors.matrix.T)


def optics_terms(x, covariance, setup, wavelength: float) -> tuple[Optics, np.ndarray]:
    """(the optics terms of the phase at x, with standard errors from the parameters' covariance; the panel surface
    left once they are removed, micrometres along the normal on the dish pixels, the phase's mean removed as
    sources.surface_error removes it)."""
    zernikes = setup.basis.shape[0]
    basis = np.asarray(setup.basis, dtype=np.float64)
    coefficients = np.asarray(x, dtype=np.float64)[:zernikes]
    block = np.asarray(covariance, dtype=np.float64)[:zernikes, :zernikes]
    regressors = optics_regressors(setup, wavelength)
    gain = projection(regressors) @ basis.T  # the terms' values per Zernike coefficient
    values = regressors.scale * (gain @ coefficients)
    errors = regressors.scale * np.sqrt(np.clip(np.einsum("ki,ij,kj->k", gain, block, gain), 0.0, None))
    phase = coefficients @ basis
    panel = phase - (gain @ coefficients) @ regressors.matrix
    surface = 1e6 * wavelength * (panel - panel.mean()) / (4 * math.pi) * normal_factor(setup)  # as surface_error
    by_name = dict(zip(regressors.names, zip(values, errors, strict=True), strict=True))
    coma = [by_name[f"Z({n},{l})"] for n, l in COMA if f"Z({n},{l})" in by_name]
    focus = by_name.get("focus")
    optics = Optics(focus_mm=None if focus is None else float(focus[0]),
                    focus_se_mm=None if focus is None else float(focus[1]),
                    pointing_arcsec=[float(by_name[f"pointing {axis}"][0]) for axis in "xy"],
                    pointing_se_arcsec=[float(by_name[f"pointing {axis}"][1]) for axis in "xy"],
                    coma_mm=[float(value) for value, _ in coma], coma_se_mm=[float(error) for _, error in coma],
                    panel_rms_um=rms(surface))
    return optics, surface


def optics_words(optics: Optics) -> dict:
    """The FITS header's account of the optics terms (keywords of 8 characters at most)."""
    words = {"POINTX": (optics.pointing_arcsec[0], "pointing along the aperture's x (arcsec)"),
             "POINTXER": (optics.pointing_se_arcsec[0], "its standard error (arcsec)"),
             "POINTY": (optics.pointing_arcsec[1], "pointing along the aperture's y (arcsec)"),
             "POINTYER": (optics.pointing_se_arcsec[1], "its standard error (arcsec)")}
    if optics.focus_mm is not None:
        words |= {"FOCUSMM": (optics.focus_mm, "axial focus: feed offset, as the +dz map's (mm)"),
                  "FOCUSER": (optics.focus_se_mm, "its standard error (mm)")}
    for (n, l), value, error in zip(COMA, optics.coma_mm, optics.coma_se_mm, strict=False):
        key = "COMAY" if l < 0 else "COMAX"
        words |= {key: (value, f"coma Z({n},{l}): path at the rim (mm)"), f"{key}ER": (error, "its standard error")}
    words["PANELRMS"] = (optics.panel_rms_um, "rms of the panel surface, optics removed (um)")
    return words

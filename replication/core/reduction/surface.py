"""The surface error a reduction finds, as files an engineer reads: a plain text grid; its 1-sigma uncertainty
from the fit's covariance (independent pixels, and windowed over the pixels whose residuals correlate); both as a
FITS file (astropy, an extra) whose header says how the grid lies on the dish and pairs with the maps."""

from __future__ import annotations

import importlib.util
import math
import pathlib

import msgspec
import numpy as np

import torch_impl
from reference_numpy.zernike import zernike_indices
from replication.core import series
from replication.core.implementations import of
from replication.core.reduction.configs import About
from replication.core.reduction.correlated import bandwidth, correlated_covariance
from replication.core.reduction.optics import optics_terms, optics_words
from replication.core.reduction.scan_noise import whitened_residual
from replication.core.reduction.sources import (
    SURFACE_HEADER,
    TILTS,
    Observation,
    normal_factor,
    setup_for,
    surface_grid,
)
from replication.core.results import atomic_stream

FITS_AXES = (("DISH-Y", "aperture y (m); pairs with the maps' u"),
             ("DISH-X", "aperture x (m); pairs with the maps' v"))
"""FITS axis 1 (columns) and axis 2 (rows) of a written surface: the grid of sources.surface_grid, as figure 9 and
figure 10 draw it."""


ORIENTATIONS = {"ours": "both increase with the index, as figure 10 draws the maps",
                "pyoof": "both decrease with the index: pyoof 0.2.3's orientation, this reduction's rotated by 180 "
                         "degrees"}
"""How a written surface lies (real-maps --orientation): as this reduction draws it, or as pyoof draws its phase
map of the same maps. pyoof takes the aperture to the sky with a forward Fourier transform where this model takes
the inverse, so its map of the same surface is this one point-reflected (tests/test_pyoof_orientation.py: maps made
by pyoof's own forward model come back so)."""


def oriented_as(orientation: str) -> str:
    """The orientation (ORIENTATIONS), or a ValueError naming it."""
    if orientation not in ORIENTATIONS:
        raise ValueError(f"orientation: one of {', '.join(ORIENTATIONS)}, got {orientation!r}")
    return orientation


def oriented(image: np.ndarray, orientation: str) -> np.ndarray:
    """A surface-grid image as ORIENTATIONS[orientation] lays it out."""
    return image[::-1, ::-1] if oriented_as(orientation) == "pyoof" else image


def fits_available() -> bool:
    """Whether astropy (the `fits` extra) is installed: the FITS surface is written only then."""
    return importlib.util.find_spec("astropy") is not None


def surface_uncertainty(covariance: np.ndarray, setup, wavelength: float) -> np.ndarray:
    """The 1-sigma uncertainty (micrometres) of the surface error at each dish pixel of sources.surface_grid's grid
    (NaN off the dish): the surface is linear in the Zernike coefficients, s = k n (B - mean B) c with
    k = 1e6 wavelength / 4 pi and n the normal's factor (sources.normal_factor), so var(s_p) = (k n_p)^2 b_p' C b_p
    with C the coefficients' block of the optimum's covariance (tilts and piston left out, as in the surface)."""
    basis = np.asarray(setup.basis, dtype=np.float64)[TILTS:]
    centred = basis - basis.mean(axis=1, keepdims=True)
    block = np.asarray(covariance, dtype=np.float64)[TILTS:basis.shape[0] + TILTS, TILTS:basis.shape[0] + TILTS]
    variance = np.einsum("ip,ij,jp->p", centred, block, centred)
    scale = 1e6 * wavelength / (4 * math.pi)
    image = np.full(setup.box[0] * setup.box[1], np.nan)
    image[setup.index] = scale * normal_factor(setup) * np.sqrt(np.clip(variance, 0.0, None))
    return image.reshape(setup.box)


PARAMETER_WORDS = {"pointing": ("tilt x -dz", "tilt y -dz", "tilt x +dz", "tilt y +dz"), "defocus_scale": ("dz scale",),
                   "gains": ("gain -dz", "gain +dz")}
"""The per-map terms' parameters by name, in make_setup's order (sources.TERM_SIZES)."""


def parameter_names(setup, terms: dict) -> list[str]:
    """Each fitted parameter's name: the Zernike terms as Z(n,l) in the basis' order (piston left out), the
    illumination's x0, y0, amp, the per-map terms fitted (terms: make_setup's switches) and the maps' offsets."""
    names = [f"Z({n},{l})" for n, l in zernike_indices(setup.nzern)[1:]] + ["x0", "y0", "amp"]
    names += [word for name, words in PARAMETER_WORDS.items() if terms.get(name) for word in words]
    names += ["offset in focus", "offset -dz", "offset +dz"][:setup.n_offsets]
    if len(names) != setup.nparams:
        raise ValueError(f"parameter names: {len(names)} for {setup.nparams} parameters")
    return names


POSITIVE = {"lengthens": ("below", "away from"), "shortens": ("above", "towards")}
"""Where a positive surface error lies against its design, and against the focus, by how the +dz map's feed offset
changes the path (configs.PLUS_DZ)."""


def sign_words(about: About) -> str:
    """What a positive surface error is, from how the +dz map's feed offset changes the path (configs.PLUS_DZ): the
    model adds the fitted phase to the defocus screens, so a positive phase changes the path as the +dz map's offset
    does at the dish's centre; a longer path is a surface further from the focus."""
    sense = about.plus_dz
    if sense is None:
        return ("positive: a path changed as the +dz map's feed offset changes it at the dish's centre (the "
                "configuration's observation.plus_dz says which way)")
    side, focus = POSITIVE[sense]
    return f"positive: the surface {side} its design, {focus} the focus (the +dz map's feed offset {sense} the path)"


def observation_words(observation: Observation) -> dict:
    """The FITS header's account of the observation: telescope, date, elevation, frequency, wavelength, dz, the
    support legs where the dish has any, and what a positive surface error is."""
    source, about = observation.source, observation.source.about
    telescope = source.telescope
    words = {"TELESCOP": (source.telescope_name or "unnamed", "the telescope"),
             "FREQ": (source.frequency, "observing frequency (Hz)"),
             "WAVELEN": (source.wavelength, "wavelength (m)"),
             "DZ": (source.dz, "axial feed offset of the -dz, +dz maps (m)")}
    if observation.scan is not None:
        words |= {"WHITENED": (("rows", "columns")[observation.scan.axis], "excess whitened along the scans: axis"),
                  "SCANCORR": (observation.scan.correlation, "noise correlation along the scans")}
    if about.date is not None:
        words |= {"DATE-OBS": (about.date, "date of the observation")}
    if about.elevation is not None:
        words |= {"ELEVATIO": (about.elevation, "mean elevation (degrees)")}
    if telescope.legs:
        words |= {"LEGS": (telescope.legs, "support legs"), "LEGWIDTH": (telescope.leg_width, "their width (m)"),
                  "LEGANGLE": (telescope.leg_angle, "the first's angle from x towards y (degrees)"),
                  "LEGSTART": (telescope.leg_start, "where their shadow starts (m from the centre)"),
                  "LEGEND": (telescope.leg_end if telescope.leg_end is not None else "rim",
                             "where their shadow ends (m from the centre)")}
    sense = about.plus_dz
    words["POSITIVE"] = (f"{POSITIVE[sense][0]} design" if sense else "not stated",
                         "a positive surface error (COMMENT)")
    return words


def write_surface_fits(path: pathlib.Path, surface: np.ndarray, uncertainty: np.ndarray, spacing: float,
                       words: dict, independent: np.ndarray | None = None, sign: str = "",
                       parameters: tuple | None = None, panels: np.ndarray | None = None,
                       orientation: str = "ours") -> pathlib.Path:
    """The surface (primary HDU) and its uncertainty (extension UNCERT; where given, UNCERTIN: the uncertainty that
    takes the pixels as independent; PANELS: the panel surface, the optics terms removed, optics.optics_terms),
    micrometres, NaN off the dish, written atomically: axis 1 the aperture's y,
    axis 2 its x (FITS_AXES), each centred on the dish's axis with the pixel spacing (m) as its step; words (source,
    order, objective, taper) go into the header as they are, sign (sign_words) as a comment; where parameters
    (names, values, covariance) are given, the fitted parameters and their standard errors (table PARAMS) and their
    covariance (image COVAR). orientation (ORIENTATIONS): the images as that lays them out (pyoof's: each axis
    reversed, its coordinate step negative; header ORIENT)."""
    from astropy.io import fits  # the `fits` extra, behind fits_available()

    surface, uncertainty = oriented(surface, orientation), oriented(uncertainty, orientation)
    independent = None if independent is None else oriented(independent, orientation)
    panels = None if panels is None else oriented(panels, orientation)
    step = -spacing if orientation == "pyoof" else spacing

    hdus = fits.HDUList([fits.PrimaryHDU(surface.astype(np.float32)),
                         fits.ImageHDU(uncertainty.astype(np.float32), name="UNCERT")])
    whats = ["surface error", "1-sigma uncertainty of the surface error (correlated residuals)"]
    if independent is not None:
        hdus.append(fits.ImageHDU(independent.astype(np.float32), name="UNCERTIN"))
        whats.append("1-sigma uncertainty of the surface error, pixels taken as independent")
    if panels is not None:
        hdus.append(fits.ImageHDU(panels.astype(np.float32), name="PANELS"))
        whats.append("panel surface error: pointing, axial focus (as a feed offset) and coma removed")
    for hdu, what in zip(hdus, whats, strict=True):
        header = hdu.header
        header["BUNIT"] = ("um", "micrometres, normal to the dish")
        header.add_comment(f"{what} (micrometres, along the primary's normal: wavelength x phase / 4 pi x "
                           "sqrt(1 + (r / 2f)^2); tilts and piston removed; NaN off the dish)")
        header.add_comment("axis 1: the aperture's y, pairing with the maps' u (their columns); axis 2: its x, "
                           f"pairing with the maps' v (their rows); {ORIENTATIONS[orientation]}")
        header["ORIENT"] = (orientation, "ours, or pyoof's: rotated by 180 degrees")
        for axis, (name, comment) in enumerate(FITS_AXES, 1):
            size = surface.shape[2 - axis]
            header[f"CTYPE{axis}"] = (name, comment)
            header[f"CUNIT{axis}"] = "m"
            header[f"CRPIX{axis}"] = ((size + 1) / 2, "the dish's axis")
            header[f"CRVAL{axis}"] = 0.0
            header[f"CDELT{axis}"] = (step, "pixel spacing on the dish (m)")
        for key, (value, comment) in words.items():
            header[key] = (value, comment)
        if sign:
            header.add_comment(sign)
    if parameters is not None:
        names, values, covariance = parameters
        errors = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
        hdus.append(fits.BinTableHDU.from_columns([
            fits.Column(name="NAME", format="24A", array=np.array(names)),
            fits.Column(name="VALUE", format="D", array=np.asarray(values, dtype=np.float64)),
            fits.Column(name="STDERR", format="D", array=errors)], name="PARAMS"))
        hdus.append(fits.ImageHDU(np.asarray(covariance, dtype=np.float64), name="COVAR"))
        hdus[-1].header.add_comment("covariance of the fitted parameters (PARAMS' order; correlated residuals)")
    with atomic_stream(path) as stream:
        hdus.writeto(stream)
    return path


def uncertainty_ratio(windowed, independent) -> float | None:
    """The median over the dish of the windowed uncertainty over the independent pixels' one, where the latter is
    positive; None where it is nowhere (at n = 1 the surface holds only the tilts and piston it removes)."""
    kept = np.isfinite(windowed) & np.isfinite(independent) & (independent > 0)
    return float(np.median(windowed[kept] / independent[kept])) if kept.any() else None


def write_surface_files(folder: pathlib.Path, observation: Observation, x, order: int, npix: int,
                        residual: np.ndarray, orientation: str = "ours") -> dict:
    """A source's surface at x as surface-<source>.txt and, where astropy is installed, surface-<source>.fits with
    its uncertainty, laid out as ORIENTATIONS[orientation] says; returns what its source record says of them: the
    FITS file's name (None where not written), the window's reach (pixels), the median over the dish of the
    uncertainty (micrometres) and of its ratio to the uncertainty without the window, the orientation."""
    name, wavelength = observation.source.name, observation.source.wavelength
    setup = setup_for(of(series.NUMPY), observation, order, npix)
    image, spacing = surface_grid(x, setup, wavelength)
    header = SURFACE_HEADER.format(title=observation.source.title, order=order, objective=observation.objective,
                                   sigma=observation.sigma, spacing=spacing, layout=ORIENTATIONS[orientation])
    with atomic_stream(folder / f"surface-{name}.txt") as stream:
        np.savetxt(stream, oriented(image, orientation), fmt="%.3f", header=header)
    reach = bandwidth(whitened_residual(residual, observation.scan))  # the scores' pixels are whitened ones there
    torch_setup = setup_for(of(series.TORCH_CPU), observation, order, npix)
    data = observation.prepared(torch_impl, torch_setup)
    covariances = correlated_covariance(x, torch_setup, data, observation.gamma, observation.objective, 0, reach)
    independent, windowed = (surface_uncertainty(covariance, setup, wavelength) for covariance in covariances)
    optics, panel_pixels = optics_terms(x, covariances[-1], setup, wavelength)
    panels = np.full(setup.box[0] * setup.box[1], np.nan)
    panels[setup.index] = panel_pixels
    found = {"surface_fits": None, "uncertainty_reach": reach,
             "uncertainty_median_um": float(np.nanmedian(windowed)),
             "uncertainty_inflation": uncertainty_ratio(windowed, independent), "optics": msgspec.to_builtins(optics),
             "orientation": orientation}
    if fits_available():
        words = {"SOURCE": (name, "the maps fitted"), "ZORDER": (order, "Zernike order fitted"),
                 "OBJECTIV": (observation.objective.name, "the objective fitted"),
                 "TAPER": (observation.sigma, "illumination taper (dish radii)"),
                 "REACH": (reach, "pixels over which residuals correlate")} | observation_words(observation) \
            | optics_words(optics)
        parameters = (parameter_names(setup, observation.map_terms), np.asarray(x, dtype=np.float64), covariances[-1])
        path = write_surface_fits(folder / f"surface-{name}.fits", image, windowed, spacing, words, independent,
                                  sign_words(observation.source.about), parameters, panels.reshape(setup.box),
                                  orientation)
        found["surface_fits"] = path.name
    return found

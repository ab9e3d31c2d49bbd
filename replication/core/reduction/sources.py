"""The real maps' telescope and sources: the SRT's dish, each source's files, frequency and defocus, the maps read
into an Observation (baselines, noise, dropped samples), the model's grid and orders, and the surface error a fit
implies. No torch: the read side draws from here too."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import pathlib

import numpy as np

import reference_numpy
from oof_common.constants import N_ILLUMINATION, N_MAPS
from oof_common.scans import ScanNoise
from replication.core.objectives import CAUCHY, GAUSSIAN, Objective, border_band, robust_sigma
from replication.core.paths import project_root
from replication.core.reduction import beam_files
from replication.core.reduction.configs import SHIPPED, Source, read_config
from replication.core.reduction.scan_noise import neighbour_noise, noise_correlation, scan_of
from replication.core.results import RunError

DATA_FOLDER_VARIABLE = "OOF_REAL_MAPS"
"""Environment variable naming the folder that holds the maps (as the --maps option does)."""


DEFAULT_FOLDER = pathlib.PurePosixPath("data", "srt-oof-2019")
"""Where the maps are looked for by default, relative to the repository root (ignored by git: the maps are never
committed)."""


WHENCE = ("the SRT maps come from the public repository github.com/pinno/pyoof-srt (folder sample_input_files/, "
          "BSD-3-Clause): see docs/real-maps.md")
"""One line saying where a user gets the maps."""


SHIPPED_SOURCES = ("srt-2019-04-26", "grasp-26ghz")
"""The shipped configurations (configs/<name>.toml), in the order records and the report show them."""
SOURCES = tuple(read_config(SHIPPED / f"{name}.toml") for name in SHIPPED_SOURCES)
"""The sources fitted by default: the SRT's observed maps and its GRASP simulation."""


READERS = {"srt": beam_files.read_srt_map, "ticra": beam_files.read_ticra_grid}


def source_named(name: str) -> Source:
    """The source of that name, or a RunError naming the known ones."""
    for source in SOURCES:
        if source.name == name:
            return source
    raise RunError(f"--source: unknown source {name!r}; use {', '.join(s.name for s in SOURCES)}")


def maps_folder(folder=None) -> pathlib.Path:
    """The folder holding the maps: the one given, else $OOF_REAL_MAPS, else data/srt-oof-2019 in the repository;
    a RunError saying where the maps come from where it does not exist."""
    chosen = folder or os.environ.get(DATA_FOLDER_VARIABLE) or project_root() / DEFAULT_FOLDER
    path = pathlib.Path(chosen)
    if not path.is_dir():
        raise RunError(f"--maps {chosen}: no such folder; {WHENCE}")
    return path


def map_paths(folder: pathlib.Path, source: Source) -> list[pathlib.Path]:
    """The three files of a source (in focus, -dz, +dz), or a RunError naming the first one absent."""
    paths = [folder / source.folder / name for name in source.files]
    for path in paths:
        if not path.is_file():
            raise RunError(f"--maps {folder}: {source.title}: {path} is absent; {WHENCE}")
    return paths


BORDER = 8
"""Width (pixels) of the band along the maps' edges from which each map's baseline and noise are estimated: off the
source in every map (the defocused beams fall to the noise within ~35 pixels of the centre)."""


@dataclasses.dataclass(frozen=True)
class Observation:
    """Three maps of one source made ready for the model (in focus, -dz, +dz): maps (3, rows, cols) divided by
    `scale` (the in-focus peak above its baseline, in the file's units), not baseline-subtracted; dropped
    (3, rows, cols), True at a dropped sample (exactly 0.0 in the file); sigma: the illumination taper's width its fits
    use (dish radii); step (radians between pixels); baselines and
    noise (3,), the median and the MAD-based standard deviation of the border band, in scaled units; noise_along
    (2,): the noise of the border band from differences of neighbouring pixels along v (columns' direction) and
    along u, which white noise makes equal; objective: what its fits minimise (OBJECTIVES); terms: the per-map
    terms its fits include (make_setup's switches), None for its source's (configs.MAP_TERMS unless the
    configuration says otherwise); per_map_noise: each map compared in units of its own noise (prepared);
    noise_correlation (2,): the border band's correlation of neighbouring noise samples along the maps' axis 0 and
    axis 1 (scan_noise.noise_correlation); scan: None, or the scans' noise its fits whiten the excess along
    (whitened)."""

    source: Source
    sigma: float
    maps: np.ndarray = dataclasses.field(repr=False)
    dropped: np.ndarray = dataclasses.field(repr=False)
    step: float
    scale: float
    baselines: tuple
    noise: tuple
    noise_along: tuple
    objective: Objective = GAUSSIAN
    width: float = 1.0
    terms: dict | None = None
    per_map_noise: bool = False
    noise_correlation: tuple = (0.0, 0.0)
    scan: ScanNoise | None = None

    def with_taper(self, sigma: float) -> Observation:
        """The same maps fitted with another illumination taper (dish radii)."""
        return dataclasses.replace(self, sigma=sigma)

    def with_objective(self, objective: Objective) -> Observation:
        """The same maps fitted under another objective (OBJECTIVES)."""
        return dataclasses.replace(self, objective=objective)

    def with_terms(self, terms: dict) -> Observation:
        """The same maps fitted with other per-map terms (make_setup's pointing, defocus_scale, gains)."""
        return dataclasses.replace(self, terms=dict(terms))

    @property
    def map_terms(self) -> dict:
        """The per-map terms its fits include: {switch: bool} for make_setup."""
        return dict(self.source.terms if self.terms is None else self.terms)

    def without_terms(self) -> Observation:
        """The same maps fitted without per-map terms."""
        return self.with_terms(dict.fromkeys(self.map_terms, False))

    def at_stage(self, order: int, last: int) -> Observation:
        """The observation as the ladder's stage of this order fits it: the per-map terms join at the last order
        (from the order before's optimum); before it the surface is fitted alone, for a model that still misses
        most of the surface misfits by so much that free per-map terms absorb it (from a cold start with them, the
        closure test's fits run away: the feed offset doubled, gains of -60%)."""
        return self if order == last else self.without_terms()

    def with_width(self, width: float) -> Observation:
        """The same maps fitted with the objective's scale `width` times the noise (residual_width)."""
        return dataclasses.replace(self, width=width)

    def with_per_map_noise(self, per_map: bool) -> Observation:
        """The same maps fitted each in units of its own noise (per_map True), or all three under one gamma."""
        return dataclasses.replace(self, per_map_noise=bool(per_map))

    def whitened(self, whiten: bool = True) -> Observation:
        """The same maps fitted with the excess whitened along the scans (scan_noise.scan_of of the border band's
        correlation), or not (whiten False)."""
        return dataclasses.replace(self, scan=scan_of(self.noise_correlation) if whiten else None)

    def prepared(self, package, setup):
        """The maps prepared for a setup of the package's model, the dropped samples left out; where per_map_noise,
        each map weighted by the maps' median noise over its own, so that gamma (the median's) becomes its own;
        where scan, the excess whitened along the scans."""
        weights = [float(np.median(self.noise) / noise) for noise in self.noise] if self.per_map_noise else None
        scan = {} if self.scan is None else {"scan_correlation": self.scan.correlation, "scan_axis": self.scan.axis}
        return package.prepare_data(self.maps, setup, self.dropped, smaller=True, map_weights=weights, **scan)

    @property
    def gamma(self) -> float:
        """The scale of its fits' objective: the median of the three maps' noise (scaled units) times width (1
        unless the scale was estimated from the residuals): the Gaussian's standard deviation, or the Cauchy
        width."""
        return float(np.median(self.noise)) * self.width


def read_observation(source: Source, folder=None) -> Observation:
    """Read, check and scale the three maps of a source (read errors are one line naming the file)."""
    paths = map_paths(maps_folder(folder), source)
    maps = beam_files.same_grid([READERS[source.reader](path) for path in paths])
    return observation_of(source, np.stack([m.power for m in maps]), maps[0].step, paths)


def observation_of(source: Source, power: np.ndarray, step: float, paths=None) -> Observation:
    """Three maps (3, rows, cols) of a source in the file's units, sky step `step` radians, as an Observation:
    dropped samples (exactly 0.0), baselines and noise from the border band, scaled by the in-focus peak above its
    baseline; maps without a beam or without noise refused (naming the file where paths are given)."""
    dropped = power == 0.0
    band = border_band(power.shape[1:], BORDER)
    edges = [power[k][band & ~dropped[k]] for k in range(N_MAPS)]
    baselines = np.array([np.median(e) for e in edges])
    scale = float(np.max(np.where(dropped[0], -np.inf, power[0])) - baselines[0])
    noise = np.array([robust_sigma(e) for e in edges]) / scale if scale > 0 else np.zeros(N_MAPS)
    if not (scale > 0 and np.all(noise > 0)):
        flat = int(np.argmin(noise)) if scale > 0 else 0  # the in-focus map sets the scale
        raise RunError(f"{paths[flat] if paths else source.name}: a map without a beam above its edges or without "
                       "noise (constant or all but constant); these are not beam maps the model can fit")
    check_beam_peaks(source, power, dropped, baselines, noise * scale, paths)
    along = [neighbour_noise(power[0], band, axis) / scale for axis in (0, 1)]
    correlation = noise_correlation(along, noise[0])
    return Observation(source=source, sigma=SIGMA, maps=power / scale, dropped=dropped, step=step, scale=scale,
                       baselines=tuple(float(b) for b in baselines / scale), noise=tuple(float(n) for n in noise),
                       noise_along=tuple(float(a) for a in along), noise_correlation=correlation)


MIN_PEAK_SNR = 5.0
"""Least height of a map's peak above its edges, in units of its noise, for a beam the model can fit (the largest of
10^4 pixels of pure noise rarely passes 4.5; the SRT's in-focus map: about 500)."""


def check_beam_peaks(source, power, dropped, baselines, noise, paths=None):
    """Refuse maps whose beam does not stand up from their edges: the largest excursion from the edges' baseline
    downwards (a negated map) or a peak less than MIN_PEAK_SNR noise sigmas high; naming the file where given."""
    for k in range(N_MAPS):
        kept = power[k][~dropped[k]] - baselines[k]
        if not (kept.max() >= -kept.min() and kept.max() >= MIN_PEAK_SNR * noise[k]):
            where = paths[k] if paths else f"{source.name} map {k}"
            raise RunError(f"{where}: its beam does not rise above its edges (peak {kept.max():.3g}, trough "
                           f"{kept.min():.3g}, noise {noise[k]:.3g} in the file's units): a negated map or no beam; "
                           "these are not beam maps the model can fit")


NPIX = 256
"""The model's grid: the aperture grid spans wavelength / step (about 6.4 dish diameters at the SRT maps' step), so
the dish is about 40 pixels across, about 1 radian of the widest defocus screen per pixel."""


ORDERS = (1, 2, 3, 4, 5)
"""Zernike orders fitted in turn, each from the last one's result (pyoof's recipe)."""


SIGMA = 0.6
"""Illumination taper's width (dish radii) before one is chosen: an edge taper of -12 dB in power."""


TAPERS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2)
"""Illumination widths (dish radii) whose ladders bracket each source's taper (choose_taper): the model's taper is
not one of its parameters, so it is fitted outside them, by the ladder's final objective (a profile likelihood)."""
TAPER_TOL = 0.005
"""How closely the taper is fitted between the best grid width's neighbours (dish radii; bounded Brent)."""


TOL = 1e-5
"""BFGS gtol of the real-map fits (in the objective's own units: both are about half a unit per pixel)."""


OBJECTIVES = (GAUSSIAN, CAUCHY)
"""What the real-map fits may minimise: least squares in units of the noise (the default: where the model misfits
by several noise units, as on these maps, a Cauchy loss at the noise's scale is concave at most pixels and makes
local minima of its own), or the Cauchy likelihood at the noise's scale (the paper's)."""


def setup_for(impl, observation: Observation, order: int, npix: int = NPIX):
    """The implementation's setup of a source at one order: its telescope, the maps' sky step, the maps' offsets
    and the observation's per-map terms fitted."""
    telescope = observation.source.telescope
    return impl.make_setup(npix, order, telescope=telescope, sigma=observation.sigma, offsets=True,
                           oversamp=telescope.oversamp_for_sky_step(npix, observation.step), **observation.map_terms)


def first_start(setup, observation: Observation) -> np.ndarray:
    """The first order's start: no aberration, a centred illumination, amp matching the in-focus peak, the maps'
    baselines as offsets."""
    plain = reference_numpy.make_setup(setup.npix, setup.nzern, telescope=setup.telescope, sigma=setup.sigma,
                                       oversamp=setup.oversamp)
    unit = np.zeros(plain.nparams)
    unit[plain.amp_index] = 1.0
    flat = np.asarray(reference_numpy.beam_maps(unit, plain))
    params = np.zeros(setup.nparams)
    params[setup.amp_index] = 1.0 / math.sqrt(float(flat[0].max()))
    params[-N_MAPS:] = observation.baselines
    return params


TERM_SIZES = {"pointing": 4, "defocus_scale": 1, "gains": 2}
"""The per-map terms' parameter counts, in make_setup's order (after amp, before the offsets)."""


def term_count(terms: dict) -> int:
    """How many parameters the per-map terms switched on in terms ({switch: bool}) take."""
    return sum(size for name, size in TERM_SIZES.items() if terms.get(name))


def next_start(previous: np.ndarray, setup, previous_terms: dict) -> np.ndarray:
    """A start for setup (the next order's, or the same order's with other per-map terms) from a result fitted with
    previous_terms ({switch: bool}; offsets fitted in both): its Zernike coefficients (zeros for new ones), its
    illumination and offsets, its per-map terms where the setup fits the same ones (else zeros: terms that join
    start at "as the telescope says")."""
    previous = np.asarray(previous, dtype=np.float64)
    zernikes, extra = setup.basis.shape[0], setup.nparams - setup.basis.shape[0] - N_ILLUMINATION - N_MAPS
    before = len(previous) - N_ILLUMINATION - term_count(previous_terms) - N_MAPS
    start = np.zeros(setup.nparams)
    kept = min(before, zernikes)
    start[:kept] = previous[:kept]
    start[zernikes:zernikes + N_ILLUMINATION] = previous[before:before + N_ILLUMINATION]
    if extra and extra == term_count(previous_terms):
        start[zernikes + N_ILLUMINATION:-N_MAPS] = previous[before + N_ILLUMINATION:-N_MAPS]
    start[-N_MAPS:] = previous[-N_MAPS:]
    return start


STAGES_FILE, SOURCES_FILE, TAPERS_FILE = "stages.jsonl", "sources.jsonl", "tapers.jsonl"
"""A real-maps folder's records: one line per source's chosen taper (before its stages), one per stage (source, order)
as it ends, one per source once its last stage has ended; beside them residuals-<source>.npz (the last stage's
residual maps, noise units, float16)."""


TILTS = 2
"""The Zernike terms of order 1 (tilts), first in the parameter vector: a pointing offset, not a surface error."""


FOCUS = 3
"""Where the Zernike term (2, 0) sits in the parameter vector: an axial focus offset common to the three maps (the
'in focus' map's own defocus) as much as a surface error."""


def map_region(npix, shape):
    """The (rows, cols) slices of the model grid where maps of shape (rows, cols) lie (validation.check_data)."""
    rows, cols = shape
    return (slice(npix // 2 - rows // 2, npix // 2 - rows // 2 + rows),
            slice(npix // 2 - cols // 2, npix // 2 - cols // 2 + cols))


def lag_correlation(residual, axis, lag=1):
    """The correlation of residuals lag pixels apart along one axis of the maps (0 for white noise), NaN ignored;
    0 where fewer than three pairs are left."""
    a, b = (np.moveaxis(residual, axis, 0)[s].ravel() for s in (slice(None, -lag), slice(lag, None)))
    keep = np.isfinite(a) & np.isfinite(b)
    return float(np.corrcoef(a[keep], b[keep])[0, 1]) if keep.sum() > 2 else 0.0


def surface_error(x, setup, wavelength, focus=True):
    """The surface error implied by the aperture phase at x, tilts and piston removed (and the focus term where
    focus is False), on the dish pixels (micrometres): the primary's displacement along its normal, wavelength Phi /
    (4 pi) sqrt(1 + (r / 2f)^2) (normal_factor)."""
    coeffs = np.array(x, dtype=np.float64)[:setup.basis.shape[0]]
    if not focus and coeffs.size > FOCUS:
        coeffs[FOCUS] = 0.0
    phase = coeffs[TILTS:] @ np.asarray(setup.basis)[TILTS:]
    phase = phase - phase.mean()
    return 1e6 * wavelength * phase / (4 * math.pi) * normal_factor(setup)


def rms(values) -> float:
    """The root mean square of values (a surface, a move of it, micrometres)."""
    return float(np.sqrt(np.mean(np.asarray(values) ** 2)))


def normal_factor(setup) -> np.ndarray:
    """sqrt(1 + (r / 2f)^2) on the dish pixels, f the primary's focal length: a displacement of a paraboloid along
    its normal changes the path of the ray it reflects by 2 cos(theta / 2) times itself, tan(theta / 2) = r / 2f, so
    a path error is that much larger a normal displacement (1.26 at the SRT's rim)."""
    r = np.hypot(np.asarray(setup.x), np.asarray(setup.y)) * setup.telescope.radius
    return np.sqrt(1 + (r / (2 * setup.telescope.focal_length)) ** 2)


def surface_grid(x, setup, wavelength):
    """The surface error (micrometres along the normal, tilts and piston removed) on the dish's
    block of the model grid, NaN off the dish, as (rows: the aperture's x, pairing with the maps' v; columns: its y,
    pairing with u), and the grid's pixel spacing on the dish (metres)."""
    image = np.full(setup.box[0] * setup.box[1], np.nan)
    image[setup.index] = surface_error(x, setup, wavelength)
    spacing = 4 * setup.oversamp / (setup.npix - 1) * setup.telescope.radius
    return image.reshape(setup.box), spacing


SURFACE_HEADER = """surface error of {title}
(micrometres, along the primary's normal: wavelength x phase / 4 pi x sqrt(1 + (r / 2f)^2); tilts and piston removed)
at Zernike order {order}, objective {objective}, illumination taper {sigma:g} dish radii; NaN off the dish.
Rows: the aperture's x, pairing with the maps' v (their rows); columns: its y, pairing with u (their columns);
{layout}. Pixel spacing {spacing:.6g} m on the dish."""
"""The comment lines above a written surface grid."""


def maps_sha256(observation: Observation) -> str:
    """The SHA-256 of an observation's maps as fitted (scaled values and dropped samples): a real-maps folder is
    resumed only on the same maps (measurement.check_identity)."""
    digest = hashlib.sha256(np.ascontiguousarray(observation.maps, dtype=np.float64).tobytes())
    digest.update(np.ascontiguousarray(observation.dropped).tobytes())
    return digest.hexdigest()


def read_observations(sources=SOURCES, maps=None, npix: int = NPIX) -> list[Observation]:
    """Each source's observation, read and checked before anything is written: absent or damaged maps, or maps
    larger than the model's grid, are refused in one line."""
    observations = [read_observation(source, maps) for source in sources]
    for observation in observations:
        if npix < max(observation.maps.shape[1:]):
            raise RunError(f"--npix {npix}: smaller than the {observation.source.name} maps "
                           f"({' x '.join(map(str, observation.maps.shape[1:]))}); the model's grid must hold them")
    return observations

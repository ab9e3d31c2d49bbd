"""Fits of beam maps made by others: the Sardinia Radio Telescope's (SRT) OOF maps of 2019-04-26 and a TICRA GRASP
physical-optics simulation of the same telescope, fitted as a practitioner fits them (orders raised one at a time,
each started from the last) by the NumPy tree (finite differences, as in the paper) and the torch tree (autograd and
the hand-written adjoint).

The data are not part of the repository: docs/real-maps.md says where they come from and where to put them.
"""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import time

import numpy as np

import reference_numpy
from reference_numpy.constants import N_ILLUMINATION, N_MAPS
from replication.core import optimum, registry, series
from replication.core.optimum import TARGET, Optimum, finite_or_none, time_to_target
from replication.core.paths import project_root
from replication.core.results import RunError, append_record
from replication.studies.real_maps import beam_files

SPEED_OF_LIGHT = 299_792_458.0
"""Metres per second."""
SRT_DISH = {"radius": 32.004, "focal_length": 21.0236, "effective_focal_length": 149.76, "blockage": 3.953 / 2}
"""The SRT's primary radius, primary and effective (Gregorian) focal lengths and subreflector blockage radius
(metres), from the maps' configuration (pyoof-srt's run_config.yaml)."""
DATA_FOLDER_VARIABLE = "OOF_REAL_MAPS"
"""Environment variable naming the folder that holds the maps (as the --maps option does)."""
DEFAULT_FOLDER = pathlib.PurePosixPath("data", "srt-oof-2019")
"""Where the maps are looked for by default, relative to the repository root (ignored by git: the maps are never
committed)."""
WHENCE = ("the SRT maps come from the public repository github.com/pinno/pyoof-srt (folder sample_input_files/, "
          "BSD-3-Clause): see docs/real-maps.md")
"""One line saying where a user gets the maps."""


@dataclasses.dataclass(frozen=True)
class Source:
    """One set of three maps: name (used in records), title and short (for people), folder (under the data
    folder), files (in focus, -dz, +dz), reader ("srt" text or "ticra" grid), frequency (Hz), dz (metres)."""

    name: str
    title: str
    short: str
    folder: str
    files: tuple[str, str, str]
    reader: str
    frequency: float
    dz: float

    @property
    def wavelength(self) -> float:
        return SPEED_OF_LIGHT / self.frequency

    @property
    def telescope(self) -> reference_numpy.Telescope:
        return reference_numpy.Telescope(**SRT_DISH, wavelength=self.wavelength, dz=self.dz)


SOURCES = (
    Source("srt-2019-04-26", "SRT observed, 2019-04-26, 22.23 GHz", "SRT observed", "observed",
           ("20190426-101052-S0000-MAPPA_IN.txt", "20190426-110938-S0000-MAPPA_OUT1.txt",
            "20190426-112403-S0000-MAPPA_OUT2.txt"), "srt", 22.23e9, 0.027),
    Source("grasp-26ghz", "SRT simulated by GRASP (physical optics), 26 GHz", "GRASP simulation", "grasp-simulated",
           ("ffmap_in.grd", "ffmap_-out.grd", "ffmap_+out.grd"), "ticra", 26.0e9, 0.01153),
)
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
MAD_TO_SIGMA = 1.482602218505602
"""The median absolute deviation of Gaussian noise times this is its standard deviation."""


@dataclasses.dataclass(frozen=True)
class Observation:
    """Three maps of one source made ready for the model (in focus, -dz, +dz): maps (3, rows, cols) divided by
    `scale` (the in-focus peak above its baseline, in the file's units), not baseline-subtracted; dropped
    (3, rows, cols), True at a dropped sample (exactly 0.0 in the file); sigma: the illumination taper's width its fits
    use (dish radii); step (radians between pixels); baselines and
    noise (3,), the median and the MAD-based standard deviation of the border band, in scaled units; noise_along
    (2,): the noise of the border band from differences of neighbouring pixels along v (columns' direction) and
    along u, which white noise makes equal."""

    source: Source
    sigma: float
    maps: np.ndarray = dataclasses.field(repr=False)
    dropped: np.ndarray = dataclasses.field(repr=False)
    step: float
    scale: float
    baselines: tuple
    noise: tuple
    noise_along: tuple

    def with_taper(self, sigma: float) -> Observation:
        """The same maps fitted with another illumination taper (dish radii)."""
        return dataclasses.replace(self, sigma=sigma)

    @property
    def gamma(self) -> float:
        """The Cauchy width of its fits: the median of the three maps' noise (scaled units)."""
        return float(np.median(self.noise))


def border_band(shape, width=BORDER):
    """True on the pixels within `width` of a (rows, cols) map's edge."""
    band = np.ones(shape, dtype=bool)
    band[width:-width, width:-width] = False
    return band


def robust_sigma(values):
    """The standard deviation of Gaussian values from their median absolute deviation."""
    return MAD_TO_SIGMA * float(np.median(np.abs(values - np.median(values))))


def neighbour_noise(power, band, axis):
    """The noise of the band's pixels from the differences of neighbours along one axis (1.4826 MAD / sqrt 2): the
    same along both axes for white noise."""
    differences = np.diff(np.where(band, power, np.nan), axis=axis)
    return robust_sigma(differences[np.isfinite(differences)]) / math.sqrt(2)


def read_observation(source: Source, folder=None) -> Observation:
    """Read, check and scale the three maps of a source (read errors are one line naming the file)."""
    paths = map_paths(maps_folder(folder), source)
    maps = beam_files.same_grid([READERS[source.reader](path) for path in paths])
    power = np.stack([m.power for m in maps])
    dropped = power == 0.0
    band = border_band(power.shape[1:])
    edges = [power[k][band & ~dropped[k]] for k in range(N_MAPS)]
    baselines = np.array([np.median(e) for e in edges])
    scale = float(np.max(np.where(dropped[0], -np.inf, power[0])) - baselines[0])
    noise = np.array([robust_sigma(e) for e in edges]) / scale
    along = [neighbour_noise(power[0], band, axis) / scale for axis in (0, 1)]
    return Observation(source=source, sigma=SIGMA, maps=power / scale, dropped=dropped, step=maps[0].step,
                       scale=scale,
                       baselines=tuple(float(b) for b in baselines / scale), noise=tuple(float(n) for n in noise),
                       noise_along=tuple(float(a) for a in along))


NPIX = 256
"""The model's grid: the aperture grid spans wavelength / step (about 6.4 dish diameters at the SRT maps' step), so
the dish is about 40 pixels across, about 1 radian of the widest defocus screen per pixel."""
ORDERS = (1, 2, 3, 4, 5)
"""Zernike orders fitted in turn, each from the last one's result (pyoof's recipe)."""
SIGMA = 0.6
"""Illumination taper's width (dish radii) before one is chosen: an edge taper of -12 dB in power."""
TAPERS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2)
"""Illumination widths (dish radii) among which each source's is chosen by maximum likelihood (choose_taper): the
model's taper is not a fitted parameter, and the real maps' residuals depend on it (the in-focus map's most)."""
TOL = 1e-5
"""BFGS gtol of the real-map fits (Cauchy objective, in its own units)."""


def choose_taper(observation: Observation, orders=ORDERS, npix: int = NPIX, tol: float = TOL):
    """The observation with the taper of TAPERS whose ladder of fits (torch, exact adjoint, untimed) ends at the
    lowest objective, and the profile {sigma: final objective} it was chosen from: a profile likelihood, each value
    at whichever local minimum the ladder reached."""
    impl = implementation_of(series.TORCH_ADJOINT)
    profile = {}
    for sigma in TAPERS:
        stages = fit_ladder(impl, observation.with_taper(sigma), orders, npix, tol)
        profile[sigma] = stages[-1]["fun"] if math.isfinite(stages[-1]["fun"]) else math.inf
    best = min(profile, key=profile.get)
    return observation.with_taper(best), profile


def setup_for(impl, observation: Observation, order: int, npix: int = NPIX):
    """The implementation's setup of a source at one order: its telescope, the maps' sky step, offsets fitted."""
    telescope = observation.source.telescope
    return impl.make_setup(npix, order, telescope=telescope, sigma=observation.sigma, offsets=True,
                           oversamp=telescope.oversamp_for_sky_step(npix, observation.step))


def first_start(setup, observation: Observation) -> np.ndarray:
    """The first order's start: no aberration, a centred illumination, amp matching the in-focus peak, the maps'
    baselines as offsets."""
    params = np.zeros(setup.nparams)
    params[setup.amp_index] = 1.0
    flat = np.asarray(reference_numpy.beam_maps(params, reference_numpy.make_setup(
        setup.npix, setup.nzern, telescope=setup.telescope, sigma=setup.sigma, offsets=True,
        oversamp=setup.oversamp)))
    params[setup.amp_index] = 1.0 / math.sqrt(float(flat[0].max()))
    params[-N_MAPS:] = observation.baselines
    return params


def next_start(previous: np.ndarray, nparams: int) -> np.ndarray:
    """The next order's start from the last one's result: its Zernike coefficients, zeros for the new terms, its
    illumination and offsets."""
    tail = N_ILLUMINATION + N_MAPS
    start = np.zeros(nparams)
    start[:len(previous) - tail] = previous[:-tail]
    start[-tail:] = previous[-tail:]
    return start


def fit_ladder(impl, observation: Observation, orders=ORDERS, npix: int = NPIX, tol: float = TOL):
    """Fit the orders in turn, each from the last one's result, timing each stage as a user meets it (setup,
    prepared maps and fit): a list of {order, seconds, nit, nfev, success, message, fun, x} per order."""
    stages, params = [], None
    for order in orders:
        impl.synchronize()
        start = time.perf_counter()
        setup = setup_for(impl, observation, order, npix)
        data = impl.package.prepare_data(observation.maps, setup, observation.dropped)
        p0 = first_start(setup, observation) if params is None else next_start(params, setup.nparams)
        result = impl.package.fit(setup, data, p0, tol=tol, gamma=observation.gamma, gradient=impl.gradient_name,
                                  minimizer=impl.minimizer)
        impl.synchronize()
        seconds = time.perf_counter() - start
        params = np.asarray(result.x, dtype=np.float64)
        stages.append({"order": order, "seconds": seconds, "nit": int(result.nit), "nfev": int(result.nfev),
                       "success": bool(result.success), "message": str(result.message), "fun": float(result.fun),
                       "x": [float(v) for v in params]})
    return stages


SERIES = (series.NUMPY, series.TORCH_CPU, series.TORCH_ADJOINT)
"""What fits the real maps: the NumPy tree with finite differences (the paper's), torch with autograd (the paper's)
and with the hand-written adjoint."""
REPEATS = 3
"""Timed fits of each stage by each series (interleaved), for the spread of times and ratios."""
IDENTITY = ("npix", "orders", "repeats", "tol", "tapers", "target", "threads", "hostname", "cpu",
            *registry.version_keys())
"""What a real-maps folder's fits are measured under."""


def polish(x, observation: Observation, order: int, npix: int = NPIX) -> Optimum:
    """The local minimum near x by exact Newton steps (torch: autograd Hessian, sandwich covariance), untimed."""
    import torch_impl

    setup = setup_for(implementation_of(series.TORCH_CPU), observation, order, npix)
    data = torch_impl.prepare_data(observation.maps, setup, observation.dropped)
    return optimum.polish(torch_impl, x, setup, data, observation.gamma)


def implementation_of(chosen):
    from replication.core.implementations import of

    return of(chosen)


def timed_stage_fit(impl, observation: Observation, order: int, p0: np.ndarray, npix: int, tol: float):
    """One fit of one stage as a user makes it, timed (setup, prepared maps, fit) with its trajectory:
    (seconds to prepare, seconds in all, scipy's result)."""
    impl.synchronize()
    start = time.perf_counter()
    setup = setup_for(impl, observation, order, npix)
    data = impl.package.prepare_data(observation.maps, setup, observation.dropped)
    impl.synchronize()
    prepared = time.perf_counter()
    result = impl.package.fit(setup, data, p0, tol=tol, gamma=observation.gamma, gradient=impl.gradient_name,
                              minimizer=impl.minimizer, trajectory=True)
    impl.synchronize()
    return prepared - start, time.perf_counter() - start, result


def outcome_of(result) -> dict:
    return {"nit": int(result.nit), "nfev": int(result.nfev), "success": bool(result.success),
            "message": str(result.message), "fun": finite_or_none(result.fun), "x": [float(v) for v in result.x]}


def optimum_record(best: Optimum) -> dict:
    """A stage's optimum as its record holds it (no covariance: its distances are recorded instead)."""
    return {key: value for key, value in best.record().items() if key not in ("covariance", "sandwich")}


def run_stage(observation: Observation, order: int, p0: np.ndarray, impls, repeats: int, npix: int, tol: float,
              bar=None) -> dict:
    """Every timed fit of one stage (repeats x series, interleaved, from p0), the stage's optimum (the lowest of the
    fits' own minima, each found by Newton steps from the fit's end, untimed) and each fit's time to it: the
    stage's record."""
    fits = []
    for repeat in range(repeats):
        for impl in impls:
            prep_s, total_s, result = timed_stage_fit(impl, observation, order, p0, npix, tol)
            fits.append((impl, repeat, prep_s, total_s, result))
            if bar is not None:
                bar.update()
    ends = {}
    for impl, repeat, _, _, result in fits:
        if repeat == 0 and np.all(np.isfinite(result.x)):
            ends[impl.series] = polish(result.x, observation, order, npix)
    best = min((o for o in ends.values() if o.polished), key=lambda o: o.fun, default=None)
    if best is None:
        best = next(iter(ends.values()))
    records = []
    for impl, repeat, prep_s, total_s, result in fits:
        end = np.asarray(result.x, dtype=np.float64)
        records.append({"impl": impl.series.impl, "dtype": impl.series.dtype, "gradient": impl.series.gradient,
                        "minimizer": impl.series.minimizer, "repeat": repeat, "prep_s": prep_s, "total_s": total_s,
                        "target_s": time_to_target(prep_s, result.trajectory, best),
                        "end_distance": finite_or_none(float(best.distances(end)[0])) if best.polished
                        else None, "outcome": outcome_of(result)})
    first = {impl.series: np.asarray(result.x, dtype=np.float64) for impl, repeat, _, _, result in fits if repeat == 0}
    pairs = [{"a": series_fields(a), "b": series_fields(b),
              "distance": finite_or_none(float(best.distances(first[a] - first[b] + best.x)[0]))
              if best.polished else None}
             for i, a in enumerate(first) for b in list(first)[i + 1:]]
    minima = [{"impl": s.impl, "dtype": s.dtype, "gradient": s.gradient, "minimizer": s.minimizer,
               "fun": finite_or_none(o.fun), "polished": o.polished,
               "distance": finite_or_none(float(best.distances(o.x)[0])) if best.polished else None}
              for s, o in ends.items()]
    return {"source": observation.source.name, "order": order, "start": [float(v) for v in p0],
            "optimum": optimum_record(best), "fits": records, "minima": minima, "pairs": pairs}


def series_fields(chosen) -> dict:
    """A series as a record's keys."""
    return {"impl": chosen.impl, "dtype": chosen.dtype, "gradient": chosen.gradient, "minimizer": chosen.minimizer}


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


def residual_maps(observation: Observation, x, order: int, npix: int = NPIX) -> np.ndarray:
    """(data - model) / noise of each map at x, on the maps' pixels (NaN at a dropped sample)."""
    setup = setup_for(implementation_of(series.NUMPY), observation, order, npix)
    model = np.asarray(reference_numpy.beam_maps(np.asarray(x), setup))
    rows, cols = map_region(npix, observation.maps.shape[1:])
    residual = (observation.maps - model[:, rows, cols]) / np.array(observation.noise)[:, None, None]
    return np.where(observation.dropped, np.nan, residual)


def lag_correlation(residual, axis):
    """The correlation of neighbouring residuals along one axis of a map (0 for white noise)."""
    a, b = (np.moveaxis(residual, axis, 0)[s].ravel() for s in (slice(None, -1), slice(1, None)))
    keep = np.isfinite(a) & np.isfinite(b)
    return float(np.corrcoef(a[keep], b[keep])[0, 1])


def surface_error(x, setup, wavelength, focus=True):
    """The surface error implied by the aperture phase at x, tilts and piston removed (and the focus term where
    focus is False), on the dish pixels (micrometres): wavelength Phi / (4 pi), the reflector's normal displacement
    at normal incidence."""
    coeffs = np.array(x, dtype=np.float64)[:setup.basis.shape[0]]
    if not focus and coeffs.size > FOCUS:
        coeffs[FOCUS] = 0.0
    phase = coeffs[TILTS:] @ np.asarray(setup.basis)[TILTS:]
    phase = phase - phase.mean()
    return 1e6 * wavelength * phase / (4 * math.pi)


def source_record(observation: Observation, x, order: int, npix: int, residual: np.ndarray) -> dict:
    """What the report says of one source beside its fits: the maps' grid and noise, the residuals' statistics and
    the surface error at the last stage's optimum."""
    setup = setup_for(implementation_of(series.NUMPY), observation, order, npix)
    surface = surface_error(x, setup, observation.source.wavelength)
    finite = residual[np.isfinite(residual)]
    return {"source": observation.source.name, "title": observation.source.title, "order": order, "npix": npix,
            "sigma": observation.sigma,
            "shape": list(observation.maps.shape[1:]), "step": observation.step, "scale": observation.scale,
            "wavelength": observation.source.wavelength, "dz": observation.source.dz,
            "baselines": list(observation.baselines), "noise": list(observation.noise),
            "noise_along": list(observation.noise_along), "gamma": observation.gamma,
            "dropped": int(observation.dropped.sum()), "dish_pixels": int(setup.x.size),
            "residual_rms": [float(np.sqrt(np.nanmean(r**2))) for r in residual],
            "residual_outliers": float(np.mean(np.abs(finite) > 5)),
            "residual_lag1": {"v": lag_correlation(residual, 1), "u": lag_correlation(residual, 2)},
            "surface_rms_um": float(np.sqrt(np.mean(surface**2))),
            "surface_peak_to_valley_um": float(surface.max() - surface.min()),
            "surface_rms_without_focus_um": float(np.sqrt(np.mean(surface_error(
                x, setup, observation.source.wavelength, focus=False) ** 2))), "x": [float(v) for v in x]}


def warm_up(impls, observation: Observation, npix: int):
    """One value-and-gradient of each implementation on the first stage's problem (FFT plans, first touch of
    memory), untimed."""
    for impl in impls:
        setup = setup_for(impl, observation, 1, npix)
        data = impl.package.prepare_data(observation.maps, setup, observation.dropped)
        impl.package.value_and_grad(first_start(setup, observation), setup, data, observation.gamma,
                                    gradient=impl.gradient_name)


def read_observations(sources=SOURCES, maps=None, npix: int = NPIX) -> list[Observation]:
    """Each source's observation, read and checked before anything is written: absent or damaged maps, or maps
    larger than the model's grid, are refused in one line."""
    observations = [read_observation(source, maps) for source in sources]
    for observation in observations:
        if npix < max(observation.maps.shape[1:]):
            raise RunError(f"--npix {npix}: smaller than the {observation.source.name} maps "
                           f"({' x '.join(map(str, observation.maps.shape[1:]))}); the model's grid must hold them")
    return observations


def run_real_maps(folder: pathlib.Path, observations: list[Observation], max_order: int = ORDERS[-1],
                  npix: int = NPIX, repeats: int = REPEATS, threads: int = 2, tol: float = TOL,
                  quiet: bool = False) -> int:
    """Fit (or resume fitting) each observation's maps, orders 1..max_order in turn, into folder; returns the number
    of fits made now. Every stage is written as it ends; a source's summary and residual maps after its last
    stage."""
    from replication.core import measurement
    from replication.core.environment import environment_record, thread_limits
    from replication.studies.real_maps.records import read_real_maps

    orders = tuple(range(1, max_order + 1))
    with thread_limits(threads):
        environment = environment_record(threads) | {"kind": "real-maps", "npix": npix, "orders": list(orders),
                                                      "repeats": repeats, "tol": tol, "tapers": list(TAPERS),
                                                      "target": TARGET}
    identity = {key: environment[key] for key in IDENTITY}
    measurement.check_identity(folder, identity)
    stages, summaries, tapers = read_real_maps(folder, repair=True)
    tapers = {r["source"]: r["sigma"] for r in tapers}
    done = {(r["source"], r["order"]): r for r in stages}
    count = sum(repeats * len(SERIES) for o in observations for order in orders if (o.source.name, order) not in done)
    missing = {o.source.name for o in observations} - {r["source"] for r in summaries}
    if not count and not missing:
        print(f"{folder / STAGES_FILE}: every stage of {', '.join(o.source.name for o in observations)} is done; "
              "nothing to run")
        return 0
    measurement.record_identity(folder, identity)
    with measurement.measuring(folder, environment, threads, count, "real maps", "fit", quiet) as (run_id, bar):
        for observation in observations:
            observation = with_chosen_taper(folder, observation, tapers, orders, npix, tol, run_id, bar)
            fit_source(folder, observation, orders, npix, repeats, tol, done, run_id, bar)
            if observation.source.name in missing:
                last = done.get((observation.source.name, orders[-1])) or read_stage(folder, observation, orders[-1])
                write_source(folder, observation, last["optimum"]["x"], orders[-1], npix, run_id)
    return count


def with_chosen_taper(folder, observation, tapers, orders, npix, tol, run_id, bar):
    """The observation with its source's taper: the one recorded, else chosen now (choose_taper) and recorded."""
    from replication.core.records import as_written
    from replication.studies.real_maps.records import check_real_taper

    name = observation.source.name
    if name in tapers:
        return observation.with_taper(tapers[name])
    bar.set_postfix_str(f"{name}: choosing the taper")
    observation, profile = choose_taper(observation, orders, npix, tol)
    path = folder / TAPERS_FILE
    record = {"source": name, "sigma": observation.sigma, "run_id": run_id,
              "profile": [[sigma, finite_or_none(fun)] for sigma, fun in profile.items()]}
    append_record(path, as_written(path, 0, record, check_real_taper))
    return observation


def fit_source(folder, observation, orders, npix, repeats, tol, done, run_id, bar):
    """Every stage of one source not yet done, in order, each from the last one's optimum, each written as it
    ends."""
    from replication.core.records import as_written
    from replication.studies.real_maps.records import check_real_stage

    name, previous = observation.source.name, None
    impls = [implementation_of(s) for s in SERIES]
    if any((name, order) not in done for order in orders):
        warm_up(impls, observation, npix)
    for order in orders:
        bar.set_postfix_str(f"{name} n={order}")
        if (name, order) in done:
            previous = done[(name, order)]["optimum"]["x"]
            continue
        setup = setup_for(impls[1], observation, order, npix)
        p0 = first_start(setup, observation) if previous is None else next_start(np.array(previous), setup.nparams)
        record = run_stage(observation, order, p0, impls, repeats, npix, tol, bar)
        path = folder / STAGES_FILE
        append_record(path, as_written(path, 0, record | {"run_id": run_id}, check_real_stage))
        previous = record["optimum"]["x"]


def read_stage(folder, observation, order):
    """A source's stage record as written."""
    from replication.studies.real_maps.records import read_real_maps

    stages, _, _ = read_real_maps(folder)
    return next(s for s in stages if (s["source"], s["order"]) == (observation.source.name, order))


def write_source(folder, observation, x, order, npix, run_id):
    """A source's residual maps and summary at its last stage's optimum."""
    from replication.core.records import as_written
    from replication.studies.real_maps.records import check_real_source

    residual = residual_maps(observation, x, order, npix)
    write_residuals(folder / f"residuals-{observation.source.name}.npz", residual)
    path = folder / SOURCES_FILE
    record = source_record(observation, x, order, npix, residual) | {"run_id": run_id}
    append_record(path, as_written(path, 0, record, check_real_source))


def write_residuals(path, residual):
    """The residual maps as float16 (enough for a picture), written atomically."""
    from replication.core.results import check_target

    path = check_target(path)
    temporary = check_target(path.with_name(path.name + ".tmp.npz"))
    np.savez_compressed(temporary, residual=residual.astype(np.float16))
    temporary.replace(path)

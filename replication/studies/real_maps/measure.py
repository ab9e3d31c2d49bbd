"""Fits of beam maps made by others: the Sardinia Radio Telescope's (SRT) observed OOF maps and a TICRA GRASP
physical-optics simulation of the same telescope, fitted as a practitioner fits them (orders raised one at a time,
each started from the last) by the NumPy tree (finite differences, as in the paper) and the torch tree (autograd and
the hand-written adjoint).

The data are not part of the repository: docs/real-maps.md says where they come from and where to put them.
"""

from __future__ import annotations

import pathlib
import time

import numpy as np

import torch_impl
from replication.core import measurement, optimum, registry, series
from replication.core.environment import environment_record, thread_limits
from replication.core.implementations import of
from replication.core.optimum import TARGET, Optimum, finite_or_none, time_to_target
from replication.core.records import as_written
from replication.core.reduction.ladder import choose_taper, outcome_of, residual_maps
from replication.core.reduction.misfit import misfit
from replication.core.reduction.sources import (
    NPIX,
    ORDERS,
    SOURCES_FILE,
    STAGES_FILE,
    TAPER_TOL,
    TAPERS,
    TAPERS_FILE,
    TOL,
    Observation,
    first_start,
    lag_correlation,
    maps_sha256,
    next_start,
    rms,
    setup_for,
    surface_error,
)
from replication.core.reduction.surface import oriented_as, write_surface_files
from replication.core.reduction.truncation import higher_orders
from replication.core.results import RunError, append_record, atomic_stream
from replication.core.watch import FitWatch
from replication.studies.real_maps import multistart
from replication.studies.real_maps.budget import additions_effect, other_objective, other_weighting, terms_effect
from replication.studies.real_maps.order_figures import draw_orders
from replication.studies.real_maps.records import (
    STARTS_FILE,
    check_real_source,
    check_real_stage,
    check_real_taper,
    read_real_maps,
    read_real_starts,
)
from replication.studies.real_maps.whitened import whitened_optimum

SERIES = (series.NUMPY, series.TORCH_CPU, series.TORCH_ADJOINT)
"""What fits the real maps: the NumPy tree with finite differences (the paper's), torch with autograd (the paper's)
and with the hand-written adjoint."""
REPEATS = 3
"""Timed fits of each stage by each series (interleaved), for the spread of times and ratios."""
IDENTITY = ("npix", "orders", "objective", "repeats", "tol", "tapers", "taper_tol", "target", "starts", "per_map_noise",
            "whiten", "orientation", "threads",
            "hostname", "cpu", *registry.version_keys())
"""What a real-maps folder's fits are measured under."""


def polish(x, observation: Observation, order: int, npix: int = NPIX) -> Optimum:
    """The local minimum near x by exact Newton steps (torch: autograd Hessian, sandwich covariance), untimed."""
    setup = setup_for(implementation_of(series.TORCH_CPU), observation, order, npix)
    data = observation.prepared(torch_impl, setup)
    return optimum.polish(torch_impl, x, setup, data, observation.gamma, observation.objective)


def implementation_of(chosen):
    return of(chosen)


def timed_stage_fit(impl, observation: Observation, order: int, p0: np.ndarray, npix: int, tol: float):
    """One fit of one stage as a user makes it, timed (setup, prepared maps, fit) with its trajectory:
    (seconds to prepare, seconds in all, scipy's result)."""
    impl.synchronize()
    start = time.perf_counter()
    setup = setup_for(impl, observation, order, npix)
    data = observation.prepared(impl.package, setup)
    impl.synchronize()
    prepared = time.perf_counter()
    watch = FitWatch(trajectory=True)
    result = impl.package.fit(setup, data, p0, tol=tol, gamma=observation.gamma, objective=observation.objective,
                              gradient=impl.gradient_name, **impl.fit_options, callback=watch)
    impl.synchronize()
    ended = time.perf_counter()
    return prepared - start, ended - start, watch.finish(result, setup.nparams)


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


def source_record(observation: Observation, x, order: int, npix: int, residual: np.ndarray) -> dict:
    """What the report says of one source beside its fits: the maps' grid and noise, the residuals' statistics and
    the surface error at the last stage's optimum."""
    setup = setup_for(implementation_of(series.NUMPY), observation, order, npix)
    surface = surface_error(x, setup, observation.source.wavelength)
    finite = residual[np.isfinite(residual)]
    return {"source": observation.source.name, "title": observation.source.title, "short": observation.source.short,
            "order": order, "npix": npix,
            "sigma": observation.sigma,
            "shape": list(observation.maps.shape[1:]), "step": observation.step, "scale": observation.scale,
            "wavelength": observation.source.wavelength, "dz": observation.source.dz,
            "baselines": list(observation.baselines), "noise": list(observation.noise),
            "noise_along": list(observation.noise_along), "gamma": observation.gamma,
            "objective": observation.objective.name,
            "dropped": int(observation.dropped.sum()), "dish_pixels": int(setup.x.size),
            "residual_rms": [float(np.sqrt(np.nanmean(r**2))) for r in residual],
            "residual_outliers": float(np.mean(np.abs(finite) > 5)),
            "residual_lag1": {"v": lag_correlation(residual, 1), "u": lag_correlation(residual, 2)},
            "surface_rms_um": rms(surface),
            "surface_peak_to_valley_um": float(surface.max() - surface.min()),
            "surface_rms_without_focus_um": float(np.sqrt(np.mean(surface_error(
                x, setup, observation.source.wavelength, focus=False) ** 2))), "x": [float(v) for v in x],
            "surface_displacement": "normal"}


def warm_up(impls, observation: Observation, npix: int):
    """One value-and-gradient of each implementation on the first stage's problem (FFT plans, first touch of
    memory), untimed."""
    for impl in impls:
        setup = setup_for(impl, observation, 1, npix)
        data = observation.prepared(impl.package, setup)
        impl.package.value_and_grad(first_start(setup, observation), setup, data, observation.gamma,
                                    observation.objective, gradient=impl.gradient_name)


def objective_of_all(observations) -> str:
    """The name of the one objective every observation of a run is fitted under."""
    objectives = {observation.objective.name for observation in observations}
    if len(objectives) != 1:
        raise RunError(f"one objective a real-maps run, got {sorted(objectives)}")
    return objectives.pop()


def config_record(observation) -> dict:
    """What identifies a source's fits besides its maps: its configuration (dish, wavelength, defocus, files) and the
    per-map terms fitted."""
    source = observation.source
    return {"dish": source.dish.given(), "telescope": source.telescope_name, "frequency": source.frequency,
            "dz": source.dz, "format": source.reader, "folder": source.folder, "files": list(source.files),
            "fit": observation.map_terms} | source.about.given()


def run_real_maps(folder: pathlib.Path, observations: list[Observation], max_order: int = ORDERS[-1],
                  npix: int = NPIX, repeats: int = REPEATS, threads: int = 2, tol: float = TOL,
                  quiet: bool = False, starts: int = 0, whiten: str = "no", orientation: str = "ours") -> int:
    """Fit (or resume fitting) each observation's maps, orders 1..max_order in turn, into folder; returns the number
    of fits made now. Every stage is written as it ends; then, where starts > 0, that many random starts of the last
    order (multistart), each as it ends; a source's summary and residual maps after them. whiten: the mode the
    observations were whitened under (WHITEN_MODES; each observation's scan says whether it is); orientation: how
    the surface files lie (surface.ORIENTATIONS)."""

    orders = tuple(range(1, max_order + 1))
    with thread_limits(threads):
        environment = environment_record(threads) | {"kind": "real-maps", "npix": npix, "orders": list(orders),
                                                      "objective": objective_of_all(observations),
                                                      "repeats": repeats, "tol": tol, "tapers": list(TAPERS),
                                                      "taper_tol": TAPER_TOL, "target": TARGET, "starts": starts}
    environment |= {"per_map_noise": any(o.per_map_noise for o in observations), "whiten": whiten,
                    "orientation": oriented_as(orientation)}
    environment |= {f"maps_sha256_{o.source.name}": maps_sha256(o) for o in observations}
    environment |= {f"config_{o.source.name}": config_record(o) for o in observations}
    identity = {key: environment[key] for key in environment
                if key in IDENTITY or key.startswith(("maps_sha256_", "config_"))}
    measurement.check_identity(folder, identity, records=(STAGES_FILE, SOURCES_FILE, TAPERS_FILE, STARTS_FILE),
                               before={"whiten": "no", "orientation": "ours"})
    stages, summaries, tapers = read_real_maps(folder, repair=True)
    tapers = {r.source: r.sigma for r in tapers}
    done = {(r.source, r.order): r for r in stages}
    count = sum(repeats * len(SERIES) for o in observations for order in orders if (o.source.name, order) not in done)
    missing = {o.source.name for o in observations} - {r.source for r in summaries}
    begun = [r.source for r in read_real_starts(folder, repair=True)]
    count += sum(max(0, starts - begun.count(name)) for name in missing)
    if not count and not missing:
        print(f"{folder / STAGES_FILE}: every stage of {', '.join(o.source.name for o in observations)} is done; "
              "nothing to run")
        return 0
    measurement.record_identity(folder, identity)
    with measurement.measuring(folder, environment, threads, count, "real maps", "fit", quiet) as (run_id, bar):
        for observation in observations:
            stamp = stamp_of(identity, observation.source.name, run_id)
            observation = with_chosen_taper(folder, observation, tapers, orders, npix, tol, stamp, bar)
            fit_source(folder, observation.whitened(False), orders, npix, repeats, tol, done, stamp, bar)
            if observation.source.name in missing:
                finish_source(folder, observation, orders[-1], npix, starts, threads, stamp, bar, orientation)
    return count


def finish_source(folder, observation, order, npix, starts, threads, stamp, bar, orientation="ours"):
    """A source's random starts of its last order (where starts > 0) and then its summary."""
    last = read_stage(folder, observation, order)
    found = None
    if starts:
        plain = observation.whitened(False)  # the starts search the timed ladder's own objective
        ends = multistart.run_starts(folder, plain, order, npix, starts, stamp, bar)
        found = multistart.basins(ends, plain, order, npix, last.optimum, threads)
    write_source(folder, observation, last.optimum, order, npix, stamp, found, orientation)


STAMPED = ("npix", "orders", "objective", "repeats", "tol", "tapers", "taper_tol", "target", "starts", "per_map_noise",
           "whiten", "orientation")
"""The settings every real-maps record carries beside its source's maps hash and configuration, so that a folder
whose settings.json and runs.jsonl were lost still refuses to resume under other settings, on other maps or with
another telescope configuration."""


def stamp_of(identity: dict, name: str, run_id: str) -> dict:
    """What each record of one source carries: its run id, the maps' SHA-256, its configuration, the settings of
    STAMPED."""
    return {"run_id": run_id, f"maps_sha256_{name}": identity[f"maps_sha256_{name}"],
            f"config_{name}": identity[f"config_{name}"]} | {key: identity[key] for key in STAMPED}


def with_chosen_taper(folder, observation, tapers, orders, npix, tol, stamp, bar):
    """The observation with its source's taper: the one recorded, else chosen now (choose_taper) and recorded."""
    name = observation.source.name
    if name in tapers:
        return observation.with_taper(tapers[name])
    bar.set_postfix_str(f"{name}: choosing the taper")
    observation, profile = choose_taper(observation, orders, npix, tol)
    path = folder / TAPERS_FILE
    record = stamp | {"source": name, "sigma": observation.sigma,
                      "profile": [[sigma, finite_or_none(fun)] for sigma, fun in profile.items()]}
    append_record(path, as_written(path, 0, record, check_real_taper))
    return observation


def fit_source(folder, observation, orders, npix, repeats, tol, done, stamp, bar):
    """Every stage of one source not yet done, in order, each from the last one's optimum, each written as it
    ends; the per-map terms join at the last order (Observation.at_stage)."""
    name, previous = observation.source.name, None
    impls = [implementation_of(s) for s in SERIES]
    if any((name, order) not in done for order in orders):
        warm_up(impls, observation, npix)
    for order in orders:
        bar.set_postfix_str(f"{name} n={order}")
        if (name, order) in done:
            previous = done[(name, order)].optimum.x
            continue
        staged = observation.at_stage(order, orders[-1])
        setup = setup_for(impls[1], staged, order, npix)
        p0 = first_start(setup, staged) if previous is None else next_start(
            np.array(previous), setup, observation.at_stage(order - 1, orders[-1]).map_terms)
        record = run_stage(staged, order, p0, impls, repeats, npix, tol, bar)
        path = folder / STAGES_FILE
        append_record(path, as_written(path, 0, stamp | record, check_real_stage))
        previous = record["optimum"]["x"]


def read_stage(folder, observation, order):
    """A source's stage record."""
    stages, _, _ = read_real_maps(folder)
    return next(s for s in stages if (s.source, s.order) == (observation.source.name, order))


def write_source(folder, observation, optimum_found, order, npix, stamp, found=None, orientation="ours"):
    """A source's residual maps, its figures order by order (order_figures) and its summary at its last stage's
    optimum ({x, fun}), or where its maps are whitened along the scans the whitened refit from it (whitened.py),
    with what its random starts found and what its per-map terms did."""
    whitening = None
    if observation.scan is not None:
        optimum_found, whitening = whitened_optimum(observation, optimum_found, order, npix)
    x = optimum_found.x
    residual = residual_maps(observation, x, order, npix)
    write_residuals(folder / f"residuals-{observation.source.name}.npz", residual)
    draw_orders(folder, observation, [stage for stage in read_real_maps(folder)[0]
                                      if stage.source == observation.source.name], npix)
    surface = write_surface_files(folder, observation, x, order, npix, residual, orientation)
    path = folder / SOURCES_FILE
    record = source_record(observation, x, order, npix, residual)
    record = stamp | record | surface | {"config": config_record(observation),
                                         "other_objective": other_objective(observation, x, order, npix),
                                         "terms_effect": terms_effect(observation, optimum_found, order, npix),
                                         "higher_orders": higher_orders(observation, x, order, npix),
                                         "other_weighting": other_weighting(observation, x, order, npix),
                                         "additions": additions_effect(observation, x, order, npix),
                                         "misfit": misfit(observation, x, order, residual, npix),
                                         "whitening": whitening} | ({} if found is None else {"multistart": found})
    append_record(path, as_written(path, 0, record, check_real_source))


def write_residuals(path, residual):
    """The residual maps as float16 (enough for a picture), written atomically."""
    with atomic_stream(path) as stream:
        np.savez_compressed(stream, residual=residual.astype(np.float16))

"""The global optimum of a source's last order, looked for from random starts: each start a random aperture phase
of a stated rms over the dish (the illumination and baselines as the ladder's first start has them), fitted alone
by torch's exact adjoint with BFGS started from the Gauss-Newton matrix, timed as a user meets it, written as it
ends; then the ends grouped into distinct minima by their surfaces, and disjoint groups of starts read as
independent multi-starts.

Why one start after another, not as one batch: on a CPU a batch of K starts' evaluations costs K times one
(the bench's torch_batch_value_and_grad), so a batch buys nothing there; it pays on a GPU."""

from __future__ import annotations

import time

import numpy as np

import reference_numpy
from replication.core import series
from replication.core.implementations import of
from replication.core.records import as_written
from replication.core.reduction.ladder import outcome_of
from replication.core.reduction.sources import (
    TOL,
    Observation,
    first_start,
    setup_for,
    surface_error,
)
from replication.core.registry import ADJOINT, GAUSS_NEWTON_START
from replication.core.results import append_record
from replication.studies.real_maps.records import STARTS_FILE, RealStart, check_real_start, read_real_starts

STARTS = 200
"""Random starts per source by default (the real-maps command's --starts)."""
SCALE = 1.0
"""The random starts' aperture phase, radians rms over the dish (tilts and piston included)."""
SAME_UM = 1.0
"""Two ends are one minimum where their surfaces differ by less than this (micrometres rms over the dish)."""
GROUP = 8
"""Starts per independent multi-start when the starts are read as disjoint groups."""
SERIES = series.Series(series.TORCH_CPU.impl, gradient=ADJOINT, minimizer=GAUSS_NEWTON_START)
"""What fits each start: torch, exact adjoint, BFGS from the Gauss-Newton matrix at the start."""
SEED = 20190426
"""The random starts' seed: start k draws from numpy.random.default_rng([SEED, k]), so a resume draws the same."""


def random_start(setup, observation: Observation, index: int, scale: float = SCALE) -> np.ndarray:
    """Start k: the ladder's first start (no aberration, centred illumination, baselines) with Zernike coefficients
    drawn normal and scaled so that the phase they make has `scale` radians rms over the dish pixels."""
    start = first_start(setup, observation)
    zernikes = setup.basis.shape[0]
    coeffs = np.random.default_rng([SEED, index]).standard_normal(zernikes)
    phase = coeffs @ np.asarray(setup.basis)
    start[:zernikes] = coeffs * scale / np.sqrt(np.mean(phase**2))
    return start


def fit_start(observation: Observation, order: int, p0: np.ndarray, npix: int, tol: float = TOL):
    """One start fitted alone, timed (setup, prepared maps, fit): (seconds, scipy's result). The per-map terms are
    fitted from the start (0: as the telescope says): at the last order the model holds the maps well enough that
    they do not run away, as they do from a cold start at order 1 (Observation.at_stage); measured on the SRT's
    maps, 8 of 8 starts reached the best minimum this way and 7 of 8 fitting the surface alone first."""
    impl = of(SERIES)
    start = time.perf_counter()
    setup = setup_for(impl, observation, order, npix)
    data = observation.prepared(impl.package, setup)
    result = impl.package.fit(setup, data, p0, tol=tol, gamma=observation.gamma, objective=observation.objective,
                              gradient=impl.gradient_name, **impl.fit_options)
    return time.perf_counter() - start, result


def run_starts(folder, observation: Observation, order: int, npix: int, count: int, stamp: dict, bar=None,
               scale: float = SCALE) -> list[RealStart]:
    """Starts 0..count-1 of a source's last order not yet written, each written as it ends; every start's
    record."""
    name = observation.source.name
    done = {r.index for r in read_real_starts(folder, repair=True) if r.source == name}
    setup = setup_for(reference_numpy, observation, order, npix)
    path = folder / STARTS_FILE
    for index in range(count):
        if index in done:
            continue
        if bar is not None:
            bar.set_postfix_str(f"{name} random start {index + 1}/{count}")
        p0 = random_start(setup, observation, index, scale)
        seconds, result = fit_start(observation, order, p0, npix)
        record = {"source": name, "order": order, "index": index, "scale": scale,
                  "start": [float(v) for v in p0], "seconds": seconds} | outcome_of(result)
        append_record(path, as_written(path, 0, stamp | record, check_real_start))
        if bar is not None:
            bar.update()
    return [r for r in read_real_starts(folder) if r.source == name and r.index < count]


def surface_distance(a, b, setup, wavelength) -> float:
    """How far apart two parameter vectors' surfaces lie (micrometres rms over the dish; tilts and piston aside)."""
    return float(np.sqrt(np.mean(surface_error(np.asarray(a) - np.asarray(b), setup, wavelength) ** 2)))


def distinct_minima(ends, setup, wavelength, same_um: float = SAME_UM):
    """The ends (random starts' records, finite ones only) grouped into minima, lowest objective first: each end
    joins the first minimum whose surface lies within same_um of its own, else starts one; [(fun, x, count)]."""
    minima = []
    for end in sorted(ends, key=lambda e: e.fun):
        for minimum in minima:
            if surface_distance(end.x, minimum[1], setup, wavelength) < same_um:
                minimum[2] += 1
                break
        else:
            minima.append([end.fun, end.x, 1])
    return minima


def ended_finite(end) -> bool:
    """Whether a fit (a record with fun and x) ended somewhere finite (a non-finite value is recorded as null and
    read back as NaN)."""
    return end.fun is not None and bool(np.all(np.isfinite(np.asarray(end.x, dtype=np.float64))))


def basins(records, observation: Observation, order: int, npix: int, ladder, threads: int) -> dict | None:
    """What the starts found (records.MultiStart): the best minimum, how many starts reached it (their surfaces
    within SAME_UM), the distinct minima, the ladder's optimum (a stage optimum record) against the best, and the
    starts read as disjoint groups of GROUP; None where no start ended anywhere finite."""
    setup = setup_for(reference_numpy, observation, order, npix)
    wavelength = observation.source.wavelength
    records = sorted(records, key=lambda r: r.index)
    finite = [r for r in records if ended_finite(r)]
    minima = distinct_minima(finite, setup, wavelength)
    if not minima:
        return None
    best_fun, best_x, _ = minima[0]
    at_best = [ended_finite(r) and surface_distance(r.x, best_x, setup, wavelength) < SAME_UM for r in records]
    groups = [range(k, k + GROUP) for k in range(0, len(records) - GROUP + 1, GROUP)]
    ladder_ok = ended_finite(ladder)
    return {"starts": len(records), "scale": records[0].scale, "same_um": SAME_UM, "best_fun": best_fun,
            "best_x": best_x, "reached_best": sum(at_best),
            "basins": [{"fun": fun, "count": count, "from_best_um": surface_distance(x, best_x, setup, wavelength)}
                       for fun, x, count in minima],
            "ladder_fun": ladder.fun,
            "ladder_from_best_um": surface_distance(ladder.x, best_x, setup, wavelength) if ladder_ok else None,
            "group": GROUP, "groups": len(groups), "groups_reaching": sum(any(at_best[k] for k in g) for g in groups),
            "group_seconds": [sum(records[k].seconds for k in g) for g in groups], "threads": threads}

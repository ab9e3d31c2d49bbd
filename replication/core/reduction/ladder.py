"""A source's ladder of fits (orders raised one at a time, each started from the last, as a practitioner fits them),
its taper fitted by the ladder's final objective, and the residuals' own scale, for the real maps and the closure
test alike."""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
import scipy.optimize

import reference_numpy
from replication.core import series
from replication.core.implementations import of
from replication.core.objectives import robust_sigma
from replication.core.optimum import finite_or_none
from replication.core.reduction.sources import (
    NPIX,
    ORDERS,
    TAPER_TOL,
    TAPERS,
    TOL,
    Observation,
    first_start,
    map_region,
    next_start,
    setup_for,
)


def choose_taper(observation: Observation, orders=ORDERS, npix: int = NPIX, tol: float = TOL):
    """The observation with its taper fitted, and the profile {sigma: final objective} it was fitted from: each
    width's ladder of fits (torch, exact adjoint, untimed) ends at some objective, a profile likelihood in the taper
    (each value at whichever local minimum the ladder reached); the best of TAPERS is refined between its neighbours
    by bounded Brent to TAPER_TOL, and the lowest width tried is taken. The profile is of fits that do not whiten
    (a whitened fit is the last stage's refit, fit_stage); the observation keeps its whitening."""
    impl = of(series.TORCH_ADJOINT)
    profile, plain = {}, observation.whitened(False)  # the profile of fits without whitening: robust from afar

    def final(sigma):
        sigma = float(sigma)
        if sigma not in profile:
            stages = fit_ladder(impl, plain.with_taper(sigma), orders, npix, tol)
            profile[sigma] = stages[-1].fun if math.isfinite(stages[-1].fun) else math.inf
        return profile[sigma]

    for sigma in TAPERS:
        final(sigma)
    place = TAPERS.index(min(TAPERS, key=final))
    low, high = TAPERS[max(place - 1, 0)], TAPERS[min(place + 1, len(TAPERS) - 1)]
    if math.isfinite(profile[TAPERS[place]]):
        scipy.optimize.minimize_scalar(final, bounds=(low, high), method="bounded", options={"xatol": TAPER_TOL})
    best = min(profile, key=profile.get)
    return observation.with_taper(best), dict(sorted(profile.items()))


@dataclasses.dataclass(frozen=True)
class LadderStage:
    """One order of a ladder: its time as a user meets it (s), scipy's counts, success and message, the objective
    and the parameters where it ended, the objective's scale (noise units) it was fitted at."""

    order: int
    seconds: float
    nit: int
    nfev: int
    success: bool
    message: str
    fun: float
    x: list[float]
    width: float


def fit_ladder(impl, observation: Observation, orders=ORDERS, npix: int = NPIX, tol: float = TOL,
               rescale: bool = False) -> list[LadderStage]:
    """Fit the orders in turn, each from the last one's result, timing each stage as a user meets it (setup,
    prepared maps and fit): one LadderStage per order; the
    per-map terms join at the last order (Observation.at_stage), and where the observation whitens its maps, the
    last order's fit is refitted whitened (fit_stage). rescale: each stage's objective scale estimated from the
    residuals at its start (residual_width), not the noise's."""
    stages, params, terms = [], None, {}
    for order in orders:
        impl.synchronize()
        start = time.perf_counter()
        staged = observation.at_stage(order, orders[-1])
        setup = setup_for(impl, staged, order, npix)
        p0 = first_start(setup, staged) if params is None else next_start(params, setup, terms)
        if rescale:
            observation = observation.with_width(residual_width(staged, p0, order, npix))
            staged = observation.at_stage(order, orders[-1])
        result = fit_stage(impl, observation, staged, setup, p0, tol, whiten=order == orders[-1])
        terms = staged.map_terms
        impl.synchronize()
        seconds = time.perf_counter() - start
        params = np.asarray(result.x, dtype=np.float64)
        stages.append(LadderStage(order, seconds, int(result.nit), int(result.nfev), bool(result.success),
                                  str(result.message), float(result.fun), [float(v) for v in params],
                                  observation.width))
    return stages


def fit_stage(impl, observation: Observation, staged: Observation, setup, p0, tol: float, whiten: bool):
    """One stage's fit from p0 (scipy's result): where the observation whitens its maps along the scans and whiten
    (the ladder's last stage), a fit without whitening first and the whitened fit from its end (a whitened fit
    from afar can stop in a minimum of its own), the evaluations of both counted."""
    plain = observation.whitened(False)
    fitted = observation if whiten else plain
    options = {"tol": tol, "gamma": staged.gamma, "objective": staged.objective, "gradient": impl.gradient_name}
    result = impl.package.fit(setup, plain.prepared(impl.package, setup), p0, **options, **impl.fit_options)
    if fitted.scan is None:
        return result
    before = (int(result.nit), int(result.nfev))
    result = impl.package.fit(setup, fitted.prepared(impl.package, setup), np.asarray(result.x, dtype=np.float64),
                              **options, **impl.fit_options)
    result.nit, result.nfev = int(result.nit) + before[0], int(result.nfev) + before[1]
    return result


def outcome_of(result) -> dict:
    """How a fit ended as a record holds it (core.records.FitEnd): counts, success and why, the objective and the
    parameters there (null where not finite)."""
    return {"nit": int(result.nit), "nfev": int(result.nfev), "success": bool(result.success),
            "message": str(result.message), "fun": finite_or_none(result.fun),
            "x": [finite_or_none(v) for v in result.x]}


def residual_width(observation: Observation, x, order: int, npix: int = NPIX) -> float:
    """The residuals' own scale at x in units of the noise (the MAD-based standard deviation of (data - model) /
    noise over every sample, at least 1): a Cauchy this wide is convex where the model misfits by about that much,
    where one at the noise's scale is concave and makes local minima of its own."""
    residual = residual_maps(observation, x, order, npix)
    return max(1.0, robust_sigma(residual[np.isfinite(residual)]))


def residual_maps(observation: Observation, x, order: int, npix: int = NPIX) -> np.ndarray:
    """(data - model) / noise of each map at x, on the maps' pixels (NaN at a dropped sample)."""
    setup = setup_for(reference_numpy, observation, order, npix)
    model = np.asarray(reference_numpy.beam_maps(np.asarray(x), setup))
    rows, cols = map_region(npix, observation.maps.shape[1:])
    residual = (observation.maps - model[:, rows, cols]) / np.array(observation.noise)[:, None, None]
    return np.where(observation.dropped, np.nan, residual)

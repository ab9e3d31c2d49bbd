"""What the surface does when the order rises beyond the last one fitted: the same maps fitted at a few higher orders
(each from the last one's optimum), how much lower each ends (a likelihood-ratio test against the added parameters)
and how far its surface moves. From them, an order rule and the truncation systematic: the surface's error that the
choice of order makes, beside the statistical uncertainty the fit's covariance gives."""

from __future__ import annotations

import numpy as np
import scipy.optimize
import scipy.stats

import torch_impl
from oof_common.limits import MAX_NZERN
from oof_common.validation import NotIdentifiable
from replication.core import series
from replication.core.implementations import of
from replication.core.reduction.sources import (
    TAPER_TOL,
    TAPERS,
    TOL,
    Observation,
    next_start,
    rms,
    setup_for,
    surface_error,
)

HIGHER_ORDERS = 3
"""Orders fitted beyond a source's last one (untimed, torch's exact adjoint, each from the last one's optimum)."""
SIGNIFICANT_P = 1e-3
"""The order rule's level: a higher order is called for where it lowers the objective by more than chi-squared's
99.9% point for the parameters it adds (twice the objective's decrease is that statistic for a likelihood)."""
TAPER_SPAN = 0.1
"""How far from the last order's taper (dish radii) each order's taper is refitted (refit_taper)."""


def objective_at(observation: Observation, x, order: int, npix: int) -> float:
    """The objective (torch, float64) of the observation's maps at x, fitted at this order with every per-map term."""
    setup = setup_for(torch_impl, observation, order, npix)
    data = observation.prepared(torch_impl, setup)
    return float(torch_impl.negative_log_likelihood(x, setup, data, observation.gamma, observation.objective))


def identified(observation: Observation, order: int, npix: int) -> bool:
    """Whether the maps identify every parameter of this order on this grid (make_setup refuses it otherwise)."""
    try:
        setup_for(torch_impl, observation, order, npix)
    except NotIdentifiable:
        return False
    return True


def higher_orders(observation: Observation, x, order: int, npix: int, tol: float = TOL) -> dict | None:
    """higher_orders_and_moves' record alone."""
    return higher_orders_and_moves(observation, x, order, npix, tol)[0]


def higher_orders_and_moves(observation: Observation, x, order: int, npix: int, tol: float = TOL) -> tuple:
    """The source at its last order's optimum x, fitted again at each of the next HIGHER_ORDERS orders (at most
    MAX_NZERN; those the maps identify on this grid), each from the last one's end with the taper refitted
    (refit_taper; the last order's objective too, at its own best taper): {orders, parameters (added beyond
    `order`), lower_by (the objective's decrease from `order`), p_value (chi-squared, of twice that decrease for the
    parameters added), moved_um (the surface's rms difference from x's, micrometres), tapers (each order's, dish
    radii; `order`'s first), chosen (order_rule), significant_p}, or None where no higher order can be fitted; and
    {order: the surface's move to it on the dish pixels, micrometres} beside it (not recorded: the closure compares
    it pixel by pixel)."""
    highest = min(order + HIGHER_ORDERS, MAX_NZERN)
    orders = [n for n in range(order + 1, highest + 1) if identified(observation, n, npix)]
    if not orders:
        return None, {}
    base = np.asarray(x, dtype=np.float64)
    staged, _, base_value = refit_taper(observation, base, order, npix, tol)
    base_count = setup_for(torch_impl, observation, order, npix).nparams
    parameters, lower_bys, p_values, moved_um, tapers = [], [], [], [], [staged.sigma]
    previous, moves = base, {order: None}
    for higher in orders:
        staged, previous, value = refit_taper(staged, previous, higher, npix, tol)
        lower_by = base_value - value
        added = setup_for(torch_impl, observation, higher, npix).nparams - base_count
        numpy_setup = setup_for(of(series.NUMPY), observation, higher, npix)
        moved = surface_error(previous - next_start(base, numpy_setup, observation.map_terms), numpy_setup,
                              observation.source.wavelength)
        parameters.append(added)
        lower_bys.append(lower_by)
        p_values.append(float(scipy.stats.chi2.sf(2 * max(lower_by, 0.0), added)))
        moved_um.append(rms(moved))
        tapers.append(staged.sigma)
        moves[higher] = moved
    return {"orders": orders, "parameters": parameters, "lower_by": lower_bys, "p_value": p_values,
            "moved_um": moved_um, "tapers": tapers, "chosen": order_rule(order, orders, lower_bys, parameters),
            "significant_p": SIGNIFICANT_P}, moves


def refit_taper(observation: Observation, previous, order: int, npix: int, tol: float = TOL) -> tuple:
    """The fit at this order (torch, exact adjoint, untimed) from `previous` (a fit of the same or the last order),
    its taper refitted within TAPER_SPAN of the observation's by bounded Brent to TAPER_TOL, each width's fit from
    the same start (a profile likelihood, as choose_taper's): (the observation at the best taper, its parameters,
    its objective). A taper chosen at a lower order is biased by the power that order leaves out, and a higher order
    then lowers the objective by making up for the taper as well as by fitting that power."""
    impl, fits = of(series.TORCH_ADJOINT), {}

    def final(sigma):
        sigma = float(sigma)
        if sigma not in fits:
            staged = observation.with_taper(sigma)
            setup = setup_for(impl, staged, order, npix)
            start = next_start(previous, setup, observation.map_terms)
            result = impl.package.fit(setup, staged.prepared(impl.package, setup), start, tol=tol,
                                      gamma=staged.gamma, objective=staged.objective, gradient=impl.gradient_name,
                                      **impl.fit_options)
            found = np.asarray(result.x, dtype=np.float64)
            value = objective_at(staged, found, order, npix)
            fits[sigma] = (value if np.isfinite(value) else np.inf, found)
        return fits[sigma][0]

    final(observation.sigma)
    low, high = max(observation.sigma - TAPER_SPAN, TAPERS[0]), min(observation.sigma + TAPER_SPAN, TAPERS[-1])
    scipy.optimize.minimize_scalar(final, bounds=(low, high), method="bounded", options={"xatol": TAPER_TOL})
    best = min(fits, key=lambda sigma: fits[sigma][0])
    return observation.with_taper(best), fits[best][1], fits[best][0]


def order_rule(order: int, higher: list[int], lower_by: list[float], parameters: list[int]) -> int:
    """The lowest order, from `order` up, beyond which no higher order fitted (higher, each lowering the objective by
    lower_by with parameters more) lowers the objective significantly (SIGNIFICANT_P, for the parameters it adds
    beyond that order); the highest order fitted where even it is called for (then the maps ask for at least that
    order)."""
    orders, lower, counts = [order, *higher], [0.0, *lower_by], [0, *parameters]
    for place, candidate in enumerate(orders):
        beyond = range(place + 1, len(orders))
        if all(scipy.stats.chi2.sf(2 * max(lower[k] - lower[place], 0.0), counts[k] - counts[place]) > SIGNIFICANT_P
               for k in beyond):
            return candidate
    return orders[-1]

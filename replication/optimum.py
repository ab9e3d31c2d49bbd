"""The optimum of a problem, found once and untimed, and how long a timed fit took to get near it.

A fit's time to solution is the time of its first objective evaluation within TARGET standard errors of the
optimum, as a Mahalanobis distance under the optimum's covariance (one yardstick for every implementation,
objective and grid size). A fit that never got there has no time to solution: it is censored at its total time,
which is then a bound.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

TARGET = 0.1
"""Standard errors (Mahalanobis) within which a fit has reached the optimum."""
OPTIMUM_TOL = 1e-10
"""gtol of the fit (torch, exact adjoint, from the truth) that Newton steps then polish into a point's optimum."""
NEWTON_STEPS, NEWTON_DONE = 20, 1e-6
"""Newton steps at most to polish an optimum, and the step (in standard errors) below which it is done."""
SANDWICH_MAX_BYTES = 2**30
"""Largest per-pixel score array (P x 3 npix^2 float64) the sandwich covariance may take; above it the inverse
Hessian's covariance (the likelihood's own) stands in."""


@dataclasses.dataclass(frozen=True)
class Optimum:
    """A local minimum polished by exact Newton steps (untimed): x, fun, the covariance that judges distances to it
    (sandwich H^-1 J H^-1 where affordable, else the inverse Hessian scaled as a likelihood's; parameters' units
    squared), its standard errors, the Newton steps taken and the last one's size (standard errors), whether the
    covariance is the sandwich; polished False where the Hessian was not positive definite."""

    x: np.ndarray
    fun: float
    covariance: np.ndarray
    stderr: np.ndarray
    steps: int
    last_step: float
    polished: bool
    sandwich: bool = True

    def distances(self, params: np.ndarray) -> np.ndarray:
        """Mahalanobis distances (standard errors) of parameter vectors (n, P) from this optimum."""
        offsets = np.atleast_2d(params) - self.x
        return np.sqrt(np.einsum("ij,ij->i", offsets, np.linalg.solve(self.covariance, offsets.T).T))

    def record(self) -> dict:
        """The optimum as a JSON-ready record (the covariance as a list of rows)."""
        return {"x": [float(v) for v in self.x], "fun": finite_or_none(self.fun),
                "stderr": [finite_or_none(v) for v in self.stderr], "newton_steps": self.steps,
                "last_step": finite_or_none(self.last_step), "polished": self.polished, "sandwich": self.sandwich,
                "covariance": [[finite_or_none(v) for v in row] for row in self.covariance]}

    @classmethod
    def of(cls, record: dict) -> Optimum:
        """The optimum a record holds."""
        covariance = np.array(record["covariance"], dtype=float)
        return cls(x=np.array(record["x"], dtype=float), fun=record["fun"], covariance=covariance,
                   stderr=np.array(record["stderr"], dtype=float), steps=record["newton_steps"],
                   last_step=record["last_step"], polished=record["polished"], sandwich=record["sandwich"])


def mahalanobis(x, y, covariance) -> float:
    """sqrt(d' C^-1 d) for d = x - y: the distance in standard errors under covariance C."""
    offset = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    return float(np.sqrt(offset @ np.linalg.solve(np.asarray(covariance, dtype=float), offset)))


def finite_or_none(value):
    return float(value) if value is not None and math.isfinite(value) else None


def covariance_at(package, x, setup, data, gamma, objective, scale):
    """(Hessian, covariance) at x with the package's exact Hessian: the sandwich where the per-pixel scores fit in
    SANDWICH_MAX_BYTES, else scale times the inverse Hessian; (Hessian, None) where the Hessian is not positive
    definite."""
    hessian = package.hessian(x, setup, data, gamma, objective)
    try:
        np.linalg.cholesky(hessian)
    except np.linalg.LinAlgError:
        return hessian, None
    inverse = np.linalg.inv(hessian)
    if len(x) * 3 * setup.npix**2 * 8 > SANDWICH_MAX_BYTES:
        return hessian, scale * inverse
    return hessian, inverse @ package.score_covariance(x, setup, data, gamma, objective) @ inverse


def polish(package, x, setup, data, gamma, objective="cauchy", scale=1.0) -> Optimum:
    """The local minimum near x by exact Newton steps of the package (its value_and_grad with the adjoint, its
    Hessian): stops once a step is below NEWTON_DONE standard errors. scale: the inverse Hessian's factor where it
    stands in for the sandwich (1 for a likelihood)."""
    x = np.asarray(x, dtype=np.float64)
    size, steps = math.inf, 0
    while steps < NEWTON_STEPS:
        _, grad = package.value_and_grad(x, setup, data, gamma, objective, gradient="adjoint")
        hessian, covariance = covariance_at(package, x, setup, data, gamma, objective, scale)
        if covariance is None:
            break
        step = np.linalg.solve(hessian, grad)
        size = float(np.max(np.abs(step) / np.sqrt(np.diag(covariance))))
        if size < NEWTON_DONE:
            break
        x, steps = x - step, steps + 1
    fun = package.negative_log_likelihood(x, setup, data, gamma, objective)
    _, covariance = covariance_at(package, x, setup, data, gamma, objective, scale)
    sandwich = len(x) * 3 * setup.npix**2 * 8 <= SANDWICH_MAX_BYTES
    if covariance is None:
        nan = np.full((x.size, x.size), np.nan)
        return Optimum(x=x, fun=fun, covariance=nan, stderr=np.full(x.size, np.nan), steps=steps, last_step=size,
                       polished=False, sandwich=sandwich)
    return Optimum(x=x, fun=fun, covariance=covariance, stderr=np.sqrt(np.diag(covariance)), steps=steps,
                   last_step=size, polished=True, sandwich=sandwich)


def time_to_target(prep_s: float, trajectory: dict, optimum: Optimum):
    """Seconds from the start (preparation prep_s included) to the first evaluation within TARGET standard errors
    of the optimum, or None where none came that close (the fit is then censored at its total time)."""
    if not optimum.polished or not len(trajectory["seconds"]):
        return None
    near = np.flatnonzero(optimum.distances(trajectory["params"]) <= TARGET)
    return prep_s + float(trajectory["seconds"][near[0]]) if near.size else None

"""The optimum of a problem, found once and untimed, and how long a timed fit took to get near it.

A fit's time to solution is the time of its first objective evaluation within TARGET standard errors of the
optimum, as a Mahalanobis distance under the optimum's sandwich covariance (one yardstick for every implementation,
objective and grid size: older optima above npix 512 used the inverse Hessian, and the rules
judge no time on them). A fit that never got there has no time to solution: it is censored at its total time,
which is then a bound.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from replication.core.fit_records import Account, HeldOptimum
from replication.core.simulation import SCORES_MAX_BYTES

TARGET = 0.1
"""Standard errors (Mahalanobis) within which a fit has reached the optimum."""
OPTIMUM_TOL = 1e-10
"""gtol of the fit (torch, exact adjoint, from the truth) that Newton steps then polish into a point's optimum."""
NEWTON_STEPS, NEWTON_DONE = 20, 1e-6
"""Newton steps at most to polish an optimum, and the step (in standard errors) below which it is done."""


@dataclasses.dataclass(frozen=True)
class Optimum:
    """A local minimum polished by exact Newton steps (untimed): x, fun, the covariance that judges distances to it
    (the sandwich H^-1 J H^-1; parameters' units squared), its standard errors, the Newton steps taken and the last
    one's size (standard errors), whether the covariance is the sandwich (False only in optima recorded by
    older code, above npix 512: the inverse Hessian); polished False where the Hessian was not positive definite."""

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

    def within_target(self, params: np.ndarray) -> bool:
        """Whether one parameter vector lies within TARGET standard errors of this optimum (the test that times to
        target are read with: a timed fit's watch calls it at each evaluation)."""
        return bool(self.distances(params)[0] <= TARGET)

    def record(self) -> dict:
        """The optimum as a JSON-ready record (the covariance as a list of rows)."""
        return {"x": [float(v) for v in self.x], "fun": finite_or_none(self.fun),
                "stderr": [finite_or_none(v) for v in self.stderr], "newton_steps": self.steps,
                "last_step": finite_or_none(self.last_step), "polished": self.polished, "sandwich": self.sandwich,
                "covariance": [[finite_or_none(v) for v in row] for row in self.covariance]}

    @classmethod
    def of(cls, record: HeldOptimum) -> Optimum:
        """The optimum a record holds."""
        return cls(x=np.array(record.x, dtype=float), fun=record.fun, covariance=np.array(record.covariance,
                                                                                            dtype=float),
                   stderr=np.array(record.stderr, dtype=float), steps=record.newton_steps, last_step=record.last_step,
                   polished=record.polished, sandwich=record.sandwich)


def mahalanobis(x, y, covariance) -> float:
    """sqrt(d' C^-1 d) for d = x - y: the distance in standard errors under covariance C."""
    offset = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    return float(np.sqrt(offset @ np.linalg.solve(np.asarray(covariance, dtype=float), offset)))


def finite_or_none(value):
    return float(value) if value is not None and math.isfinite(value) else None


def covariance_at(package, x, setup, data, gamma, objective):
    """(Hessian, sandwich covariance H^-1 J H^-1) at x with the package's exact Hessian and per-pixel scores (summed
    by blocks where they exceed SCORES_MAX_BYTES); (Hessian, None) where the Hessian is not positive definite."""
    hessian = package.hessian(x, setup, data, gamma, objective)
    try:
        np.linalg.cholesky(hessian)
    except np.linalg.LinAlgError:
        return hessian, None
    inverse = np.linalg.inv(hessian)
    scores = package.score_covariance(x, setup, data, gamma, objective, max_bytes=SCORES_MAX_BYTES)
    return hessian, inverse @ scores @ inverse


def polish(package, x, setup, data, gamma, objective) -> Optimum:
    """The local minimum near x by exact Newton steps of the package (its value_and_grad with the adjoint, its
    Hessian): stops once a step is below NEWTON_DONE standard errors (sandwich), the covariance then the one just
    made at x (the costly part: the Hessian and the per-pixel scores), never made twice at one point."""
    x = np.asarray(x, dtype=np.float64)
    size, steps = math.inf, 0
    while True:
        _, grad = package.value_and_grad(x, setup, data, gamma, objective, gradient="adjoint")
        hessian, covariance = covariance_at(package, x, setup, data, gamma, objective)
        if covariance is None or steps == NEWTON_STEPS:
            break
        step = np.linalg.solve(hessian, grad)
        size = float(np.max(np.abs(step) / np.sqrt(np.diag(covariance))))
        if size < NEWTON_DONE:
            break
        x, steps = x - step, steps + 1
    fun = package.negative_log_likelihood(x, setup, data, gamma, objective)
    if covariance is None:
        nan = np.full((x.size, x.size), np.nan)
        return Optimum(x=x, fun=fun, covariance=nan, stderr=np.full(x.size, np.nan), steps=steps, last_step=size,
                       polished=False)
    return Optimum(x=x, fun=fun, covariance=covariance, stderr=np.sqrt(np.diag(covariance)), steps=steps,
                   last_step=size, polished=True)


def end_distance(best: Optimum, x) -> float | None:
    """Standard errors (Mahalanobis) of a fit's end point x from the optimum; None where the optimum is not polished
    or the distance is not finite."""
    return finite_or_none(best.distances(np.asarray(x, dtype=float))[0]) if best.polished else None


def first_within_target(trajectory: dict, optimum: Optimum) -> int | None:
    """The index of a fit's first evaluation within TARGET standard errors of the optimum, or None where none came
    that close (or the optimum is not polished)."""
    if not optimum.polished or not len(trajectory["seconds"]):
        return None
    near = np.flatnonzero(optimum.distances(trajectory["params"]) <= TARGET)
    return int(near[0]) if near.size else None


def time_to_target(prep_s: float, trajectory: dict, optimum: Optimum):
    """Seconds from the start (preparation prep_s included) to the first evaluation within TARGET standard errors
    of the optimum, or None where none came that close (the fit is then censored at its total time)."""
    first = first_within_target(trajectory, optimum)
    return None if first is None else prep_s + float(trajectory["seconds"][first])


def evaluations_to_target(trajectory: dict, optimum: Optimum) -> int | None:
    """How many evaluations a fit made up to and including its first within TARGET standard errors of the optimum
    (the count time_to_target's evaluation carries), or None where none came that close."""
    first = first_within_target(trajectory, optimum)
    return None if first is None else int(trajectory["evaluations"][first])


def ended_at_target(distance: float | None, account: Account | None) -> bool | None:
    """Whether a fit ended at its point's optimum on the time to target's own yardstick: its end within TARGET
    standard errors of the optimum (distance: Mahalanobis under the optimum's sandwich covariance, as its record
    holds it); where no distance was recorded (runs before times to target), by the Newton step left in its exact
    account (None without one). A fit counted here at the optimum is one whose time to the target is a value."""
    if distance is not None:
        return bool(distance <= TARGET)
    return account.at_optimum if account else None

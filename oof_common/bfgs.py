"""The glue around scipy's BFGS that both trees' fits share: the statuses a fit ends with, its count of evaluations
and iterations, the stop at a non-finite objective or at the callback's request, and BFGS's first curvature
estimate from a matrix."""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.optimize


class FitStatus(enum.IntEnum):
    """The statuses a fit's result may carry (result.status compares equal to these integers): scipy's BFGS's own
    (0-3), the stop its callback asked for (STOPPED, pytorch-minimize's number for it) and scipy's number for a
    StopIteration raised in its callback, which a fit turns into STOPPED."""

    SUCCESS = 0
    MAX_ITERATIONS = 1
    PRECISION_LOSS = 2
    NOT_FINITE = 3
    STOPPED = 5
    SCIPY_STOPPED = 99


class NonFiniteObjective(ArithmeticError):
    """Raised inside a fit at the first evaluation whose objective or gradient is not finite."""

    def __init__(self, params, value):
        super().__init__(f"objective not finite ({value}) at params {params}")
        self.params, self.value = params, value


@dataclasses.dataclass
class FitProgress:
    """Evaluations and iterations the minimizer has made so far (what a fit stopped early reports); shift: the
    objective's constant (the loss's constant), which the minimizer does not see; callback: fit's, called with each
    evaluated point, a true return asking the fit to stop at the end of that iteration (stop_asked);
    start_hessian_s: seconds spent building BFGS's first curvature estimate (fit's start_hessian)."""

    nfev: int = 0
    nit: int = 0
    shift: float = 0.0
    callback: Callable[[Any], Any] | None = None
    stop_asked: bool = False
    start_hessian_s: float = 0.0

    def iteration(self, intermediate_result):
        """Count one iteration of scipy's; where the callback asked, stop it there (scipy's way: StopIteration)."""
        self.nit += 1
        if self.stop_asked:
            raise StopIteration

    def evaluated(self, params):
        """Count one evaluation at params (as the minimizer holds them) and hand them to the callback."""
        self.nfev += 1
        if self.callback is not None and self.callback(params):
            self.stop_asked = True


def unshifted(value: float, grad, params: np.ndarray, progress: FitProgress | None):
    """What scipy is handed for an evaluation at params (scipy's float64 array): the value without the loss's
    constant, and the gradient where one was computed (grad a float64 NumPy array, else None: value alone). Stops
    the fit at a non-finite objective or gradient (scipy would go on with it)."""
    if progress is not None:
        if not (math.isfinite(value) and (grad is None or np.all(np.isfinite(grad)))):
            raise NonFiniteObjective(np.array(params, dtype=np.float64), value)
        value -= progress.shift
    return value if grad is None else (value, grad)


def stopped_fit(stop: NonFiniteObjective, progress: FitProgress) -> scipy.optimize.OptimizeResult:
    """The result of a fit stopped at a non-finite objective: success False, saying why."""
    nan = np.full((stop.params.size, stop.params.size), np.nan)
    return scipy.optimize.OptimizeResult(
        x=stop.params, fun=stop.value, jac=np.full(stop.params.size, np.nan), hess_inv=nan, nit=progress.nit,
        nfev=progress.nfev, njev=0, status=FitStatus.NOT_FINITE, success=False,
        message=f"Stopped: the objective was not finite ({stop.value}) at an evaluated point; check the data and "
                "the start for values far out of range")


def stopped_by_callback(result: scipy.optimize.OptimizeResult) -> scipy.optimize.OptimizeResult:
    """A result its callback stopped says so: success False, status STOPPED, x and fun its last iterate's."""
    result.success, result.status = False, FitStatus.STOPPED
    result.message = ("Stopped: the callback asked to stop before the minimizer's stopping rule was met; x is the last "
                      "iterate")
    return result


def scipy_bfgs(function, p0: np.ndarray, args: tuple, jac: bool, tol: float, options: dict,
               progress: FitProgress) -> scipy.optimize.OptimizeResult:
    """scipy's BFGS of function(params, *args) from p0 (jac: function returns the gradient too), counted and
    stopped through progress; result.fun keeps the constant the minimizer did not see."""
    try:
        result = scipy.optimize.minimize(function, p0, args=args, method="BFGS", jac=jac, tol=tol,
                                         callback=progress.iteration, options=options)
        result.fun = float(result.fun) + progress.shift
        if result.status == FitStatus.SCIPY_STOPPED:
            result = stopped_by_callback(result)
    except NonFiniteObjective as stop:
        result = stopped_fit(stop, progress)
    result.start_hessian_s = progress.start_hessian_s
    return result


START_HESSIANS = ("identity", "gauss-newton")
"""What BFGS's first curvature estimate may be: scipy's identity, or the Gauss-Newton matrix at the start
(gauss_newton.gauss_newton_matrix, computed inside the fit and timed with it); fit also takes a (P, P) matrix."""
CONDITION_LIMIT = 1e10
"""Largest ratio of a start matrix's eigenvalues that start_inverse_hessian keeps (smaller ones are raised)."""


def start_inverse_hessian(matrix: np.ndarray) -> np.ndarray:
    """BFGS's first inverse-Hessian estimate from a curvature matrix: its inverse, with eigenvalues below
    1 / CONDITION_LIMIT of the largest raised to that (a matrix only semi-definite, as a Gauss-Newton one may be,
    still gives a positive definite start), made exactly symmetric, as scipy asks."""
    eigenvalues, vectors = np.linalg.eigh(matrix)
    if not eigenvalues[-1] > 0:
        raise ValueError("start_hessian must have a positive eigenvalue (its largest is "
                         f"{eigenvalues[-1]:.3g}): a curvature matrix is positive semi-definite")
    inverse = (vectors / np.maximum(eigenvalues, eigenvalues[-1] / CONDITION_LIMIT)) @ vectors.T
    return (inverse + inverse.T) / 2

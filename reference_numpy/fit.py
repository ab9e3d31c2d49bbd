"""Maximum-likelihood fit with scipy's BFGS; the gradient by finite differences (the paper's NumPy) or the
hand-written adjoint."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.optimize

from .backend import as_model_array, difference_step, to_numpy
from .constants import GAMMA, OBJECTIVES
from .gauss_newton import gauss_newton_matrix
from .gradient import value_and_gradient
from .likelihood import ObservedMaps, objective_constant, observed_maps, prepared_nll
from .limits import TOL
from .setup import Setup, check_setup
from .validation import (
    ArrayLike,
    check_choice,
    check_gradient,
    check_matrix,
    check_params,
    check_positive,
    check_start,
    real_array,
)


class NonFiniteObjective(ArithmeticError):
    """Raised inside a fit at the first evaluation whose objective or gradient is not finite."""

    def __init__(self, params, value):
        super().__init__(f"objective not finite ({value}) at params {params}")
        self.params, self.value = params, value


STOPPED = 5
"""The status of a fit its callback stopped (torchmin's own for a stop its callback asks)."""
SCIPY_STOPPED = 99
"""scipy's status for a minimisation its callback stopped (StopIteration)."""


@dataclasses.dataclass
class FitProgress:
    """Evaluations and iterations the minimizer has made so far (what a fit stopped early reports); shift: the
    objective's constant (likelihood.objective_constant), which the minimizer does not see; callback: fit's, called
    with each evaluated point, a true return asking the fit to stop at the end of that iteration (stop_asked);
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


def finite_or_stop(value, grad, params, progress):
    """Stop the fit at a non-finite objective or gradient (scipy would go on with it)."""
    if not (math.isfinite(value) and np.all(np.isfinite(grad))):
        raise NonFiniteObjective(to_numpy(params), value)


def stopped_fit(stop, progress):
    """The result of a fit stopped at a non-finite objective: success False, saying why."""
    nan = np.full((stop.params.size, stop.params.size), np.nan)
    return scipy.optimize.OptimizeResult(
        x=stop.params, fun=stop.value, jac=np.full(stop.params.size, np.nan), hess_inv=nan, nit=progress.nit,
        nfev=progress.nfev, njev=0, status=3, success=False,
        message=f"Stopped: the objective was not finite ({stop.value}) at an evaluated point; check the data and "
                "the start for values far out of range")


def stopped_by_callback(result):
    """A result its callback stopped says so: success False, status STOPPED, x and fun its last iterate's."""
    result.success, result.status = False, STOPPED
    result.message = ("Stopped: the callback asked to stop before the minimizer's stopping rule was met; x is the last "
                      "iterate")
    return result


def value_objective(params, setup, data, gamma, objective="cauchy", progress=None):
    """The objective alone, for scipy to difference (P + 1 evaluations per gradient), data prepared (ObservedMaps)."""
    if progress is not None:
        progress.evaluated(params)
    params = as_model_array(params, setup)
    value = float(prepared_nll(params, setup, data, gamma, objective))
    if progress is not None:
        finite_or_stop(value, 0.0, params, progress)
        value -= progress.shift
    return value


def adjoint_objective(params, setup, data, gamma, objective="cauchy", progress=None):
    """The objective and its exact gradient by the hand-written adjoint, for scipy (jac=True)."""
    if progress is not None:
        progress.evaluated(params)
    params = as_model_array(params, setup)
    value, grad = value_and_gradient(params, setup, data, gamma, objective)
    value, grad = float(value), to_numpy(grad)
    if progress is not None:
        finite_or_stop(value, grad, params, progress)
        value -= progress.shift
    return value, grad


GRADIENTS = {"finite-differences": (value_objective, False), "adjoint": (adjoint_objective, True)}
"""The gradients a fit can use: {name: (the function scipy calls, whether it returns the gradient too)}."""
DEFAULT_GRADIENT = "finite-differences"
"""The paper's NumPy gradient: scipy's two-point differences of the objective."""


def value_and_grad(params: ArrayLike, setup: Setup, data: ArrayLike | ObservedMaps, gamma: float = GAMMA,
                   objective: str = "cauchy", gradient: str = DEFAULT_GRADIENT) -> tuple[float, np.ndarray]:
    """The objective (a float) and its gradient (a float64 NumPy array), the gradient computed as asked."""
    setup = check_setup(setup)
    params = check_params(params, setup.nparams)
    data = observed_maps(data, setup)
    gamma, objective = check_positive("gamma", gamma), check_choice("objective", objective, OBJECTIVES)
    gradient = check_gradient(gradient, tuple(GRADIENTS))
    function, with_gradient = GRADIENTS[gradient]
    if with_gradient:
        return function(params, setup, data, gamma, objective)
    value = function(params, setup, data, gamma, objective)
    return value, scipy.optimize.approx_fprime(params, function, difference_step(setup), setup, data, gamma, objective)


START_HESSIANS = ("identity", "gauss-newton")
"""What BFGS's first curvature estimate may be: scipy's identity, or the Gauss-Newton matrix at the start
(gauss_newton.gauss_newton_matrix, computed inside the fit and timed with it); fit also takes a (P, P) matrix."""
CONDITION_LIMIT = 1e10
"""Largest ratio of a start matrix's eigenvalues that start_inverse_hessian keeps (smaller ones are raised)."""


def start_inverse_hessian(matrix):
    """BFGS's first inverse-Hessian estimate from a curvature matrix: its inverse, with eigenvalues below
    1 / CONDITION_LIMIT of the largest raised to that (a matrix only semi-definite, as a Gauss-Newton one may be,
    still gives a positive definite start), made exactly symmetric, as scipy asks."""
    eigenvalues, vectors = np.linalg.eigh(matrix)
    if not eigenvalues[-1] > 0:
        raise ValueError("start_hessian must have a positive eigenvalue (its largest is "
                         f"{eigenvalues[-1]:.3g}): a curvature matrix is positive semi-definite")
    inverse = (vectors / np.maximum(eigenvalues, eigenvalues[-1] / CONDITION_LIMIT)) @ vectors.T
    return (inverse + inverse.T) / 2


def start_matrix(start_hessian, setup, data, p0, gamma, objective):
    """The curvature matrix fit's start_hessian names (None for scipy's identity)."""
    if start_hessian is None or isinstance(start_hessian, str):
        choice = check_choice("start_hessian", "identity" if start_hessian is None else start_hessian,
                              START_HESSIANS)
        return None if choice == "identity" else gauss_newton_matrix(p0, setup, data, gamma, objective)
    return check_matrix("start_hessian", start_hessian, setup.nparams)



def bfgs_options(start_hessian, with_gradient, setup, data, p0, gamma, objective, progress):
    """scipy's BFGS options: hess_inv0 where start_hessian names another start than the identity (the time taken
    to build it kept in progress), and the difference step where the gradient is differenced."""
    built = time.perf_counter()
    matrix = start_matrix(start_hessian, setup, data, p0, gamma, objective)
    options = {} if matrix is None else {"hess_inv0": start_inverse_hessian(matrix)}
    progress.start_hessian_s = 0.0 if matrix is None else time.perf_counter() - built
    return options if with_gradient else options | {"eps": difference_step(setup)}

MINIMIZERS = ("scipy",)
"""Whose BFGS runs the fit: scipy's, on the host (the only one for NumPy arrays)."""


def fit(setup: Setup, data: ArrayLike | ObservedMaps, p0: ArrayLike, *, tol: float = TOL, gamma: float = GAMMA,
        objective: str = "cauchy", gradient: str = DEFAULT_GRADIENT,
        minimizer: str = "scipy", callback: Callable[[Any], Any] | None = None,
        start_hessian: str | ArrayLike | None = None) -> scipy.optimize.OptimizeResult:
    """BFGS fit of params to the observed maps from p0, the gradient computed as asked; scipy's OptimizeResult. The
    minimizer sees the objective without its constant (likelihood.objective_constant); result.fun keeps it.
    callback(params), where given, is called as the minimizer asks for each objective evaluation, with the point to
    evaluate as the minimizer holds it (copy it to keep it); a true return stops the fit at the end of that
    iteration, success False (status STOPPED), x its last iterate: a trajectory recorder or a time limit is such a
    callback. start_hessian: BFGS's first curvature estimate, "identity" (None, scipy's), "gauss-newton" (the
    Gauss-Newton matrix at p0, built inside the fit and its clock; result.start_hessian_s says how long it took) or
    a (P, P) matrix (one computed once for many fits: gauss_newton.gauss_newton_matrix)."""
    setup = check_setup(setup)
    p0 = check_start(check_params(p0, setup.nparams, "p0"), setup.amp_index)
    data = observed_maps(data, setup)
    tol, gamma = check_positive("tol", tol), check_positive("gamma", gamma)
    objective = check_choice("objective", objective, OBJECTIVES)
    gradient = check_gradient(gradient, tuple(GRADIENTS))
    function, with_gradient = GRADIENTS[gradient]
    check_choice("minimizer", minimizer, MINIMIZERS)
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable or None, got {type(callback).__name__}")
    progress = FitProgress(shift=objective_constant(data, gamma, objective), callback=callback)
    options = bfgs_options(start_hessian, with_gradient, setup, data, p0, gamma, objective, progress)
    try:
        result = scipy.optimize.minimize(function, p0, args=(setup, data, gamma, objective, progress),
                                         method="BFGS", jac=with_gradient, tol=tol, callback=progress.iteration,
                                         options=options)
        result.fun = float(result.fun) + progress.shift  # the value reported keeps the constant
        if result.status == SCIPY_STOPPED:
            result = stopped_by_callback(result)
    except NonFiniteObjective as stop:
        result = stopped_fit(stop, progress)
    result.start_hessian_s = progress.start_hessian_s
    return result


def batched_value_and_grad(params: ArrayLike, setup: Setup, data: ArrayLike | ObservedMaps, gamma: float = GAMMA,
                           objective: str = "cauchy") -> tuple[np.ndarray, np.ndarray]:
    """The objective and its exact (adjoint) gradient at each of K parameter vectors (K, P) (K starts of a
    multi-start, say): (values (K,), gradients (K, P)), one vector after another, as a NumPy user loops."""
    setup = check_setup(setup)
    batch = real_array(params, "params", "a (K, P) array of parameter vectors")
    if batch.ndim != 2 or batch.shape[1] != setup.nparams or not len(batch):
        raise ValueError(f"params must have shape (K, {setup.nparams}) with K >= 1, got {batch.shape}")
    data = observed_maps(data, setup)
    pairs = [value_and_grad(row, setup, data, gamma, objective, "adjoint") for row in batch]
    return np.array([value for value, _ in pairs]), np.stack([grad for _, grad in pairs])

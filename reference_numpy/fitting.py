"""Maximum-likelihood fit with scipy's BFGS; the gradient by finite differences (the paper's NumPy) or the
hand-written adjoint. The glue around scipy (statuses, counting, stops) is oof_common.bfgs'."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.optimize

from oof_common.bfgs import (
    START_HESSIANS,
    FitProgress,
    scipy_bfgs,
    start_inverse_hessian,
    unshifted,
)
from oof_common.constants import GAMMA
from oof_common.limits import TOL
from oof_common.validation import (
    ArrayLike,
    check_choice,
    check_gradient,
    check_matrix,
    check_params,
    check_positive,
    check_start,
    real_array,
)

from .backend import as_model_array, difference_step, to_numpy
from .gauss_newton import gauss_newton_matrix
from .gradient import value_and_gradient
from .likelihood import ObservedMaps, objective_constant, observed_maps, prepared_nll
from .losses import Loss, loss_of
from .setup import Setup, check_setup


def value_objective(params, setup, data, gamma, loss, progress=None):
    """The objective alone, for scipy to difference (P + 1 evaluations per gradient), data prepared (ObservedMaps)."""
    if progress is not None:
        progress.evaluated(params)
    value = float(prepared_nll(as_model_array(params, setup), setup, data, gamma, loss))
    return unshifted(value, None, params, progress)


def adjoint_objective(params, setup, data, gamma, loss, progress=None):
    """The objective and its exact gradient by the hand-written adjoint, for scipy (jac=True)."""
    if progress is not None:
        progress.evaluated(params)
    value, grad = value_and_gradient(as_model_array(params, setup), setup, data, gamma, loss)
    return unshifted(float(value), to_numpy(grad), params, progress)


GRADIENTS = {"finite-differences": (value_objective, False), "adjoint": (adjoint_objective, True)}
"""The gradients a fit can use: {name: (the function scipy calls, whether it returns the gradient too)}."""
DEFAULT_GRADIENT = "finite-differences"
"""The paper's NumPy gradient: scipy's two-point differences of the objective."""


def value_and_grad(params: ArrayLike, setup: Setup, data: ArrayLike | ObservedMaps, gamma: float = GAMMA,
                   objective: str | Loss = "cauchy", gradient: str = DEFAULT_GRADIENT) -> tuple[float, np.ndarray]:
    """The objective (a float) and its gradient (a float64 NumPy array), the gradient computed as asked."""
    setup = check_setup(setup)
    params = check_params(params, setup.nparams)
    data = observed_maps(data, setup)
    gamma, loss = check_positive("gamma", gamma), loss_of(objective)
    gradient = check_gradient(gradient, tuple(GRADIENTS))
    function, with_gradient = GRADIENTS[gradient]
    if with_gradient:
        return function(params, setup, data, gamma, loss)
    value = function(params, setup, data, gamma, loss)
    return value, scipy.optimize.approx_fprime(params, function, difference_step(setup), setup, data, gamma, loss)


def start_matrix(start_hessian, setup, data, p0, gamma, loss):
    """The curvature matrix fit's start_hessian names (None for scipy's identity)."""
    if start_hessian is None or isinstance(start_hessian, str):
        choice = check_choice("start_hessian", "identity" if start_hessian is None else start_hessian,
                              START_HESSIANS)
        return None if choice == "identity" else gauss_newton_matrix(p0, setup, data, gamma, loss)
    return check_matrix("start_hessian", start_hessian, setup.nparams)


def bfgs_options(start_hessian, with_gradient, setup, data, p0, gamma, loss, progress):
    """scipy's BFGS options: hess_inv0 where start_hessian names another start than the identity (the time taken
    to build it kept in progress), and the difference step where the gradient is differenced."""
    built = time.perf_counter()
    matrix = start_matrix(start_hessian, setup, data, p0, gamma, loss)
    options = {} if matrix is None else {"hess_inv0": start_inverse_hessian(matrix)}
    progress.start_hessian_s = 0.0 if matrix is None else time.perf_counter() - built
    return options if with_gradient else options | {"eps": difference_step(setup)}


MINIMIZERS = ("scipy",)
"""Whose BFGS runs the fit: scipy's, on the host (the only one for NumPy arrays)."""


def fit(setup: Setup, data: ArrayLike | ObservedMaps, p0: ArrayLike, *, tol: float = TOL, gamma: float = GAMMA,
        objective: str | Loss = "cauchy", gradient: str = DEFAULT_GRADIENT,
        minimizer: str = "scipy", callback: Callable[[Any], Any] | None = None,
        start_hessian: str | ArrayLike | None = None) -> scipy.optimize.OptimizeResult:
    """BFGS fit of params to the observed maps from p0, the gradient computed as asked; scipy's OptimizeResult. The
    minimizer sees the objective without its constant (the loss's constant); result.fun keeps it. objective: a
    loss's name or the loss (losses.py).
    callback(params), where given, is called as the minimizer asks for each objective evaluation, with the point to
    evaluate as the minimizer holds it (copy it to keep it); a true return stops the fit at the end of that
    iteration, success False (status FitStatus.STOPPED), x its last iterate: a trajectory recorder or a time limit
    is such a callback. start_hessian: BFGS's first curvature estimate, "identity" (None, scipy's), "gauss-newton"
    (the Gauss-Newton matrix at p0, built inside the fit and its clock; result.start_hessian_s says how long it took)
    or a (P, P) matrix (one computed once for many fits: gauss_newton.gauss_newton_matrix)."""
    setup = check_setup(setup)
    p0 = check_start(check_params(p0, setup.nparams, "p0"), setup.amp_index)
    data = observed_maps(data, setup)
    tol, gamma = check_positive("tol", tol), check_positive("gamma", gamma)
    loss = loss_of(objective)
    gradient = check_gradient(gradient, tuple(GRADIENTS))
    function, with_gradient = GRADIENTS[gradient]
    check_choice("minimizer", minimizer, MINIMIZERS)
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable or None, got {type(callback).__name__}")
    progress = FitProgress(shift=objective_constant(data, gamma, loss), callback=callback)
    options = bfgs_options(start_hessian, with_gradient, setup, data, p0, gamma, loss, progress)
    return scipy_bfgs(function, p0, (setup, data, gamma, loss, progress), with_gradient, tol, options, progress)


def batched_value_and_grad(params: ArrayLike, setup: Setup, data: ArrayLike | ObservedMaps, gamma: float = GAMMA,
                           objective: str | Loss = "cauchy") -> tuple[np.ndarray, np.ndarray]:
    """The objective and its exact (adjoint) gradient at each of K parameter vectors (K, P) (K starts of a
    multi-start, say): (values (K,), gradients (K, P)), one vector after another, as a NumPy user loops."""
    setup = check_setup(setup)
    batch = real_array(params, "params", "a (K, P) array of parameter vectors")
    if batch.ndim != 2 or batch.shape[1] != setup.nparams or not len(batch):
        raise ValueError(f"params must have shape (K, {setup.nparams}) with K >= 1, got {batch.shape}")
    data = observed_maps(data, setup)
    pairs = [value_and_grad(row, setup, data, gamma, objective, "adjoint") for row in batch]
    return np.array([value for value, _ in pairs]), np.stack([grad for _, grad in pairs])

"""Maximum-likelihood fit with scipy's BFGS, the gradient by autograd (the paper's PyTorch), the hand-written
adjoint, or finite differences; or with pytorch-minimize's BFGS, which keeps the whole minimisation on the device."""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.optimize
import torch

with warnings.catch_warnings():  # pytorch-minimize 0.1.0 decorates a helper with the deprecated torch.jit.script
    warnings.filterwarnings("ignore", message=".*torch.jit.script.* is deprecated", category=DeprecationWarning)
    import torchmin

from .aperture import aperture_field, aperture_phase, illumination, map_screens
from .backend import as_model_array, difference_step, to_numpy
from .beams import far_field_power, place_on_grid, scale_maps
from .constants import GAMMA, N_ILLUMINATION, OBJECTIVES
from .gauss_newton import gauss_newton_matrix
from .gradient import value_and_gradient
from .likelihood import ObservedMaps, objective_constant, observed_maps, pixel_count, prepared_nll
from .limits import TOL
from .setup import Setup, check_setup, map_terms
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
    with torch.no_grad():
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


def _autograd_objective(params, setup, data, gamma, objective="cauchy", progress=None):
    """The objective and its autograd gradient, for scipy (jac=True), data prepared (ObservedMaps) on the device."""
    if progress is not None:
        progress.evaluated(params)
    params = as_model_array(params, setup).requires_grad_()
    nll = prepared_nll(params, setup, data, gamma, objective)
    nll.backward()
    value, grad = float(nll.detach()), to_numpy(params.grad)
    if progress is not None:
        finite_or_stop(value, grad, params, progress)
        value -= progress.shift
    return value, grad


GRADIENTS = {"finite-differences": (value_objective, False), "adjoint": (adjoint_objective, True),
             "autograd": (_autograd_objective, True)}
"""The gradients a fit can use: {name: (the function scipy calls, whether it returns the gradient too)}."""
DEFAULT_GRADIENT = "autograd"
"""The paper's PyTorch gradient: reverse-mode automatic differentiation."""


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

MINIMIZERS = ("scipy", "torchmin")
"""Whose BFGS runs the fit: scipy's, on the host (the paper's), or pytorch-minimize's, on the setup's device."""
ON_DEVICE_OPTIONS = {"xtol": 0.0, "gtd_tol": 0.0}
"""torchmin's BFGS options: no absolute stop on small steps, objective changes or directional derivatives,
whose scale depends on the objective's units (see _on_device_bfgs)."""


def _on_device_bfgs(setup, data, p0, tol, gamma, objective, progress):
    """BFGS of pytorch-minimize (torchmin) with the autograd gradient: iterates, gradient and inverse-Hessian
    estimate stay on the setup's device; returned as scipy's OptimizeResult (NumPy arrays, host floats).

    `tol` is its gtol, as scipy's: the fit stops once the gradient's largest component is <= tol. torchmin's
    absolute tests of progress (xtol = 1e-8 on a step and on the objective's change, 1e-10 on the directional
    derivative) are set to 0 (ON_DEVICE_OPTIONS): at least squares' scale (objective ~1e-6) they stopped every fit
    after its first step. It then also stops, with success, once a step leaves the parameters or the objective
    exactly unchanged (scipy calls that precision loss), and with success False at a non-finite objective.

    Each evaluated point goes to progress's callback as the device array torchmin holds (detached, not copied: a
    recorder copies it on the device, no transfer per evaluation); where the callback asked to stop, torchmin's own
    callback stops it at the end of the iteration, and the fit returns that iteration's point (torchmin itself
    returns the one before it: the start, where the first iteration asks).
    """
    stopped_at = []

    def _stop_when_asked(x):
        if progress.stop_asked:
            stopped_at.append(x.detach().clone())
            return True
        return False

    def _watched_objective(params):
        progress.evaluated(params.detach())
        return prepared_nll(params, setup, data, gamma, objective) - progress.shift

    result = torchmin.minimize(_watched_objective, as_model_array(p0, setup), method="bfgs", tol=tol,
                               options=dict(ON_DEVICE_OPTIONS), callback=_stop_when_asked)
    x, fun = to_numpy(result.x), float(result.fun) + progress.shift
    if stopped_at:  # the iterate the callback stopped at, not the one before it
        last = float(prepared_nll(stopped_at[-1], setup, data, gamma, objective))
        if last <= fun:
            x, fun = to_numpy(stopped_at[-1]), last
    finite = math.isfinite(fun) and bool(np.all(np.isfinite(x)))
    fitted = scipy.optimize.OptimizeResult(
        x=x, fun=fun, jac=to_numpy(result.grad), hess_inv=to_numpy(result.hess_inv), nit=int(result.nit),
        nfev=int(result.nfev), njev=int(result.nfev), status=int(result.status) if finite else 3,
        success=bool(result.success) and finite, message=str(result.message) if finite else
        f"Stopped: the objective ({fun}) or the parameters became non-finite; check the data and the start for "
        "values far out of range")
    return stopped_by_callback(fitted) if finite and fitted.status == STOPPED else fitted


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
    a (P, P) matrix (one computed once for many fits: gauss_newton.gauss_newton_matrix).
    minimizer="torchmin" runs the BFGS on the device (autograd gradient only)."""
    setup = check_setup(setup)
    p0 = check_start(check_params(p0, setup.nparams, "p0"), setup.amp_index)
    data = observed_maps(data, setup)
    tol, gamma = check_positive("tol", tol), check_positive("gamma", gamma)
    objective = check_choice("objective", objective, OBJECTIVES)
    gradient = check_gradient(gradient, tuple(GRADIENTS))
    function, with_gradient = GRADIENTS[gradient]
    if check_choice("minimizer", minimizer, MINIMIZERS) == "torchmin" and gradient != "autograd":
        raise ValueError(f"minimizer='torchmin' differentiates by autograd; gradient={gradient!r} is only "
                         "available with minimizer='scipy'")
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable or None, got {type(callback).__name__}")
    progress = FitProgress(shift=objective_constant(data, gamma, objective), callback=callback)
    if minimizer == "torchmin":
        if start_hessian is not None:
            raise ValueError("minimizer='torchmin' starts from the identity; start_hessian is only available with "
                             "minimizer='scipy'")
        result = _on_device_bfgs(setup, data, p0, tol, gamma, objective, progress)
    else:
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


def _objective_per_vector(power, data, gamma, objective):
    """The objective of each of K model beam sets (K, 3, npix, npix) against the data, as (K,): the sums of
    likelihood.objective_value taken per vector (float64)."""
    excess = power - data.fft_order
    if data.weights is not None:
        excess = excess * data.weights
    pixels = (-3, -2, -1)
    if objective == "cauchy":
        scaled = excess / gamma
        constant = float(pixel_count(data.fft_order, data.weights)) * math.log(math.pi * gamma)
        return torch.log(1 + scaled**2).sum(dim=pixels, dtype=torch.float64) + constant
    squares = (excess * excess).sum(dim=pixels, dtype=torch.float64)
    return squares if objective == "least-squares" else squares / (2 * gamma**2)


def _batched_objective(params, setup, data, gamma, objective):
    """The objective of K parameter vectors (K, P) as (K,): every map of every vector in one batched transform."""
    zernikes = setup.basis.shape[0]
    x0, y0, amp = (params[:, zernikes + k, None] for k in range(N_ILLUMINATION))
    terms, gains = map_terms(params.T, setup)  # (Q, K) and (G, K): the parameter axis first, as map_terms reads it
    amplitude = illumination(setup.x, setup.y, x0, y0, amp, setup.sigma, setup.rho, setup.diff)
    phase = aperture_phase(params[:, :zernikes], setup.basis)
    field = aperture_field(amplitude[:, None, :], phase[:, None, :], map_screens(terms.T, setup.screens,
                                                                                 setup.phase_terms))
    power = far_field_power(place_on_grid(field, setup.index, setup.box), setup.npix)
    if setup.n_gains:
        power = scale_maps(power, torch.cat([torch.ones_like(gains[:1]), 1 + gains]).T)
    if setup.n_offsets:
        power = power + params[:, setup.nparams - setup.n_offsets:, None, None]
    return _objective_per_vector(power, data, gamma, objective)


def batched_value_and_grad(params: ArrayLike, setup: Setup, data: ArrayLike | ObservedMaps, gamma: float = GAMMA,
                           objective: str = "cauchy") -> tuple[np.ndarray, np.ndarray]:
    """The objective and its autograd gradient at each of K parameter vectors (K, P) (K starts of a multi-start,
    say): (values (K,), gradients (K, P)), float64 NumPy arrays, every vector's maps in one batched transform.
    Memory: about 10 complex grids of 3 maps per vector (npix 128: 64 vectors in 0.5 GB)."""
    setup = check_setup(setup)
    batch = real_array(params, "params", "a (K, P) array of parameter vectors")
    if batch.ndim != 2 or batch.shape[1] != setup.nparams or not len(batch):
        raise ValueError(f"params must have shape (K, {setup.nparams}) with K >= 1, got {batch.shape}")
    batch = np.stack([check_params(row, setup.nparams) for row in batch])
    data = observed_maps(data, setup)
    gamma, objective = check_positive("gamma", gamma), check_choice("objective", objective, OBJECTIVES)
    params = as_model_array(batch, setup).requires_grad_()
    values = _batched_objective(params, setup, data, gamma, objective)
    values.sum().backward()
    return to_numpy(values.detach()), to_numpy(params.grad)

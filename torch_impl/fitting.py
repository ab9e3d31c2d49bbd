"""Maximum-likelihood fit with scipy's BFGS, the gradient by autograd (the paper's PyTorch), the hand-written
adjoint, or finite differences; or with pytorch-minimize's BFGS, which keeps the whole minimisation on the device.
The glue around scipy (statuses, counting, stops) is oof_common.bfgs'."""

from __future__ import annotations

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

from oof_common.bfgs import (
    START_HESSIANS,
    FitProgress,
    FitStatus,
    scipy_bfgs,
    start_inverse_hessian,
    stopped_by_callback,
    unshifted,
)
from oof_common.constants import GAMMA, N_ILLUMINATION
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

from .aperture import aperture_field, aperture_phase, illumination, map_screens
from .backend import as_model_array, difference_step, to_numpy
from .beams import far_field_power, place_on_grid, scale_maps
from .gauss_newton import gauss_newton_matrix
from .gradient import value_and_gradient
from .likelihood import ObservedMaps, compared_excess, objective_constant, observed_maps, pixel_count, prepared_nll
from .losses import Loss, loss_of
from .setup import Setup, check_setup, map_terms


def value_objective(params, setup, data, gamma, loss, progress=None):
    """The objective alone, for scipy to difference (P + 1 evaluations per gradient), data prepared (ObservedMaps)."""
    if progress is not None:
        progress.evaluated(params)
    with torch.no_grad():
        value = float(prepared_nll(as_model_array(params, setup), setup, data, gamma, loss))
    return unshifted(value, None, params, progress)


def adjoint_objective(params, setup, data, gamma, loss, progress=None):
    """The objective and its exact gradient by the hand-written adjoint, for scipy (jac=True)."""
    if progress is not None:
        progress.evaluated(params)
    value, grad = value_and_gradient(as_model_array(params, setup), setup, data, gamma, loss)
    return unshifted(float(value), to_numpy(grad), params, progress)


def _autograd_objective(params, setup, data, gamma, loss, progress=None):
    """The objective and its autograd gradient, for scipy (jac=True), data prepared (ObservedMaps) on the device."""
    if progress is not None:
        progress.evaluated(params)
    model_params = as_model_array(params, setup).requires_grad_()
    nll = prepared_nll(model_params, setup, data, gamma, loss)
    nll.backward()
    return unshifted(float(nll.detach()), to_numpy(model_params.grad), params, progress)


GRADIENTS = {"finite-differences": (value_objective, False), "adjoint": (adjoint_objective, True),
             "autograd": (_autograd_objective, True)}
"""The gradients a fit can use: {name: (the function scipy calls, whether it returns the gradient too)}."""
DEFAULT_GRADIENT = "autograd"
"""The paper's PyTorch gradient: reverse-mode automatic differentiation."""


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


MINIMIZERS = ("scipy", "torchmin")
"""Whose BFGS runs the fit: scipy's, on the host (the paper's), or pytorch-minimize's, on the setup's device."""
ON_DEVICE_OPTIONS = {"xtol": 0.0, "gtd_tol": 0.0}
"""torchmin's BFGS options: no absolute stop on small steps, objective changes or directional derivatives,
whose scale depends on the objective's units (see _on_device_bfgs)."""


def _on_device_bfgs(setup, data, p0, tol, gamma, loss, progress):
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
        return prepared_nll(params, setup, data, gamma, loss) - progress.shift

    result = torchmin.minimize(_watched_objective, as_model_array(p0, setup), method="bfgs", tol=tol,
                               options=dict(ON_DEVICE_OPTIONS), callback=_stop_when_asked)
    x, fun = to_numpy(result.x), float(result.fun) + progress.shift
    if stopped_at:  # the iterate the callback stopped at, not the one before it
        last = float(prepared_nll(stopped_at[-1], setup, data, gamma, loss))
        if last <= fun:
            x, fun = to_numpy(stopped_at[-1]), last
    finite = math.isfinite(fun) and bool(np.all(np.isfinite(x)))
    fitted = scipy.optimize.OptimizeResult(
        x=x, fun=fun, jac=to_numpy(result.grad), hess_inv=to_numpy(result.hess_inv), nit=int(result.nit),
        nfev=int(result.nfev), njev=int(result.nfev), status=int(result.status) if finite else FitStatus.NOT_FINITE,
        success=bool(result.success) and finite, message=str(result.message) if finite else
        f"Stopped: the objective ({fun}) or the parameters became non-finite; check the data and the start for "
        "values far out of range")
    return stopped_by_callback(fitted) if finite and fitted.status == FitStatus.STOPPED else fitted


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
    or a (P, P) matrix (one computed once for many fits: gauss_newton.gauss_newton_matrix).
    minimizer="torchmin" runs the BFGS on the device (autograd gradient only)."""
    setup = check_setup(setup)
    p0 = check_start(check_params(p0, setup.nparams, "p0"), setup.amp_index)
    data = observed_maps(data, setup)
    tol, gamma = check_positive("tol", tol), check_positive("gamma", gamma)
    loss = loss_of(objective)
    gradient = check_gradient(gradient, tuple(GRADIENTS))
    function, with_gradient = GRADIENTS[gradient]
    if check_choice("minimizer", minimizer, MINIMIZERS) == "torchmin" and gradient != "autograd":
        raise ValueError(f"minimizer='torchmin' differentiates by autograd; gradient={gradient!r} is only "
                         "available with minimizer='scipy'")
    if callback is not None and not callable(callback):
        raise ValueError(f"callback must be callable or None, got {type(callback).__name__}")
    progress = FitProgress(shift=objective_constant(data, gamma, loss), callback=callback)
    if minimizer == "torchmin":
        if start_hessian is not None:
            raise ValueError("minimizer='torchmin' starts from the identity; start_hessian is only available with "
                             "minimizer='scipy'")
        result = _on_device_bfgs(setup, data, p0, tol, gamma, loss, progress)
        result.start_hessian_s = progress.start_hessian_s
        return result
    options = bfgs_options(start_hessian, with_gradient, setup, data, p0, gamma, loss, progress)
    return scipy_bfgs(function, p0, (setup, data, gamma, loss, progress), with_gradient, tol, options, progress)


def _batched_objective(params, setup, data, gamma, loss):
    """The objective of K parameter vectors (K, P) as (K,): every map of every vector in one batched transform, the
    loss summed per vector (float64)."""
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
    excess = compared_excess(power, data.fft_order, data.factors)
    values = loss.value(excess if data.whitening is None else data.whitening.of(excess), gamma, (-3, -2, -1))
    return values + loss.constant(float(pixel_count(data.fft_order, data.weights)), gamma)


def batched_value_and_grad(params: ArrayLike, setup: Setup, data: ArrayLike | ObservedMaps, gamma: float = GAMMA,
                           objective: str | Loss = "cauchy") -> tuple[np.ndarray, np.ndarray]:
    """The objective and its autograd gradient at each of K parameter vectors (K, P) (K starts of a multi-start,
    say): (values (K,), gradients (K, P)), float64 NumPy arrays, every vector's maps in one batched transform.
    Memory: about 10 complex grids of 3 maps per vector (npix 128: 64 vectors in 0.5 GB)."""
    setup = check_setup(setup)
    batch = real_array(params, "params", "a (K, P) array of parameter vectors")
    if batch.ndim != 2 or batch.shape[1] != setup.nparams or not len(batch):
        raise ValueError(f"params must have shape (K, {setup.nparams}) with K >= 1, got {batch.shape}")
    batch = np.stack([check_params(row, setup.nparams) for row in batch])
    data = observed_maps(data, setup)
    gamma, loss = check_positive("gamma", gamma), loss_of(objective)
    params = as_model_array(batch, setup).requires_grad_()
    values = _batched_objective(params, setup, data, gamma, loss)
    values.sum().backward()
    return to_numpy(values.detach()), to_numpy(params.grad)

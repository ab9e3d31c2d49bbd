"""Maximum-likelihood fit with scipy's BFGS; the gradient by finite differences, as in the paper."""

import dataclasses
import math

import numpy as np
import scipy.optimize

from .backend import as_model_array, to_fft_order, to_numpy
from .constants import GAMMA, OBJECTIVES, TOL
from .gradient import value_and_gradient
from .likelihood import prepared_nll
from .setup import check_setup
from .validation import check_choice, check_data, check_params, check_positive


class NonFiniteObjective(ArithmeticError):
    """Raised inside a fit at the first evaluation whose objective or gradient is not finite."""

    def __init__(self, params, value):
        super().__init__(f"objective not finite ({value}) at params {params}")
        self.params, self.value = params, value


@dataclasses.dataclass
class FitProgress:
    """Evaluations and iterations scipy has made so far: what a fit stopped early reports."""

    nfev: int = 0
    nit: int = 0

    def iteration(self, intermediate_result):
        self.nit += 1


def finite_or_stop(value, grad, params, progress):
    """Count the evaluation; stop the fit at a non-finite objective or gradient (scipy would go on with it)."""
    progress.nfev += 1
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


def fit_objective(params, setup, data, gamma, objective="cauchy", progress=None):
    """Negative log-likelihood for scipy (which differences it for the gradient), data already in FFT order."""
    params = as_model_array(params, setup)
    value = float(prepared_nll(params, setup, data, gamma, objective))
    if progress is not None:
        finite_or_stop(value, 0.0, params, progress)
    return value


def value_and_grad(params, setup, data, gamma=GAMMA, objective="cauchy"):
    """The objective (a float) and its exact gradient by the hand-written adjoint (a float64 NumPy array)."""
    setup = check_setup(setup)
    params = as_model_array(check_params(params, setup.nparams), setup)
    data = to_fft_order(as_model_array(check_data(data, setup.npix), setup))
    gamma, objective = check_positive("gamma", gamma), check_choice("objective", objective, OBJECTIVES)
    value, grad = value_and_gradient(params, setup, data, gamma, objective)
    return float(value), to_numpy(grad)


def fit(setup, data, p0, *, tol=TOL, gamma=GAMMA, objective="cauchy"):
    """BFGS fit of params to the observed maps from p0; returns scipy's OptimizeResult."""
    setup = check_setup(setup)
    p0 = check_params(p0, setup.nparams, "p0")
    data = to_fft_order(as_model_array(check_data(data, setup.npix), setup))
    tol, gamma = check_positive("tol", tol), check_positive("gamma", gamma)
    objective = check_choice("objective", objective, OBJECTIVES)
    progress = FitProgress()
    try:
        return scipy.optimize.minimize(fit_objective, p0, args=(setup, data, gamma, objective, progress),
                                       method="BFGS", tol=tol, callback=progress.iteration)
    except NonFiniteObjective as stop:
        return stopped_fit(stop, progress)

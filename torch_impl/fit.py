"""Maximum-likelihood fit with scipy's BFGS; the gradient by autograd, handed to scipy (jac=True)."""

import scipy.optimize

from .backend import as_model_array, to_fft_order, to_numpy
from .constants import GAMMA, TOL
from .likelihood import prepared_nll
from .validation import check_data, check_params, check_positive


def objective(params, setup, data, gamma):
    """Negative log-likelihood and its autograd gradient for scipy, data already in FFT order on the device."""
    params = as_model_array(params, setup).requires_grad_()
    nll = prepared_nll(params, setup, data, gamma)
    nll.backward()
    return float(nll.detach()), to_numpy(params.grad)


def value_and_grad(params, setup, data, gamma=GAMMA):
    """Negative log-likelihood (a float) and its autograd gradient (a float64 NumPy array)."""
    params = check_params(params, setup.nparams)
    data = to_fft_order(as_model_array(check_data(data, setup.npix), setup))
    gamma = check_positive("gamma", gamma)
    return objective(params, setup, data, gamma)


def fit(setup, data, p0, *, tol=TOL, gamma=GAMMA):
    """BFGS fit of params to the observed maps from p0; returns scipy's OptimizeResult."""
    p0 = check_params(p0, setup.nparams, "p0")
    data = to_fft_order(as_model_array(check_data(data, setup.npix), setup))
    tol, gamma = check_positive("tol", tol), check_positive("gamma", gamma)
    return scipy.optimize.minimize(objective, p0, args=(setup, data, gamma), method="BFGS", jac=True, tol=tol)

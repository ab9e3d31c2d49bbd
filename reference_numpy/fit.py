"""Maximum-likelihood fit with scipy's BFGS; the gradient by finite differences, as in the paper."""

import scipy.optimize

from .backend import as_model_array, to_fft_order
from .constants import GAMMA, TOL
from .likelihood import prepared_nll
from .validation import check_data, check_params, check_positive


def objective(params, setup, data, gamma):
    """Negative log-likelihood for scipy (which differences it for the gradient), data already in FFT order."""
    params = as_model_array(params, setup)
    return float(prepared_nll(params, setup, data, gamma))


def fit(setup, data, p0, *, tol=TOL, gamma=GAMMA):
    """BFGS fit of params to the observed maps from p0; returns scipy's OptimizeResult."""
    p0 = check_params(p0, setup.nparams, "p0")
    data = to_fft_order(as_model_array(check_data(data, setup.npix), setup))
    tol, gamma = check_positive("tol", tol), check_positive("gamma", gamma)
    return scipy.optimize.minimize(objective, p0, args=(setup, data, gamma), method="BFGS", tol=tol)

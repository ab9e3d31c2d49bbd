"""The robust (Cauchy) negative log-likelihood of the beam maps."""

import math

import numpy as np

from .backend import as_model_array, to_fft_order
from .beams import model_power
from .constants import GAMMA
from .setup import check_setup
from .validation import check_data, check_params, check_positive


def cauchy_nll(power, data, gamma):
    """Sum over pixels of -log(gamma / (pi (resid^2 + gamma^2))), resid = data - power.

    Written as npixels * log(pi gamma) + sum log1p((resid / gamma)^2): the large constant is added
    once instead of per pixel, which keeps the objective smooth for BFGS. Summed in float64.
    """
    scaled = (data - power) / gamma
    return np.log1p(scaled**2).sum(dtype=np.float64) + math.prod(data.shape) * math.log(math.pi * gamma)


def prepared_nll(params, setup, data, gamma):
    """Cauchy negative log-likelihood of params (the model's array type) for data already in FFT order."""
    return cauchy_nll(model_power(params, setup), data, gamma)


def negative_log_likelihood(params, setup, data, gamma=GAMMA):
    """Cauchy negative log-likelihood of the observed (3, npix, npix) maps for params, a float."""
    setup = check_setup(setup)
    params = as_model_array(check_params(params, setup.nparams), setup)
    data = to_fft_order(as_model_array(check_data(data, setup.npix), setup))
    gamma = check_positive("gamma", gamma)
    return float(prepared_nll(params, setup, data, gamma))

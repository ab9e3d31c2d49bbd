"""Simulated observations of the paper's scenario, made once with NumPy and fitted by every implementation."""

import numpy as np

import reference_numpy

MULTIPLICATIVE_NOISE = 0.01
"""Standard deviation of the multiplicative noise, a fraction of each pixel's beam power."""
ADDITIVE_NOISE = 0.024
"""Standard deviation of the additive noise, a fraction of the peak beam power."""


def true_params(nparams):
    """The paper's truth: no aberration, centred illumination, amplitude 1."""
    params = np.zeros(nparams)
    params[-1] = 1.0
    return params


def aberrated_params(setup, radians=0.3):
    """A truth with `radians` of both astigmatisms and both comas (needs nzern >= 3)."""
    params = true_params(setup.nparams)
    params[[2, 4, 6, 7]] = radians  # (n, l) = (2, -2), (2, 2), (3, -1), (3, 1): index j - 1 without the piston
    return params


def simulate_observation(setup, params, seed):
    """Beam maps of params with the paper's noise (multiplicative draw first), from numpy's default_rng(seed)."""
    beams = reference_numpy.beam_maps(params, setup)
    rng = np.random.default_rng(seed)
    multiplicative = rng.standard_normal(beams.shape)
    additive = rng.standard_normal(beams.shape)
    return beams * (1 + MULTIPLICATIVE_NOISE * multiplicative) + ADDITIVE_NOISE * beams.max() * additive


def standard_errors(result):
    """Parameter standard errors from the BFGS inverse Hessian of the negative log-likelihood."""
    return np.sqrt(np.clip(np.diag(result.hess_inv), 0, None))

"""The curvature of the objective at a fit, and the standard errors it implies."""

import numpy as np
import torch

from .backend import as_model_array, to_fft_order, to_numpy
from .constants import GAMMA, OBJECTIVES
from .likelihood import prepared_nll
from .setup import check_setup
from .validation import check_choice, check_data, check_params, check_positive


def hessian(params, setup, data, gamma=GAMMA, objective="cauchy"):
    """The (P, P) Hessian of the objective at params, a float64 NumPy array (units: objective per parameter^2).

    By autograd: a second reverse pass through the model, exact to rounding; symmetrised.
    """
    setup = check_setup(setup)
    params = as_model_array(check_params(params, setup.nparams), setup)
    data = to_fft_order(as_model_array(check_data(data, setup.npix), setup))
    gamma, objective = check_positive("gamma", gamma), check_choice("objective", objective, OBJECTIVES)
    matrix = to_numpy(torch.autograd.functional.hessian(
        lambda p: prepared_nll(p, setup, data, gamma, objective), params))
    return (matrix + matrix.T) / 2


def standard_errors(hessian, scale=1.0):
    """Square roots of the diagonal of scale times the inverse Hessian (the parameters' units); NaN where the
    Hessian is not positive definite, i.e. not at a minimum.

    scale is 1 for a negative log-likelihood (the Cauchy objective); for least squares, whose objective S is
    not one, it is 2 S / (pixels - parameters), the residual variance's factor of a Gaussian likelihood.
    """
    try:
        np.linalg.cholesky(hessian)
    except np.linalg.LinAlgError:
        return np.full(len(hessian), np.nan)
    return np.sqrt(scale * np.diag(np.linalg.inv(hessian)))

"""The curvature of the objective at a fit, and the standard errors it implies."""

import numpy as np

from .backend import as_model_array, to_fft_order, to_numpy
from .constants import GAMMA, OBJECTIVES
from .gradient import value_and_gradient
from .setup import check_setup
from .validation import check_choice, check_data, check_params, check_positive

HESSIAN_STEP = 1e-5
"""Step of the central differences of the exact gradient (parameter units: radians, dish radii, amplitude)."""


def hessian(params, setup, data, gamma=GAMMA, objective="cauchy"):
    """The (P, P) Hessian of the objective at params, a float64 NumPy array (units: objective per parameter^2).

    Central differences of the exact (adjoint) gradient, symmetrised: truncation ~ step^2, rounding ~ eps / step.
    """
    setup = check_setup(setup)
    params = as_model_array(check_params(params, setup.nparams), setup)
    data = to_fft_order(as_model_array(check_data(data, setup.npix), setup))
    gamma, objective = check_positive("gamma", gamma), check_choice("objective", objective, OBJECTIVES)
    columns = []
    for shift in HESSIAN_STEP * np.eye(setup.nparams):
        _, ahead = value_and_gradient(params + shift, setup, data, gamma, objective)
        _, behind = value_and_gradient(params - shift, setup, data, gamma, objective)
        columns.append(to_numpy(ahead - behind) / (2 * HESSIAN_STEP))
    matrix = np.stack(columns, axis=1)
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

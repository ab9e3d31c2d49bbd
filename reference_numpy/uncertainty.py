"""The curvature of the objective at a fit, and the standard errors it implies."""

from __future__ import annotations

import numpy as np

from oof_common.constants import GAMMA
from oof_common.validation import ArrayLike, check_matrix, check_params, check_positive

from .backend import as_model_array, to_numpy
from .gradient import score_context, scores_of, value_and_gradient
from .likelihood import ObservedMaps, observed_maps
from .losses import Loss, loss_of
from .setup import Setup, check_setup

SCORES_MAX_BYTES = 2**30
"""Most memory the per-pixel scores of score_covariance take at once (bytes): above it J is summed by blocks."""

HESSIAN_STEP = 1e-5
"""Step of the central differences of the exact gradient (parameter units: radians, dish radii, amplitude)."""


def hessian(params: ArrayLike, setup: Setup, data: ArrayLike | ObservedMaps, gamma: float = GAMMA,
            objective: str | Loss = "cauchy") -> np.ndarray:
    """The (P, P) Hessian of the objective at params, a float64 NumPy array (units: objective per parameter^2).

    Central differences of the exact (adjoint) gradient, symmetrised: truncation ~ step^2, rounding ~ eps / step.
    """
    setup = check_setup(setup)
    params = as_model_array(check_params(params, setup.nparams), setup)
    data = observed_maps(data, setup)
    gamma, loss = check_positive("gamma", gamma), loss_of(objective)
    columns = []
    for shift in HESSIAN_STEP * np.eye(setup.nparams):
        _, ahead = value_and_gradient(params + shift, setup, data, gamma, loss)
        _, behind = value_and_gradient(params - shift, setup, data, gamma, loss)
        columns.append(to_numpy(ahead - behind) / (2 * HESSIAN_STEP))
    matrix = np.stack(columns, axis=1)
    return check_matrix("the Hessian at params", (matrix + matrix.T) / 2)


def score_covariance(params: ArrayLike, setup: Setup, data: ArrayLike | ObservedMaps, gamma: float = GAMMA,
                     objective: str | Loss = "cauchy", max_bytes: float = SCORES_MAX_BYTES) -> np.ndarray:
    """J = sum over pixels of s s^T, s a pixel's score dL_pixel/dparams (gradient.power_scores): the spread of
    the per-pixel contributions to the gradient, the middle of the sandwich covariance (objective^2 per
    parameter^2), a (P, P) float64 NumPy array. The scores take 3 npix^2 float64 values per parameter; where all P
    exceed max_bytes, J is summed block by block (score_blocks): a block's scores held, those of each later
    parameter computed again one at a time beside it. The same sums; more transforms, none held twice."""
    setup = check_setup(setup)
    params = as_model_array(check_params(params, setup.nparams), setup)
    data = observed_maps(data, setup)
    gamma, loss = check_positive("gamma", gamma), loss_of(objective)
    context = score_context(params, setup, data, gamma, loss)
    covariance = np.empty((setup.nparams, setup.nparams))
    for block in score_blocks(setup.nparams, setup.npix, check_positive("max_bytes", max_bytes)):
        held = scores_of(context, setup, block).reshape(len(block), -1)
        covariance[block.start:block.stop, block.start:block.stop] = to_numpy(held @ held.T)
        for k in range(block.stop, setup.nparams):
            column = to_numpy(held @ scores_of(context, setup, [k]).reshape(-1))
            covariance[block.start:block.stop, k] = covariance[k, block.start:block.stop] = column
    return covariance


def score_blocks(nparams: int, npix: int, max_bytes: float) -> list[range]:
    """The parameters' indices in consecutive blocks whose scores (3 npix^2 float64 values a parameter), with one
    parameter's more, fit in max_bytes; one block where all P do; at least one parameter a block."""
    per_parameter = 3 * npix**2 * 8
    size = nparams if nparams * per_parameter <= max_bytes else max(1, int(max_bytes // per_parameter) - 1)
    return [range(start, min(start + size, nparams)) for start in range(0, nparams, size)]


def standard_errors(hessian: ArrayLike, scale: float = 1.0, scores: ArrayLike | None = None) -> np.ndarray:
    """Square roots of the diagonal of scale times the inverse Hessian (the parameters' units); NaN where the
    Hessian is not positive definite, i.e. not at a minimum.

    scale is 1 for a negative log-likelihood (the Cauchy objective); for least squares, whose objective S is
    not one, it is 2 S / (pixels - parameters), the residual variance's factor of a Gaussian likelihood.
    With scores (score_covariance J at the same params) they are the sandwich (robust) errors,
    sqrt(diag(H^-1 J H^-1)), right whatever the noise is (the inverse Hessian assumes the likelihood's own noise:
    the Cauchy likelihood's errors are about 3x too wide for the simulated Gaussian noise); scale then cancels.
    """
    hessian = check_matrix("hessian", hessian)
    scale = check_positive("scale", scale)
    scores = None if scores is None else check_matrix("scores", scores, len(hessian))
    try:
        np.linalg.cholesky(hessian)
    except np.linalg.LinAlgError:
        return np.full(len(hessian), np.nan)
    inverse = np.linalg.inv(hessian)
    if scores is not None:
        return np.sqrt(np.diag(inverse @ scores @ inverse))
    return np.sqrt(scale * np.diag(inverse))

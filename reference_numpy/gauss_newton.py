"""The Gauss-Newton matrix of the objective: the curvature a BFGS fit may start from (fit's start_hessian).

For an objective L = sum over pixels of rho(e), e = P - data the excess power, the matrix is
G = sum over pixels of c(e) J J^T, J = dP/dparams the beams' Jacobian and c(e) = rho'(e) / e the loss's curvature weight
(losses.py): 2 for least squares, 1 / gamma^2 for the Gaussian, and for the Cauchy likelihood the weight of
iteratively-reweighted least squares, 2 / (gamma^2 + e^2) (positive where its second derivative is not). G is
the Hessian without the terms in the model's second derivative: exact for a model that fits, and positive
semi-definite always. It is summed on the sky window that holds the beams (beam_window), where J is taken here as
a NumPy user would: by forward differences of the beams, one model evaluation per parameter
(forward_difference_jacobian; torch_impl takes it exactly, by forward mode).
"""

from __future__ import annotations

import numpy as np

from oof_common.constants import GAMMA
from oof_common.limits import WINDOW_POWER_LOSS
from oof_common.validation import ArrayLike, check_matrix, check_params, check_positive

from .backend import as_model_array, difference_step, to_numpy
from .beams import far_field, model_power, place_on_grid
from .gradient import dish_field, model_power_of_beam
from .likelihood import ObservedMaps, compared_excess, observed_maps
from .losses import Loss, loss_of
from .setup import Setup, check_setup

WINDOW_STEP = 8
"""The window's half-width is a multiple of this many pixels."""


def beam_window(power, loss):
    """Pixel indices along each sky axis (FFT order, both ends of the axis) of the smallest square centred on the
    beams' centre (pixel 0) that leaves at most `loss` of every map's power outside it; every index where no
    smaller square does."""
    npix = power.shape[-1]
    offset = np.minimum(np.arange(npix), npix - np.arange(npix))
    distance = np.maximum(offset[:, None], offset[None, :]).reshape(-1)
    rings = np.stack([np.bincount(distance, weights=map_power.reshape(-1), minlength=npix // 2 + 1)
                      for map_power in power])
    inside = np.cumsum(rings, axis=1) / rings.sum(axis=1, keepdims=True)
    for half in range(WINDOW_STEP, npix // 2, WINDOW_STEP):
        if bool((1 - inside[:, half - 1] <= loss).all()):
            return np.concatenate([np.arange(half), np.arange(npix - half, npix)])
    return np.arange(npix)


def forward_difference_jacobian(params, setup, power, rows):
    """J = dP/dparams at the window's pixels by forward differences of the beams (every parameter but the offsets,
    whose are offset_rows'), as (parameters, window pixels of the 3 maps)."""
    step = difference_step(setup)
    fitted = setup.nparams - setup.n_offsets
    jacobian = np.empty((fitted, 3 * len(rows) ** 2))
    for k in range(fitted):
        moved = params.copy()
        moved[k] += step
        jacobian[k] = ((model_power(moved, setup) - power)[:, rows][:, :, rows] / step).reshape(-1)
    return jacobian


def offset_rows(weights, jacobian, windowed_weights, setup):
    """The matrix's rows of the maps' baseline offsets: an offset's J is 1 on every pixel of its map, so its
    diagonal is its map's whole sum of c, its cross terms with the other parameters summed on the window."""
    per_map = windowed_weights.reshape(3, -1)
    cross = np.stack([(jacobian.reshape(len(jacobian), 3, -1)[:, k] * per_map[k]).sum(-1) for k in range(3)])
    return np.diag(weights.sum(axis=(-2, -1))), cross


def plain_matrix(model, data, gamma, loss, jacobian, rows, setup):
    """The matrix of maps compared pixel by pixel: G = sum over pixels of c(e) J J^T on the window, c at the
    compared excess (times each pixel's factor squared where maps are weighted: J' = factor J), the offsets' rows
    from offset_rows."""
    if data.map_scale is None:
        weights = loss.curvature(model - data.fft_order, gamma)
        if data.weights is not None:
            weights = weights * data.weights
    else:  # the loss of e' = scale e: its curvature at e', times scale^2 (J' = scale J)
        weights = loss.curvature((model - data.fft_order) * data.map_scale, gamma) * data.map_scale**2
    windowed = weights[:, rows][:, :, rows]
    matrix = (jacobian * windowed.reshape(1, -1)) @ jacobian.T
    if setup.n_offsets:
        diagonal, cross = offset_rows(weights, jacobian, windowed, setup)
        matrix = np.concatenate([np.concatenate([matrix, cross.T], 1), np.concatenate([cross, diagonal], 1)])
    return matrix


def whitened_matrix(model, data, gamma, loss, jacobian, rows, setup):
    """The matrix where the maps are whitened along the scans (ObservedMaps.whitening): G = sum over whitened pixels
    of c(e'') J'' J''^T, J'' = whitening.of(factors J) on the window, c at the whitened excess e''; an offset's J''
    is its map's factors whitened over the whole grid (its cross terms summed on the window)."""
    whitening, side = data.whitening, len(rows)
    curvature = loss.curvature(whitening.of(compared_excess(model, data.fft_order, data.factors)), gamma)
    factors = np.ones_like(model) if data.factors is None else data.factors
    shaped = jacobian.reshape(len(jacobian), 3, side, side) * factors[:, rows][:, :, rows]
    white = whitening.on_window(shaped, rows).reshape(len(jacobian), -1)
    weighted = white * curvature[:, rows][:, :, rows].reshape(1, -1)
    matrix = weighted @ white.T
    if not setup.n_offsets:
        return matrix
    columns = whitening.of(np.eye(3)[:, :, None, None] * factors)
    offsets = (columns.reshape(3, -1) * curvature.reshape(1, -1)) @ columns.reshape(3, -1).T
    cross = weighted @ columns[:, :, rows][:, :, :, rows].reshape(3, -1).T
    return np.concatenate([np.concatenate([matrix, cross], 1), np.concatenate([cross.T, offsets], 1)])


def gauss_newton_matrix(params: ArrayLike, setup: Setup, data: ArrayLike | ObservedMaps, gamma: float = GAMMA,
                        objective: str | Loss = "cauchy", window_loss: float = WINDOW_POWER_LOSS) -> np.ndarray:
    """The (P, P) Gauss-Newton matrix of the objective at params (the module's docstring), a float64 NumPy array
    (objective per parameter^2), summed on the sky window that leaves at most window_loss of each map's power out
    (0: the whole grid)."""
    setup = check_setup(setup)
    params = as_model_array(check_params(params, setup.nparams), setup)
    data = observed_maps(data, setup)
    gamma, loss = check_positive("gamma", gamma), loss_of(objective)
    window_loss = float(window_loss)
    if not 0 <= window_loss < 1:
        raise ValueError(f"window_loss must be in [0, 1), got {window_loss}")
    _, _, _, field = dish_field(params, setup)
    power, model = model_power_of_beam(far_field(place_on_grid(field, setup.index, setup.box), setup.npix), params,
                                       setup)
    rows = beam_window(power, window_loss)
    jacobian = forward_difference_jacobian(params, setup, model, rows)
    matrix = (plain_matrix if data.whitening is None else whitened_matrix)(model, data, gamma, loss, jacobian, rows,
                                                                           setup)
    matrix = to_numpy(matrix)
    return check_matrix("the Gauss-Newton matrix at params", (matrix + matrix.T) / 2)

"""The Gauss-Newton matrix of the objective: the curvature a BFGS fit may start from (fit's start_hessian).

For an objective L = sum over pixels of rho(e), e = P - data the excess power, the matrix is
G = sum over pixels of c(e) J J^T, J = dP/dparams the beams' Jacobian and c(e) = rho'(e) / e the loss's curvature weight
(losses.py): 2 for least squares, 1 / gamma^2 for the Gaussian, and for the Cauchy likelihood the weight of
iteratively-reweighted least squares, 2 / (gamma^2 + e^2) (positive where its second derivative is not). G is
the Hessian without the terms in the model's second derivative: exact for a model that fits, and positive
semi-definite always. It is summed on the sky window that holds the beams (beam_window), where J is computed here
exactly, by forward mode through the model: the field's derivative per parameter, taken to the window's pixels by
two small DFT matrices (every parameter in one batched product), not by a full transform each
(forward_mode_jacobian; reference_numpy takes forward differences of the beams).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from oof_common.constants import GAMMA, MAP_POINTED
from oof_common.limits import WINDOW_POWER_LOSS
from oof_common.validation import ArrayLike, check_matrix, check_params, check_positive

from .backend import as_model_array, to_numpy
from .beams import far_field, place_on_grid
from .gradient import dish_field, illumination_derivatives, model_power_of_beam
from .likelihood import ObservedMaps, compared_excess, observed_maps
from .losses import Loss, loss_of
from .setup import Setup, check_setup, map_gains, map_terms, parameter_parts

WINDOW_STEP = 8
"""The window's half-width is a multiple of this many pixels."""
BLOCK_BYTES = 2**28
"""Most memory the placed derivative fields of one block of parameters take (bytes)."""


def beam_window(power, loss):
    """Pixel indices along each sky axis (FFT order, both ends of the axis) of the smallest square centred on the
    beams' centre (pixel 0) that leaves at most `loss` of every map's power outside it; every index where no
    smaller square does."""
    npix = power.shape[-1]
    offset = torch.minimum(torch.arange(npix), npix - torch.arange(npix)).to(power.device)
    distance = torch.maximum(offset[:, None], offset[None, :]).reshape(-1)
    rings = torch.zeros((power.shape[0], npix // 2 + 1), dtype=torch.float64, device=power.device)
    rings.index_add_(1, distance, power.reshape(power.shape[0], -1).to(torch.float64))
    inside = torch.cumsum(rings, dim=1) / rings.sum(dim=1, keepdim=True)
    for half in range(WINDOW_STEP, npix // 2, WINDOW_STEP):
        if bool((1 - inside[:, half - 1] <= loss).all()):
            return torch.cat([torch.arange(half), torch.arange(npix - half, npix)]).to(power.device)
    return torch.arange(npix, device=power.device)


def _window_transform(fields, rows, setup):
    """The far field (beams.far_field) of (..., box rows, box cols) fields at the window's pixels only, as
    (..., len(rows), len(rows)): ifft2's sums over the box, written as two DFT matrices."""
    box_rows = torch.arange(setup.box[0], device=rows.device, dtype=torch.float64)
    box_cols = torch.arange(setup.box[1], device=rows.device, dtype=torch.float64)
    turns = 2 * math.pi / setup.npix
    left = _dft_matrix(turns * rows[:, None].to(torch.float64) * box_rows[None, :]) / setup.npix
    right = _dft_matrix(turns * box_cols[:, None] * rows[None, :].to(torch.float64)) / setup.npix
    return left.to(fields.dtype) @ fields @ right.to(fields.dtype)


def _dft_matrix(angles):
    """exp(i angles), complex."""
    return torch.polar(torch.ones_like(angles), angles)


def _field_derivatives(params, setup, field, phasor, taper, amplitude):
    """dE/dparams on the dish for the Zernike coefficients (i Z_k E), the illumination's x0, y0, amp (dA/dp phasor)
    and the per-map phase terms where fitted (i T_k E), as (parameters, 3, dish pixels)."""
    _, x0, y0, _, _ = parameter_parts(params, setup)
    d_amplitude = illumination_derivatives(taper, amplitude, setup.x, setup.y, x0, y0, setup.sigma, setup.rho,
                                           setup.diff)
    return torch.cat([1j * setup.basis[:, None, :] * field[None], d_amplitude[:, None, :] * phasor[None],
                      1j * setup.phase_terms * field[None]])


def _gain_rows(window_power):
    """J of the out-of-focus maps' gains on the window: a gain's row is its map's power |b_k|^2 there, 0 on the
    other maps; as (gains, window pixels of the 3 maps)."""
    rows = torch.zeros((len(MAP_POINTED), *window_power.shape), dtype=window_power.dtype, device=window_power.device)
    for row, k in enumerate(MAP_POINTED):
        rows[row, k] = window_power[k]
    return rows.reshape(len(MAP_POINTED), -1)


def forward_mode_jacobian(d_fields, beam, rows, setup):
    """J = dP/dparams = 2 Re(conj(b) db) at the window's pixels, as (parameters, window pixels of the 3 maps),
    the placed derivative fields made a block of parameters at a time."""
    per_parameter = 3 * setup.box[0] * setup.box[1] * d_fields.element_size()
    block = max(1, BLOCK_BYTES // per_parameter)
    jacobian = torch.empty((len(d_fields), beam.numel()), dtype=beam.real.dtype, device=beam.device)
    for start in range(0, len(d_fields), block):
        d_beam = _window_transform(place_on_grid(d_fields[start:start + block], setup.index, setup.box), rows, setup)
        rows_of_block = 2 * (beam.real * d_beam.real + beam.imag * d_beam.imag)
        jacobian[start:start + block] = rows_of_block.reshape(len(d_beam), -1)
    return jacobian


def offset_rows(weights, jacobian, windowed_weights, setup):
    """The matrix's rows of the maps' baseline offsets: an offset's J is 1 on every pixel of its map, so its
    diagonal is its map's whole sum of c, its cross terms with the other parameters summed on the window."""
    per_map = windowed_weights.reshape(3, -1)
    cross = torch.stack([(jacobian.reshape(len(jacobian), 3, -1)[:, k] * per_map[k]).sum(-1) for k in range(3)])
    return torch.diag(weights.sum(dim=(-2, -1))), cross


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
        matrix = torch.cat([torch.cat([matrix, cross.T], 1), torch.cat([cross, diagonal], 1)])
    return matrix


def whitened_matrix(model, data, gamma, loss, jacobian, rows, setup):
    """The matrix where the maps are whitened along the scans (ObservedMaps.whitening): G = sum over whitened pixels
    of c(e'') J'' J''^T, J'' = whitening.of(factors J) on the window, c at the whitened excess e''; an offset's J''
    is its map's factors whitened over the whole grid (its cross terms summed on the window)."""
    whitening, side = data.whitening, len(rows)
    curvature = loss.curvature(whitening.of(compared_excess(model, data.fft_order, data.factors)), gamma)
    factors = torch.ones_like(model) if data.factors is None else data.factors
    shaped = jacobian.reshape(len(jacobian), 3, side, side) * factors[:, rows][:, :, rows]
    white = whitening.on_window(shaped, rows).reshape(len(jacobian), -1)
    weighted = white * curvature[:, rows][:, :, rows].reshape(1, -1)
    matrix = weighted @ white.T
    if not setup.n_offsets:
        return matrix
    columns = whitening.of(torch.eye(3, dtype=model.dtype, device=model.device)[:, :, None, None] * factors)
    offsets = (columns.reshape(3, -1) * curvature.reshape(1, -1)) @ columns.reshape(3, -1).T
    cross = weighted @ columns[:, :, rows][:, :, :, rows].reshape(3, -1).T
    return torch.cat([torch.cat([matrix, cross], 1), torch.cat([cross.T, offsets], 1)])


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
    taper, amplitude, phasor, field = dish_field(params, setup)
    beam = far_field(place_on_grid(field, setup.index, setup.box), setup.npix)
    power, model = model_power_of_beam(beam, params, setup)
    rows = beam_window(power, window_loss)
    jacobian = forward_mode_jacobian(_field_derivatives(params, setup, field, phasor, taper, amplitude),
                                     beam[:, rows][:, :, rows], rows, setup)
    if setup.n_gains:  # every other parameter's J on map k times its gain; then the gains' own rows
        gains = map_gains(map_terms(params, setup)[1], setup)
        jacobian = (jacobian.reshape(len(jacobian), 3, -1) * gains[None, :, None]).reshape(len(jacobian), -1)
        jacobian = torch.cat([jacobian, _gain_rows(power[:, rows][:, :, rows])])
    matrix = (plain_matrix if data.whitening is None else whitened_matrix)(model, data, gamma, loss, jacobian, rows,
                                                                           setup)
    matrix = to_numpy(matrix)
    return check_matrix("the Gauss-Newton matrix at params", (matrix + matrix.T) / 2)

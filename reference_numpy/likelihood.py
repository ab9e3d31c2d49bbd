"""The objective of a fit: the robust (Cauchy) negative log-likelihood of the beam maps, or least squares."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .backend import as_model_array, to_fft_order
from .beams import model_power
from .constants import GAMMA, OBJECTIVES
from .setup import Setup, check_setup
from .validation import ArrayLike, check_choice, check_data, check_params, check_positive


@dataclasses.dataclass(frozen=True, eq=False)
class ObservedMaps:
    """Observed beam maps made ready once for the model of a setup (prepare_data): checked, in FFT order, in the
    setup's precision and on its device. fit, value_and_grad, negative_log_likelihood, hessian and
    score_covariance take it in place of the (3, npix, npix) maps and skip the check and the reorder that a loop
    of calls would otherwise repeat. weights: None where every pixel is compared with the model, else 1 on the
    compared pixels and 0 elsewhere (FFT order; validation.check_data says which).
    Read-only: its array is not writeable."""

    fft_order: np.ndarray = dataclasses.field(repr=False)
    weights: np.ndarray | None = dataclasses.field(repr=False)
    npix: int
    dtype: type
    device: str


def prepare_data(data: ArrayLike, setup: Setup, mask: ArrayLike | None = None, smaller: bool = False) -> ObservedMaps:
    """The observed (3, npix, npix) maps (centred, beam-power units) as ObservedMaps for setup's model. smaller=True:
    maps (3, rows, cols) smaller than the grid, compared on their own pixels, centred on the grid; mask (boolean, the
    data's shape, True: left out) or a NumPy masked array leaves pixels out (validation.check_data)."""
    setup = check_setup(setup)
    maps, weights = check_data(data, setup.npix, mask, smaller)
    maps = to_fft_order(as_model_array(maps, setup))
    weights = None if weights is None else to_fft_order(as_model_array(weights, setup))
    maps.flags.writeable = False
    return ObservedMaps(fft_order=maps, weights=weights, npix=setup.npix, dtype=setup.dtype, device=setup.device)


def observed_maps(data, setup):
    """The maps as ObservedMaps for setup's model: those prepared for a setup of the same size, precision and device,
    or the raw maps checked and reordered."""
    if isinstance(data, ObservedMaps):
        if (data.npix, data.dtype, data.device) != (setup.npix, setup.dtype, setup.device):
            raise ValueError(f"data were prepared for npix={data.npix}, {data.dtype} on {data.device}, not for this "
                             f"setup's npix={setup.npix}, {setup.dtype} on {setup.device}: call prepare_data(data, "
                             "setup) with this setup")
        return data
    return prepare_data(data, setup)


def pixel_count(data, weights):
    """How many pixels the objective compares: all of data's, or those of weight 1."""
    return math.prod(data.shape) if weights is None else weights.sum(dtype=np.float64)


def cauchy_nll(power, data, gamma, weights=None):
    """Sum over pixels of -log(gamma / (pi (resid^2 + gamma^2))), resid = data - power, over the pixels of
    weight 1 where weights (0 or 1 per pixel) are given.

    Written as npixels * log(pi gamma) + sum log1p((resid / gamma)^2): the large constant is added
    once instead of per pixel (a fit's minimizer does not see it: objective_constant). Summed in float64.
    """
    scaled = (power - data) / gamma
    if weights is None:
        return np.log1p(scaled**2).sum(dtype=np.float64) + math.prod(data.shape) * math.log(math.pi * gamma)
    scaled = scaled * weights
    pixels = pixel_count(data, weights)
    return np.log1p(scaled**2).sum(dtype=np.float64) + pixels * math.log(math.pi * gamma)


def least_squares(power, data, weights=None):
    """Sum over pixels of (data - power)^2 (beam-power units squared), summed in float64, over the pixels of weight
    1 where weights are given: the objective of the author's timing code."""
    if weights is None:
        return ((power - data) ** 2).sum(dtype=np.float64)
    return (((power - data) * weights) ** 2).sum(dtype=np.float64)


def gaussian_nll(power, data, gamma, weights=None):
    """Least squares in units of the noise: the sum over pixels of (data - power)^2 / (2 gamma^2), gamma the noise's
    standard deviation (beam-power units); the Gaussian negative log-likelihood without its constant."""
    return least_squares(power, data, weights) / (2 * gamma**2)


def objective_value(power, data, gamma, objective):
    """The chosen objective of model power beams (FFT order) against data (ObservedMaps)."""
    if objective == "cauchy":
        return cauchy_nll(power, data.fft_order, gamma, data.weights)
    if objective == "gaussian":
        return gaussian_nll(power, data.fft_order, gamma, data.weights)
    return least_squares(power, data.fft_order, data.weights)


def objective_constant(data, gamma, objective):
    """The part of the objective that depends on no parameter (Cauchy: compared pixels times log(pi gamma); none
    for the others), which a fit's minimizer does not see: left in, it is 150-180 times the rest at npix 512, and the
    minimizer's tests of progress and finite-difference steps, all relative to |objective|, lose that much."""
    if objective != "cauchy":
        return 0.0
    return float(pixel_count(data.fft_order, data.weights)) * math.log(math.pi * gamma)


def prepared_nll(params, setup, data, gamma, objective="cauchy"):
    """The objective of params (the model's array type) for data already prepared (ObservedMaps)."""
    return objective_value(model_power(params, setup), data, gamma, objective)


def negative_log_likelihood(params: ArrayLike, setup: Setup, data: ArrayLike | ObservedMaps, gamma: float = GAMMA,
                            objective: str = "cauchy") -> float:
    """The objective (Cauchy negative log-likelihood by default) of the observed (3, npix, npix) maps, a float."""
    setup = check_setup(setup)
    params = as_model_array(check_params(params, setup.nparams), setup)
    data = observed_maps(data, setup)
    gamma, objective = check_positive("gamma", gamma), check_choice("objective", objective, OBJECTIVES)
    return float(prepared_nll(params, setup, data, gamma, objective))

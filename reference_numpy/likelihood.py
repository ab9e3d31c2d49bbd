"""The objective of a fit: a loss (losses.py; the robust Cauchy negative log-likelihood by default) of the model's
beam maps against the observed ones."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from oof_common.constants import GAMMA
from oof_common.scans import ScanNoise, check_scan, whitening_coefficients
from oof_common.validation import ArrayLike, check_data, check_params, check_positive, map_scale

from .backend import as_model_array, to_fft_order
from .beams import model_power
from .losses import Loss, loss_of
from .setup import Setup, check_setup


@dataclasses.dataclass(frozen=True, eq=False)
class ObservedMaps:
    """Observed beam maps made ready once for the model of a setup (prepare_data): checked, in FFT order, in the
    setup's precision and on its device. fit, value_and_grad, negative_log_likelihood, hessian and
    score_covariance take it in place of the (3, npix, npix) maps and skip the check and the reorder that a loop
    of calls would otherwise repeat. weights: None where every pixel is compared with the model, else 1 on the
    compared pixels and 0 elsewhere (FFT order; validation.check_data says which). map_scale: None, or where
    each map has a weight of its own (prepare_data's map_weights), the multiplier of each pixel's excess: its map's
    weight on the compared pixels, 0 elsewhere (validation.map_scale). whitening: None, or where the noise is
    correlated along the scans (prepare_data's scan_correlation), the ScanWhitening of each pixel's excess.
    Read-only: its arrays are not writeable."""

    fft_order: np.ndarray = dataclasses.field(repr=False)
    weights: np.ndarray | None = dataclasses.field(repr=False)
    npix: int
    dtype: type
    device: str
    map_scale: np.ndarray | None = dataclasses.field(default=None, repr=False)
    whitening: ScanWhitening | None = dataclasses.field(default=None, repr=False)

    @property
    def factors(self):
        """What multiplies each pixel's excess: map_scale where given, else weights (None: every pixel by 1)."""
        return self.weights if self.map_scale is None else self.map_scale


@dataclasses.dataclass(frozen=True, eq=False)
class ScanWhitening:
    """The excess whitened along the scans (oof_common.scans): e' = keep e - carry shift(e), shift moving each pixel
    one step along the scan, keep and carry (3, npix, npix) in FFT order (where a neighbour in the grid's natural
    order is a neighbour modulo npix), 0 off the compared pixels. axis: the grid's axis the scans run along."""

    keep: np.ndarray = dataclasses.field(repr=False)
    carry: np.ndarray = dataclasses.field(repr=False)
    axis: int
    scan: ScanNoise

    def of(self, excess):
        """e' of an excess (..., 3, npix, npix)."""
        return self.keep * excess - self.carry * np.roll(excess, 1, axis=self.axis)

    def adjoint(self, weights):
        """dL/de from dL/de' (the transpose of `of`)."""
        return self.keep * weights - np.roll(self.carry * weights, -1, axis=self.axis)

    def on_window(self, jacobian, rows):
        """`of` applied to the rows of a Jacobian (parameters, 3, len(rows), len(rows)) on a window of the grid (rows:
        its pixels along each axis, FFT order): a pixel whose predecessor along the scan lies outside the window
        starts a line there (the window holds the beams; the Jacobian outside it is left out anyway)."""
        keep = self.keep[:, rows][:, :, rows]
        adjacent = (rows - np.roll(rows, 1)) % self.keep.shape[-1] == 1
        shape = [1, 1, 1]
        shape[self.axis] = -1
        carry = self.carry[:, rows][:, :, rows] * adjacent.reshape(shape)
        return keep * jacobian - carry * np.roll(jacobian, 1, axis=self.axis)


def prepare_data(data: ArrayLike, setup: Setup, mask: ArrayLike | None = None, smaller: bool = False,
                 map_weights: ArrayLike | None = None, scan_correlation: float | None = None,
                 scan_axis: int = 0) -> ObservedMaps:
    """The observed (3, npix, npix) maps (centred, beam-power units) as ObservedMaps for setup's model. smaller=True:
    maps (3, rows, cols) smaller than the grid, compared on their own pixels, centred on the grid; mask (boolean, the
    data's shape, True: left out) or a NumPy masked array leaves pixels out (validation.check_data). map_weights: three
    positive numbers, each map's excess multiplied by its own (a map of noise sigma_k weighted sigma / sigma_k is
    compared in units of its own noise; validation.map_scale). scan_correlation: the noise's correlation between
    neighbouring samples along a scan, which runs along axis scan_axis of each (rows, cols) map (0: down a column);
    the excess is then whitened along the scans before the loss (oof_common.scans: least squares of it is the
    efficient estimator under such noise)."""
    setup = check_setup(setup)
    maps, weights = check_data(data, setup.npix, mask, smaller)
    scale = map_scale(weights, map_weights, setup.npix)
    scan = check_scan(scan_correlation, scan_axis)
    whitening = None if scan is None else scan_whitening(scan, weights, setup)
    maps = to_fft_order(as_model_array(maps, setup))
    weights = None if weights is None else to_fft_order(as_model_array(weights, setup))
    scale = None if scale is None else to_fft_order(as_model_array(scale, setup))
    for array in (maps, weights, scale):
        if array is not None:
            array.flags.writeable = False
    return ObservedMaps(fft_order=maps, weights=weights, npix=setup.npix, dtype=setup.dtype, device=setup.device,
                        map_scale=scale, whitening=whitening)


def scan_whitening(scan: ScanNoise, weights, setup) -> ScanWhitening:
    """The ScanWhitening of maps whose compared pixels are weights' 1s (None: every pixel; the natural order)."""
    coefficients = whitening_coefficients(weights, scan, (3, setup.npix, setup.npix))
    keep, carry = (to_fft_order(as_model_array(array, setup)) for array in coefficients)
    keep.flags.writeable = carry.flags.writeable = False
    return ScanWhitening(keep=keep, carry=carry, axis=scan.grid_axis, scan=scan)


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


def compared_excess(power, data, weights=None):
    """e = P - data per pixel (beam-power units), times each pixel's factor where given (ObservedMaps.factors: 0 on
    the pixels left out)."""
    excess = power - data
    return excess if weights is None else excess * weights


def objective_value(power, data, gamma, loss: Loss):
    """The loss of model power beams (FFT order) against data (ObservedMaps), its constant included: a float64
    scalar. The constant (Cauchy: compared pixels times log(pi gamma)) is added once, not per pixel."""
    excess = compared_excess(power, data.fft_order, data.factors)
    value = loss.value(excess if data.whitening is None else data.whitening.of(excess), gamma)
    return value + loss.constant(pixel_count(data.fft_order, data.weights), gamma)


def objective_constant(data, gamma, loss: Loss):
    """The part of the objective that depends on no parameter (Cauchy: compared pixels times log(pi gamma); none
    for the others), which a fit's minimizer does not see: left in, it is 150-180 times the rest at npix 512, and the
    minimizer's tests of progress and finite-difference steps, all relative to |objective|, lose that much."""
    return float(loss.constant(float(pixel_count(data.fft_order, data.weights)), gamma))


def prepared_nll(params, setup, data, gamma, loss: Loss):
    """The objective of params (the model's array type) for data already prepared (ObservedMaps), loss a Loss."""
    return objective_value(model_power(params, setup), data, gamma, loss)


def negative_log_likelihood(params: ArrayLike, setup: Setup, data: ArrayLike | ObservedMaps, gamma: float = GAMMA,
                            objective: str | Loss = "cauchy") -> float:
    """The objective (Cauchy negative log-likelihood by default; a loss's name or the loss) of the observed
    (3, npix, npix) maps, a float."""
    setup = check_setup(setup)
    params = as_model_array(check_params(params, setup.nparams), setup)
    data = observed_maps(data, setup)
    return float(prepared_nll(params, setup, data, check_positive("gamma", gamma), loss_of(objective)))

"""The maps' noise along the scans: how much neighbouring samples of the border band share their noise along each
axis of the maps (a scan's drifts make it correlate along the scan, white noise along neither), and the residuals
whitened along the scans as a whitened fit compares them."""

from __future__ import annotations

import math

import numpy as np

from oof_common.scans import ScanNoise, whitening_coefficients
from replication.core.objectives import robust_sigma

WHITEN_FROM = 0.2
"""Least correlation of neighbouring noise samples along the scans at which a reduction whitens by default
(--whiten auto): below it the noise is about white and whitening changes little."""


def neighbour_noise(power, band, axis):
    """The noise of the band's pixels from the differences of neighbours along one axis (1.4826 MAD / sqrt 2): the
    same along both axes for white noise."""
    differences = np.diff(np.where(band, power, np.nan), axis=axis)
    return robust_sigma(differences[np.isfinite(differences)]) / math.sqrt(2)


def noise_correlation(noise_along, noise) -> tuple[float, float]:
    """The correlation r of neighbouring noise samples along the maps' axis 0 (down a column) and axis 1 (along a
    row) from the in-focus map's border band: the noise of its neighbours' differences along each axis
    (noise_along, neighbour_noise's: s sqrt(1 - r) for noise of standard deviation s) against its noise s, both
    robust (MAD-based): 1 - (noise_along / s)^2, 0 for white noise. The in-focus map's band only: an out-of-focus
    beam's slow wings reach its map's band and would bias the band's whole spread."""
    return tuple(float(1 - (along / noise) ** 2) for along in noise_along)


def scans_whitened(correlation: tuple[float, float]) -> bool:
    """Whether the noise is that of scans (--whiten auto): correlated at least WHITEN_FROM along one axis and at
    most half that along the other (a simulated or smooth map correlates along both: it has no scans)."""
    high, low = sorted(abs(value) for value in correlation)[::-1]
    return high >= WHITEN_FROM and low <= high / 2


WHITEN_MODES = ("auto", "yes", "no")
"""Whether a reduction whitens the excess along the scans: where the noise is that of scans (scans_whitened),
always, or never."""
WHITEN_DEFAULT = "auto"
"""The reductions' default: on the closure's maps at the SRT's noise the whitened fit's surface error is about
1.6 times smaller (docs/real-maps.md)."""


def whitens(mode: str, correlation: tuple[float, float]) -> bool:
    """Whether a reduction in that mode (WHITEN_MODES) whitens maps whose noise correlates so (noise_correlation)."""
    return mode == "yes" or (mode == "auto" and scans_whitened(correlation))


def scan_of(correlation: tuple[float, float]) -> ScanNoise:
    """The scans' noise: the axis of the larger correlation (a scan's direction) and its correlation, held within
    (-0.99, 0.99)."""
    axis = int(abs(correlation[1]) > abs(correlation[0]))
    return ScanNoise(float(np.clip(correlation[axis], -0.99, 0.99)), axis)


def whitened(values: np.ndarray, compared: np.ndarray | None, scan: ScanNoise) -> np.ndarray:
    """(3, rows, cols) NumPy values (natural order; 0 where not compared) whitened along the scans as the trees'
    ScanWhitening whitens the excess: keep e - carry shift(e)."""
    keep, carry = whitening_coefficients(compared, scan, values.shape)
    return keep * values - carry * np.roll(values, 1, axis=scan.grid_axis)


def whitened_residual(residual: np.ndarray, scan: ScanNoise | None) -> np.ndarray:
    """Residual maps (3, rows, cols; NaN at a dropped sample) whitened along the scans as a whitened fit compares
    them (oof_common.scans), NaN kept where they were; the residual itself where scan is None."""
    if scan is None:
        return residual
    compared = np.isfinite(residual)
    white = whitened(np.where(compared, residual, 0.0), compared.astype(np.float64), scan)
    return np.where(compared, white, np.nan)

"""Noise correlated along the scans, whitened: a telescope maps a beam scan line by scan line, and a receiver's
drifts make neighbouring samples of a line share noise (an AR(1) process of correlation r along the line, white
across lines). Least squares of the whitened excess, e'_x = (e_x - r e_{x-1}) / sqrt(1 - r^2) along each line and
e'_x = e_x at a line's first compared sample, is the efficient (generalised) least squares under that noise.

The whitening is linear: e' = keep e - carry shift(e), shift moving each sample one step along the scan, keep and
carry fixed arrays made here once per set of maps (NumPy, the grid's natural order: centred). A sample whose
predecessor along the line is not compared (the line's start, a dropped sample before it) starts a new line."""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np

SCAN_AXES = {0: "rows (a scan runs down a column)", 1: "columns (a scan runs along a row)"}
"""The axes of a (rows, cols) map the samples of a scan follow, as prepare_data's scan_axis names them."""


@dataclasses.dataclass(frozen=True)
class ScanNoise:
    """The noise's correlation between neighbouring samples of a scan line (-1 < correlation < 1) and the axis of
    each (rows, cols) map the lines run along (SCAN_AXES)."""

    correlation: float
    axis: int

    @property
    def grid_axis(self) -> int:
        """The axis of a (3, npix, npix) array of maps the lines run along (negative, from the end)."""
        return self.axis - 2


def check_scan(correlation, axis) -> ScanNoise | None:
    """The scan noise prepare_data was given (None where correlation is None), or a ValueError naming the
    argument: the correlation a finite number strictly between -1 and 1, the axis 0 or 1."""
    if correlation is None:
        return None
    if (isinstance(correlation, bool) or not isinstance(correlation, numbers.Real)
            or not math.isfinite(correlation) or not -1 < correlation < 1):
        raise ValueError(f"scan_correlation must be a number strictly between -1 and 1 (the noise's correlation "
                         f"between neighbouring samples of a scan), got {correlation!r}")
    if isinstance(axis, bool) or axis not in SCAN_AXES:
        raise ValueError(f"scan_axis must be 0 (scans run down the maps' columns) or 1 (along their rows), got "
                         f"{axis!r}")
    return ScanNoise(float(correlation), int(axis))


def whitening_coefficients(compared: np.ndarray | None, scan: ScanNoise,
                           shape: tuple[int, ...] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(keep, carry) of e' = keep e - carry shift(e) for (3, rows, cols) maps whose compared pixels are 1 in
    `compared` (0 elsewhere; natural order; None: every pixel of maps of that shape): keep = 1 / sqrt(1 - r^2) and
    carry = r / sqrt(1 - r^2) where the sample before along the scan is compared too, keep = 1 and carry = 0 where
    it is not (a line's first sample), both 0 off the compared pixels. float64, the grid's natural order."""
    compared = np.ones(shape) if compared is None else compared
    axis = scan.grid_axis
    before = np.roll(compared, 1, axis=axis)
    first = [slice(None)] * 3
    first[axis] = 0
    before[tuple(first)] = 0  # the grid's edge: nothing comes before it
    follows = (compared > 0) & (before > 0)
    spread = math.sqrt(1 - scan.correlation**2)
    keep = np.where(follows, 1 / spread, 1.0) * (compared > 0)
    carry = np.where(follows, scan.correlation / spread, 0.0)
    return keep, carry

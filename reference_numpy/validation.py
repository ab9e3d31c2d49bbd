"""Checks at the public boundary: bad input raises ValueError naming the argument, before any work."""

import math
import numbers

import numpy as np

from .constants import MAX_NPIX, MAX_NZERN, MIN_NPIX


def check_grid_size(npix, nzern):
    """Reject grid sizes and Zernike orders the model cannot use."""
    if isinstance(npix, bool) or not isinstance(npix, numbers.Integral):
        raise ValueError(f"npix must be an integer, got {npix!r}")
    if not MIN_NPIX <= npix <= MAX_NPIX:
        raise ValueError(f"npix must lie in [{MIN_NPIX}, {MAX_NPIX}], got {npix}")
    if isinstance(nzern, bool) or not isinstance(nzern, numbers.Integral):
        raise ValueError(f"nzern must be an integer, got {nzern!r}")
    if not 0 <= nzern <= MAX_NZERN:
        raise ValueError(f"nzern must lie in [0, {MAX_NZERN}], got {nzern}")


def check_positive(name, value):
    """Reject a scalar setting that is not a finite positive number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite positive number, got {value!r}")
    return float(value)


def check_params(params, nparams, name="params"):
    """A float64 copy of a 1-D parameter vector of length nparams with finite entries."""
    try:
        values = np.array(params, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be a 1-D array of numbers: {error}") from None
    if values.shape != (nparams,):
        raise ValueError(f"{name} must have shape ({nparams},), got {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite, got {values}")
    return values


def check_data(data, npix):
    """A float64 copy of the observed (3, npix, npix) beam maps with finite entries."""
    try:
        values = np.array(data, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"data must be an array of numbers: {error}") from None
    if values.shape != (3, npix, npix):
        raise ValueError(f"data must have shape (3, {npix}, {npix}), got {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError("data must be finite: it holds NaN or infinite values")
    return values

"""The array library behind the model: its array type, precision and the FFT layout of the grid.

With fit.py, the one module where the two trees differ in kind rather than in library names.
"""

import numpy as np


def to_fft_order(a):
    """Move the grid centre to pixel (0, 0) over the last two axes (ifftshift)."""
    return np.fft.ifftshift(a, axes=(-2, -1))


def from_fft_order(a):
    """Move pixel (0, 0) back to the grid centre over the last two axes (fftshift)."""
    return np.fft.fftshift(a, axes=(-2, -1))


def as_model_array(values, setup):
    """Values as the package's array type, in the setup's precision (always float64 here)."""
    return np.asarray(values, dtype=np.float64)


def to_numpy(values):
    """A float64 NumPy array of the package's array, as scipy wants it."""
    return np.asarray(values, dtype=np.float64)

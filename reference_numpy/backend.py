"""The array library behind the model: its array type, precision and the FFT layout of the grid.

With fit.py, the one module where the two trees differ in kind rather than in library names.
"""

import ctypes
import os
import sys

import numpy as np

Array = np.ndarray
"""The model's array type (what setups hold and beam_maps returns)."""

MALLOC_VARIABLE = "OOF_MALLOC"
"""Set to "default" to leave glibc's malloc settings alone (keep_freed_memory then does nothing)."""
M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # mallopt's parameter numbers, from glibc's malloc.h
KEPT_BYTES = 2**30


def keep_freed_memory():
    """Ask glibc's malloc to reuse freed memory instead of returning it to the OS; True when it did.

    Every evaluation makes temporaries of 3 npix^2 complex numbers (12 MiB at npix 512). By default glibc
    maps each from the OS afresh and page-faults it in, which at npix 512 costs about as much as the FFTs
    themselves; with large blocks kept on the heap (trimmed only above 1 GiB free) they are reused warm.
    Process-wide and on request: importing the package changes nothing; a script that wants the fast path calls it
    once before fitting, and the harness (`python -m replication`) does before any command; OOF_MALLOC=default opts
    out.
    """
    if os.environ.get(MALLOC_VARIABLE) == "default" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (e.g. musl): nothing to set
        return False
    return bool(libc.mallopt(M_MMAP_MAX, 0)) and bool(libc.mallopt(M_TRIM_THRESHOLD, KEPT_BYTES))


def to_fft_order(a):
    """Move the grid centre to pixel (0, 0) over the last two axes (ifftshift)."""
    return np.fft.ifftshift(a, axes=(-2, -1))


def from_fft_order(a):
    """Move pixel (0, 0) back to the grid centre over the last two axes (fftshift)."""
    return np.fft.fftshift(a, axes=(-2, -1))


def as_model_array(values, setup):
    """Values as the package's array type, in the setup's precision (always float64 here)."""
    return np.asarray(values, dtype=np.float64)


def difference_step(setup):
    """The step of two-point differences in the setup's precision: sqrt(eps), scipy's default (parameter units;
    always float64's here)."""
    return float(np.sqrt(np.finfo(np.float64).eps))


def to_numpy(values):
    """A float64 NumPy array of the package's array, as scipy wants it."""
    return np.asarray(values, dtype=np.float64)

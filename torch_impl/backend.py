"""The array library behind the model: its array type, precision and the FFT layout of the grid.

With fit.py, the one module where the two trees differ in kind rather than in library names:
here torch also chooses the device and the precision.
"""

import ctypes
import os
import sys

import torch

MODEL_DTYPES = (torch.float64, torch.float32)  # the geometry is always computed in float64, then cast

Array = torch.Tensor
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
    return torch.fft.ifftshift(a, dim=(-2, -1))


def from_fft_order(a):
    """Move pixel (0, 0) back to the grid centre over the last two axes (fftshift)."""
    return torch.fft.fftshift(a, dim=(-2, -1))


def as_model_array(values, setup):
    """Values as the package's array type, on the setup's device and in its precision."""
    return torch.as_tensor(values, dtype=setup.dtype, device=setup.device)


def difference_step(setup):
    """The step of two-point differences in the setup's precision: sqrt(eps) (parameter units): 1.5e-8 in
    float64, 3.5e-4 in float32, whose objective a float64 step could not resolve."""
    return float(torch.finfo(setup.dtype).eps) ** 0.5


def to_numpy(values):
    """A float64 NumPy array of the package's array, as scipy wants it (copied to the host)."""
    return values.detach().cpu().numpy().astype("float64")


def _resolve_device(device):
    """A torch.device that exists on this machine, or a ValueError naming `device`."""
    try:
        device = torch.device(device)
    except (TypeError, RuntimeError) as error:
        raise ValueError(f"device must name a torch device such as 'cpu' or 'cuda', got {device!r}: {error}") from None
    usable = device.type == "cpu" or (device.type == "cuda" and (device.index or 0) < torch.cuda.device_count())
    if not usable:
        raise ValueError(f"device {str(device)!r} is not available here: use 'cpu' or one of the "
                         f"{torch.cuda.device_count()} CUDA device(s) torch.cuda sees")
    return device


def _check_dtype(dtype):
    """The model precision, or a ValueError naming `dtype`."""
    if dtype not in MODEL_DTYPES:
        raise ValueError(f"dtype must be torch.float64 or torch.float32, got {dtype!r}")
    return dtype

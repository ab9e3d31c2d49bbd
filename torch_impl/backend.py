"""The array library behind the model: its array type, precision and the FFT layout of the grid.

With fit.py, the one module where the two trees differ in kind rather than in library names:
here torch also chooses the device and the precision.
"""

import torch

MODEL_DTYPES = (torch.float64, torch.float32)  # the geometry is always computed in float64, then cast


def to_fft_order(a):
    """Move the grid centre to pixel (0, 0) over the last two axes (ifftshift)."""
    return torch.fft.ifftshift(a, dim=(-2, -1))


def from_fft_order(a):
    """Move pixel (0, 0) back to the grid centre over the last two axes (fftshift)."""
    return torch.fft.fftshift(a, dim=(-2, -1))


def as_model_array(values, setup):
    """Values as the package's array type, on the setup's device and in its precision."""
    return torch.as_tensor(values, dtype=setup.dtype, device=setup.device)


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

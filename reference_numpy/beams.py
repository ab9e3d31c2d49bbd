"""The far field: the three power beam maps of the model, |inverse FFT of the aperture field|^2."""

import numpy as np
import scipy.fft

from .aperture import aperture_field, aperture_phase, illumination
from .backend import as_model_array, from_fft_order
from .constants import N_ILLUMINATION
from .setup import check_setup
from .validation import check_params


def place_on_grid(values, index, npix):
    """Scatter (..., ndish) dish values into zero (..., npix, npix) grids (FFT order)."""
    grid = np.zeros((*values.shape[:-1], npix * npix), dtype=values.dtype)
    grid[..., index] = values
    return grid.reshape((*values.shape[:-1], npix, npix))


def far_field_power(field):
    """Power |ifft2(field)|^2 over the last two axes, FFT order in and out.

    ifft2 has the default ("backward") normalisation, dividing by npix^2. The beam times its
    conjugate avoids the square root of abs() and the slow strided passes of re^2 + im^2.
    """
    beam = scipy.fft.ifft2(field)
    return (beam * beam.conj()).real


def model_power(params, setup):
    """The three model beams (beam-power units) in FFT order, for params (coeffs..., x0, y0, amp)."""
    coeffs, (x0, y0, amp) = params[:-N_ILLUMINATION], params[-N_ILLUMINATION:]
    amplitude = illumination(setup.x, setup.y, x0, y0, amp, setup.sigma, setup.rho, setup.diff)
    phase = aperture_phase(coeffs, setup.basis)
    field = aperture_field(amplitude, phase, setup.screens)
    return far_field_power(place_on_grid(field, setup.index, setup.npix))


def beam_maps(params, setup):
    """The (3, npix, npix) model beams, centred as in paper/MODEL.md: fftshift(|ifft2(ifftshift(field))|^2)."""
    setup = check_setup(setup)
    params = as_model_array(check_params(params, setup.nparams), setup)
    return from_fft_order(model_power(params, setup))

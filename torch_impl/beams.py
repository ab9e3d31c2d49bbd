"""The far field: the three power beam maps of the model, |inverse FFT of the aperture field|^2."""

from __future__ import annotations

import torch

from oof_common.validation import ArrayLike, check_params

from .aperture import aperture_field, aperture_phase, illumination, map_screens
from .backend import Array, as_model_array, from_fft_order
from .setup import Setup, check_setup, map_gains, map_terms, parameter_parts


def place_on_grid(values, index, box):
    """Scatter (..., ndish) dish values into zero (..., rows, cols) boxes: the dish's block of the grid."""
    grid = torch.zeros((*values.shape[:-1], box[0] * box[1]), dtype=values.dtype, device=values.device)
    grid[..., index] = values
    return grid.reshape((*values.shape[:-1], *box))


def far_field(field, npix):
    """The beam ifft2 of a (..., rows, cols) field box in the corner of a zero npix x npix grid, in FFT order.

    Equal to ifft2 of the zero-padded grid (default "backward" normalisation, dividing by npix^2), but the
    column transforms run only over the box's columns (the rest are zero): about 45% of a full ifft2's time
    at npix 512. The box's place on the grid only moves the beam by a phase ramp, which |beam|^2 ignores.
    The box is transposed first (a copy of the small box), so that its column transforms run along contiguous
    rows: 11% less time at npix 512 on one thread, the same numbers to the last bit (only the memory layout of the
    intermediate differs).
    """
    columns = torch.fft.ifft(field.mT.contiguous(), n=npix, dim=-1)
    return torch.fft.ifft(columns.mT, n=npix, dim=-1)


def beam_power(beam):
    """Power |b|^2 of a complex beam, as re^2 + im^2 accumulated in place: no square root as in abs(), and,
    unlike (b conj(b)).real, a contiguous array, on which the objective's passes run about three times faster
    in torch. Under autograd, as the squared parts times (1, 1) instead: the same to rounding, with a backward of one
    product, where those of the views .real and .imag each scatter into a zeroed complex array (twice the time)."""
    if beam.requires_grad:
        parts = torch.view_as_real(beam)
        return (parts * parts) @ torch.ones(2, dtype=parts.dtype, device=parts.device)
    power = beam.real * beam.real
    return power.addcmul_(beam.imag, beam.imag)


def far_field_power(field, npix):
    """Power |far_field(field)|^2 (beam-power units), FFT order out."""
    return beam_power(far_field(field, npix))


def scale_maps(power, factors):
    """The (..., 3, npix, npix) power with each map multiplied by its gain factor (..., 3)."""
    return power * factors[..., None, None]


def add_offsets(power, offsets):
    """The (3, npix, npix) power with each map's baseline offset (beam-power units) added to all its pixels."""
    return power + offsets[:, None, None]


def model_power(params, setup):
    """The three model beams (beam-power units) in FFT order, for params (coeffs..., x0, y0, amp[, per-map terms,
    gains, offsets]): each map's own phase terms in its screen, its gain and its baseline offset where the setup
    fits them."""
    coeffs, x0, y0, amp, offsets = parameter_parts(params, setup)
    terms, gains = map_terms(params, setup)
    amplitude = illumination(setup.x, setup.y, x0, y0, amp, setup.sigma, setup.rho, setup.diff)
    phase = aperture_phase(coeffs, setup.basis)
    field = aperture_field(amplitude, phase, map_screens(terms, setup.screens, setup.phase_terms))
    power = far_field_power(place_on_grid(field, setup.index, setup.box), setup.npix)
    if setup.n_gains:
        power = scale_maps(power, map_gains(gains, setup))
    return power if not setup.n_offsets else add_offsets(power, offsets)


def beam_maps(params: ArrayLike, setup: Setup) -> Array:
    """The (3, npix, npix) model beams, centred as in paper/MODEL.md: fftshift(|ifft2(ifftshift(field))|^2)."""
    setup = check_setup(setup)
    params = as_model_array(check_params(params, setup.nparams), setup)
    return from_fft_order(model_power(params, setup))

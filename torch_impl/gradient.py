"""The exact gradient of the objective by hand-written reverse mode: the adjoint of each step of the model.

Forward: params -> illumination A and phase Phi on the dish -> field E_k = A exp(i (Phi + screen_k)) ->
beam b_k = ifft2(E_k on the grid) -> power P_k = |b_k|^2 -> objective. Backward, for a real objective L and a
complex quantity z, the gradient g_z is the one with dL = Re(conj(g_z) dz).
"""

import torch

from .aperture import aperture_phase, illumination
from .beams import place_on_grid
from .constants import N_ILLUMINATION
from .likelihood import objective_value


def power_adjoint(power, data, gamma, objective):
    """dL/dP per pixel: -2 r / (gamma^2 + r^2) for the Cauchy objective, -2 r for least squares, r = data - P."""
    resid = data - power
    return -2 * resid / (gamma**2 + resid**2) if objective == "cauchy" else -2 * resid


def far_field_adjoint(weights, beam):
    """dL/dE on the grid from W = dL/dP, through P = |b|^2 (g_b = 2 W b) and b = ifft2(E) (g_E = fft2(g_b) / n)."""
    return torch.fft.fft2(2 * weights * beam) / (beam.shape[-1] * beam.shape[-2])


def illumination_adjoint(weights, amplitude, x, y, x0, y0, amp, sigma, rho, diff):
    """dL/d(x0, y0, amp) from W = dL/dA on the dish pixels, A = amp exp(-q / 2 sigma^2)."""
    dx = x - x0
    dy = y - y0
    scaled = weights * amplitude / (2 * sigma**2)
    grad_x0 = (scaled * (2 * dx + rho * dy + 2 * diff * dx)).sum()
    grad_y0 = (scaled * (2 * dy + rho * dx - 2 * diff * dy)).sum()
    grad_amp = (weights * illumination(x, y, x0, y0, 1.0, sigma, rho, diff)).sum()
    return torch.stack([grad_x0, grad_y0, grad_amp])


def value_and_gradient(params, setup, data, gamma, objective):
    """The objective and its exact gradient for params (the model's array type), data in FFT order."""
    coeffs, (x0, y0, amp) = params[:-N_ILLUMINATION], params[-N_ILLUMINATION:]
    amplitude = illumination(setup.x, setup.y, x0, y0, amp, setup.sigma, setup.rho, setup.diff)
    phasor = torch.exp(1j * (aperture_phase(coeffs, setup.basis) + setup.screens))
    field = amplitude * phasor
    beam = torch.fft.ifft2(place_on_grid(field, setup.index, setup.npix))
    power = (beam * beam.conj()).real
    weights = far_field_adjoint(power_adjoint(power, data, gamma, objective), beam)
    grad_field = weights.reshape(3, -1)[:, setup.index].conj()
    grad_amplitude = (grad_field * phasor).real.sum(0)
    grad_phase = -(grad_field * field).imag.sum(0)
    grad_illumination = illumination_adjoint(grad_amplitude, amplitude, setup.x, setup.y, x0, y0, amp, setup.sigma,
                                             setup.rho, setup.diff)
    gradient = torch.cat([setup.basis @ grad_phase, grad_illumination])
    return objective_value(power, data, gamma, objective), gradient

"""The exact gradient of the objective by hand-written reverse mode: the adjoint of each step of the model.

Forward: params -> illumination A and phase Phi on the dish -> field E_k = A exp(i (Phi + screen_k)) ->
beam b_k = ifft2(E_k on the grid) -> power P_k = |b_k|^2 -> objective. Backward, for a real objective L and a
complex quantity z, the gradient g_z is the one with dL = Re(conj(g_z) dz).
"""

import torch

from oof_common.constants import MAP_POINTED

from .aperture import aperture_phase, illumination, map_screens
from .beams import add_offsets, beam_power, far_field, place_on_grid, scale_maps
from .likelihood import compared_excess, pixel_count
from .setup import map_gains, map_terms, parameter_parts


def objective_and_power_adjoint(power, data, gamma, loss, weights=None, scale=None, whitening=None):
    """The objective and W = dL/dP per pixel as (value, w, factor), W = factor w, from the excess e = P - data
    (beam-power units), computed in place over `power` (which it overwrites: every full-grid pass then writes into
    memory already in use). The constant factor is left for the far-field adjoint to apply on the small box.
    Where weights (0 or 1 per pixel) are given, a pixel of weight 0 has e = 0: it adds nothing to L and has W = 0.
    Where scale is given (ObservedMaps.map_scale: each map's weight on its compared pixels), the loss is of
    e' = scale e, and W = scale dL/de'. Where whitening is given (ObservedMaps.whitening), the loss is of the
    excess whitened along the scans, e'' = whitening.of(e'), and dL/de' = whitening.adjoint(dL/de''). Each loss's
    W is its value_and_weights' (losses.py); the values equal likelihood.py's.
    """
    excess = power
    excess -= data
    if scale is not None or weights is not None:
        excess *= weights if scale is None else scale
    if whitening is not None:
        excess = whitening.of(excess)
    value, excess_weights, factor = loss.value_and_weights(excess, gamma)
    if whitening is not None:
        excess_weights = whitening.adjoint(excess_weights)
    if scale is not None:
        excess_weights *= scale
    return value + loss.constant(pixel_count(data, weights), gamma), excess_weights, factor


def far_field_adjoint(weights, factor, beam, box):
    """dL/dE on the field box from W = factor w = dL/dP, through P = |b|^2 (g_b = 2 W b) and b = far_field(E): the
    adjoint of each zero-padded ifft is an fft (over npix, then divided by npix) cut back to the box. w b is formed
    in place over `beam` (which it overwrites); the constant 2 factor / npix^2 is applied on the box, after the
    transforms, where it costs least."""
    real = torch.view_as_real(beam)
    real[..., 0].mul_(weights)  # the real and imaginary parts by the real w, in place: no complex copy of w
    real[..., 1].mul_(weights)
    grad_beam = torch.fft.fft(beam, dim=-1)[..., :box[1]]
    return torch.fft.fft(grad_beam, dim=-2)[..., :box[0], :] * (2 * factor / (beam.shape[-1] * beam.shape[-2]))


def dish_field(params, setup):
    """The illumination taper (amp = 1) and amplitude A, the phasor exp(i (Phi + screen_k)) and the field
    E_k = A phasor on the dish."""
    coeffs, x0, y0, amp, _ = parameter_parts(params, setup)
    terms, _ = map_terms(params, setup)
    taper = illumination(setup.x, setup.y, x0, y0, 1.0, setup.sigma, setup.rho, setup.diff)
    amplitude = amp * taper
    phase = aperture_phase(coeffs, setup.basis) + map_screens(terms, setup.screens, setup.phase_terms)
    # exp(i phase) from cos and sine: faster than exp
    phasor = torch.complex(torch.cos(phase), torch.sin(phase))
    return taper, amplitude, phasor, amplitude * phasor


def illumination_derivatives(taper, amplitude, x, y, x0, y0, sigma, rho, diff):
    """dA/d(x0, y0, amp) on the dish pixels, A = amp taper, taper = exp(-q / 2 sigma^2), as (3, pixels): the
    rows that take dL/dA to dL/d(x0, y0, amp), and the forward derivatives of power_scores."""
    dx = x - x0
    dy = y - y0
    scaled = amplitude / (2 * sigma**2)
    return torch.stack([scaled * ((2 + 2 * diff) * dx + rho * dy), scaled * ((2 - 2 * diff) * dy + rho * dx), taper])


def dish_adjoint(grad_box, taper, amplitude, phasor, params, setup):
    """dL/dparams from dL/dE on the field box, through the field, the Zernike phase, the illumination and the
    per-map phase terms where fitted (the gains' and offsets' parts are power_terms_adjoint's)."""
    _, x0, y0, _, _ = parameter_parts(params, setup)
    grad_field = grad_box.reshape(3, -1)[:, setup.index].conj()
    # conj(g_E) exp(i phase) per map: its real part is dL/dA, minus A times its imaginary part dL/dPhi_k
    per_map = grad_field * phasor
    along_phasor = per_map.sum(0)
    grad_phase = -amplitude * along_phasor.imag
    d_amplitude = illumination_derivatives(taper, amplitude, setup.x, setup.y, x0, y0, setup.sigma, setup.rho,
                                           setup.diff)
    parts = [setup.basis @ grad_phase, d_amplitude @ along_phasor.real]
    if setup.phase_terms.shape[0]:
        parts.append((setup.phase_terms * (-amplitude * per_map.imag)).sum(dim=(-2, -1)))
    return torch.cat(parts)


def power_terms_adjoint(power_weights, factor, power, setup):
    """dL/d(gains, offsets) where fitted, from W = factor w = dL/dP and each map's power |b_k|^2 before its gain:
    a gain g_k scales map k (dL/dg_k = sum of W |b_k|^2 over its pixels), an offset adds to every pixel of its map
    (dL/do_k = sum of W)."""
    parts = []
    if setup.n_gains:
        pointed = list(MAP_POINTED)
        parts.append(factor * (power_weights[pointed] * power[pointed]).sum(dim=(-2, -1)))
    if setup.n_offsets:
        parts.append(factor * power_weights.sum(dim=(-2, -1)))
    return parts


def model_power_of_beam(beam, params, setup):
    """(|b|^2, the model power): the beams' power, then each map's gain and baseline offset where fitted (the
    first is the second where neither is)."""
    power = beam_power(beam)
    model = power
    if setup.n_gains:
        model = scale_maps(model, map_gains(map_terms(params, setup)[1], setup))
    if setup.n_offsets:
        model = add_offsets(model, parameter_parts(params, setup)[-1])
    return power, model


STEPS = ("dish field", "far field (pruned ifft2)", "power |b|^2", "objective + dL/dP",
         "far-field adjoint (pruned fft2)", "dish adjoint")
"""The steps of value_and_gradient, in order: the names its lap calls report (the bench's step profile)."""


def value_and_gradient(params, setup, data, gamma, loss, lap=None):
    """The objective and its exact gradient for params (the model's array type), data prepared (ObservedMaps), loss
    a Loss (losses.py). lap,
    where given, is called with each step's name (STEPS) as that step ends: the bench times the steps with it."""
    lap = lap or (lambda step: None)
    taper, amplitude, phasor, field = dish_field(params, setup)
    lap(STEPS[0])
    beam = far_field(place_on_grid(field, setup.index, setup.box), setup.npix)
    lap(STEPS[1])
    power, model = model_power_of_beam(beam, params, setup)
    lap(STEPS[2])
    value, power_weights, factor = objective_and_power_adjoint(model, data.fft_order, gamma, loss, data.weights,
                                                               data.map_scale, data.whitening)
    lap(STEPS[3])
    beam_weights = power_weights
    if setup.n_gains:  # |b_k|^2 enters map k times its gain
        beam_weights = scale_maps(power_weights, map_gains(map_terms(params, setup)[1], setup))
    grad_box = far_field_adjoint(beam_weights, factor, beam, setup.box)
    lap(STEPS[4])
    grad = torch.cat([dish_adjoint(grad_box, taper, amplitude, phasor, params, setup),
                      *power_terms_adjoint(power_weights, factor, power, setup)])
    lap(STEPS[5])
    return value, grad


def power_scores(params, setup, data, gamma, loss):
    """Each pixel's score, s = dL_pixel/dparams = W dP/dparams with W = dL/dP, as (P, 3, npix, npix) in FFT
    order (data prepared, ObservedMaps): the power's derivative by forward mode through the model
    (dE = i dPhi E + dA phasor,
    db = far_field(dE), dP = 2 Re(conj(b) db)), one transform of the three maps per parameter. Their sum over
    pixels is the gradient; their spread is the middle of the sandwich covariance."""
    return scores_of(score_context(params, setup, data, gamma, loss), setup, range(setup.nparams))


def score_context(params, setup, data, gamma, loss):
    """What every parameter's score needs, computed once: (field, phasor, the amplitude's derivatives, the beams,
    W = dL/dP and the objective's factor, and where the maps are whitened along the scans what whitens the
    scores); scores_of takes it."""
    taper, amplitude, phasor, field = dish_field(params, setup)
    beam = far_field(place_on_grid(field, setup.index, setup.box), setup.npix)
    power, model = model_power_of_beam(beam, params, setup)  # the adjoint overwrites model, not power, where gains
    whitened = None
    if data.whitening is None:
        _, weights, factor = objective_and_power_adjoint(model, data.fft_order, gamma, loss, data.weights,
                                                         data.map_scale)
    else:  # scores_of takes dP (W = 1) to each whitened pixel's score, dL/de'' times its whitened derivative
        excess = data.whitening.of(compared_excess(model, data.fft_order, data.factors))
        _, white_weights, white_factor = loss.value_and_weights(excess, gamma)
        whitened = data.whitening, data.factors, white_weights, white_factor
        weights, factor = torch.ones_like(model), 1.0
    _, x0, y0, _, _ = parameter_parts(params, setup)
    d_amplitude = illumination_derivatives(taper, amplitude, setup.x, setup.y, x0, y0, setup.sigma, setup.rho,
                                           setup.diff)
    gains = map_gains(map_terms(params, setup)[1], setup)
    return field, phasor, d_amplitude, beam, power, gains, weights, factor, whitened


def scores_of(context, setup, indices):
    """The scores (power_scores) of the parameters indices only, in that order: (len(indices), 3, npix, npix), so
    that a caller can hold a few at a time. context: score_context's."""
    field, phasor, d_amplitude, beam, power, gains, weights, factor, whitened = context
    scores = torch.empty((len(indices), *beam.shape), dtype=weights.dtype, device=weights.device)
    first_offset = setup.nparams - setup.n_offsets
    first_gain = first_offset - setup.n_gains
    for row, k in enumerate(indices):
        if k >= first_gain:  # a gain's (W |b_k|^2) or an offset's (W) score on its own map, 0 on the others
            scores[row] = 0
            on = MAP_POINTED[k - first_gain] if k < first_offset else k - first_offset
            scores[row, on] = factor * weights[on] * (power[on] if k < first_offset else 1)
            continue
        d_beam = far_field(place_on_grid(field_derivative(k, field, phasor, d_amplitude, setup), setup.index,
                                         setup.box), setup.npix)
        score = 2 * factor * weights * (beam.real * d_beam.real + beam.imag * d_beam.imag)
        scores[row] = score if gains is None else scale_maps(score, gains)
    if whitened is not None:  # the rows above are dP (W = 1): each whitened pixel's score, dL/de'' de''/dparams
        whitening, factors, white_weights, white_factor = whitened
        scores = white_factor * white_weights * whitening.of(scores if factors is None else scores * factors)
    return scores


def field_derivative(k, field, phasor, d_amplitude, setup):
    """dE/dparams_k on the dish (3, dish pixels) for a parameter of the field: a Zernike coefficient (i Z_k E), x0,
    y0 or amp (dA/dp phasor) or a per-map phase term (i T_k E)."""
    zernikes = setup.basis.shape[0]
    if k < zernikes:
        return 1j * setup.basis[k] * field
    if k < zernikes + len(d_amplitude):
        return d_amplitude[k - zernikes] * phasor
    return 1j * setup.phase_terms[k - zernikes - len(d_amplitude)] * field

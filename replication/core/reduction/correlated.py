"""The covariance of a real-maps fit where neighbouring pixels' residuals correlate (the SRT's noise follows the
scan): the sandwich H^-1 J H^-1 with J summed over pairs of pixels up to a bandwidth apart, each pair weighted by a
two-dimensional Bartlett window (a kernel estimate of the long-run score covariance; with bandwidth 0 it is the
sandwich of independent pixels)."""

from __future__ import annotations

import numpy as np
import torch

import torch_impl
from replication.core.reduction.sources import lag_correlation
from torch_impl.gradient import power_scores

CUTOFF = 0.1
"""The bandwidth is the largest lag (pixels) at which the residuals of neighbouring pixels still correlate at least
this much along either axis of the maps."""
MAX_BANDWIDTH = 24
"""The most pixels the window reaches (a residual correlated further than this is taken as correlated this far)."""


def bandwidth(residual: np.ndarray) -> int:
    """The window's reach (pixels): the largest lag up to MAX_BANDWIDTH at which the residuals correlate at least
    CUTOFF along either axis (0 for white noise)."""
    reach = 0
    for lag in range(1, MAX_BANDWIDTH + 1):
        if max(abs(lag_correlation(residual, axis, lag)) for axis in (1, 2)) < CUTOFF:
            break
        reach = lag
    return reach


def bartlett_spectrum(npix: int, reach: int) -> np.ndarray:
    """The 2-D FFT (npix x npix, real and not negative) of the Bartlett window w(a) w(b), w(a) = 1 - |a| / (reach + 1)
    for |a| <= reach, on circular lags."""
    lags = np.minimum(np.arange(npix), npix - np.arange(npix))
    weights = np.clip(1 - lags / (reach + 1), 0.0, None)
    return np.real(np.fft.fft2(np.outer(weights, weights)))


def windowed_score_covariance(scores: np.ndarray, reach: int) -> np.ndarray:
    """J = sum over maps and pixel pairs (x, x + t) of w(t) s(x) s(x + t)^T, scores (P, maps, npix, npix) on the
    model's grid (circular: neighbours on the sky are neighbours modulo npix in FFT order, and the scores vanish off
    the maps): computed in the Fourier domain as (1 / N) sum_f W(f) S(f)* S(f)^T (Parseval)."""
    npix = scores.shape[-1]
    spectra = np.fft.fft2(scores).reshape(scores.shape[0], -1)
    window = np.tile(bartlett_spectrum(npix, reach).ravel(), scores.shape[1])
    covariance = np.real(np.conj(spectra) * window @ spectra.T) / npix**2
    return (covariance + covariance.T) / 2


def correlated_covariance(x, setup, data, gamma: float, objective, *reaches: int) -> list[np.ndarray]:
    """The sandwich covariance H^-1 J H^-1 at x (torch tree, float64; data prepared or raw maps) with J windowed
    over each of reaches pixels (windowed_score_covariance; reach 0: the pixels independent), one per reach, from
    one Hessian and one set of scores."""
    data = torch_impl.prepare_data(data, setup) if not isinstance(data, torch_impl.ObservedMaps) else data
    scores = power_scores(torch.as_tensor(np.asarray(x, dtype=np.float64)), setup, data, gamma,
                          torch_impl.losses.loss_of(objective)).numpy()
    inverse = np.linalg.inv(torch_impl.hessian(x, setup, data, gamma, objective))
    return [inverse @ windowed_score_covariance(scores, reach) @ inverse for reach in reaches]

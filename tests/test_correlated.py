"""The covariance of a fit whose residuals correlate between neighbouring pixels: the windowed score covariance is the
plain one with no window, is positive semi-definite with one, and grows where the noise follows the scan; the
bandwidth is 0 for white residuals and reaches as far as scan-correlated ones correlate."""

import numpy as np
import pytest

import torch_impl
from replication.core.reduction.correlated import (
    bandwidth,
    bartlett_spectrum,
    correlated_covariance,
    windowed_score_covariance,
)
from replication.studies.closure.maps import scan_noise


@pytest.fixture(scope="module")
def problem():
    """Maps of npix 32, n = 3, with white noise and with the same noise smoothed along the scan."""
    setup = torch_impl.make_setup(32, 3)
    rng = np.random.default_rng(5)
    truth = np.zeros(setup.nparams)
    truth[setup.amp_index] = 1.0  # a beam to fit
    truth[:setup.basis.shape[0]] = rng.normal(scale=0.3, size=setup.basis.shape[0])
    beams = np.asarray(torch_impl.beam_maps(truth, setup))
    white = rng.normal(scale=0.01 * beams.max(), size=beams.shape)
    return setup, truth, beams, white


def test_with_no_window_it_is_the_plain_score_covariance(problem):
    setup, truth, beams, white = problem
    data = torch_impl.prepare_data(beams + white, setup)
    scores = torch_impl.gradient.power_scores(torch_impl.backend.as_model_array(truth, setup), setup, data, 0.01,
                                              torch_impl.losses.loss_of("cauchy")).numpy()
    plain = torch_impl.score_covariance(truth, setup, data, 0.01, "cauchy")
    np.testing.assert_allclose(windowed_score_covariance(scores, 0), plain, rtol=1e-10, atol=1e-12 * np.abs(
        plain).max())
    wider = windowed_score_covariance(scores, 3)
    assert np.linalg.eigvalsh(wider).min() >= -1e-10 * np.abs(wider).max()


def test_the_window_s_spectrum_is_not_negative():
    for reach in (0, 1, 4, 12):
        assert bartlett_spectrum(64, reach).min() >= -1e-12


def test_the_bandwidth_is_zero_for_white_residuals_and_reaches_as_far_as_correlated_ones():
    rng = np.random.default_rng(7)
    white = rng.normal(size=(3, 101, 101))
    assert bandwidth(white) == 0
    correlated = scan_noise(rng, (3, 101, 101))
    assert bandwidth(correlated) >= 2


def test_correlated_noise_widens_the_covariance(problem):
    setup, truth, beams, _ = problem
    rng = np.random.default_rng(11)
    along = np.cumsum(rng.normal(size=beams.shape), axis=2)  # noise that wanders along the scan
    along = 0.01 * beams.max() * along / along.std()
    plain, windowed = correlated_covariance(truth, setup, beams + along, 0.01, "gaussian", 0, 6)
    assert np.median(np.diag(windowed) / np.diag(plain)) > 1.5

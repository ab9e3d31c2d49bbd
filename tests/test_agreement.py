"""NumPy and torch compute the same model: float64 to 1e-12, float32 to 1e-5."""

import numpy as np
import pytest
import torch
from conftest import random_params, relative_error, to_numpy

import reference_numpy
import torch_impl
from replication.core.simulation import simulate_observation

GRIDS = [(8, 0), (16, 2), (31, 3), (32, 4), (65, 6), (64, 8)]


@pytest.mark.parametrize(("npix", "nzern"), GRIDS)
def test_beams_agree_in_float64(npix, nzern, rng):
    setup_np, setup_t = reference_numpy.make_setup(npix, nzern), torch_impl.make_setup(npix, nzern)
    params = random_params(rng, setup_np)
    beams_np = reference_numpy.beam_maps(params, setup_np)
    beams_t = torch_impl.beam_maps(params, setup_t)
    assert isinstance(beams_np, np.ndarray)
    assert isinstance(beams_t, torch.Tensor)
    assert beams_np.shape == tuple(beams_t.shape) == (3, npix, npix)
    assert relative_error(beams_t, beams_np) < 1e-12


@pytest.mark.parametrize(("npix", "nzern"), GRIDS)
def test_likelihoods_agree_in_float64(npix, nzern, rng):
    setup_np, setup_t = reference_numpy.make_setup(npix, nzern), torch_impl.make_setup(npix, nzern)
    data = simulate_observation(setup_np, random_params(rng, setup_np), seed=1)
    params = random_params(rng, setup_np)
    nll_np = reference_numpy.negative_log_likelihood(params, setup_np, data)
    nll_t = torch_impl.negative_log_likelihood(params, setup_t, data)
    assert isinstance(nll_np, float)
    assert isinstance(nll_t, float)
    assert nll_t == pytest.approx(nll_np, rel=1e-12)


@pytest.mark.parametrize(("npix", "nzern"), [(32, 3), (65, 5), (128, 8)])
def test_float32_agrees_to_1e_5(npix, nzern, rng):
    setup_np = reference_numpy.make_setup(npix, nzern)
    setup_32 = torch_impl.make_setup(npix, nzern, dtype=torch.float32)
    params = random_params(rng, setup_np)
    data = simulate_observation(setup_np, params, seed=2)
    beams_32 = torch_impl.beam_maps(params, setup_32)
    assert beams_32.dtype == torch.float32
    assert relative_error(beams_32, reference_numpy.beam_maps(params, setup_np)) < 1e-5
    nll_32 = torch_impl.negative_log_likelihood(params, setup_32, data)
    assert nll_32 == pytest.approx(reference_numpy.negative_log_likelihood(params, setup_np, data), rel=1e-5)


def test_likelihood_matches_the_spec_formula(rng):
    """The well-conditioned form equals paper/MODEL.md's sum of -log(gamma / (pi (resid^2 + gamma^2)))."""
    setup = reference_numpy.make_setup(24, 2)
    params = random_params(rng, setup)
    data = simulate_observation(setup, params, seed=3)
    resid = data - reference_numpy.beam_maps(params, setup)
    gamma = 1e-4
    expected = np.sum(-np.log(gamma / (np.pi * (resid**2 + gamma**2))))
    assert reference_numpy.negative_log_likelihood(params, setup, data, gamma) == pytest.approx(expected, rel=1e-12)


def test_setup_fields_agree(rng):
    setup_np, setup_t = reference_numpy.make_setup(40, 4), torch_impl.make_setup(40, 4)
    for name in ("x", "y", "index", "basis", "screens"):
        np.testing.assert_allclose(to_numpy(getattr(setup_t, name)), getattr(setup_np, name), rtol=1e-14, atol=1e-14)
    assert setup_np.nparams == setup_t.nparams == 15 - 1 + 3

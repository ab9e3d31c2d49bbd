"""The torch autograd gradient against central finite differences and torch.autograd.gradcheck."""

import numpy as np
import pytest
import torch
from conftest import random_params

import reference_numpy
import torch_impl
from replication.core.simulation import simulate_observation
from torch_impl.backend import to_fft_order
from torch_impl.beams import model_power
from torch_impl.likelihood import compared_excess
from torch_impl.losses import Cauchy


@pytest.mark.parametrize(("npix", "nzern"), [(16, 2), (33, 4)])
def test_gradient_matches_central_differences(npix, nzern, rng):
    setup = torch_impl.make_setup(npix, nzern)
    params = random_params(rng, setup)
    data = simulate_observation(reference_numpy.make_setup(npix, nzern), random_params(rng, setup), seed=4)
    value, grad = torch_impl.value_and_grad(params, setup, data)
    assert value == pytest.approx(torch_impl.negative_log_likelihood(params, setup, data), rel=1e-14)
    assert grad.dtype == np.float64
    assert grad.shape == params.shape
    setup_np = reference_numpy.make_setup(npix, nzern)
    step = 1e-6
    numeric = np.empty_like(params)
    for j, shift in enumerate(step * np.eye(params.size)):
        numeric[j] = (reference_numpy.negative_log_likelihood(params + shift, setup_np, data)
                      - reference_numpy.negative_log_likelihood(params - shift, setup_np, data)) / (2 * step)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5 * np.max(np.abs(numeric)))


def test_gradcheck_passes():
    setup = torch_impl.make_setup(16, 2)  # 12 dish pixels, 8 parameters
    rng = np.random.default_rng(5)
    params = torch.as_tensor(random_params(rng, setup), dtype=torch.float64).requires_grad_()
    data = to_fft_order(torch.as_tensor(simulate_observation(reference_numpy.make_setup(16, 2),
                                                             random_params(rng, setup), seed=5)))
    # gamma near the residuals keeps the check's finite differences well inside the smooth region.
    assert torch.autograd.gradcheck(lambda p: Cauchy().value(compared_excess(model_power(p, setup), data), 1e-3),
                                    (params,))

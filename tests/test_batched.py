"""The objective and gradient of K parameter vectors at once (a multi-start's starts): each equal to its own."""

import numpy as np
import pytest
from conftest import SEED

import reference_numpy
import torch_impl
from replication.core.simulation import simulate_observation, true_params


def starts(setup, count):
    """count parameter vectors 0.3 rad rms from the truth in every Zernike term, offsets where fitted."""
    rng = np.random.default_rng(SEED)
    batch = np.tile(true_params(setup.nparams - setup.n_offsets), (count, 1))
    batch[:, : setup.basis.shape[0]] += 0.3 * rng.standard_normal((count, setup.basis.shape[0]))
    return np.hstack([batch, 1e-4 * rng.standard_normal((count, setup.n_offsets))])


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
@pytest.mark.parametrize(("objective", "offsets", "masked"), [
    ("cauchy", False, False), ("gaussian", True, False), ("least-squares", False, True), ("cauchy", True, True)])
def test_each_vector_of_a_batch_gets_its_own_value_and_gradient(package, objective, offsets, masked):
    setup = package.make_setup(64, 3, offsets=offsets)
    maps = simulate_observation(reference_numpy.make_setup(64, 3), true_params(12), seed=SEED)
    mask = np.zeros(maps.shape, dtype=bool)
    mask[:, :5] = masked
    data = package.prepare_data(np.ma.masked_array(maps, mask), setup)
    batch = starts(setup, 5)
    values, grads = package.batched_value_and_grad(batch, setup, data, 2e-3, objective)
    assert values.shape == (5,)
    assert grads.shape == (5, setup.nparams)
    for row, value, grad in zip(batch, values, grads, strict=True):
        one_value, one_grad = reference_numpy.value_and_grad(row, reference_numpy.make_setup(64, 3, offsets=offsets),
                                                             np.ma.masked_array(maps, mask), 2e-3, objective,
                                                             "adjoint")
        assert value == pytest.approx(one_value, rel=1e-12)
        np.testing.assert_allclose(grad, one_grad, rtol=0, atol=1e-10 * np.abs(one_grad).max())


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
@pytest.mark.parametrize(("params", "words"), [
    (np.zeros(12), r"shape \(K, 12\)"), (np.zeros((2, 11)), r"shape \(K, 12\)"), (np.zeros((0, 12)), "K >= 1"),
    (np.full((2, 12), np.nan), "params"), ([["a"] * 12], "params")])
def test_a_batch_that_is_not_one_is_refused_naming_it(package, params, words):
    setup = package.make_setup(32, 3)
    data = simulate_observation(reference_numpy.make_setup(32, 3), true_params(12), seed=SEED)
    with pytest.raises(ValueError, match=words):
        package.batched_value_and_grad(params, setup, data)

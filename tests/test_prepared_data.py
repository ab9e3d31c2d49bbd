"""Data prepared once (prepare_data) give exactly what the raw maps give, in both trees, and the adjoint's in-place
passes write only into its own arrays."""

import importlib

import numpy as np
import pytest
import torch
from conftest import random_params

import reference_numpy
from replication.core.simulation import simulate_observation

TREES = ("reference_numpy", "torch_impl")


def problem(package, npix=24, nzern=3, seed=11):
    setup = package.make_setup(npix, nzern)
    rng = np.random.default_rng(seed)
    data = simulate_observation(reference_numpy.make_setup(npix, nzern), random_params(rng, setup), seed=seed)
    return setup, random_params(rng, setup), data


@pytest.mark.parametrize("objective", ["cauchy", "least-squares"])
@pytest.mark.parametrize("gradient", ["adjoint", "autograd", "finite-differences"])
def test_prepared_data_give_the_same_value_and_gradient(package, gradient, objective):
    if gradient == "autograd" and package.__name__ == "reference_numpy":
        pytest.skip("autograd is torch's")
    setup, params, data = problem(package)
    observed = package.prepare_data(data, setup)
    raw = package.value_and_grad(params, setup, data, objective=objective, gradient=gradient)
    prepared = package.value_and_grad(params, setup, observed, objective=objective, gradient=gradient)
    assert prepared[0] == raw[0]
    np.testing.assert_array_equal(prepared[1], raw[1])
    assert package.negative_log_likelihood(params, setup, observed, objective=objective) == \
        package.negative_log_likelihood(params, setup, data, objective=objective)


def test_a_fit_of_prepared_data_is_the_fit_of_the_raw_maps(package):
    setup, params, data = problem(package)
    start = np.zeros_like(params)
    start[-1] = 1.0
    raw = package.fit(setup, data, start, gradient="adjoint")
    prepared = package.fit(setup, package.prepare_data(data, setup), start, gradient="adjoint")
    np.testing.assert_array_equal(prepared.x, raw.x)
    assert (prepared.nit, prepared.nfev, prepared.fun) == (raw.nit, raw.nfev, raw.fun)


def test_data_prepared_for_another_setup_are_refused(package):
    setup, params, data = problem(package)
    other = package.make_setup(32, 3)
    with pytest.raises(ValueError, match=r"prepared for npix=24.*npix=32.*prepare_data"):
        package.value_and_grad(params, other, package.prepare_data(data, setup))


def test_data_prepared_in_another_precision_are_refused():
    import torch_impl

    setup, params, data = problem(torch_impl)
    single = torch_impl.make_setup(24, 3, dtype=torch.float32)
    with pytest.raises(ValueError, match=r"torch.float64 on cpu.*torch.float32"):
        torch_impl.fit(single, torch_impl.prepare_data(data, setup), params)


def test_bad_maps_are_refused_when_prepared(package):
    setup, _, data = problem(package)
    data[1, 2, 3] = np.nan
    with pytest.raises(ValueError, match="data must be finite"):
        package.prepare_data(data, setup)


def test_prepared_maps_share_no_memory_with_the_callers(package):
    """The check takes float64 maps without a copy; the reorder into FFT order makes the copy: a change to the
    caller's array afterwards leaves the prepared maps as they were."""
    setup, _, data = problem(package)
    observed = package.prepare_data(data, setup)
    before = package.backend.to_numpy(observed.fft_order)
    data *= 2
    np.testing.assert_array_equal(package.backend.to_numpy(observed.fft_order), before)


def test_numpys_prepared_maps_are_read_only():
    setup, _, data = problem(reference_numpy)
    observed = reference_numpy.prepare_data(data, setup)
    with pytest.raises(ValueError, match="read-only"):
        observed.fft_order[0, 0, 0] = 1.0


@pytest.mark.parametrize("tree", TREES)
@pytest.mark.parametrize("objective", ["cauchy", "least-squares"])
def test_the_adjoint_writes_only_into_its_own_arrays(tree, objective):
    package = importlib.import_module(tree)
    gradient = importlib.import_module(f"{tree}.gradient")
    setup, params, data = problem(package)
    observed = package.prepare_data(data, setup)
    maps = observed.fft_order
    before = maps.copy() if tree == "reference_numpy" else maps.clone()
    params = params if tree == "reference_numpy" else torch.as_tensor(params)
    loss = package.losses.loss_of(objective)
    first = gradient.value_and_gradient(params, setup, observed, 1e-4, loss)
    second = gradient.value_and_gradient(params, setup, observed, 1e-4, loss)
    assert (maps == before).all()
    assert float(first[0]) == float(second[0])
    assert (first[1] == second[1]).all()

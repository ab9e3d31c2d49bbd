"""The library refuses what it cannot compute, with a ValueError naming the argument, in both trees."""


import numpy as np
import pytest
import torch

import reference_numpy
import torch_impl
from replication.core.objectives import CAUCHY
from replication.core.problem import Problem
from replication.core.simulation import true_params

PACKAGES = [reference_numpy, torch_impl]


@pytest.mark.parametrize("package", PACKAGES)
def test_a_setup_too_large_for_memory_is_refused_before_anything_is_allocated(package):
    with pytest.raises(ValueError, match=r"npix=8192, nzern=20: a setup would need about .* GiB, more than the 8"):
        package.make_setup(8192, 20)


@pytest.mark.parametrize("package", PACKAGES)
def test_physical_settings_whose_screens_are_not_finite_are_refused(package):
    with np.errstate(over="ignore", invalid="ignore"), pytest.raises(ValueError, match=r"screens .* non-finite"):
        package.make_setup(32, 2, radius=1e300)


@pytest.mark.parametrize("package", PACKAGES)
def test_a_start_with_zero_amplitude_is_refused(package):
    problem = Problem.simulated(32, 2, CAUCHY)
    truth, data = problem.truth, problem.data
    start = truth.copy()
    start[-1] = 0.0
    with pytest.raises(ValueError, match=r"p0: the amplitude .* is 0"):
        package.fit(package.make_setup(32, 2), data, start)


@pytest.mark.parametrize("package", PACKAGES)
@pytest.mark.parametrize(("hessian", "scale", "match"), [
    (np.ones(3), 1.0, "hessian must be square and 2-D"),
    (np.eye(3), -1.0, "scale must be a finite positive number"),
    (np.full((2, 2), np.nan), 1.0, "hessian must be finite"),
])
def test_standard_errors_check_their_inputs(package, hessian, scale, match):
    with pytest.raises(ValueError, match=match):
        package.standard_errors(hessian, scale)
    with pytest.raises(ValueError, match=r"scores must be \(2, 2\)"):
        package.standard_errors(np.eye(2), scores=np.eye(3))


def test_a_tensor_on_the_meta_device_is_a_value_error():
    setup = torch_impl.make_setup(32, 3)
    data = Problem.simulated(32, 3, CAUCHY).data
    with pytest.raises(ValueError, match=r"params must be .* got a tensor on meta"):
        torch_impl.negative_log_likelihood(torch.zeros(setup.nparams, device="meta"), setup, data)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_every_gradient_option_agrees_with_the_exact_gradient_in_each_precision(dtype):
    """Finite differences take the step of the setup's precision: a float64 step in float32 gave gradients
    wrong by tens of times their size. Tolerance relative to the largest component: float64 1e-5, float32 5e-2."""
    npix, nzern = 32, 3
    problem = Problem.simulated(npix, nzern, CAUCHY)
    truth, data = problem.truth, problem.data
    params = truth + 0.05 * np.random.default_rng(3).standard_normal(truth.size)
    exact = reference_numpy.value_and_grad(params, reference_numpy.make_setup(npix, nzern), data,
                                           gradient="adjoint")[1]
    setup = torch_impl.make_setup(npix, nzern, dtype=dtype)
    tolerance = 1e-5 if dtype == torch.float64 else 5e-2
    for gradient in ("finite-differences", "adjoint", "autograd"):
        _, grad = torch_impl.value_and_grad(params, setup, data, gradient=gradient)
        error = np.max(np.abs(grad - exact)) / np.max(np.abs(exact))
        assert error < tolerance, (gradient, error)


def test_the_on_device_bfgs_says_so_when_it_ends_at_a_non_finite_point(monkeypatch):
    fit_module = torch_impl.fitting

    setup = torch_impl.make_setup(16, 2)
    truth, data = true_params(setup.nparams), np.full((3, 16, 16), 1e-6)

    def runaway(*args, **kwargs):
        from scipy.optimize import OptimizeResult
        nan = torch.full((setup.nparams,), float("nan"), dtype=torch.float64)
        return OptimizeResult(x=nan, fun=torch.tensor(float("nan")), grad=nan, hess_inv=torch.eye(setup.nparams),
                              nit=3, nfev=4, status=2, success=False, message="Desired error not necessarily achieved "
                              "due to precision loss.")

    monkeypatch.setattr(fit_module.torchmin, "minimize", runaway)
    result = torch_impl.fit(setup, data, truth, minimizer="torchmin")
    assert result.success is False
    assert "non-finite" in result.message

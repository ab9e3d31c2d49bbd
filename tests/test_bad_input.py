"""Bad input raises ValueError naming the argument, in both packages, before any work."""

import numpy as np
import pytest
import torch

import reference_numpy
import torch_impl
from replication.core.simulation import true_params

GOOD = 16, 2


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"npix": 4, "nzern": 2}, "npix"),
        ({"npix": 7, "nzern": 2}, "npix"),
        ({"npix": 10**6, "nzern": 2}, "npix"),
        ({"npix": 16.0, "nzern": 2}, "npix"),
        ({"npix": True, "nzern": 2}, "npix"),
        ({"npix": 16, "nzern": -1}, "nzern"),
        ({"npix": 16, "nzern": 2.5}, "nzern"),
        ({"npix": 16, "nzern": 99}, "nzern"),
        ({"npix": 16, "nzern": 2, "dz": -0.05}, "dz"),
        ({"npix": 16, "nzern": 2, "wavelength": 0.0}, "wavelength"),
        ({"npix": 16, "nzern": 2, "sigma": float("nan")}, "sigma"),
        ({"npix": 16, "nzern": 2, "radius": float("inf")}, "radius"),
        ({"npix": 16, "nzern": 2, "focal_length": "14.4"}, "focal_length"),
        ({"npix": 16, "nzern": 2, "oversamp": -2}, "oversamp"),
    ],
)
def test_make_setup_rejects(package, kwargs, name):
    with pytest.raises(ValueError, match=name):
        package.make_setup(**kwargs)


@pytest.fixture
def problem(package):
    setup = package.make_setup(*GOOD)
    params = true_params(setup.nparams)
    data = np.full((3, GOOD[0], GOOD[0]), 1e-5)
    return package, setup, params, data


BAD_PARAMS = [np.zeros(3), np.zeros((2, 8)), np.array([np.nan] * 8), np.array([np.inf] * 8), "params"]


@pytest.mark.parametrize("params", BAD_PARAMS, ids=["short", "2d", "nan", "inf", "string"])
def test_bad_params_are_rejected(problem, params):
    package, setup, _, data = problem
    with pytest.raises(ValueError, match="params"):
        package.beam_maps(params, setup)
    with pytest.raises(ValueError, match="params"):
        package.negative_log_likelihood(params, setup, data)
    with pytest.raises(ValueError, match="p0"):
        package.fit(setup, data, params)


BAD_DATA = [np.zeros((3, 17, 16)), np.zeros((2, 16, 16)), np.zeros((16, 16)), np.full((3, 16, 16), np.nan), None,
            np.zeros((3, 0, 16)), np.ones((3, 15, 15))]


@pytest.mark.parametrize("data", BAD_DATA, ids=["larger-than-the-grid", "two-maps", "2d", "nan", "none", "empty",
                                                "smaller-unasked"])
def test_bad_data_is_rejected(problem, data):
    package, setup, params, _ = problem
    with pytest.raises(ValueError, match="data"):
        package.negative_log_likelihood(params, setup, data)
    with pytest.raises(ValueError, match="data"):
        package.fit(setup, data, params)


@pytest.mark.parametrize(("keyword", "value"), [("gamma", 0.0), ("gamma", -1e-4), ("tol", 0.0), ("tol", np.nan),
                                               ("tol", 10**400), ("gamma", 10**400), ("callback", 10**400)])
def test_bad_settings_of_the_fit_are_rejected(problem, keyword, value):
    package, setup, params, data = problem
    with pytest.raises(ValueError, match=keyword):
        package.fit(setup, data, params, **{keyword: value})


def test_bad_gamma_of_the_likelihood_is_rejected(problem):
    package, setup, params, data = problem
    with pytest.raises(ValueError, match="gamma"):
        package.negative_log_likelihood(params, setup, data, gamma=float("nan"))


def test_value_and_grad_checks_its_input():
    setup = torch_impl.make_setup(*GOOD)
    with pytest.raises(ValueError, match="params"):
        torch_impl.value_and_grad(np.zeros(2), setup, np.zeros((3, 16, 16)))
    with pytest.raises(ValueError, match="data"):
        torch_impl.value_and_grad(true_params(setup.nparams), setup, np.zeros((3, 16, 17)))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message given where CUDA is absent")
def test_missing_cuda_device_is_a_value_error():
    with pytest.raises(ValueError, match="device"):
        torch_impl.make_setup(*GOOD, device="cuda")


@pytest.mark.parametrize("device", ["tpu-9", "cuda:99", 3.5])
def test_unknown_devices_are_value_errors(device):
    with pytest.raises(ValueError, match="device"):
        torch_impl.make_setup(*GOOD, device=device)


@pytest.mark.parametrize("dtype", [torch.float16, torch.complex64, "float64", np.float64])
def test_unsupported_dtypes_are_value_errors(dtype):
    with pytest.raises(ValueError, match="dtype"):
        torch_impl.make_setup(*GOOD, dtype=dtype)


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_the_gradient_s_former_name_still_works_with_a_deprecation_warning(package):
    setup = package.make_setup(16, 2)
    params, data = np.zeros(setup.nparams), np.ones((3, 16, 16))
    params[-1] = 1.0
    with pytest.warns(DeprecationWarning, match="gradient='analytic' is deprecated.*gradient='adjoint'"):
        old = package.value_and_grad(params, setup, data, gradient="analytic")
    new = package.value_and_grad(params, setup, data, gradient="adjoint")
    assert old[0] == new[0]
    np.testing.assert_array_equal(old[1], new[1])
    with pytest.warns(DeprecationWarning, match="analytic"):
        fitted = package.fit(setup, data, params, gradient="analytic")
    assert fitted.nit == package.fit(setup, data, params, gradient="adjoint").nit

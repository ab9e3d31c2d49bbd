"""Fits: NumPy (finite-difference BFGS) and torch (autograd BFGS) agree; torch recovers aberrations."""

import time

import numpy as np
import pytest
import scipy.optimize

import reference_numpy
import torch_impl
from replication.core.objectives import CAUCHY
from replication.core.problem import Problem
from replication.core.simulation import aberrated_params, simulate_observation, true_params
from replication.core.watch import TIMED_OUT, host_copy, watched_fit


def standard_errors(result, setup, data):
    """Exact standard errors at a fit, from the Hessian of its objective."""
    return reference_numpy.standard_errors(reference_numpy.hessian(result.x, setup, data))


@pytest.mark.parametrize(("npix", "nzern"), [(32, 2), (64, 3)])
def test_numpy_and_torch_fits_agree_within_a_tenth_of_a_standard_error(npix, nzern):
    setup_np, setup_t = reference_numpy.make_setup(npix, nzern), torch_impl.make_setup(npix, nzern)
    truth = true_params(setup_np.nparams)
    data = simulate_observation(setup_np, truth, seed=11)
    result_np = reference_numpy.fit(setup_np, data, truth)
    result_t = torch_impl.fit(setup_t, data, truth)
    for result in (result_np, result_t):
        assert isinstance(result, scipy.optimize.OptimizeResult)
        assert result.x.shape == truth.shape
        assert result.nit > 0
        assert result.fun < reference_numpy.negative_log_likelihood(truth, setup_np, data)
    errors = standard_errors(result_t, setup_np, data)
    assert np.all(errors > 0)
    np.testing.assert_array_less(np.abs(result_np.x - result_t.x) / errors, 0.1)
    assert result_np.fun == pytest.approx(result_t.fun, rel=1e-12, abs=1e-6)
    assert result_t.nfev < result_np.nfev  # the autograd gradient replaces P + 1 evaluations per step


def test_torch_recovers_coma_and_astigmatism_from_zero():
    """Half a radian of each coma and astigmatism: the standard errors here are 0.05-0.2 rad."""
    setup_np, setup_t = reference_numpy.make_setup(64, 3), torch_impl.make_setup(64, 3)
    truth = aberrated_params(setup_np, radians=0.5)
    data = simulate_observation(setup_np, truth, seed=12)
    start = true_params(setup_np.nparams)
    result = torch_impl.fit(setup_t, data, start)
    errors = standard_errors(result, setup_np, data)
    np.testing.assert_array_less(np.abs(result.x - truth) / errors, 3.0)
    assert np.max(np.abs(start - truth) / errors) > 4  # the start lay well outside the 3-sigma region


@pytest.mark.parametrize(("npix", "nzern"), [(32, 2), (64, 4)])
def test_on_device_bfgs_reaches_the_scipy_solution_within_a_tenth_of_a_standard_error(npix, nzern):
    """pytorch-minimize's BFGS (the minimisation stays on the setup's device) against scipy's, same data."""
    setup_np, setup_t = reference_numpy.make_setup(npix, nzern), torch_impl.make_setup(npix, nzern)
    truth = true_params(setup_np.nparams)
    data = simulate_observation(setup_np, truth, seed=13)
    on_device = torch_impl.fit(setup_t, data, truth, minimizer="torchmin")
    on_host = torch_impl.fit(setup_t, data, truth)
    assert isinstance(on_device, scipy.optimize.OptimizeResult)
    assert on_device.x.dtype == np.float64
    assert on_device.hess_inv.shape == (truth.size, truth.size)
    assert on_device.nfev > 0
    assert on_device.fun < reference_numpy.negative_log_likelihood(truth, setup_np, data)
    errors = standard_errors(on_host, setup_np, data)
    np.testing.assert_array_less(np.abs(on_device.x - on_host.x) / errors, 0.1)


def test_on_device_bfgs_minimises_least_squares_as_far_as_scipy_does():
    """At least squares' scale (objective ~1e-6) torchmin's absolute progress tests stopped every fit after one
    step ("non-descent direction"); with them off it lowers the objective as far as scipy's BFGS, same tol."""
    setup_np, setup_t = reference_numpy.make_setup(64, 3), torch_impl.make_setup(64, 3)
    truth = true_params(setup_np.nparams)
    data = simulate_observation(setup_np, truth, seed=13)
    on_device = torch_impl.fit(setup_t, data, truth, objective="least-squares", minimizer="torchmin")
    on_host = torch_impl.fit(setup_t, data, truth, objective="least-squares")
    start = reference_numpy.negative_log_likelihood(truth, setup_np, data, objective="least-squares")
    assert on_device.success, on_device.message
    assert on_device.nit > 1
    assert start - on_device.fun >= 0.9 * (start - on_host.fun)


def test_on_device_bfgs_stops_at_a_non_finite_objective_and_says_so():
    setup = torch_impl.make_setup(16, 2)
    data = np.full((3, 16, 16), 1e-6)
    data[0, 3, 3] = 1e160  # the squared residual overflows
    result = torch_impl.fit(setup, data, true_params(setup.nparams), minimizer="torchmin")
    assert result.success is False
    assert "loss" in result.message.lower() or "finite" in result.message.lower()


def test_minimizer_is_checked_in_both_packages():
    setup_np, setup_t = reference_numpy.make_setup(16, 2), torch_impl.make_setup(16, 2)
    data = simulate_observation(setup_np, true_params(setup_np.nparams), seed=1)
    p0 = true_params(setup_np.nparams)
    with pytest.raises(ValueError, match="minimizer must be one of 'scipy', got 'torchmin'"):
        reference_numpy.fit(setup_np, data, p0, minimizer="torchmin")
    with pytest.raises(ValueError, match="minimizer must be one of 'scipy', 'torchmin', got 'adam'"):
        torch_impl.fit(setup_t, data, p0, minimizer="adam")
    with pytest.raises(ValueError, match="differentiates by autograd; gradient='adjoint'"):
        torch_impl.fit(setup_t, data, p0, minimizer="torchmin", gradient="adjoint")


@pytest.mark.parametrize(("package", "gradient", "minimizer"), [
    (reference_numpy, "finite-differences", "scipy"), (reference_numpy, "adjoint", "scipy"),
    (torch_impl, "autograd", "scipy"), (torch_impl, "adjoint", "scipy"), (torch_impl, "autograd", "torchmin")])
def test_the_trajectory_holds_every_evaluation_and_reproduces_the_fits_final_point(package, gradient, minimizer):
    problem = Problem.simulated(32, 3, CAUCHY)
    truth, data = problem.truth, problem.data
    setup = package.make_setup(32, 3)
    start = time.perf_counter()
    result = watched_fit(package.fit, setup, data, truth, gradient=gradient, minimizer=minimizer, trajectory=True)
    elapsed = time.perf_counter() - start
    steps = result.trajectory
    assert steps["params"].shape == (result.nfev, setup.nparams)
    np.testing.assert_array_equal(steps["evaluations"], np.arange(1, result.nfev + 1))
    assert np.all(np.diff(steps["seconds"]) >= 0)
    assert 0 <= steps["seconds"][0] <= steps["seconds"][-1] <= elapsed
    assert np.any(np.all(steps["params"] == result.x, axis=1))  # the point it returns is one it evaluated
    np.testing.assert_array_equal(steps["params"][0], truth)  # the first evaluation is at the start
    assert "trajectory" not in package.fit(setup, data, truth, gradient=gradient, minimizer=minimizer)


@pytest.mark.parametrize(("package", "gradient", "minimizer"), [
    (reference_numpy, "finite-differences", "scipy"), (torch_impl, "autograd", "scipy"),
    (torch_impl, "autograd", "torchmin")])
def test_a_fit_past_its_time_limit_stops_after_that_iteration_and_says_so(package, gradient, minimizer):
    problem = Problem.simulated(32, 3, CAUCHY)
    truth, data = problem.truth, problem.data
    setup = package.make_setup(32, 3)
    full = package.fit(setup, data, truth, gradient=gradient, minimizer=minimizer)
    stopped = watched_fit(package.fit, setup, data, truth, gradient=gradient, minimizer=minimizer, trajectory=True,
                          time_limit=1e-9)
    assert full.nit > 1
    assert full.status != TIMED_OUT
    assert stopped.nit == 1
    assert stopped.nfev < full.nfev
    assert stopped.status == TIMED_OUT == package.FitStatus.STOPPED
    assert not stopped.success
    assert "time limit (1e-09 s)" in stopped.message
    assert np.any(np.all(stopped.trajectory["params"] == stopped.x, axis=1))  # its last iterate, one it evaluated
    assert np.isfinite(stopped.fun)
    assert stopped.fun < package.negative_log_likelihood(truth, setup, data)  # that iteration's point, not the start
    assert not np.array_equal(stopped.x, truth)
    generous = watched_fit(package.fit, setup, data, truth, gradient=gradient, minimizer=minimizer, time_limit=1e6)
    assert (generous.status, generous.nit) == (full.status, full.nit)  # a limit never reached changes nothing


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
@pytest.mark.parametrize("limit", [0, -1.0, float("nan"), True, "10", 10**400])
def test_a_time_limit_that_is_not_a_positive_number_is_refused(package, limit):
    problem = Problem.simulated(16, 2, CAUCHY)
    truth, data = problem.truth, problem.data
    with pytest.raises(ValueError, match="time_limit must be a finite positive number"):
        watched_fit(package.fit, package.make_setup(16, 2), data, truth, time_limit=limit)


@pytest.mark.parametrize(("package", "minimizer"), [(reference_numpy, "scipy"), (torch_impl, "scipy"),
                                                    (torch_impl, "torchmin")])
def test_the_models_hold_no_bookkeeping_of_the_harness_a_callback_sees_each_point_and_may_stop(package, minimizer):
    problem = Problem.simulated(32, 3, CAUCHY)
    truth, data = problem.truth, problem.data
    setup = package.make_setup(32, 3)
    seen = []

    def stop_at_the_third(params):
        seen.append(host_copy(params))
        return len(seen) >= 3

    stopped = package.fit(setup, data, truth, minimizer=minimizer, callback=stop_at_the_third)
    assert (stopped.status, stopped.success) == (package.FitStatus.STOPPED, False)
    assert "callback asked to stop" in stopped.message
    assert stopped.nfev == len(seen)
    assert stopped.nit == 1
    np.testing.assert_array_equal(seen[0], truth)
    assert not hasattr(stopped, "trajectory")
    for removed in ("trajectory", "time_limit"):
        with pytest.raises(TypeError, match=removed):
            package.fit(setup, data, truth, **{removed: True})
    with pytest.raises(ValueError, match="callback must be callable or None, got int"):
        package.fit(setup, data, truth, callback=3)

"""A new loss is one class per tree plus its registration (losses.py in each tree), and nothing else: both trees fit
it, its gradient and Gauss-Newton weights pass the checks the built-in losses pass, and the cross-check passes.

The toy loss is Student's t with NU degrees of freedom and scale gamma: rho(e) = (NU + 1) / 2 log(1 + e^2 /
(NU gamma^2)) (the Cauchy likelihood is NU = 1), W = rho'(e) = (NU + 1) e / (NU gamma^2 + e^2), c = W / e."""

import math
import pathlib

import numpy as np
import pytest
import torch
from test_gauss_newton import (
    test_the_torch_matrix_is_the_sum_of_c_J_J_over_the_window_with_an_independent_jacobian as gauss_newton_check,
)

import reference_numpy
import torch_impl
from replication.core.objectives import objective_names, objective_of
from replication.core.simulation import simulate_observation, true_params
from replication.studies.crosscheck import measure as crosscheck

NU = 4.0
NAME = "student-t"


def student_constant(pixels, gamma):
    """-log of the Student-t density's normalisation, per compared pixel."""
    per_pixel = math.lgamma(NU / 2) - math.lgamma((NU + 1) / 2) + 0.5 * math.log(NU * math.pi * gamma**2)
    return pixels * per_pixel


class NumpyStudent(reference_numpy.losses.Loss):
    """Student's t in NumPy."""

    name, title, gamma_from_noise = NAME, "a Student-t likelihood (4 degrees of freedom)", True

    def constant(self, pixels, gamma):
        return student_constant(pixels, gamma)

    def value(self, excess, gamma, axis=None):
        return ((NU + 1) / 2 * self.library.log1p(excess**2 / (NU * gamma**2))).sum(axis=axis, dtype=np.float64)

    def value_and_weights(self, excess, gamma):
        value = self.value(excess, gamma)
        return value, excess / (NU * gamma**2 + excess**2), NU + 1

    def curvature(self, excess, gamma):
        return (NU + 1) / (NU * gamma**2 + excess**2)


class TorchStudent(torch_impl.losses.Loss):
    """Student's t in torch."""

    name, title, gamma_from_noise = NAME, "a Student-t likelihood (4 degrees of freedom)", True

    def constant(self, pixels, gamma):
        return student_constant(pixels, gamma)

    def value(self, excess, gamma, axis=None):
        return ((NU + 1) / 2 * torch.log1p(excess**2 / (NU * gamma**2))).sum(dim=axis, dtype=torch.float64)

    def value_and_weights(self, excess, gamma):
        value = self.value(excess, gamma)
        return value, excess / (NU * gamma**2 + excess**2), NU + 1

    def curvature(self, excess, gamma):
        return (NU + 1) / (NU * gamma**2 + excess**2)


@pytest.fixture
def student():
    """The toy loss registered in both trees for one test, then taken out again."""
    reference_numpy.losses.register(NumpyStudent())
    torch_impl.losses.register(TorchStudent())
    yield NAME
    del reference_numpy.losses.LOSSES[NAME], torch_impl.losses.LOSSES[NAME]


def problem(npix=32, nzern=3, seed=11):
    setup = reference_numpy.make_setup(npix, nzern)
    truth = true_params(setup.nparams)
    return truth, simulate_observation(setup, truth, seed=seed)


def test_the_registered_loss_is_an_objective_of_the_harness_and_is_gone_after(student):
    assert student in objective_names()
    objective = objective_of(student)
    assert (objective.gamma_from_noise, objective.likelihood, objective.folder_suffix) == (True, True, "-student-t")


def test_a_loss_not_registered_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="objective must be one of 'cauchy', 'least-squares', 'gaussian'"):
        reference_numpy.negative_log_likelihood(true_params(8), reference_numpy.make_setup(16, 2),
                                                np.zeros((3, 16, 16)), objective=NAME)


def test_the_loss_is_refused_where_it_is_not_a_loss_of_that_tree():
    with pytest.raises(ValueError, match=r"reference_numpy\.losses\.Loss"):
        reference_numpy.losses.register(TorchStudent())
    assert NAME not in reference_numpy.losses.LOSSES


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_its_weights_are_the_derivative_of_its_value_and_its_curvature_their_ratio(student, package):
    gamma = 3e-3
    excess = np.random.default_rng(2).normal(0, 4 * gamma, (3, 16, 16))
    loss = package.losses.loss_of(student)
    as_array = np.array if package is reference_numpy else torch.as_tensor
    value, weights, factor = loss.value_and_weights(as_array(excess.copy()), gamma)
    derivative = factor * np.asarray(weights)
    step = 1e-4 * gamma
    for pixel in [(0, 0, 0), (1, 5, 7), (2, 15, 3)]:
        ahead, behind = excess.copy(), excess.copy()
        ahead[pixel] += step
        behind[pixel] -= step
        central = (float(loss.value(as_array(ahead), gamma)) - float(loss.value(as_array(behind), gamma))) / (2 * step)
        assert derivative[pixel] == pytest.approx(central, rel=1e-6)
    np.testing.assert_allclose(np.asarray(loss.curvature(as_array(excess), gamma)), derivative / excess, rtol=1e-12)
    assert float(value) == pytest.approx(float(loss.value(as_array(excess), gamma)), rel=1e-15)


def test_its_adjoint_gradient_matches_autograd_and_central_differences(student):
    truth, data = problem()
    params = truth + np.random.default_rng(4).normal(0, 0.05, truth.size)
    setup_t, setup_np = torch_impl.make_setup(32, 3), reference_numpy.make_setup(32, 3)
    gamma = 2e-3
    _, autograd = torch_impl.value_and_grad(params, setup_t, data, gamma, student, "autograd")
    _, adjoint_t = torch_impl.value_and_grad(params, setup_t, data, gamma, student, "adjoint")
    _, adjoint_np = reference_numpy.value_and_grad(params, setup_np, data, gamma, student, "adjoint")
    np.testing.assert_allclose(adjoint_t, autograd, rtol=1e-10, atol=1e-10 * np.abs(autograd).max())
    np.testing.assert_allclose(adjoint_np, autograd, rtol=1e-10, atol=1e-10 * np.abs(autograd).max())
    step, central = 1e-6, []
    for shift in 1e-6 * np.eye(params.size):
        ahead = reference_numpy.negative_log_likelihood(params + shift, setup_np, data, gamma, student)
        behind = reference_numpy.negative_log_likelihood(params - shift, setup_np, data, gamma, student)
        central.append((ahead - behind) / (2 * step))
    np.testing.assert_allclose(adjoint_np, central, rtol=1e-5, atol=1e-5 * np.abs(central).max())


def test_its_batched_value_and_gradient_are_each_vectors_own(student):
    truth, data = problem()
    setup = torch_impl.make_setup(32, 3)
    batch = np.stack([truth, truth + 0.02])
    values, grads = torch_impl.batched_value_and_grad(batch, setup, data, 2e-3, student)
    for row, value, grad in zip(batch, values, grads, strict=True):
        one, one_grad = torch_impl.value_and_grad(row, setup, data, 2e-3, student)
        assert value == pytest.approx(one, rel=1e-13)
        np.testing.assert_allclose(grad, one_grad, rtol=1e-10, atol=1e-10 * np.abs(one_grad).max())


@pytest.mark.parametrize("offsets", [False, True])
def test_its_gauss_newton_matrix_passes_the_independent_jacobian_check(student, offsets):
    gauss_newton_check(student, offsets)


def test_both_trees_fit_it_to_the_same_optimum(student):
    truth, data = problem()
    start = truth + np.random.default_rng(8).normal(0, 0.1, truth.size) * (np.arange(truth.size) < truth.size - 3)
    gamma = objective_of(student).gamma(data)
    fits = [package.fit(package.make_setup(32, 3), data, start, gamma=gamma, objective=student, gradient="adjoint",
                        tol=1e-10) for package in (reference_numpy, torch_impl)]
    assert all(np.isfinite(fit.fun) for fit in fits)
    hessian = reference_numpy.hessian(fits[0].x, reference_numpy.make_setup(32, 3), data, gamma, student)
    stderr = np.sqrt(np.diag(np.linalg.inv(hessian)))
    assert np.max(np.abs(fits[0].x - fits[1].x) / stderr) < 0.01
    assert fits[0].fun == pytest.approx(fits[1].fun, rel=1e-10)
    autograd = torch_impl.fit(torch_impl.make_setup(32, 3), data, start, gamma=gamma, objective=student, tol=1e-10)
    assert np.max(np.abs(autograd.x - fits[0].x) / stderr) < 0.01


def test_the_cross_check_passes_under_it(student, tmp_path, monkeypatch):
    monkeypatch.setitem(crosscheck.POINTS, "smoke", ((16, 2),))
    content = crosscheck.run_crosscheck(tmp_path, points="smoke", threads=1, objectives=(objective_of(student),))
    assert {check["objective"] for check in content["checks"]} == {student, None}  # None: the beams, loss-free
    failed = [check for check in content["checks"] if not check["passed"]]
    assert not failed, failed
    assert {fit["objective"] for fit in content["fits"]} == {student}


def test_the_loss_docs_packages_md_shows_is_registered_and_its_gradient_is_right():
    text = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "packages.md").read_text()
    block = next(part for part in text.split("```python")[1:] if "class Huber" in part).split("```")[0]
    namespace = {"torch": torch, "torch_impl": torch_impl}
    try:
        exec(block, namespace)
        truth, data = problem()
        setup = torch_impl.make_setup(32, 3)
        params = truth + 0.02
        _, autograd = torch_impl.value_and_grad(params, setup, data, 2e-3, "huber", "autograd")
        _, adjoint = torch_impl.value_and_grad(params, setup, data, 2e-3, "huber", "adjoint")
        np.testing.assert_allclose(adjoint, autograd, rtol=1e-10, atol=1e-10 * np.abs(autograd).max())
        assert torch_impl.fit(setup, data, params, gamma=2e-3, objective="huber", start_hessian="gauss-newton").success
    finally:
        torch_impl.losses.LOSSES.pop("huber", None)


def test_the_jax_peer_evaluates_the_same_loss_object(student):
    pytest.importorskip("jax", reason="jax is installed only by nox -s peers")
    from replication.studies.peers import jax_peer

    value, gradient = jax_peer.check_against_numpy(16, 2, objective=student)
    assert value <= jax_peer.OBJECTIVE_TOLERANCE
    assert gradient <= jax_peer.GRADIENT_TOLERANCE

"""The JAX peer's gate: it must agree with NumPy before it is timed. Needs jax (`nox -s peers` installs it);
skipped by `nox -s tests`, which must not need it."""

import numpy as np
import pytest

import reference_numpy
from replication.core.simulation import simulate_observation, true_params

jax_peer = pytest.importorskip("replication.studies.peers.jax_peer", reason="jax is installed only by nox -s peers",
                               exc_type=ImportError)


@pytest.mark.parametrize(("npix", "nzern"), [(16, 2), (33, 3), (64, 5), (128, 8)])
@pytest.mark.parametrize("objective", ["cauchy", "least-squares"])
def test_objective_and_gradient_agree_with_numpy(npix, nzern, objective):
    value_error, grad_error = jax_peer.check_against_numpy(npix, nzern, objective)
    assert value_error <= 1e-12
    assert grad_error <= 1e-10


def test_the_gate_can_fail(monkeypatch):
    """A peer with the wrong defocus sign must be refused."""
    real = jax_peer.make_setup

    def flipped(npix, nzern):
        setup = real(npix, nzern)
        return jax_peer.Setup(npix=setup.npix, nzern=setup.nzern, box=setup.box,
                              arrays=setup.arrays | {"screens": -setup.arrays["screens"]}, sigma=setup.sigma,
                              rho=setup.rho, diff=setup.diff)

    monkeypatch.setattr(jax_peer, "make_setup", flipped)
    with pytest.raises(AssertionError, match="JAX peer disagrees with NumPy"):
        jax_peer.check_against_numpy(32, 3)


def test_a_jax_fit_reaches_the_numpy_solution_within_a_tenth_of_a_standard_error():
    setup_np = reference_numpy.make_setup(64, 4)
    truth = true_params(setup_np.nparams)
    data = simulate_observation(setup_np, truth, seed=21)
    peer = jax_peer.fit(jax_peer.make_setup(64, 4), data, truth)
    reference = reference_numpy.fit(setup_np, data, truth, gradient="adjoint")
    errors = reference_numpy.standard_errors(reference_numpy.hessian(reference.x, setup_np, data))
    np.testing.assert_array_less(np.abs(peer.x - reference.x) / errors, 0.1)
    assert peer.nfev < 200


def test_a_jax_fit_starts_from_a_given_matrix_as_the_trees_do():
    """start_hessian: the NumPy reference's Gauss-Newton matrix (the peer's gauss_newton_matrix) as BFGS's first
    curvature: the same solution in fewer evaluations than from the identity, as torch's fit from the same matrix."""
    import torch_impl

    setup_np = reference_numpy.make_setup(64, 4)
    truth = true_params(setup_np.nparams)
    data = simulate_observation(setup_np, truth, seed=21)
    setup = jax_peer.make_setup(64, 4)
    start = truth + 0.05
    matrix = jax_peer.gauss_newton_matrix(start, setup, data)
    np.testing.assert_array_equal(matrix, reference_numpy.gauss_newton_matrix(start, setup_np, data))
    plain = jax_peer.fit(setup, data, start)
    seeded = jax_peer.fit(setup, data, start, start_hessian=matrix)
    trees = torch_impl.fit(torch_impl.make_setup(64, 4), data, start, gradient="adjoint", start_hessian=matrix)
    errors = reference_numpy.standard_errors(reference_numpy.hessian(plain.x, setup_np, data))
    np.testing.assert_array_less(np.abs(seeded.x - plain.x) / errors, 0.1)
    assert seeded.nfev < plain.nfev
    assert abs(seeded.nfev - trees.nfev) <= 2
    with pytest.raises(ValueError, match="start_hessian must be"):
        jax_peer.fit(setup, data, start, start_hessian=np.eye(3))


def test_bad_input_is_named():
    setup = jax_peer.make_setup(16, 2)
    with pytest.raises(ValueError, match="data must have shape"):
        jax_peer.negative_log_likelihood(true_params(setup.nparams), setup, np.zeros((3, 8, 8)))
    with pytest.raises(ValueError, match=r"setup must be made by replication\.studies\.peers\.jax_peer\.make_setup"):
        jax_peer.fit(reference_numpy.make_setup(16, 2), np.zeros((3, 16, 16)), true_params(setup.nparams))


def test_the_cross_check_passes_with_jax_installed_and_asks_the_peer_for_no_hessian(tmp_path):
    from replication.core import registry
    from replication.studies.crosscheck import measure as crosscheck

    assert registry.JAX.available()
    assert not registry.JAX.hessian
    content = crosscheck.run_crosscheck(tmp_path, points="smoke", threads=1)
    peer = [check for check in content["checks"] if check["compare"].startswith(registry.JAX.name)]
    assert {check["check"] for check in peer} >= {"objective", "gradient", "beams", "fit parameters"}
    assert not any(check["check"] == "hessian" for check in peer)
    assert all(check["passed"] for check in content["checks"])

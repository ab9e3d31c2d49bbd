"""The Gauss-Newton matrix (both trees) and BFGS started from it: what it is, where it is summed, what it buys."""

import warnings

import numpy as np
import pytest
import scipy.optimize
import torch
from conftest import SEED

import reference_numpy
import torch_impl
from oof_common.bfgs import START_HESSIANS, start_inverse_hessian
from reference_numpy.gauss_newton import beam_window
from reference_numpy.losses import loss_of
from replication.core.simulation import aberrated_params, simulate_observation, true_params


def maps_and_start(npix, nzern, offsets=False, radians=0.3):
    """Noisy maps of an aberrated truth, and a start 0.3 rad rms from it in every Zernike term."""
    setup = reference_numpy.make_setup(npix, nzern, offsets=offsets)
    truth = np.zeros(setup.nparams)
    truth[: setup.amp_index + 1] = aberrated_params(reference_numpy.make_setup(npix, nzern))
    if offsets:
        truth[-3:] = [2e-4, -1e-4, 3e-4]
    data = simulate_observation(setup, truth, seed=SEED)
    start = truth.copy()
    start[: setup.basis.shape[0]] += radians * np.random.default_rng(SEED).standard_normal(setup.basis.shape[0])
    return setup, truth, data, start


def window_jacobian_by_autograd(params, setup, rows):
    """dP/dparams at the window's pixels by torch's own forward mode, as (parameters, pixels): an independent J."""
    from torch_impl.beams import model_power

    def windowed_power(p):
        return model_power(p, setup)[:, rows][:, :, rows].reshape(-1)

    with warnings.catch_warnings():  # torch's forward-mode decompositions are made with the deprecated jit.script
        warnings.filterwarnings("ignore", message=".*torch.jit.script.* is deprecated", category=DeprecationWarning)
        return torch.func.jacfwd(windowed_power)(torch.tensor(params)).numpy().T


@pytest.mark.parametrize("objective", ["cauchy", "gaussian", "least-squares"])
@pytest.mark.parametrize("offsets", [False, True])
def test_the_torch_matrix_is_the_sum_of_c_J_J_over_the_window_with_an_independent_jacobian(objective, offsets):
    setup_np, _, data, start = maps_and_start(128, 3, offsets)
    setup = torch_impl.make_setup(128, 3, offsets=offsets)
    gamma = 2e-3 if objective != "least-squares" else 1.0
    matrix = torch_impl.gauss_newton_matrix(start, setup, data, gamma, objective)
    power = reference_numpy.beams.model_power(start, setup_np)
    rows = beam_window(power - (start[-3:, None, None] if offsets else 0), 0.01)
    assert len(rows) < 128  # the window is a part of the grid here
    jacobian = window_jacobian_by_autograd(start, setup, torch.as_tensor(rows))
    weights = loss_of(objective).curvature(power - reference_numpy.backend.to_fft_order(data), gamma)
    fitted = setup.nparams - setup.n_offsets
    expected = (jacobian[:fitted] * weights[:, rows][:, :, rows].reshape(-1)) @ jacobian[:fitted].T
    np.testing.assert_allclose(matrix[:fitted, :fitted], expected, rtol=1e-10, atol=1e-12 * np.abs(expected).max())
    if offsets:  # an offset moves every pixel of its map by one: its diagonal is its map's whole sum of c
        np.testing.assert_allclose(np.diag(matrix)[fitted:], weights.sum(axis=(-2, -1)), rtol=1e-12)


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
@pytest.mark.parametrize("offsets", [False, True])
def test_on_maps_the_model_fits_the_whole_grid_matrix_is_the_gaussian_hessian(package, offsets):
    """With no residual, the Hessian of least squares is exactly J^T J / gamma^2: the matrix summed over every
    pixel (window_loss=0) must equal the exact Hessian; the NumPy tree's by differences to their accuracy."""
    setup = package.make_setup(64, 3, offsets=offsets)
    truth = maps_and_start(64, 3, offsets)[1]
    clean = reference_numpy.beam_maps(truth, reference_numpy.make_setup(64, 3, offsets=offsets))
    gamma = 0.01 * clean.max()
    matrix = package.gauss_newton_matrix(truth, setup, clean, gamma, "gaussian", window_loss=0)
    exact = torch_impl.hessian(truth, torch_impl.make_setup(64, 3, offsets=offsets), clean, gamma, "gaussian")
    tolerance = 1e-10 if package is torch_impl else 1e-6
    np.testing.assert_allclose(matrix, exact, rtol=0, atol=tolerance * np.abs(exact).max())


def test_the_two_trees_matrices_agree_to_the_accuracy_of_differenced_beams():
    setup_np, _, data, start = maps_and_start(128, 4)
    setup_t = torch_impl.make_setup(128, 4)
    for objective, gamma in (("cauchy", 1e-4), ("gaussian", 2e-3)):
        by_differences = reference_numpy.gauss_newton_matrix(start, setup_np, data, gamma, objective)
        exact = torch_impl.gauss_newton_matrix(start, setup_t, data, gamma, objective)
        assert np.abs(by_differences - exact).max() < 1e-6 * np.abs(exact).max()


def test_the_window_holds_all_but_the_stated_power_and_no_smaller_one_does():
    setup, truth, _, _ = maps_and_start(256, 3)
    power = reference_numpy.beams.model_power(truth, setup)
    rows = beam_window(power, 0.01)
    half = len(rows) // 2
    assert 0 < half < 128
    assert half % 8 == 0

    def outside(half):
        kept = np.concatenate([np.arange(half), np.arange(256 - half, 256)])
        return 1 - power[:, kept][:, :, kept].sum(axis=(-2, -1)) / power.sum(axis=(-2, -1))

    assert outside(half).max() <= 0.01 < outside(half - 8).max()
    torch_rows = torch_impl.gauss_newton.beam_window(torch.tensor(power), 0.01)
    np.testing.assert_array_equal(torch_rows.numpy(), rows)
    assert len(beam_window(power, 0.0)) == 256


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_bfgs_from_the_gauss_newton_matrix_reaches_the_same_optimum_in_fewer_evaluations(package):
    setup_np, _, data, start = maps_and_start(128, 4)
    setup = package.make_setup(128, 4)
    gradient = "adjoint"
    plain = package.fit(setup, data, start, gradient=gradient)
    seeded = package.fit(setup, data, start, gradient=gradient, start_hessian="gauss-newton")
    errors = reference_numpy.standard_errors(reference_numpy.hessian(plain.x, setup_np, data))
    np.testing.assert_array_less(np.abs(seeded.x - plain.x) / errors, 0.1)
    assert seeded.nfev < plain.nfev / 2
    assert seeded.start_hessian_s > 0
    assert plain.start_hessian_s == 0


def test_a_matrix_computed_once_seeds_a_fit_as_the_name_does():
    _, _, data, start = maps_and_start(64, 3)
    setup = torch_impl.make_setup(64, 3)
    matrix = torch_impl.gauss_newton_matrix(start, setup, data)
    named = torch_impl.fit(setup, data, start, start_hessian="gauss-newton")
    given = torch_impl.fit(setup, data, start, start_hessian=matrix)
    assert given.nfev == named.nfev
    np.testing.assert_allclose(given.x, named.x, rtol=0, atol=1e-10)


def test_the_start_inverse_of_a_singular_matrix_is_symmetric_and_positive_definite():
    vector = np.array([1.0, 2.0, -1.0])
    singular = np.outer(vector, vector) + np.diag([0.0, 0.0, 0.0])
    inverse = start_inverse_hessian(singular)
    assert np.array_equal(inverse, inverse.T)
    np.linalg.cholesky(inverse)
    assert torch_impl.fitting.START_HESSIANS == START_HESSIANS


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
@pytest.mark.parametrize(("start_hessian", "words"), [
    ("newton", "start_hessian"), (np.eye(3), r"start_hessian must be \(12, 12\)"),
    (-np.eye(12), "positive eigenvalue"), (np.full((12, 12), np.nan), "start_hessian must be finite")])
def test_a_start_hessian_that_is_not_one_is_refused_naming_it(package, start_hessian, words):
    setup = package.make_setup(32, 3)
    data = simulate_observation(reference_numpy.make_setup(32, 3), true_params(12), seed=SEED)
    with pytest.raises(ValueError, match=words):
        package.fit(setup, data, true_params(12), start_hessian=start_hessian)


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
@pytest.mark.parametrize("loss", [-0.1, 1.0, float("nan")])
def test_a_window_loss_outside_zero_to_one_is_refused(package, loss):
    setup = package.make_setup(32, 2)
    data = simulate_observation(reference_numpy.make_setup(32, 2), true_params(setup.nparams), seed=SEED)
    with pytest.raises(ValueError, match="window_loss"):
        package.gauss_newton_matrix(true_params(setup.nparams), setup, data, window_loss=loss)


def test_the_on_device_bfgs_refuses_a_start_hessian():
    setup = torch_impl.make_setup(32, 2)
    data = simulate_observation(reference_numpy.make_setup(32, 2), true_params(setup.nparams), seed=SEED)
    with pytest.raises(ValueError, match="start_hessian"):
        torch_impl.fit(setup, data, true_params(setup.nparams), minimizer="torchmin", start_hessian="gauss-newton")
    assert isinstance(torch_impl.fit(setup, data, true_params(setup.nparams), start_hessian="identity"),
                      scipy.optimize.OptimizeResult)

"""The two objectives, the exact (adjoint) gradient, the exact Hessian and the account of how fits end."""

import numpy as np
import pytest
import torch

import reference_numpy
import torch_impl
from replication.core.objectives import CAUCHY, LEAST_SQUARES
from replication.core.problem import Problem
from replication.core.simulation import convergence, simulate_observation, true_params
from torch_impl.likelihood import prepared_nll

OBJECTIVES = ("cauchy", "least-squares")


@pytest.fixture(params=[reference_numpy, torch_impl], ids=["numpy", "torch"])
def package(request):
    return request.param


def observation(npix, nzern, rng, scale=0.2):
    """Random parameters near the truth and the paper's simulated data."""
    problem = Problem.simulated(npix, nzern, CAUCHY)
    truth, data = problem.truth, problem.data
    return truth + scale * rng.standard_normal(truth.size), data


@pytest.mark.parametrize("npix", [24, 33])
def test_least_squares_is_the_sum_of_squared_residuals(package, npix, rng):
    setup = package.make_setup(npix, 3)
    params, data = observation(npix, 3, rng)
    beams = np.asarray(package.beam_maps(params, setup))
    expected = sum(float(r) ** 2 for r in (data - beams).ravel())
    value = package.negative_log_likelihood(params, setup, data, objective="least-squares")
    assert value == pytest.approx(expected, rel=1e-12)


def test_an_unknown_objective_is_refused_by_name(package):
    setup = package.make_setup(16, 2)
    problem = Problem.simulated(16, 2, CAUCHY)
    truth, data = problem.truth, problem.data
    with pytest.raises(ValueError, match="objective must be one of 'cauchy', 'least-squares'"):
        package.fit(setup, data, truth, objective="huber")


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize(("npix", "nzern"), [(16, 2), (33, 3), (64, 5)])
def test_adjoint_gradient_equals_autograd_and_central_differences(objective, npix, nzern, rng):
    params, data = observation(npix, nzern, rng)
    setup_np, setup_t = reference_numpy.make_setup(npix, nzern), torch_impl.make_setup(npix, nzern)
    value, adjoint = reference_numpy.value_and_grad(params, setup_np, data, objective=objective, gradient="adjoint")
    autograd_value, autograd = torch_impl.value_and_grad(params, setup_t, data, objective=objective)
    assert value == pytest.approx(autograd_value, rel=1e-12)
    assert np.linalg.norm(adjoint - autograd) <= 1e-10 * np.linalg.norm(autograd)
    from torch_impl.gradient import value_and_gradient  # the same adjoint, in torch

    data_t = torch_impl.prepare_data(data, setup_t)
    _, adjoint_t = value_and_gradient(torch.as_tensor(params), setup_t, data_t, 1e-4,
                                     torch_impl.losses.loss_of(objective))
    assert np.linalg.norm(adjoint_t.numpy() - autograd) <= 1e-10 * np.linalg.norm(autograd)
    step = 1e-6
    numeric = np.array([(reference_numpy.negative_log_likelihood(params + e, setup_np, data, objective=objective)
                         - reference_numpy.negative_log_likelihood(params - e, setup_np, data, objective=objective))
                        / (2 * step) for e in step * np.eye(params.size)])
    assert np.max(np.abs(adjoint - numeric)) <= 1e-6 * np.max(np.abs(numeric))


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize(("npix", "nzern"), [(24, 2), (33, 3)])
def test_hessians_of_the_two_trees_agree_and_are_symmetric(objective, npix, nzern, rng):
    params, data = observation(npix, nzern, rng, scale=0.05)
    numpy_hessian = reference_numpy.hessian(params, reference_numpy.make_setup(npix, nzern), data, objective=objective)
    torch_hessian = torch_impl.hessian(params, torch_impl.make_setup(npix, nzern), data, objective=objective)
    assert numpy_hessian.shape == torch_hessian.shape == (params.size, params.size)
    np.testing.assert_array_equal(torch_hessian, torch_hessian.T)
    assert np.linalg.norm(numpy_hessian - torch_hessian) <= 1e-6 * np.linalg.norm(torch_hessian)


def test_standard_errors_are_nan_away_from_a_minimum(package):
    saddle = np.array([[1.0, 0.0], [0.0, -1.0]])
    assert np.isnan(package.standard_errors(saddle)).all()
    np.testing.assert_allclose(package.standard_errors(np.diag([4.0, 0.25]), scale=4.0), [1.0, 4.0])


def test_fits_of_the_two_trees_agree_under_least_squares():
    npix, nzern = 32, 3
    problem = Problem.simulated(npix, nzern, CAUCHY)
    truth, data = problem.truth, problem.data
    fits = [package.fit(package.make_setup(npix, nzern), data, truth, objective="least-squares")
            for package in (reference_numpy, torch_impl)]
    account = convergence(fits[0].x, problem.under(LEAST_SQUARES))
    np.testing.assert_array_less(np.abs(fits[0].x - fits[1].x) / account["stderr"], 0.1)


@pytest.mark.slow
def test_exact_standard_errors_cover_the_scatter_of_repeated_fits():
    """40 noise draws at npix 48, n = 2, with the model correctly specified (Gaussian noise, least squares,
    covariance 2 S / (pixels - P) times the inverse Hessian): the z-scores of the fitted parameters must have
    unit variance. Tolerance: 0.35 on the mean z^2 of 320 values (about four standard deviations for
    correlated parameters). The Cauchy likelihood of Gaussian-plus-multiplicative data is misspecified, and
    even with Cauchy noise its inverse Hessian is 10-30% narrower than the scatter at these grid sizes in our
    trials, so it is not the model checked here."""
    npix, nzern = 48, 2
    setup_np, setup_t = reference_numpy.make_setup(npix, nzern), torch_impl.make_setup(npix, nzern)
    truth = true_params(setup_np.nparams)
    beams = reference_numpy.beam_maps(truth, setup_np)
    rng = np.random.default_rng(2)
    scores = []
    for _ in range(40):
        data = beams + 0.024 * beams.max() * rng.standard_normal(beams.shape)
        result = torch_impl.fit(setup_t, data, truth, objective="least-squares", tol=1e-14)
        hessian = torch_impl.hessian(result.x, setup_t, data, objective="least-squares")
        scale = LEAST_SQUARES.covariance_scale(result.fun, data.size, truth.size)
        scores.append((result.x - truth) / torch_impl.standard_errors(hessian, scale))
    scores = np.array(scores)
    assert abs(np.mean(scores**2) - 1) < 0.35
    assert abs(np.mean(scores)) < 0.25


def test_the_cauchy_fits_end_in_precision_loss_at_the_optimum():
    """tol = 1e-8 asks for a gradient norm BFGS cannot reach: near the optimum the decrease a step promises
    (g H^-1 g / 2) is thousands of times smaller than the rounding of the objective (eps |f|, |f| ~ 1e5), so
    the line search sees no change and scipy reports precision loss, with the Newton step left ~1e-7 of a
    standard error."""
    npix, nzern = 64, 4
    problem = Problem.simulated(npix, nzern, CAUCHY)
    truth, data = problem.truth, problem.data
    result = torch_impl.fit(torch_impl.make_setup(npix, nzern), data, truth)
    account = convergence(result.x, problem)
    assert not result.success
    assert "precision loss" in result.message
    assert account["newton_stderr"] < 1e-4
    assert account["expected_decrease"] < 1e-2 * account["rounding"]
    assert account["grad_norm"] > 1e-8  # the tolerance was never met


def test_a_least_squares_fit_reports_success_before_the_optimum():
    """The unscaled sum of squares has gradients of ~1e-7 at the start: tol = 1e-8 stops BFGS after a
    hundredfold reduction, tenths of a standard error from the optimum. The account says so."""
    npix, nzern = 64, 4
    problem = Problem.simulated(npix, nzern, CAUCHY)
    truth, data = problem.truth, problem.data
    result = torch_impl.fit(torch_impl.make_setup(npix, nzern), data, truth, objective="least-squares")
    account = convergence(result.x, problem.under(LEAST_SQUARES))
    assert result.success
    assert account["newton_stderr"] > 0.1


def test_prepared_objectives_differ_and_are_finite(rng):
    params, data = observation(32, 2, rng)
    setup = torch_impl.make_setup(32, 2)
    data_t = torch_impl.prepare_data(data, setup)
    values = {objective: float(prepared_nll(torch.as_tensor(params), setup, data_t, 1e-4,
                                                   torch_impl.losses.loss_of(objective)))
              for objective in OBJECTIVES}
    assert all(np.isfinite(v) for v in values.values())
    assert values["cauchy"] != values["least-squares"]


def test_simulated_data_is_shared_by_both_objectives():
    setup = reference_numpy.make_setup(32, 2)
    truth = true_params(setup.nparams)
    np.testing.assert_array_equal(simulate_observation(setup, truth, 1), Problem.simulated(32, 2, CAUCHY).data)


GRADIENTS = {reference_numpy: ("finite-differences", "adjoint"),
             torch_impl: ("finite-differences", "adjoint", "autograd")}


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_every_gradient_of_both_packages_gives_the_same_gradient(objective, rng):
    npix, nzern = 33, 3
    params, data = observation(npix, nzern, rng)
    exact = torch_impl.value_and_grad(params, torch_impl.make_setup(npix, nzern), data, objective=objective)[1]
    for package, names in GRADIENTS.items():
        setup = package.make_setup(npix, nzern)
        for name in names:
            value, grad = package.value_and_grad(params, setup, data, objective=objective, gradient=name)
            tolerance = 1e-4 if name == "finite-differences" else 1e-10
            assert np.linalg.norm(grad - exact) <= tolerance * np.linalg.norm(exact), (package.__name__, name)
            assert value == pytest.approx(package.negative_log_likelihood(params, setup, data, objective=objective))


def test_fits_with_every_gradient_reach_the_same_solution():
    npix, nzern = 32, 3
    problem = Problem.simulated(npix, nzern, CAUCHY)
    truth, data = problem.truth, problem.data
    stderr = np.array(convergence(truth, problem)["stderr"])
    fits = {(package.__name__, name): package.fit(package.make_setup(npix, nzern), data, truth, gradient=name)
            for package, names in GRADIENTS.items() for name in names}
    reference = fits[("torch_impl", "autograd")].x
    for key, result in fits.items():
        assert np.max(np.abs(result.x - reference) / stderr) < 0.1, key
    assert fits[("reference_numpy", "adjoint")].nfev < fits[("reference_numpy", "finite-differences")].nfev


@pytest.mark.parametrize(("package", "gradient"), [(reference_numpy, "autograd"), (torch_impl, "exact")])
def test_an_unknown_gradient_is_refused_by_name(package, gradient):
    setup = package.make_setup(16, 2)
    problem = Problem.simulated(16, 2, CAUCHY)
    truth, data = problem.truth, problem.data
    with pytest.raises(ValueError, match="gradient must be one of"):
        package.fit(setup, data, truth, gradient=gradient)
    with pytest.raises(ValueError, match="gradient must be one of"):
        package.value_and_grad(truth, setup, data, gradient=gradient)


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_sandwich_errors_cover_the_scatter_under_the_simulated_noise(package):
    """The paper's noise (1% multiplicative, 2.4% of the peak additive, Gaussian) is not the Cauchy likelihood's:
    over 40 draws at npix 32, n = 2 the sandwich errors sqrt(diag(H^-1 J H^-1)) give z-scores of unit variance
    (mean z^2 within 0.35 of 1, about four standard deviations of 320 correlated values), while the inverse
    Hessian's are about 3x too wide (mean z^2 below 0.3: they over-cover)."""
    npix, nzern = 32, 2
    setup = package.make_setup(npix, nzern)
    setup_np = reference_numpy.make_setup(npix, nzern)
    truth = true_params(setup.nparams)
    sandwich, inverse = [], []
    for seed in range(40):
        data = simulate_observation(setup_np, truth, seed=100 + seed)
        result = package.fit(setup, data, truth, gradient="adjoint")
        hessian = package.hessian(result.x, setup, data)
        scores = package.score_covariance(result.x, setup, data)
        sandwich.append((result.x - truth) / package.standard_errors(hessian, scores=scores))
        inverse.append((result.x - truth) / package.standard_errors(hessian))
    assert abs(np.mean(np.square(sandwich)) - 1) < 0.35
    assert np.mean(np.square(inverse)) < 0.3


@pytest.mark.parametrize("objective", ["cauchy", "least-squares"])
def test_sandwich_errors_agree_between_the_trees(objective):
    npix, nzern = 64, 4
    problem = Problem.simulated(npix, nzern, CAUCHY)
    truth, data = problem.truth, problem.data
    params = truth + 0.01 * np.random.default_rng(5).standard_normal(truth.size)
    errors = []
    for package in (reference_numpy, torch_impl):
        setup = package.make_setup(npix, nzern)
        hessian = package.hessian(params, setup, data, objective=objective)
        errors.append(package.standard_errors(hessian, scores=package.score_covariance(params, setup, data,
                                                                                         objective=objective)))
    np.testing.assert_allclose(errors[0], errors[1], rtol=1e-6)


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_the_pixel_scores_sum_to_the_exact_gradient(package):
    """Forward mode (gradient.power_scores) against the adjoint: the per-pixel scores add up to the gradient."""
    npix, nzern = 32, 3
    problem = Problem.simulated(npix, nzern, CAUCHY)
    truth, data = problem.truth, problem.data
    setup = package.make_setup(npix, nzern)
    params = truth + 0.05 * np.random.default_rng(6).standard_normal(truth.size)
    scores = package.gradient.power_scores(package.backend.as_model_array(params, setup), setup,
                                           package.prepare_data(data, setup), 1e-4,
                                           package.losses.loss_of("cauchy"))
    _, grad = package.value_and_grad(params, setup, data, gradient="adjoint")
    total = np.asarray(scores.reshape(setup.nparams, -1).sum(1))
    np.testing.assert_allclose(total, grad, rtol=1e-10, atol=1e-10 * np.max(np.abs(grad)))


@pytest.mark.parametrize("objective", ["cauchy", "least-squares"])
def test_the_score_covariance_summed_by_blocks_is_the_full_one(package, objective):
    """J summed over blocks of parameters (a memory limit of a few parameters' scores, so several blocks, the last
    one short) equals J from all scores at once, to 1e-12 of its largest element; blocks of one parameter too."""
    npix, nzern = 32, 3
    problem = Problem.simulated(npix, nzern, CAUCHY)
    truth, data = problem.truth, problem.data
    setup = package.make_setup(npix, nzern)
    params = truth + 0.05 * np.random.default_rng(8).standard_normal(truth.size)
    full = package.score_covariance(params, setup, data, objective=objective)
    per_parameter = 3 * npix**2 * 8
    for limit in (5 * per_parameter, per_parameter):
        blocks = package.uncertainty.score_blocks(setup.nparams, npix, limit)
        assert len(blocks) > 1
        assert sum(len(block) for block in blocks) == setup.nparams
        blocked = package.score_covariance(params, setup, data, objective=objective, max_bytes=limit)
        np.testing.assert_allclose(blocked, full, rtol=0, atol=1e-12 * np.max(np.abs(full)))
        np.testing.assert_array_equal(blocked, blocked.T)


def test_the_score_blocks_fit_the_memory_limit():
    per_parameter = 3 * 64**2 * 8
    assert reference_numpy.uncertainty.score_blocks(17, 64, 17 * per_parameter) == [range(0, 17)]
    blocks = reference_numpy.uncertainty.score_blocks(17, 64, 10 * per_parameter)
    assert [len(b) for b in blocks] == [9, 8]  # nine held, one computed beside them
    assert reference_numpy.uncertainty.score_blocks(3, 64, 1) == [range(0, 1), range(1, 2), range(2, 3)]
    with pytest.raises(ValueError, match="max_bytes"):
        reference_numpy.score_covariance(np.zeros(17), reference_numpy.make_setup(64, 4), np.ones((3, 64, 64)),
                                         max_bytes=0)

"""The per-map terms of a real observation (make_setup's pointing, defocus_scale, gains): what they do to the beams
(physics), their exact gradients in both trees against each other, autograd and finite differences, the Gauss-Newton
matrix and the scores, and a fit that finds terms it was given."""

import numpy as np
import pytest
import torch

import reference_numpy
import torch_impl
from torch_impl.gradient import power_scores
from torch_impl.likelihood import prepare_data

NPIX, NZERN = 64, 3
EVERY = {"offsets": True, "gains": True, "pointing": True, "defocus_scale": True}
ONE_BY_ONE = [{"gains": True}, {"pointing": True}, {"defocus_scale": True}, EVERY]


def point(setup, seed=1, terms=0.05):
    """A parameter vector with an aberrated phase, a unit amplitude and per-map terms of about `terms`."""
    rng = np.random.default_rng(seed)
    params = np.zeros(setup.nparams)
    params[:setup.basis.shape[0]] = 0.3 * rng.standard_normal(setup.basis.shape[0])
    params[setup.amp_index] = 1.0
    params[setup.amp_index + 1:] = terms * rng.standard_normal(setup.nparams - setup.amp_index - 1)
    return params


def test_the_terms_sit_after_amp_in_a_stated_order_and_zero_means_as_the_telescope_says():
    plain, every = reference_numpy.make_setup(NPIX, NZERN), reference_numpy.make_setup(NPIX, NZERN, **EVERY)
    assert every.nparams == plain.nparams + 4 + 1 + 2 + 3  # pointing, defocus scale, gains, offsets
    assert every.amp_index == plain.amp_index
    params = np.zeros(every.nparams)
    params[:plain.nparams] = point(plain)
    np.testing.assert_array_equal(reference_numpy.beam_maps(params, every),
                                  reference_numpy.beam_maps(params[:plain.nparams], plain))


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_a_gain_scales_its_own_map_only(package):
    setup = package.make_setup(NPIX, NZERN, gains=True)
    params = point(setup, terms=0.0)
    base = np.asarray(package.beam_maps(params, setup))
    params[-2:] = (0.1, -0.05)
    scaled = np.asarray(package.beam_maps(params, setup))
    np.testing.assert_array_equal(scaled[0], base[0])
    np.testing.assert_allclose(scaled[1:], base[1:] * np.array([1.1, 0.95])[:, None, None], rtol=1e-14)


def centroid(beam):
    grid = np.arange(beam.shape[0])
    return np.array([(beam.sum(1) * grid).sum(), (beam.sum(0) * grid).sum()]) / beam.sum()


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_a_pointing_term_moves_its_own_maps_beam_along_its_own_axis(package):
    setup = package.make_setup(128, NZERN, pointing=True)
    params = point(setup, terms=0.0)
    params[:setup.basis.shape[0]] = 0.0
    base = np.asarray(package.beam_maps(params, setup))
    first = setup.amp_index + 1
    params[first] = 3.0  # map 1's tilt along x (radians per dish radius)
    moved = np.asarray(package.beam_maps(params, setup))
    np.testing.assert_array_equal(moved[[0, 2]], base[[0, 2]])
    shift = centroid(moved[1]) - centroid(base[1])
    assert abs(shift[0]) > 0.5
    assert abs(shift[1]) < 1e-6 * abs(shift[0])


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_a_defocus_scale_is_the_feed_offset_scaled(package):
    scaled = package.make_setup(NPIX, NZERN, defocus_scale=True)
    params = point(scaled, terms=0.0)
    params[-1] = 0.2
    longer = package.make_setup(NPIX, NZERN, dz=1.2 * scaled.dz)
    np.testing.assert_allclose(np.asarray(package.beam_maps(params, scaled)),
                               np.asarray(package.beam_maps(params[:-1], longer)), rtol=1e-10, atol=1e-18)


@pytest.mark.parametrize("options", ONE_BY_ONE)
@pytest.mark.parametrize("objective", ["cauchy", "gaussian", "least-squares"])
def test_the_adjoints_agree_with_each_other_with_autograd_and_with_the_scores(options, objective):
    numpy_setup = reference_numpy.make_setup(NPIX, NZERN, **options)
    torch_setup = torch_impl.make_setup(NPIX, NZERN, **options)
    truth = point(numpy_setup)
    data = reference_numpy.beam_maps(truth, numpy_setup)
    data = data + 1e-4 * np.random.default_rng(2).standard_normal(data.shape)
    params = truth + 0.02 * np.random.default_rng(3).standard_normal(truth.size)
    numpy_value, numpy_grad = reference_numpy.value_and_grad(params, numpy_setup, data, 1e-3, objective, "adjoint")
    values = {gradient: torch_impl.value_and_grad(params, torch_setup, data, 1e-3, objective, gradient)
              for gradient in ("adjoint", "autograd")}
    scale = np.max(np.abs(numpy_grad))
    for value, grad in values.values():
        assert value == pytest.approx(numpy_value, rel=1e-12)
        np.testing.assert_allclose(grad, numpy_grad, rtol=0, atol=1e-12 * scale)
    scores = power_scores(torch.as_tensor(params), torch_setup, prepare_data(data, torch_setup), 1e-3,
                          torch_impl.losses.loss_of(objective))
    np.testing.assert_allclose(scores.sum(dim=(-3, -2, -1)).numpy(), numpy_grad, rtol=0, atol=1e-12 * scale)
    values, grads = torch_impl.batched_value_and_grad(np.stack([params, truth]), torch_setup, data, 1e-3, objective)
    assert values[0] == pytest.approx(numpy_value, rel=1e-12)
    np.testing.assert_allclose(grads[0], numpy_grad, rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("options", ONE_BY_ONE)
def test_the_terms_gradients_match_central_differences(options):
    setup = reference_numpy.make_setup(NPIX, NZERN, **options)
    truth = point(setup)
    data = reference_numpy.beam_maps(truth, setup)
    params = truth + 0.02 * np.random.default_rng(4).standard_normal(truth.size)
    _, grad = reference_numpy.value_and_grad(params, setup, data, 1e-3, "gaussian", "adjoint")
    for k in range(setup.amp_index + 1, setup.nparams):
        step = np.zeros_like(params)
        step[k] = 1e-6
        difference = (reference_numpy.negative_log_likelihood(params + step, setup, data, 1e-3, "gaussian")
                      - reference_numpy.negative_log_likelihood(params - step, setup, data, 1e-3, "gaussian")) / 2e-6
        assert difference == pytest.approx(grad[k], rel=1e-5, abs=1e-7 * np.max(np.abs(grad)))


@pytest.mark.parametrize("options", ONE_BY_ONE)
def test_the_gauss_newton_matrix_is_the_hessian_where_the_model_fits(options):
    setup = torch_impl.make_setup(NPIX, NZERN, **options)
    truth = point(setup)
    data = torch_impl.beam_maps(truth, setup).numpy()
    matrix = torch_impl.gauss_newton_matrix(truth, setup, data, 1e-3, "gaussian", window_loss=0.0)
    hessian = torch_impl.hessian(truth, setup, data, 1e-3, "gaussian")
    np.testing.assert_allclose(matrix, hessian, rtol=0, atol=1e-9 * np.max(np.abs(hessian)))
    numpy_matrix = reference_numpy.gauss_newton_matrix(truth, reference_numpy.make_setup(NPIX, NZERN, **options),
                                                       data, 1e-3, "gaussian", window_loss=0.0)
    np.testing.assert_allclose(numpy_matrix, hessian, rtol=0, atol=1e-5 * np.max(np.abs(hessian)))


def test_a_fit_finds_the_terms_it_was_given():
    setup = torch_impl.make_setup(NPIX, NZERN, **EVERY)
    truth = point(setup)
    truth[setup.amp_index + 1:] = [0.5, -0.4, 0.3, 0.6, 0.05, 0.04, -0.03, 0.02, -0.01, 0.015]
    clean = torch_impl.beam_maps(truth, setup).numpy()
    noise = 1e-4 * clean.max()
    data = clean + noise * np.random.default_rng(5).standard_normal(clean.shape)
    start = truth.copy()
    start[setup.amp_index + 1:] = 0.0
    result = torch_impl.fit(setup, data, start, gamma=noise, objective="gaussian", gradient="adjoint",
                            start_hessian="gauss-newton")
    errors = torch_impl.standard_errors(torch_impl.hessian(result.x, setup, data, noise, "gaussian"))
    terms = slice(setup.amp_index + 1, setup.nparams)
    assert np.all(np.abs(result.x[terms] - truth[terms]) < 5 * errors[terms])
    assert np.all(np.abs(truth[terms]) > 5 * errors[terms])  # the terms were there to be found


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
@pytest.mark.parametrize("switch", ["gains", "pointing", "defocus_scale"])
def test_a_switch_that_is_not_true_or_false_is_refused(package, switch):
    with pytest.raises(ValueError, match=f"{switch} must be True or False, got 1"):
        package.make_setup(NPIX, NZERN, **{switch: 1})


def test_the_report_says_what_the_terms_did_from_the_numbers_it_is_given():
    import types

    import msgspec

    from replication.studies.real_maps.findings import terms_line
    from replication.studies.real_maps.records import TermsEffect

    effect = {"terms": ["pointing", "defocus_scale", "gains"], "parameters": 7, "lower_by": 20.0,
              "surface_difference_rms_um": 84.4,
              "values": {"pointing": [0.0, 0.0, 2 * np.pi, 0.0], "defocus_scale": [0.005], "gains": [-0.05, 0.02]}}
    record = types.SimpleNamespace(wavelength=0.01, config=True, telescope=types.SimpleNamespace(radius=10.0))
    line = terms_line("SRT", msgspec.convert(effect, TermsEffect), record)
    # 2 x 20 = 40 against chi-squared's 99.9% point for 7 parameters, 24.3: they matter
    assert "twice the objective's decrease, 40, exceeds chi-squared's 99.9% point for 7 parameters (24.3)" in line
    assert "they matter" in line
    assert "moves by 84 um rms" in line
    assert "gains -5.0%, +2.0%" in line
    assert "feed offset x 1.005" in line
    assert "+0, +0; +2.1e+02, +0 arcsec" in line  # a tilt of 2 pi rad per dish radius: wavelength / R = 1e-3 rad
    small = terms_line("SRT", msgspec.convert(effect | {"lower_by": 5.0}, TermsEffect), record)
    assert "stays below" in small
    assert "not needed" in small


"""The telescope as data, masks, maps smaller than the grid and fitted baseline offsets, in both trees."""

import dataclasses
import math

import numpy as np
import pytest
import torch

import reference_numpy
import torch_impl

GREGORIAN = reference_numpy.Telescope(radius=32.0, focal_length=21.0, effective_focal_length=150.0, blockage=6.0,
                                      wavelength=0.0135, dz=0.027)
"""A two-mirror telescope of the Sardinia Radio Telescope's shape, its central blockage made three times wider so
that a 32-pixel grid sees it."""
NPIX, NZERN = 32, 3


def setup_of(package, telescope=GREGORIAN, offsets=True, npix=NPIX):
    return package.make_setup(npix, NZERN, telescope=telescope, offsets=offsets, oversamp=0.9)


def params_of(setup, seed=1):
    rng = np.random.default_rng(seed)
    params = np.concatenate([0.3 * rng.standard_normal(setup.basis.shape[0]), [0.05, -0.04, 1.2]])
    return np.concatenate([params, 2e-5 * rng.standard_normal(setup.n_offsets)])


def observation(setup, seed=2):
    """Maps of params_of(setup) with noise, and a mask of a few dropped samples (True: left out)."""
    setup = setup_of(reference_numpy, setup.telescope, bool(setup.n_offsets), setup.npix)
    beams = np.asarray(reference_numpy.beam_maps(params_of(setup, seed), setup))
    rng = np.random.default_rng(seed)
    data = beams + 0.02 * beams.max() * rng.standard_normal(beams.shape)
    mask = np.zeros(data.shape, dtype=bool)
    mask[0, 3, 4] = mask[1, 20, 7] = mask[2, 16, 16] = True
    return data, mask


def test_the_blockage_leaves_out_the_middle_of_the_dish():
    setup = setup_of(reference_numpy)
    radius = np.hypot(setup.x, setup.y)
    assert radius.min() >= 6.0 / 32.0
    assert radius.max() <= 1.0
    assert setup.x.size < setup_of(reference_numpy, dataclasses.replace(GREGORIAN, blockage=0.0)).x.size


def test_the_screens_are_the_two_mirror_path_difference():
    setup = setup_of(reference_numpy)
    r = np.hypot(setup.x, setup.y) * 32.0
    a, b = r / 42.0, r / 300.0
    path = (1 - a**2) / (1 + a**2) + (1 - b**2) / (1 + b**2)
    for screen, offset in zip(setup.screens, (0.0, -1.0, 1.0), strict=True):
        np.testing.assert_allclose(screen, 2 * np.pi * path * offset * 0.027 / 0.0135, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_offsets_add_to_every_pixel_of_their_map(package):
    with_offsets, without = setup_of(package), setup_of(package, offsets=False)
    params = params_of(with_offsets)
    beams = np.asarray(package.beam_maps(params, with_offsets))
    plain = np.asarray(package.beam_maps(params[:-3], without))
    np.testing.assert_allclose(beams - plain, np.broadcast_to(params[-3:, None, None], beams.shape), atol=1e-18)


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
@pytest.mark.parametrize("objective", ["cauchy", "least-squares"])
def test_a_mask_leaves_its_pixels_out_of_the_objective(package, objective):
    setup = setup_of(package)
    data, mask = observation(setup)
    params = params_of(setup, seed=5)
    model = np.asarray(package.beam_maps(params, setup))
    residual = (data - model)[~mask]
    expected = (np.log1p((residual / 1e-4) ** 2).sum() + residual.size * math.log(math.pi * 1e-4)
                if objective == "cauchy" else (residual**2).sum())
    value = package.negative_log_likelihood(params, setup, package.prepare_data(data, setup, mask), 1e-4, objective)
    assert value == pytest.approx(expected, rel=1e-12)
    garbage = np.where(mask, 1e30, data)  # a masked pixel's value is never read, NaN included
    garbage[2, 16, 16] = np.nan
    for masked in (np.ma.masked_array(garbage, mask), package.prepare_data(garbage, setup, mask)):
        assert package.negative_log_likelihood(params, setup, masked, 1e-4, objective) == value


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_maps_smaller_than_the_grid_are_compared_on_their_own_pixels(package):
    setup = setup_of(package)
    data, _ = observation(setup)
    params = params_of(setup, seed=5)
    rows, cols = slice(16 - 10, 16 + 10), slice(16 - 9, 16 + 10)  # 20 x 19 pixels, centred as documented
    outside = np.ones(data.shape, dtype=bool)
    outside[:, rows, cols] = False
    small = package.negative_log_likelihood(params, setup, package.prepare_data(data[:, rows, cols], setup,
                                                                                smaller=True))
    assert small == package.negative_log_likelihood(params, setup, package.prepare_data(data, setup, outside))
    assert small != package.negative_log_likelihood(params, setup, data)
    with pytest.raises(ValueError, match=r"smaller=True"):  # maps of another size, unasked: refused, not placed
        package.negative_log_likelihood(params, setup, data[:, rows, cols])


def test_a_view_with_negative_strides_is_taken_as_its_copy(package):
    setup = setup_of(package)
    data, _ = observation(setup)
    params = params_of(setup, seed=5)
    flipped = np.flip(data, 1)
    assert package.negative_log_likelihood(params, setup, flipped) == package.negative_log_likelihood(
        params, setup, flipped.copy())


def test_the_adjoint_autograd_and_differences_agree_with_a_mask_offsets_and_a_gregorian():
    setup_np, setup_t = setup_of(reference_numpy), setup_of(torch_impl)
    data, mask = observation(setup_np)
    params = params_of(setup_np, seed=7)
    observed_np, observed_t = reference_numpy.prepare_data(data, setup_np, mask), torch_impl.prepare_data(data, setup_t,
                                                                                                             mask)
    for objective in ("cauchy", "least-squares"):
        value, adjoint = reference_numpy.value_and_grad(params, setup_np, observed_np, objective=objective,
                                                        gradient="adjoint")
        value_t, autograd = torch_impl.value_and_grad(params, setup_t, observed_t, objective=objective)
        _, adjoint_t = torch_impl.value_and_grad(params, setup_t, observed_t, objective=objective, gradient="adjoint")
        assert value == pytest.approx(value_t, rel=1e-12)
        scale = np.linalg.norm(autograd)
        assert np.linalg.norm(adjoint - autograd) <= 1e-10 * scale
        assert np.linalg.norm(adjoint_t - autograd) <= 1e-10 * scale
        steps = np.where(np.arange(params.size) >= params.size - 3, 1e-9, 1e-6)
        numeric = np.array([(reference_numpy.negative_log_likelihood(params + e, setup_np, observed_np,
                                                                     objective=objective)
                             - reference_numpy.negative_log_likelihood(params - e, setup_np, observed_np,
                                                                       objective=objective)) / (2 * h)
                            for e, h in zip(np.diag(steps), steps, strict=True)])
        assert np.linalg.norm(numeric - autograd) <= 1e-5 * scale, objective


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_the_pixel_scores_sum_to_the_gradient_with_a_mask_and_offsets(package):
    setup = setup_of(package)
    data, mask = observation(setup)
    observed = package.prepare_data(data, setup, mask)
    params = params_of(setup, seed=7)
    scores = package.gradient.power_scores(package.backend.as_model_array(params, setup), setup, observed, 1e-4,
                                           package.losses.loss_of("cauchy"))
    _, grad = package.value_and_grad(params, setup, observed, gradient="adjoint")
    total = np.asarray(scores.reshape(setup.nparams, -1).sum(1))
    np.testing.assert_allclose(total, grad, rtol=1e-10, atol=1e-10 * np.max(np.abs(grad)))


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_a_sky_step_sets_the_beam_pixel(package):
    """A tilt of exactly k beam pixels (phase 2 pi x u / wavelength across the dish, u = k sky_step) moves the beams
    by k pixels, to rounding: the grid made by oversamp_for_sky_step samples the sky at that step. A positive x tilt
    (Zernike (1, 1)) moves the beams towards smaller indices of axis 0 (the inverse FFT's sign)."""
    telescope, npix, step = dataclasses.replace(GREGORIAN, blockage=0.0), 64, 3.27e-5
    setup = package.make_setup(npix, 1, telescope=telescope, oversamp=telescope.oversamp_for_sky_step(npix, step))
    assert telescope.beam_pixel(npix, setup.oversamp) == pytest.approx(step, rel=1e-14)
    k = 3
    tilt = 2 * np.pi * k * step * telescope.radius / telescope.wavelength  # radians per dish radius
    flat, tilted = np.array([0.0, 0.0, 0.0, 0.0, 1.0]), np.array([0.0, tilt, 0.0, 0.0, 1.0])
    beams, moved = (np.asarray(package.beam_maps(p, setup)) for p in (flat, tilted))
    np.testing.assert_allclose(moved, np.roll(beams, -k, axis=1), atol=1e-12 * beams.max())


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
@pytest.mark.parametrize(("change", "name"), [
    ({"blockage": 40.0}, "blockage"), ({"blockage": -1.0}, "blockage"), ({"effective_focal_length": 0.0},
                                                                           "effective_focal_length"),
    ({"wavelength": float("nan")}, "wavelength"), ({"radius": -1.0}, "radius")])
def test_bad_telescopes_are_refused_naming_the_setting(package, change, name):
    with pytest.raises(ValueError, match=name):
        package.make_setup(NPIX, NZERN, telescope=dataclasses.replace(GREGORIAN, **change), oversamp=0.9)


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_bad_masks_and_switches_are_refused(package):
    setup = setup_of(package)
    data, mask = observation(setup)
    with pytest.raises(ValueError, match="mask"):
        package.prepare_data(data, setup, mask.astype(int))
    with pytest.raises(ValueError, match="mask"):
        package.prepare_data(data, setup, mask[:, :-1])
    with pytest.raises(ValueError, match="every pixel is masked"):
        package.prepare_data(data, setup, np.ones(data.shape, dtype=bool))
    with pytest.raises(ValueError, match="offsets"):
        package.make_setup(NPIX, NZERN, offsets=1)
    with pytest.raises(ValueError, match="telescope"):
        package.make_setup(NPIX, NZERN, telescope={"radius": 2.8})


def test_either_trees_telescope_is_accepted_by_both():
    telescope = torch_impl.Telescope(**dataclasses.asdict(GREGORIAN))
    assert reference_numpy.make_setup(NPIX, NZERN, telescope=telescope, oversamp=0.9).telescope == GREGORIAN
    assert torch.equal(torch_impl.make_setup(NPIX, NZERN, telescope=GREGORIAN, oversamp=0.9).screens,
                       setup_of(torch_impl, offsets=False).screens)

"""Support legs on the aperture: their shadows leave the dish, both trees make the same dish and the same beams,
and the exact gradients stay exact; a telescope's bad legs are refused naming the field."""

import dataclasses
import math
import re

import numpy as np
import pytest

import reference_numpy
import torch_impl

LEGGED = reference_numpy.Telescope(radius=32.0, focal_length=21.0, effective_focal_length=150.0, blockage=4.0,
                                   wavelength=0.0135, dz=0.027, legs=4, leg_width=2.5, leg_angle=30.0,
                                   leg_start=4.0)
"""A Gregorian dish of the SRT's shape with a quadrupod whose shadows a 64-pixel grid resolves."""
NPIX, NZERN, OVERSAMP = 64, 3, 0.9


def setup_of(package, telescope=LEGGED, npix=NPIX):
    return package.make_setup(npix, NZERN, telescope=telescope, offsets=True, oversamp=OVERSAMP)


def params_of(setup, seed=1):
    rng = np.random.default_rng(seed)
    params = np.concatenate([0.3 * rng.standard_normal(setup.basis.shape[0]), [0.05, -0.04, 1.2]])
    return np.concatenate([params, 2e-5 * rng.standard_normal(setup.n_offsets)])


def test_no_dish_pixel_lies_in_a_legs_shadow_and_the_shadows_take_pixels_away():
    legged = setup_of(reference_numpy)
    plain = setup_of(reference_numpy, dataclasses.replace(LEGGED, legs=0, leg_width=0.0))
    x, y = legged.x * LEGGED.radius, legged.y * LEGGED.radius  # metres
    for leg in range(4):
        theta = math.radians(30.0 + 90.0 * leg)
        along = x * math.cos(theta) + y * math.sin(theta)
        across = y * math.cos(theta) - x * math.sin(theta)
        assert not ((along >= 4.0) & (np.abs(across) <= 1.25)).any()
    removed = plain.x.size - legged.x.size
    # four strips 2.5 m wide from 4 m to the rim (28 m): about 4 x 2.5 x 28 m^2 of the dish's pi (32^2 - 4^2)
    expected = plain.x.size * 4 * 2.5 * 28 / (math.pi * (32**2 - 4**2))
    assert 0.7 * expected < removed < 1.3 * expected
    pairs = [set(zip(s.x.round(12), s.y.round(12), strict=True)) for s in (legged, plain)]
    assert pairs[0] < pairs[1]


def test_legs_that_end_inside_the_rim_shade_only_up_to_their_end():
    """Legs meeting the primary at leg_end (the SRT's quadrupod: at 17.5 m of 32 m) shade the strips from leg_start
    to there, and the dish beyond is whole again; both trees make the same dish."""
    ending = dataclasses.replace(LEGGED, leg_end=17.5)
    setups = [setup_of(package, ending) for package in (reference_numpy, torch_impl)]
    assert np.array_equal(setups[0].index, setups[1].index.numpy())
    full, plain = setup_of(reference_numpy), setup_of(reference_numpy, dataclasses.replace(LEGGED, legs=0))
    x, y = setups[0].x * LEGGED.radius, setups[0].y * LEGGED.radius
    theta = math.radians(30.0)
    along = x * math.cos(theta) + y * math.sin(theta)
    across = y * math.cos(theta) - x * math.sin(theta)
    in_strip = np.abs(across) <= 1.25
    assert not (in_strip & (along >= 4.0) & (along <= 17.5)).any()
    assert (in_strip & (along > 17.5)).any()  # beyond the end, the strip is dish again
    assert full.x.size < setups[0].x.size < plain.x.size
    # a strip 2.5 m wide from 4 m to 17.5 m: 13.5 / 28 of a strip to the rim
    removed, to_rim = plain.x.size - setups[0].x.size, plain.x.size - full.x.size
    assert removed == pytest.approx(to_rim * 13.5 / 28, rel=0.15)


def test_both_trees_make_the_same_dish_and_beams_with_legs():
    numpy_setup, torch_setup = setup_of(reference_numpy), setup_of(torch_impl)
    assert np.array_equal(numpy_setup.index, torch_setup.index.numpy())
    params = params_of(numpy_setup)
    beams = np.asarray(reference_numpy.beam_maps(params, numpy_setup))
    assert np.abs(np.asarray(torch_impl.beam_maps(params, torch_setup)) - beams).max() <= 1e-12 * np.abs(beams).max()


@pytest.mark.parametrize("objective", ["cauchy", "least-squares"])
def test_the_gradients_with_legs_agree_across_trees_with_autograd_and_central_differences(objective):
    numpy_setup, torch_setup = setup_of(reference_numpy), setup_of(torch_impl)
    params = params_of(numpy_setup)
    data = np.asarray(reference_numpy.beam_maps(params_of(numpy_setup, seed=2), numpy_setup))
    value, adjoint = reference_numpy.value_and_grad(params, numpy_setup, data, objective=objective,
                                                    gradient="adjoint")
    scale = np.abs(adjoint).max()
    for gradient in ("adjoint", "autograd"):
        other_value, other = torch_impl.value_and_grad(params, torch_setup, data, objective=objective,
                                                       gradient=gradient)
        assert abs(other_value - value) <= 1e-12 * abs(value)
        assert np.abs(np.asarray(other) - adjoint).max() <= 1e-10 * scale
    steps = np.where(np.arange(params.size) >= params.size - numpy_setup.n_offsets, 1e-9, 1e-6)  # offsets ~1e-5
    central = np.array([(reference_numpy.negative_log_likelihood(params + e, numpy_setup, data, objective=objective)
                         - reference_numpy.negative_log_likelihood(params - e, numpy_setup, data, objective=objective))
                        / (2 * h) for e, h in zip(np.diag(steps), steps, strict=True)])
    assert np.abs(central - adjoint).max() <= 1e-5 * scale


@pytest.mark.parametrize(("change", "words"), [
    ({"legs": -1}, "legs must be an integer in [0, 12]"),
    ({"legs": True}, "legs must be an integer"),
    ({"legs": 2.0}, "legs must be an integer"),
    ({"leg_width": 0.0}, "leg_width must be positive where there are legs"),
    ({"leg_width": 40.0}, "leg_width must be a number in [0, radius = 32.0) metres"),
    ({"leg_start": -1.0}, "leg_start must be a number in [0, radius = 32.0) metres"),
    ({"leg_angle": math.nan}, "leg_angle must be a finite number of degrees"),
    ({"leg_end": 3.0}, "leg_end must be a finite number of metres beyond leg_start = 4.0"),
    ({"leg_end": math.inf}, "leg_end must be a finite number of metres beyond leg_start"),
    ({"leg_end": "17.5"}, "leg_end must be a finite number of metres beyond leg_start"),
])
@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_bad_legs_are_refused_naming_the_field(package, change, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        setup_of(package, dataclasses.replace(LEGGED, **change))

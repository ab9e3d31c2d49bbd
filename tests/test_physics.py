"""Physics: defocus symmetry, centro-symmetry in focus, Parseval, and the grid convention."""

import numpy as np
import pytest
from conftest import to_numpy

from reference_numpy.aperture import aperture_grid, dish_mask, illumination
from reference_numpy.zernike import zernike_basis
from replication.core.simulation import true_params


def negate_frequencies(power):
    """power[-k] over the last two axes, for arrays in FFT order."""
    return np.roll(np.flip(power, axis=(-2, -1)), 1, axis=(-2, -1))


@pytest.mark.parametrize("npix", [32, 33, 64])
def test_opposite_defocus_gives_identical_beams(package, npix):
    """With no aberration and a centred illumination the field at -dz is the conjugate of the one at +dz."""
    setup = package.make_setup(npix, 4)
    beams = to_numpy(package.beam_maps(true_params(setup.nparams), setup))
    np.testing.assert_allclose(beams[1], beams[2], rtol=0, atol=1e-14 * beams.max())
    assert np.max(np.abs(beams[0] - beams[1])) > 1e-3 * beams.max()  # defocus does change the beam


@pytest.mark.parametrize("npix", [32, 33, 64])
def test_in_focus_beam_is_centro_symmetric(package, npix):
    setup = package.make_setup(npix, 4)
    beams = to_numpy(package.beam_maps(true_params(setup.nparams), setup))
    in_fft_order = np.fft.ifftshift(beams, axes=(-2, -1))
    np.testing.assert_allclose(in_fft_order, negate_frequencies(in_fft_order), rtol=0, atol=1e-14 * beams.max())


def test_coma_breaks_the_centro_symmetry(package):
    """The symmetry check can fail: an odd aberration makes the in-focus beam lopsided."""
    setup = package.make_setup(32, 3)
    params = true_params(setup.nparams)
    params[7] = 0.5  # coma, (n, l) = (3, 1)
    beams = np.fft.ifftshift(to_numpy(package.beam_maps(params, setup)), axes=(-2, -1))
    assert np.max(np.abs(beams[0] - negate_frequencies(beams[0]))) > 1e-3 * beams.max()


@pytest.mark.parametrize("npix", [16, 31, 64])
def test_parseval(package, npix, rng):
    """Total power of each beam = aperture power / npix^2 (ifft2 divides by npix^2)."""
    setup = package.make_setup(npix, 3)
    params = rng.normal(0, 0.4, setup.nparams)
    params[-3:] = [0.1, -0.2, 1.3]
    x, y = aperture_grid(npix, setup.oversamp)
    amplitude = illumination(x, y, 0.1, -0.2, 1.3, setup.sigma, 0.0, 0.0) * dish_mask(x, y)
    beams = to_numpy(package.beam_maps(params, setup))
    np.testing.assert_allclose(beams.sum(axis=(1, 2)), np.full(3, np.sum(amplitude**2) / npix**2), rtol=1e-12)


def test_grid_includes_both_ends_so_even_grids_miss_the_origin():
    for npix in (8, 9, 64, 65):
        x, y = aperture_grid(npix, 2.0)
        assert x[0, 0] == y[0, 0] == -4.0
        assert x[-1, -1] == y[-1, -1] == 4.0
        assert np.all(x[:, 0] == x[:, -1])  # x varies along axis 0
        centre = np.fft.ifftshift(x)[0, 0]
        assert (centre == 0.0) == (npix % 2 == 1)


def test_dish_covers_its_share_of_the_grid():
    x, y = aperture_grid(512, 2.0)
    share = dish_mask(x, y).mean()
    assert share == pytest.approx(np.pi / 64, rel=0.01)  # dish radius 1 of a grid 8 radii wide


@pytest.mark.parametrize("npix", [16, 31, 64])
def test_pruned_far_field_equals_the_centred_definition(package, npix, rng):
    """beam_maps transforms only the dish's block, placed in the grid's corner; its power must equal the
    definition written out here on the whole centred grid: fftshift(|ifft2(ifftshift(field))|^2)."""
    setup = package.make_setup(npix, 3)
    params = rng.normal(0, 0.4, setup.nparams)
    params[-3:] = [0.1, -0.2, 1.3]
    x, y = aperture_grid(npix, setup.oversamp)
    on_dish = dish_mask(x, y)
    phase = np.zeros_like(x)
    phase[on_dish] = params[:-3] @ zernike_basis(3, x[on_dish], y[on_dish])[1:]
    amplitude = illumination(x, y, *params[-3:], setup.sigma, setup.rho, setup.diff) * on_dish
    a = np.hypot(x, y) * setup.radius / (2 * setup.focal_length)
    path = (1 - a**2) / (1 + a**2)
    expected = []
    for offset in (0.0, -1.0, 1.0):  # in focus, then feed at -dz and +dz
        field = amplitude * np.exp(1j * (phase + 2 * np.pi * path * offset * setup.dz / setup.wavelength))
        expected.append(np.fft.fftshift(np.abs(np.fft.ifft2(np.fft.ifftshift(field))) ** 2))
    beams = to_numpy(package.beam_maps(params, setup))
    np.testing.assert_allclose(beams, np.array(expected), rtol=0, atol=1e-12 * np.max(expected))

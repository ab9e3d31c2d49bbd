"""The written surface: a deformation applied at a known place on the dish is found there in the FITS file (its
header's axes, signs and centre), and the uncertainty map is the spread of the surfaces the covariance allows."""

import dataclasses
import types

import numpy as np
import pytest

import reference_numpy
from oof_common.scans import ScanNoise
from replication.core.reduction.configs import About
from replication.core.reduction.sources import TILTS, source_named, surface_error, surface_grid
from replication.core.reduction.surface import (
    fits_available,
    observation_words,
    parameter_names,
    sign_words,
    surface_uncertainty,
    write_surface_fits,
)

fits = pytest.importorskip("astropy.io.fits", reason="astropy (the fits extra) is not installed")


@pytest.fixture(scope="module")
def srt():
    """The SRT's setup at npix 64, Zernike order 8 (offsets fitted, as the real maps are)."""
    source = source_named("srt-2019-04-26")
    return reference_numpy.make_setup(64, 8, telescope=source.telescope, offsets=True), source


def bump_at(setup, x0, y0, width=0.25):
    """Parameters whose surface is a bump centred at (x0, y0) dish radii: the Zernike coefficients (tilts left at 0)
    fitted to it by least squares over the dish pixels."""
    target = np.exp(-((setup.x - x0) ** 2 + (setup.y - y0) ** 2) / (2 * width**2))
    basis = np.asarray(setup.basis)[TILTS:]
    coefficients, *_ = np.linalg.lstsq(basis.T, target, rcond=None)
    params = np.zeros(setup.nparams)
    params[TILTS:basis.shape[0] + TILTS] = coefficients
    return params


@pytest.mark.parametrize(("x0", "y0"), [(0.6, 0.0), (0.0, -0.6), (-0.45, 0.45)])
def test_a_bump_on_the_dish_is_found_where_it_was_applied_in_the_fits_file(srt, tmp_path, x0, y0):
    setup, source = srt
    params = bump_at(setup, x0, y0)
    image, spacing = surface_grid(params, setup, source.wavelength)
    path = write_surface_fits(tmp_path / "surface.fits", image, np.zeros_like(image), spacing,
                              {"SOURCE": (source.name, "")})
    with fits.open(path) as hdus:
        data, header = hdus[0].data, hdus[0].header
        assert hdus["UNCERT"].data.shape == data.shape
    row, column = np.unravel_index(np.nanargmax(data), data.shape)
    along = {header[f"CTYPE{axis}"]: (index + 1 - header[f"CRPIX{axis}"]) * header[f"CDELT{axis}"]
             for axis, index in ((1, column), (2, row))}
    radius = setup.telescope.radius
    assert header["BUNIT"] == "um"
    assert along["DISH-X"] == pytest.approx(x0 * radius, abs=2 * spacing + 0.05 * radius)
    assert along["DISH-Y"] == pytest.approx(y0 * radius, abs=2 * spacing + 0.05 * radius)
    # the header's spacing is the dish pixels' own
    steps = np.diff(np.unique(np.round(setup.x * radius, 9)))
    assert spacing == pytest.approx(float(np.min(steps)), rel=1e-6)


def test_the_uncertainty_map_is_the_spread_of_the_surfaces_the_covariance_allows(srt):
    setup, source = srt
    rng = np.random.default_rng(3)
    factor = rng.normal(size=(setup.nparams, setup.nparams)) * 0.01
    covariance = factor @ factor.T
    uncertainty = surface_uncertainty(covariance, setup, source.wavelength)
    draws = rng.multivariate_normal(np.zeros(setup.nparams), covariance, size=4000)
    surfaces = np.array([surface_error(draw, setup, source.wavelength) for draw in draws])
    on_dish = uncertainty.reshape(-1)[setup.index]
    np.testing.assert_allclose(surfaces.std(axis=0), on_dish, rtol=0.06)
    assert np.isnan(uncertainty).sum() == uncertainty.size - setup.index.size


def test_fits_is_written_only_where_astropy_is_installed():
    assert fits_available()


@pytest.mark.parametrize(("plus_dz", "positive"), [("lengthens", "below design"), ("shortens", "above design"),
                                                   (None, "not stated")])
def test_the_fits_header_says_the_observation_and_the_sign_and_holds_the_parameters(srt, tmp_path, plus_dz, positive):
    setup, source = srt
    about = About(date="2019-04-26", elevation=45.0, plus_dz=plus_dz)
    source = dataclasses.replace(source, about=about, dish=dataclasses.replace(
        source.dish, legs=4, leg_width=1.0, leg_angle=45.0, leg_start=3.953, leg_end=17.5))
    observation = types.SimpleNamespace(source=source, scan=ScanNoise(0.79, 0))
    terms = {"pointing": False, "defocus_scale": False, "gains": False}
    names = parameter_names(setup, terms)
    assert names[:3] == ["Z(1,-1)", "Z(1,1)", "Z(2,-2)"]
    assert names[-6:-3] == ["x0", "y0", "amp"]
    rng = np.random.default_rng(4)
    values, factor = rng.normal(size=setup.nparams), rng.normal(size=(setup.nparams, setup.nparams))
    covariance = factor @ factor.T
    image, spacing = surface_grid(values, setup, source.wavelength)
    path = write_surface_fits(tmp_path / "surface.fits", image, np.zeros_like(image), spacing,
                              observation_words(observation), sign=sign_words(about),
                              parameters=(names, values, covariance))
    with fits.open(path) as hdus:
        header = hdus[0].header
        assert (header["TELESCOP"], header["DATE-OBS"], header["ELEVATIO"]) == ("SRT", "2019-04-26", 45.0)
        assert header["FREQ"] == pytest.approx(22.23e9)
        assert header["DZ"] == pytest.approx(0.027)
        assert header["WAVELEN"] == pytest.approx(299_792_458.0 / 22.23e9)
        assert (header["LEGS"], header["LEGANGLE"], header["LEGEND"]) == (4, 45.0, 17.5)
        assert header["POSITIVE"] == positive
        assert (header["WHITENED"], header["SCANCORR"]) == ("rows", 0.79)
        comments = "".join(str(card) for card in header["COMMENT"]).replace(" ", "")  # wrapped over cards
        assert sign_words(about).replace(" ", "") in comments
        table = hdus["PARAMS"].data
        assert [name.strip() for name in table["NAME"]] == names
        np.testing.assert_array_equal(table["VALUE"], values)
        np.testing.assert_allclose(table["STDERR"], np.sqrt(np.diag(covariance)))
        np.testing.assert_array_equal(hdus["COVAR"].data, covariance)
    with pytest.raises(ValueError, match="parameter names: 50 for 56 parameters"):
        parameter_names(reference_numpy.make_setup(64, 8, telescope=source.telescope, offsets=True, pointing=True,
                                                   gains=True), terms)

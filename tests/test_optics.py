"""The optics terms of a fitted phase in an engineer's units: a phase made by the +dz map's own feed offset reads as
that offset, a pure coma or tilt reads as its path at the rim or its angle on the sky, the panel surface left is
what the optics do not make, and each standard error is the spread the coefficients' covariance allows."""

import math

import numpy as np
import pytest

import reference_numpy
from oof_common.constants import DEFOCUS_ORDER
from replication.core.reduction.optics import ARCSEC, optics_terms, optics_words, zernike_row
from replication.core.reduction.sources import source_named
from replication.studies.real_maps.findings import optics_line


@pytest.fixture(scope="module")
def srt():
    """The SRT's setup (a two-mirror dish) at npix 64, Zernike order 8, and its wavelength."""
    source = source_named("srt-2019-04-26")
    return reference_numpy.make_setup(64, 8, telescope=source.telescope, offsets=True), source.wavelength


def params_of(setup, phase):
    """Parameters whose Zernike phase is the least-squares fit of `phase` over the dish pixels (tilts included; a
    piston fitted beside them and dropped: the model has none)."""
    columns = np.vstack([np.ones(setup.index.size), np.asarray(setup.basis)]).T
    coefficients, *_ = np.linalg.lstsq(columns, phase, rcond=None)
    params = np.zeros(setup.nparams)
    params[:coefficients.size - 1] = coefficients[1:]
    return params


def test_the_plus_dz_maps_own_screen_reads_as_its_feed_offset(srt):
    """The +dz map's defocus screen (the model's own, with the two-mirror path factor) fitted to order 8 and handed
    over as the aperture phase is an axial focus error of +dz, with no coma, no pointing and almost no panel
    surface; the -dz map's reads as -dz."""
    setup, wavelength = srt
    for offset in (1.0, -1.0):
        screen = np.asarray(setup.screens)[DEFOCUS_ORDER.index(offset)]
        optics, _ = optics_terms(params_of(setup, screen), np.zeros((setup.nparams,) * 2), setup, wavelength)
        dz_mm = offset * setup.telescope.dz * 1e3
        assert optics.focus_mm == pytest.approx(dz_mm, rel=1e-3)
        assert np.abs(optics.coma_mm).max() < 1e-9 * abs(dz_mm)
        assert np.abs(optics.pointing_arcsec).max() < 1e-6
        path_um = abs(dz_mm) * 1e3
        assert optics.panel_rms_um < 1e-3 * path_um


@pytest.mark.parametrize(("term", "index"), [((3, 1), 1), ((3, -1), 0)])
def test_a_pure_coma_reads_as_its_path_at_the_rim_and_leaves_no_panel_surface(srt, term, index):
    setup, wavelength = srt
    params = np.zeros(setup.nparams)
    row = zernike_row(setup, *term)
    params[row] = 0.7  # radians of coefficient
    optics, _ = optics_terms(params, np.zeros((setup.nparams,) * 2), setup, wavelength)
    rim = np.max(np.abs(np.asarray(setup.basis)[row]))
    assert optics.coma_mm[index] == pytest.approx(0.7 * rim * wavelength / (2 * math.pi) * 1e3, rel=1e-9)
    assert abs(optics.coma_mm[1 - index]) < 1e-9
    assert abs(optics.focus_mm) < 1e-9
    assert optics.panel_rms_um < 1e-6


def test_a_tilt_reads_as_the_beams_offset_on_the_sky(srt):
    """Z(1,1) = x / R on the dish: a phase c x / R is a wavefront tilted by c wavelength / (2 pi R) radians."""
    setup, wavelength = srt
    params = np.zeros(setup.nparams)
    params[zernike_row(setup, 1, 1)] = 2.0
    optics, _ = optics_terms(params, np.zeros((setup.nparams,) * 2), setup, wavelength)
    expected = 2.0 * wavelength / (2 * math.pi * setup.telescope.radius) * ARCSEC
    assert optics.pointing_arcsec[0] == pytest.approx(expected, rel=1e-9)
    assert abs(optics.pointing_arcsec[1]) < 1e-9 * expected


def test_the_panel_surface_is_what_the_optics_do_not_make(srt):
    """A Z(4,-4) (sin 4 phi: odd under either axis' reflection, so on the dish's symmetric pixels no part of
    pointing, focus or coma) comes through whole as panel surface."""
    from replication.core.reduction.sources import surface_error

    setup, wavelength = srt
    params = np.zeros(setup.nparams)
    params[zernike_row(setup, 4, -4)] = 0.5
    optics, panels = optics_terms(params, np.zeros((setup.nparams,) * 2), setup, wavelength)
    np.testing.assert_allclose(panels, surface_error(params, setup, wavelength), atol=1e-6)
    assert optics.panel_rms_um == pytest.approx(float(np.sqrt(np.mean(panels**2))))


def test_each_standard_error_is_the_spread_the_covariance_allows(srt):
    setup, wavelength = srt
    rng = np.random.default_rng(7)
    factor = rng.normal(size=(setup.nparams, setup.nparams)) * 0.02
    covariance = factor @ factor.T
    centre = rng.normal(size=setup.nparams) * 0.1
    optics, _ = optics_terms(centre, covariance, setup, wavelength)
    draws = rng.multivariate_normal(centre, covariance, size=3000)
    found = np.array([[o.focus_mm, *o.coma_mm, *o.pointing_arcsec] for o in
                      (optics_terms(draw, np.zeros_like(covariance), setup, wavelength)[0] for draw in draws)])
    expected = np.array([optics.focus_se_mm, *optics.coma_se_mm, *optics.pointing_se_arcsec])
    np.testing.assert_allclose(found.std(axis=0), expected, rtol=0.07)
    np.testing.assert_allclose(found.mean(axis=0), [optics.focus_mm, *optics.coma_mm, *optics.pointing_arcsec],
                               atol=0.1 * expected.max())


def test_below_order_three_there_is_no_coma_and_below_two_no_focus(srt):
    _, wavelength = srt
    telescope = source_named("srt-2019-04-26").telescope
    for order, focus, coma in ((1, False, 0), (2, True, 0), (3, True, 2)):
        setup = reference_numpy.make_setup(32, order, telescope=telescope)
        optics, _ = optics_terms(np.zeros(setup.nparams), np.zeros((setup.nparams,) * 2), setup, wavelength)
        assert (optics.focus_mm is not None, len(optics.coma_mm)) == (focus, coma)
        words = optics_words(optics)
        assert ("FOCUSMM" in words, "COMAX" in words) == (focus, coma > 0)
        assert all(len(key) <= 8 for key in words)
        assert "panel surface" in optics_line("SRT", optics)

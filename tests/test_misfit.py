"""The model's misfit as a surface (misfit.py): its probes hold no fitted term; on maps the model holds it is about
zero; on maps with panel pistons no Zernike order holds, it finds about their rms; and the closure's stated total
uncertainty covers such a surface's error."""

import numpy as np
import pytest

import reference_numpy
from replication.core import series
from replication.core.implementations import of
from replication.core.reduction import misfit
from replication.core.reduction.ladder import fit_ladder, residual_maps
from replication.core.reduction.sources import observation_of, rms
from replication.studies.closure import maps as closure_maps
from replication.studies.closure.maps import STEP, TRUE_SIGMA, simulated_maps

NPIX = 128
ORDER = 3


def fitted(panels_um, seed=2):
    """Closure maps (the SRT's noise, correlated along the scans) of a truth of order ORDER with panel pistons of
    panels_um rms, fitted to ORDER at the true taper: (observation, x, the panels' rms beyond the fitted basis)."""
    maps, _, truth_setup = simulated_maps(seed, NPIX, ORDER, panels_um=panels_um)
    observation = observation_of(closure_maps.SOURCE, maps, STEP).with_taper(TRUE_SIGMA)
    stages = fit_ladder(of(series.TORCH_ADJOINT), observation, tuple(range(1, ORDER + 1)), NPIX)
    panels = closure_maps.panel_surface(seed, truth_setup, panels_um)
    basis = np.vstack([np.ones(panels.size), np.asarray(truth_setup.basis)]).T
    beyond = panels - basis @ np.linalg.lstsq(basis, panels, rcond=None)[0]
    return observation, np.asarray(stages[-1].x), rms(beyond)


def test_probes_are_unit_phase_at_the_panels_scale_and_hold_no_fitted_term():
    setup = reference_numpy.make_setup(NPIX, 5)
    probes = misfit.probe_surfaces(setup)
    assert probes.shape == (misfit.PROBES, len(setup.index))
    np.testing.assert_allclose(np.sqrt(np.mean(probes**2, axis=1)), 1.0)
    basis = np.vstack([np.ones(len(setup.index)), np.asarray(setup.basis)])
    assert np.max(np.abs(basis @ probes.T)) < 1e-8 * len(setup.index)  # no piston, tilt or fitted Zernike term
    np.testing.assert_array_equal(probes, misfit.probe_surfaces(setup))  # the same probes every time
    neighbours = np.mean(probes[:, :-1] * probes[:, 1:])  # smooth over a few pixels, not white
    assert neighbours > 0.3


def test_the_misfit_is_about_zero_where_the_model_holds_the_maps_and_finds_panel_pistons_it_cannot_hold():
    """Without panels the residuals are the noise (nothing implied, whatever the border band's estimate of the noise
    level); with 100 um rms of panel pistons (about 98 um of it beyond the fitted orders) the misfit finds about
    that, from the residuals alone."""
    observation, x, _ = fitted(0.0)
    quiet = misfit.misfit(observation, x, ORDER, residual_maps(observation, x, ORDER, NPIX), NPIX)
    panelled, y, beyond = fitted(100.0)
    found = misfit.misfit(panelled, y, ORDER, residual_maps(panelled, y, ORDER, NPIX), NPIX)
    assert quiet["misfit_um"] < 5
    assert 0.7 < quiet["level"] < 1.1  # the squared residuals' own level, measured, not assumed to be 1
    assert 0.7 * beyond < found["misfit_um"] < 1.3 * beyond
    assert found["excess"] > quiet["excess"]


def test_residuals_with_no_sample_compared_imply_no_misfit(monkeypatch):
    observation = observation_of(closure_maps.SOURCE, simulated_maps(0, NPIX, 2)[0], STEP)
    monkeypatch.setattr(misfit, "map_response", lambda *args: np.ones(observation.maps.shape))
    nothing = np.full(observation.maps.shape, np.nan)
    found = misfit.misfit(observation, np.zeros(3), 2, nothing, NPIX)
    assert (found["misfit_um"], found["excess"]) == (0.0, 0.0)


@pytest.mark.slow
def test_a_closure_seed_with_panel_pistons_is_covered_once_the_misfit_is_stated():
    """A seed with 100 um rms of panel pistons reduced to n = 3 (the closure's noise, scan-correlated): the
    statistical uncertainty alone covers the error over a small part of the dish, the total (the truncation and the
    misfit added in quadrature) over at least 90% of it, at 2 sigma; the misfit states most of the panels' rms."""
    from replication.studies.closure.measure import reduce_seed

    record = reduce_seed(0, NPIX, (1, 2, 3), panels_um=100.0)
    assert record["covered_statistical"] < 0.5
    assert record["covered_total"] >= 0.9
    assert 50 < record["misfit_um"] < 130


def test_the_budget_states_the_misfit_apart_from_the_moves():
    import types

    from replication.studies.real_maps.findings import budget_line

    def part(**fields):
        return types.SimpleNamespace(**fields)

    record = part(order=5, uncertainty_median_um=84.0, other_objective=part(surface_difference_rms_um=161.0),
                  terms_effect=None, other_weighting=None, higher_orders=None, misfit=part(misfit_um=212.4))
    assert budget_line("SRT", record) == (
        "SRT: the surface's error budget (um rms over the dish): statistical 84 (median 1 sigma); the loss 161 (each "
        "the move of the surface when that choice is made the other way); the model's misfit 212 (the panel-scale "
        "surface the residuals' excess over the noise implies: the room they leave for a surface no order holds).")
    alone = part(**vars(record) | {"other_objective": None})
    assert budget_line("SRT", alone).endswith("statistical 84 (median 1 sigma); the model's misfit 212 (the "
                                              "panel-scale surface the residuals' excess over the noise implies: the "
                                              "room they leave for a surface no order holds).")

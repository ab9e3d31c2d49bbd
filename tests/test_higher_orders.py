"""The order rule and the truncation systematic: on maps whose truth lies inside the fitted basis the rule keeps the
order fitted and the surface barely moves beyond it; on maps with power beyond it the rule asks for more and the
surface moves by about the power left out. The rule itself on made-up decreases."""

import numpy as np
import pytest

from replication.core import series
from replication.core.implementations import of
from replication.core.reduction import truncation
from replication.core.reduction.ladder import fit_ladder
from replication.core.reduction.sources import SOURCES, next_start, observation_of, surface_error
from replication.studies.closure import maps as closure_maps
from replication.studies.closure.maps import STEP, TRUE_SIGMA, simulated_maps

NPIX = 128


@pytest.mark.parametrize(("lower_by", "chosen"), [
    ([1.0, 2.0, 3.0], 5),         # nothing significant: the order fitted
    ([100.0, 101.0, 102.0], 6),   # n = 6 called for (7 parameters), nothing beyond it
    ([100.0, 300.0, 600.0], 8),   # every order called for: the highest fitted
    ([1.0, 2.0, 200.0], 8),       # n = 8 against n = 5 called for, though n = 6 and 7 alone are not
])
def test_the_order_rule_chooses_the_lowest_order_beyond_which_nothing_is_significant(lower_by, chosen):
    found = {"orders": [6, 7, 8], "parameters": [7, 15, 24], "lower_by": lower_by}
    assert truncation.order_rule(5, found) == chosen


def fitted(truth_order, fit_order, monkeypatch, seed=3):
    """Closure maps of a truth of this order (white noise: the rule's chi-squared assumes it) fitted to fit_order."""
    monkeypatch.setattr(closure_maps, "SCAN_CORRELATION", 0.0)
    maps, truth, truth_setup = simulated_maps(seed, NPIX, truth_order, noise=0.002)
    observation = observation_of(SOURCES[0], maps, STEP).with_taper(TRUE_SIGMA)
    stages = fit_ladder(of(series.TORCH_ADJOINT), observation, tuple(range(1, fit_order + 1)), NPIX)
    return observation, np.asarray(stages[-1]["x"]), truth, truth_setup


def test_a_truth_inside_the_basis_keeps_the_order_and_its_surface_barely_moves(monkeypatch):
    monkeypatch.setattr(truncation, "HIGHER_ORDERS", 2)
    observation, x, _, _ = fitted(4, 4, monkeypatch)
    found = truncation.higher_orders(observation, x, 4, NPIX)
    assert found["orders"] == [5, 6]
    assert found["chosen"] == 4
    assert max(found["moved_um"]) < 15  # the noise's few micrometres, not the surface's hundreds
    assert min(found["p_value"]) > truncation.SIGNIFICANT_P


def test_power_beyond_the_basis_is_called_for_and_moves_the_surface(monkeypatch):
    monkeypatch.setattr(truncation, "HIGHER_ORDERS", 2)
    observation, x, truth, truth_setup = fitted(6, 4, monkeypatch)
    found = truncation.higher_orders(observation, x, 4, NPIX)
    assert found["chosen"] == 6
    assert found["p_value"][-1] < 1e-12
    # the move to the truth's order is the error the n = 4 surface makes: the systematic it states
    wavelength = SOURCES[0].wavelength
    truth_surface = surface_error(truth, truth_setup, wavelength)
    padded = next_start(x, truth_setup, observation.map_terms)
    error = float(np.sqrt(np.mean((surface_error(padded, truth_setup, wavelength) - truth_surface) ** 2)))
    assert error > 100  # hundreds of micrometres left out
    assert found["moved_um"][-1] == pytest.approx(error, rel=0.1)


def test_a_closure_seed_beyond_the_fitted_orders_is_covered_once_the_truncation_systematic_is_stated():
    """A seed whose truth reaches n = 6 reduced to n = 4 (the closure's own noise, scan-correlated): the
    statistical uncertainty alone covers the error over a minority of the dish, the total (with the systematic the
    order rule states) over at least 90% of it, at 2 sigma; the rule asks for at least the truth's order."""
    from replication.studies.closure.measure import reduce_seed
    from replication.studies.closure.records import check_closure

    record = reduce_seed(0, NPIX, (1, 2, 3, 4), truth_order=6)
    assert record["truth_order"] == 6
    assert record["chosen_order"] >= 6
    assert record["covered_total"] >= 0.9
    assert record["covered_statistical"] < 0.6
    assert record["truncation_um"] > 100
    check_closure("closure.jsonl", 1, record)  # the model admits it: x shorter than the truth


def test_the_closure_command_refuses_a_truth_order_below_the_fit_or_beside_the_bound(tmp_path):
    from conftest import run_command

    below = run_command("closure", "--seeds", 1, "--max-order", 4, "--truth-order", 3, "--results", tmp_path / "a")
    assert below.returncode == 2
    assert "--truth-order 3: at least --max-order (4)" in below.stderr
    bound = run_command("closure", "--seeds", 1, "--truth-order", 7, "--bound", "--results", tmp_path / "b")
    assert bound.returncode == 2
    assert "--truth-order: the Fisher bound is for truths inside the fitted orders" in bound.stderr
    assert not (tmp_path / "a").exists()

"""Time to the optimum in the sweep: each measured point records, per repeat, the time of the first evaluation
within 0.1 standard errors of the point's optimum; a fit that never got there is censored, never a value."""

import dataclasses

import pytest

from replication import sweep
from replication.implementations import Implementation
from replication.profiles import PROFILES
from replication.records import check_point
from replication.registry import TORCH_CPU


@pytest.fixture(scope="module")
def optima(tmp_path_factory):
    return sweep.PointOptima(tmp_path_factory.mktemp("sweep") / sweep.OPTIMA_FILE)


PROFILE = dataclasses.replace(PROFILES["smoke"], repeats=2, budget_s=1e9)


@pytest.mark.parametrize("objective", ["cauchy", "gaussian"])
def test_a_fit_stopped_early_is_censored_and_a_finished_one_has_a_time(optima, objective, tmp_path):
    impl = Implementation(TORCH_CPU.name)
    stopped = sweep.measure_point(impl, 32, 3, PROFILE, [], 1e3, "t", objective, optima)
    assert stopped["target"]["reached"] == 0
    assert stopped["target"]["times"] == [None, None]
    assert stopped["target"]["end_distance"] > 0.1
    finished = sweep.measure_point(impl, 32, 3, PROFILE, [], 1e-8, "t", objective, optima)
    assert finished["target"]["reached"] == 2
    assert all(0 < time <= total for time, total in zip(finished["target"]["times"], finished["total_s"]["all"],
                                                         strict=True))
    assert finished["target"]["end_distance"] <= 0.1
    for number, record in enumerate((stopped, finished), 1):
        check_point(tmp_path / "points.jsonl", number, record | {"schema": 2})


def test_the_optimum_of_a_point_is_found_once(optima):
    for _ in range(2):
        sweep.measure_point(Implementation(TORCH_CPU.name), 32, 2, PROFILE, [], 1e-8, "t", "cauchy", optima)
    keys = [line for line in optima.path.read_text().splitlines() if '"nzern": 2' in line]
    assert len(keys) == 1
    assert sweep.PointOptima(optima.path).known.keys() == optima.known.keys()


def test_the_noise_of_least_squares_in_noise_units_is_read_from_the_maps():
    """The simulated maps' additive noise is 2.4% of the peak; the edge band sees it (the beams have fallen off)."""
    import reference_numpy
    from replication.data import ADDITIVE_NOISE, noise_sigma, simulate_observation, true_params

    setup = reference_numpy.make_setup(128, 3)
    truth = true_params(setup.nparams)
    data = simulate_observation(setup, truth, seed=5)
    expected = ADDITIVE_NOISE * float(reference_numpy.beam_maps(truth, setup).max())
    assert noise_sigma(data) == pytest.approx(expected, rel=0.05)

"""Time to the optimum in the sweep: each measured point records, per repeat, the time of the first evaluation
within 0.1 standard errors of the point's optimum; a fit that never got there is censored, never a value."""

import dataclasses

import msgspec
import numpy as np
import pytest

from replication.core import point_times
from replication.core.implementations import Implementation
from replication.core.objectives import CAUCHY, GAUSSIAN
from replication.core.paths import REFERENCE
from replication.core.profiles import PROFILES
from replication.core.registry import NUMPY, TORCH_CPU
from replication.studies.sweep import measure as sweep
from replication.studies.sweep.records import as_read, check_point


@pytest.fixture(scope="module")
def optima(tmp_path_factory):
    return sweep.PointOptima(tmp_path_factory.mktemp("sweep") / sweep.OPTIMA_FILE)


PROFILE = dataclasses.replace(PROFILES["smoke"], repeats=2, budget_s=1e9)


@pytest.mark.parametrize("objective", [CAUCHY, GAUSSIAN], ids=str)
def test_a_fit_stopped_early_is_censored_and_a_finished_one_has_a_time(optima, objective, tmp_path):
    impl = Implementation(TORCH_CPU.name)
    written = [sweep.measure_point(impl, 32, 3, PROFILE, tol, "t", objective, optima) for tol in (1e3, 1e-8)]
    stopped, finished = map(as_read, written)
    assert stopped.target.reached == 0
    assert stopped.target.times == [None, None]
    assert stopped.target.end_distance > 0.1
    assert finished.target.reached == 2
    assert all(0 < time <= total for time, total in zip(finished.target.times, finished.total_s.all,
                                                         strict=True))
    assert finished.target.end_distance <= 0.1
    assert stopped.target.stopped == [False, False]  # never within the target: every repeat to its end
    assert finished.target.stopped == [False, True]
    for number, record in enumerate(written, 1):
        check_point(tmp_path / "points.jsonl", number, record | {"schema": 2})


def test_the_repeats_after_the_first_stop_at_the_target_and_leave_the_time_to_stop_alone(optima, tmp_path):
    """The first repeat runs to the minimizer's stop (the point's outcome and end distance are its); where it came
    within the target, each later one stops at the end of the iteration that got there: its time to the target is
    measured as the first's was (same evaluations, since the fits are deterministic), its trajectory ends there, and
    the point's time to stop is the first's alone. A record that says a stopped repeat never reached the target, or
    that the first was stopped, is refused."""
    from replication.core import optimum
    from replication.core.results import RunError
    from replication.studies.sweep.trajectories import read_trajectories

    written = sweep.measure_point(Implementation(TORCH_CPU.name), 64, 4, dataclasses.replace(PROFILE, repeats=3),
                                  1e-8, "t", CAUCHY, optima)
    record = as_read(written)
    assert record.target.stopped == [False, True, True]
    first, *later = read_trajectories(optima.path.parent, record.trajectories, record.nparams)
    best = optimum.Optimum.of(next(r for key, r in optima.known.items() if key[:2] == (64, 4)))
    reached = [int(np.argmax(best.distances(t["params"]) <= optimum.TARGET)) for t in (first, *later)]
    assert len(set(reached)) == 1  # the same evaluation first within the target in every repeat
    for trajectory in later:
        assert len(trajectory["evaluations"]) < len(first["evaluations"])
        assert len(trajectory["evaluations"]) - 1 - reached[0] <= 25  # stopped within that iteration's line search
    assert record.outcome.nfev >= len(first["evaluations"])
    assert record.target.end_distance == pytest.approx(optimum.end_distance(best, record.outcome.x))
    assert point_times.stop_seconds(record) == record.total_s.all[0]
    assert point_times.ended_repeats(record, "fit_s") == record.fit_s.all[:1]
    check_point(tmp_path / "points.jsonl", 1, written | {"schema": 2})
    for stopped in ([True, False, False], [False, True]):
        damaged = written | {"schema": 2, "target": written["target"] | {"stopped": stopped}}
        with pytest.raises(RunError, match=r"target\.stopped"):
            check_point(tmp_path / "points.jsonl", 1, damaged)


def test_the_optimum_of_a_point_is_found_once(optima):
    for _ in range(2):
        sweep.measure_point(Implementation(TORCH_CPU.name), 32, 2, PROFILE, 1e-8, "t", CAUCHY, optima)
    keys = [line for line in optima.path.read_text().splitlines() if '"nzern": 2' in line]
    assert len(keys) == 1
    assert sweep.PointOptima(optima.path).known.keys() == optima.known.keys()


def test_the_noise_of_least_squares_in_noise_units_is_read_from_the_maps():
    """The simulated maps' additive noise is 2.4% of the peak; the edge band sees it (the beams have fallen off)."""
    import reference_numpy
    from replication.core.objectives import noise_sigma
    from replication.core.simulation import ADDITIVE_NOISE, simulate_observation, true_params

    setup = reference_numpy.make_setup(128, 3)
    truth = true_params(setup.nparams)
    data = simulate_observation(setup, truth, seed=5)
    expected = ADDITIVE_NOISE * float(reference_numpy.beam_maps(truth, setup).max())
    assert noise_sigma(data) == pytest.approx(expected, rel=0.05)


def test_the_rules_read_a_stopped_early_fit_as_a_bound_never_a_value(optima):
    """The same point fitted twice by torch: once stopped early (never within the target), once to the end. Read
    as the slower series, the stopped fit's time is its total, a lower bound: the speed-up is 'at least', graded at
    both ends of what it can be (undetermined where those differ), and printed with '>='."""
    from replication import claims
    from replication.core import format as fmt
    from replication.core import judging
    from replication.core.series import Series
    from replication.studies.sweep import read as sweep_read

    impl = Implementation(TORCH_CPU.name)
    stopped = as_read(sweep.measure_point(impl, 32, 3, PROFILE, 1e3, "t", CAUCHY, optima))
    finished = as_read(sweep.measure_point(impl, 32, 3, PROFILE, 1e-8, "t", CAUCHY, optima))
    as_numpy = msgspec.structs.replace(stopped, impl="numpy")
    assert point_times.how_it_ended(stopped) is not None
    assert point_times.is_solution(finished)
    assert point_times.seconds(stopped) == pytest.approx(stopped.total_s.median)  # censored at its total
    slow, fast = Series("numpy"), Series("torch-cpu")
    series = {slow: {(32, 3): as_numpy}, fast: {(32, 3): finished}}
    ratio = point_times.speedups(series, slow, fast)[(32, 3)]
    assert ratio.kind == judging.AT_LEAST
    assert ratio.is_bound
    assert ratio.high == float("inf")
    assert fmt.times(ratio).startswith(">= ")
    finished_numpy = msgspec.structs.replace(finished, impl="numpy")
    backwards = point_times.speedups({slow: {(32, 3): finished_numpy}, fast: {(32, 3): stopped}}, slow, fast)[(32, 3)]
    assert backwards.kind == judging.AT_MOST
    assert fmt.times(backwards).startswith("<= ")
    neither = {slow: {(32, 3): as_numpy}, fast: {(32, 3): stopped}}
    assert point_times.speedups(neither, slow, fast) == {}  # no ratio...
    assert sweep_read.complete_sizes(neither, slow, fast)[(32, 3)].kind == judging.UNDETERMINED  # ...but not dropped
    rule = claims.BY_ID["C3"].rule
    assert rule.grade(judging.Ratio(6.0, 5.0, float("inf"), judging.AT_LEAST)) == judging.REPRODUCED
    assert rule.grade(judging.Ratio(3.0, 2.5, float("inf"), judging.AT_LEAST)) == judging.UNDETERMINED
    assert rule.possible(3.0, float("inf")) == (judging.PARTLY, judging.REPRODUCED)
    assert rule.grade(judging.Ratio(1.5, 0.0, 1.7, judging.AT_MOST)) == judging.NOT_REPRODUCED
    assert rule.grade(judging.Ratio(3.0, 2.5, 3.5)) == judging.PARTLY  # a value: its median graded


def test_a_median_over_bounds_is_a_value_only_where_no_bound_can_move_it():
    import statistics

    from replication.claims.speed import verdict_c3, verdict_c4
    from replication.core.judging import (
        AT_LEAST,
        AT_MOST,
        BETWEEN,
        NOT_REPRODUCED,
        UNDETERMINED,
        VALUE,
        Ratio,
        aggregate,
    )

    values = [Ratio(4.0, 3.0, 5.0), Ratio(6.0, 5.0, 7.0), Ratio(9.0, 8.0, float("inf"), AT_LEAST)]
    median = aggregate(statistics.median, values)
    assert (median.kind, float(median), median.low, median.high) == (VALUE, 6.0, 5.0, 7.0)
    low_bound = [Ratio(4.0, 3.0, 5.0), Ratio(6.0, 5.0, 7.0), Ratio(2.0, 1.0, float("inf"), AT_LEAST)]
    between = aggregate(statistics.median, low_bound)  # the bound at 2 may be anything above: the median is 4 to 6
    assert (between.kind, between.floor, between.ceiling) == (BETWEEN, 4.0, 6.0)
    assert aggregate(statistics.median, low_bound[:2] + [Ratio(7.0, 6.0, float("inf"), AT_LEAST)] * 2).kind == \
        AT_LEAST
    assert aggregate(min, [Ratio(4.0, 3.0, 5.0), Ratio(3.0, 0.0, 3.5, AT_MOST)]).kind == AT_MOST
    assert aggregate(min, [Ratio(4.0, 3.0, 5.0), Ratio(float("nan"), 0.0, float("inf"), UNDETERMINED)]).kind == \
        AT_MOST
    c3 = verdict_c3({(128, 2): Ratio(20.0, 18.0, float("inf"), AT_LEAST), (128, 4): Ratio(12.0, 11.0, 13.0),
                     (128, 6): Ratio(14.0, 13.0, 15.0)})
    assert c3.value.kind == VALUE
    assert float(c3.value) == 14.0
    # C4: a bound on the largest order leaves the slope open on one side; graded at both ends
    open_slope = verdict_c4({(256, 2): 2.0, (256, 4): 4.0, (256, 6): 6.0,
                             (256, 8): Ratio(10.0, 9.0, float("inf"), AT_LEAST)})
    assert open_slope.value is None
    assert open_slope.known[1] == float("inf")
    assert open_slope.verdict == NOT_REPRODUCED  # at least the slope of the values, about 1: above 0.6 either way


def test_every_ratio_of_the_reference_runs_lies_in_its_range_over_the_repeats():
    from replication.core.series import NUMPY, TORCH_CPU
    from replication.report import render as report

    checked = 0
    for run in report.load_runs([], REFERENCE):
        for _, (series, _) in run.sweeps.items():
            for ratio in point_times.speedups(series, NUMPY, TORCH_CPU).values():
                assert ratio.low <= ratio <= ratio.high
                checked += 1
    assert checked > 100


def test_a_point_over_the_budget_stopped_at_it_enters_the_rules_as_a_bound(optima, monkeypatch):
    """A NumPy point whose first fit runs past the time limit is fitted once, stopped there: its time to the
    optimum (never reached) is its total, so its speed-up over a finished torch fit is 'at least'; its end enters
    neither C5a (the pair is not compared) nor C5b."""
    from replication.claims import agreement
    from replication.core import judging, optimum
    from replication.core.registry import NUMPY
    from replication.core.series import Series
    from replication.studies.sweep import read as sweep_read

    finished = as_read(sweep.measure_point(Implementation(TORCH_CPU.name), 32, 3, PROFILE, 1e-8, "t", CAUCHY, optima))
    with monkeypatch.context() as patched:
        patched.setattr(optimum, "TARGET", 1e-9)  # one iteration from the truth never comes this close
        limited = as_read(sweep.measure_point(Implementation(NUMPY.name), 32, 3,
                                              dataclasses.replace(PROFILE, budget_s=1e-6), 1e-8, "t", CAUCHY, optima))
    assert limited.stopped_at_limit
    assert limited.time_limit_s == 1e-6
    assert limited.target.reached == 0
    slow, fast = Series("numpy"), Series("torch-cpu")
    series = {slow: {(32, 3): limited}, fast: {(32, 3): finished}}
    ratio = sweep_read.complete_sizes(series, slow, fast)[(32, 3)]
    assert ratio.kind == judging.AT_LEAST
    assert ratio.floor == pytest.approx(
        limited.total_s.median / point_times.seconds(finished))
    (pair,) = sweep_read.mahalanobis_differences(series, optima.known)
    assert not pair.comparable
    assert agreement.verdict_c5a([], [pair]).not_comparable == 1
    assert len(sweep_read.endings(series)) == 1  # torch's only


def test_no_fit_c5b_counts_at_the_optimum_is_censored_by_the_time_to_target_rule():
    """C5b's yardstick is the time to target's: every fit a reference sweep counts as ended at the optimum reached
    the target (its time to solution is a value), and every fit whose time is censored is counted as not there."""
    from replication.core.optimum import ended_at_target
    from replication.core.paths import REFERENCE
    from replication.report.render import load_runs
    from replication.studies.sweep import read as sweep_read

    counted = 0
    for run in load_runs([], REFERENCE):
        if not run.series or not sweep_read.timed_to_targets(run.series):
            continue
        for points in run.series.values():
            for record in points.values():
                if record.estimated or not record.outcome.convergence or not record.target:
                    continue
                target = record.target
                at_optimum = ended_at_target(target.end_distance, record.outcome.convergence)
                last_time = target.times[-1]
                assert not (at_optimum and last_time is None), record.npix
                counted += bool(at_optimum)
    assert counted > 100


def test_the_on_device_bfgs_on_a_gpu_is_never_stopped_at_the_target():
    """Testing each evaluation against the target reads the point back to the host: free for scipy's BFGS (its
    points are NumPy arrays) and on the CPU, a wait on the device at every evaluation for the on-device BFGS on a
    GPU, which therefore runs every repeat to its own stop."""
    from replication.core.timing import stops_on_host

    assert stops_on_host(Implementation("torch-cpu", minimizer="torchmin"))
    assert stops_on_host(Implementation("torch-cuda"))
    assert not stops_on_host(Implementation("torch-cuda", minimizer="torchmin"))


def test_a_point_builds_its_untimed_setups_once_and_each_timed_fit_its_own(tmp_path, monkeypatch):
    """One sweep point makes its problem once (problem.Problem): the NumPy reference's setup (the maps, the optimum's
    check, the exact account of the fit's end) and the implementation's (evaluation time, warm-up, the per-grid
    start) once each, the optimum's torch setup once; every timed repeat builds its own setup on its clock, as a
    user's script does."""
    import reference_numpy
    import torch_impl

    built = []

    def counting(module, name):
        make = module.make_setup

        def make_setup(npix, nzern, **options):
            built.append(name)
            return make(npix, nzern, **options)
        monkeypatch.setattr(module, "make_setup", make_setup)

    counting(reference_numpy, "numpy")
    counting(torch_impl, "torch")
    repeats = 3
    optima = sweep.PointOptima(tmp_path / sweep.OPTIMA_FILE)
    record = as_read(sweep.measure_point(Implementation(NUMPY.name, gradient="adjoint"), 32, 2,
                                         dataclasses.replace(PROFILE, repeats=repeats), 1e-8, "t", CAUCHY, optima))
    timed = len(record.total_s.all)
    assert timed == repeats
    assert built.count("torch") == 1  # the point's optimum (found once, untimed)
    assert built.count("numpy") == 2 + timed  # the problem's reference, the implementation's own, one per timed fit

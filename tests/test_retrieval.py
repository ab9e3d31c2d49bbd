"""Retrieval from a cold start: a fit from zero aberration reaches the optimum of a fit from the truth, the judge
tells a local minimum from the global one, and the run's records validate and resume."""

import copy
import json

import msgspec
import numpy as np
import pytest

import reference_numpy
from replication.core import judging
from replication.core.problem import Problem
from replication.core.series import NUMPY, TORCH_ADJOINT, TORCH_CPU, TORCH_ON_DEVICE
from replication.core.simulation import simulate_observation, true_params
from replication.studies.retrieval import measure as retrieval
from replication.studies.retrieval import read as cold_start
from replication.studies.retrieval.profiles import RETRIEVAL_PROFILES, RetrievalProfile
from replication.studies.retrieval.records import FROM_TRUTH, PLAIN, RetrievalFit, read_retrieval


@pytest.mark.parametrize("gradient", ["adjoint", None])
def test_a_cold_start_reaches_the_optimum_of_a_start_at_the_truth(package, gradient):
    npix, nzern = 32, 3
    setup_np = reference_numpy.make_setup(npix, nzern)
    truth = retrieval.aberrated_truth(setup_np, rms=0.5, seed=3)
    data = simulate_observation(setup_np, truth, 3)
    setup = package.make_setup(npix, nzern)
    options = {"gradient": gradient} if gradient else {}
    warm = package.fit(setup, data, truth, **options)
    cold = package.fit(setup, data, true_params(setup.nparams), **options)
    assert abs(cold.fun - warm.fun) < cold_start.SAME_OPTIMUM_NLL
    stderr = reference_numpy.standard_errors(reference_numpy.hessian(warm.x, setup_np, data))
    assert np.max(np.abs(cold.x - warm.x) / stderr) < 0.1


def test_the_truths_have_the_asked_rms_phase_and_are_deterministic():
    setup = reference_numpy.make_setup(64, 4)
    truth = retrieval.aberrated_truth(setup, rms=2.0, seed=7)
    assert np.sqrt(np.mean((truth[:-3] @ setup.basis) ** 2)) == pytest.approx(2.0, rel=1e-12)
    np.testing.assert_array_equal(truth, retrieval.aberrated_truth(setup, rms=2.0, seed=7))
    assert list(truth[-3:]) == [0.0, 0.0, 1.0]
    assert retrieval.phase_error_rms(truth, truth, setup.basis) == 0.0


def test_a_staged_start_keeps_the_lower_orders_and_the_illumination():
    start = retrieval.staged_start(np.array([0.1, 0.2, 0.3, 0.01, 0.02, 0.9]), 8)
    np.testing.assert_array_equal(start, [0.1, 0.2, 0.3, 0.0, 0.0, 0.01, 0.02, 0.9])


def record(series, start, fun, newton=0.01, rms=1.0, seed=1, seconds=1.0):
    """A synthetic retrieval record of (32, 3) whose exact account puts it `newton` standard errors from a
    minimum, at objective `fun`."""
    return {"schema": 2, "impl": series.impl, "dtype": series.dtype, "gradient": series.gradient,
            "minimizer": series.minimizer, "npix": 32, "nzern": 3, "rms": rms, "seed": seed, "start": start,
            "total_s": seconds,
            "phase_error_rms": 0.01, "phase_stderr_rms": 0.02,
            "outcome": {"nit": 10, "nfev": 12, "success": True, "message": "ok", "fun": fun, "x": [0.0] * 12,
                        "convergence": {"newton_stderr": newton, "newton_sandwich": newton, "stderr": [1.0] * 12,
                                        "expected_decrease": 0.0, "rounding": 1e-10, "grad_norm": 0.0}}}


def typed(record):
    """A record as the retrieval's reader returns it."""
    return msgspec.convert(record, RetrievalFit)


def test_the_judge_tells_a_local_minimum_from_the_global_optimum():
    judge = typed(record(TORCH_ADJOINT, FROM_TRUTH, fun=-100.0))
    fits = [typed(record(NUMPY, PLAIN, fun=-100.0 + 0.4)),                 # same optimum
            typed(record(TORCH_CPU, PLAIN, fun=-100.0 + 28.0)),            # a minimum, but higher
            typed(record(TORCH_ADJOINT, PLAIN, fun=-100.0, newton=0.5)),   # not there yet
            typed(record(TORCH_ON_DEVICE, PLAIN, fun=-103.0))]             # lower than the judge
    endings = [end for _, _, end in cold_start.judged([judge, *fits])]
    assert endings == ["global optimum", "local minimum", "stopped before the optimum", "global optimum"]
    no_account = copy.deepcopy(record(NUMPY, PLAIN, fun=-100.0 + 0.4))
    no_account["outcome"]["convergence"] = None
    assert cold_start.ending(typed(no_account), judge) == "not finite"


def test_only_fits_at_the_global_optimum_enter_the_speedups():
    judge = typed(record(TORCH_ADJOINT, FROM_TRUTH, fun=-100.0))
    fits = [judge, typed(record(NUMPY, PLAIN, fun=-100.0, seconds=8.0)),
            typed(record(TORCH_CPU, PLAIN, fun=-100.0, seconds=2.0))]
    assert cold_start.speedup_ratios(fits) == {(32, 3): 4.0}
    fits[2] = typed(record(TORCH_CPU, PLAIN, fun=-50.0, seconds=1.0))  # stuck: its time is no solution
    assert cold_start.speedup_ratios(fits) == {}
    table = cold_start.point_table(fits)
    cell = table[0].cells[(TORCH_CPU, PLAIN)]
    assert (cell.made, cell.at_optimum, cell.s, cell.nit, cell.nfev) == (1, 0, None, None, None)


def test_retrieval_records_validate_as_read(tmp_path):
    path = tmp_path / "points.jsonl"
    good = record(NUMPY, PLAIN, fun=-1.0)
    bad = record(NUMPY, "from somewhere", fun=-1.0)
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(ValueError, match="line 2, key 'start'"):
        read_retrieval(path)
    del good["total_s"]
    path.write_text(json.dumps(good) + "\n")
    with pytest.raises(ValueError, match="line 1 has no key 'total_s'"):
        read_retrieval(path)


def test_an_interrupted_retrieval_keeps_its_fits_and_resumes(tmp_path, monkeypatch):
    smoke = RetrievalProfile(points=((24, 2),), rms=(0.5,), seeds=(1,))
    monkeypatch.setitem(RETRIEVAL_PROFILES, "tiny", smoke)
    monkeypatch.setattr(retrieval, "RETRIEVAL_PROFILES", RETRIEVAL_PROFILES)
    real, made = retrieval.fit_truth, []

    def interrupted(point, todo, tol, warmed, judge=None):
        for fitted in real(point, todo, tol, warmed, judge):
            if len(made) == 2:
                raise KeyboardInterrupt
            made.append(fitted)
            yield fitted

    monkeypatch.setattr(retrieval, "fit_truth", interrupted)
    with pytest.raises(KeyboardInterrupt):
        retrieval.run_retrieval(tmp_path, profile="tiny", threads=1, quiet=True)
    kept = read_retrieval(tmp_path / "points.jsonl")
    assert [(r.start, r.impl) for r in kept] == [(FROM_TRUTH, "torch-cpu"), (PLAIN, "numpy")]
    monkeypatch.setattr(retrieval, "fit_truth", real)
    assert retrieval.run_retrieval(tmp_path, profile="tiny", threads=1, quiet=True) == 4
    assert retrieval.run_retrieval(tmp_path, profile="tiny", threads=1, quiet=True) == 0
    records = read_retrieval(tmp_path / "points.jsonl")
    assert len({r.key for r in records}) == len(records) == 6
    (judge,) = [r for r in records if r.start == FROM_TRUTH]
    assert judge.optimum.polished  # the optimum the cold starts were judged against, resumed ones too
    for cold in (r for r in records if r.start != FROM_TRUTH):
        assert cold.distance is not None
        assert cold.target_s is None or 0 < cold.target_s <= cold.total_s
        assert (cold_start.ending(cold, judge) == "global optimum") == (cold.distance <= 0.1)
    assert all((r.profile, r.tol, r.threads) == ("tiny", retrieval.TOL, 1) for r in records)
    for lost in ("settings.json", "runs.jsonl"):
        (tmp_path / lost).unlink()
    kept = (tmp_path / "points.jsonl").read_bytes()
    with pytest.raises(ValueError, match=r"points\.jsonl: line 1: recorded under other settings.* tol = 1e-08"):
        retrieval.run_retrieval(tmp_path, profile="tiny", threads=1, tol=1e-6, quiet=True)
    assert (tmp_path / "points.jsonl").read_bytes() == kept


def test_a_cold_start_is_judged_by_its_distance_from_the_polished_optimum_with_amp_folded():
    """The judge's optimum polished (untimed); a fit that ends at amp ~ -1 (the same beams) is at the global optimum
    at distance 0, its time to solution read from its trajectory; one that ends far away is not, whatever its
    objective."""
    import types

    setup = reference_numpy.make_setup(32, 3)
    truth = retrieval.aberrated_truth(setup, rms=0.5, seed=3)
    data = simulate_observation(setup, truth, 3)
    warm = reference_numpy.fit(setup, data, truth, gradient="adjoint", tol=1e-10)
    best = retrieval.judge_optimum(Problem.on(setup, retrieval.OBJECTIVE, truth, data), warm.x)
    assert best.polished
    mirrored = best.x.copy()
    mirrored[setup.amp_index] *= -1
    assert reference_numpy.negative_log_likelihood(mirrored, setup, data) == pytest.approx(
        reference_numpy.negative_log_likelihood(best.x, setup, data), rel=1e-14)
    far = best.x + 5 * best.stderr
    result = types.SimpleNamespace(x=mirrored, trajectory={"seconds": np.array([0.1, 0.2]),
                                                           "params": np.array([far, mirrored])})
    judged = retrieval.against_judge({"total_s": 1.0}, 0.5, result, best, setup.amp_index)
    assert judged["distance"] == pytest.approx(0.0, abs=1e-9)
    assert judged["target_s"] == pytest.approx(0.7)  # 0.5 s before the fit, then its second evaluation
    stuck = retrieval.against_judge({"total_s": 1.0}, 0.5, types.SimpleNamespace(
        x=far, trajectory={"seconds": np.array([0.1]), "params": np.array([far])}), best, setup.amp_index)
    assert stuck["distance"] > 5
    assert stuck["target_s"] is None


def test_distance_not_objective_decides_and_speed_ups_are_times_to_the_optimum():
    judge = typed(record(TORCH_ADJOINT, FROM_TRUTH, fun=-100.0))
    lower_but_far = typed(record(NUMPY, PLAIN, fun=-100.2) | {"distance": 3.0, "target_s": None})
    assert cold_start.ending(lower_but_far, judge) == "local minimum"  # the old rule said "global optimum"
    near = typed(record(NUMPY, PLAIN, fun=-100.0, newton=0.5) | {"distance": 0.05, "target_s": 0.5})
    assert cold_start.ending(near, judge) == "global optimum"
    fits = [judge, typed(record(NUMPY, PLAIN, fun=-90.0, seconds=8.0) | {"distance": 9.0, "target_s": None}),
            typed(record(TORCH_CPU, PLAIN, fun=-100.0, seconds=2.0) | {"distance": 0.01, "target_s": 1.0})]
    assert cold_start.speedup_ratios(fits) == {}  # NumPy never got there: a failure, in the success table
    fits[1] = typed(record(NUMPY, PLAIN, fun=-100.0, seconds=8.0) | {"distance": 0.02, "target_s": 6.0})
    assert cold_start.speedup_ratios(fits) == {(32, 3): 6.0}  # times to the optimum, not to stop
    assert judging.wilson(10, 10)[1] == pytest.approx(1.0)
    assert 0.65 < judging.wilson(10, 10)[0] < 0.75

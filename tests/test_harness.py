"""The replication harness: smoke sweep, resume after a kill, truncated lines, CUDA absent, estimates, CLI errors."""

import json
import os
import signal
import subprocess
import sys
import time
import types

import pytest
import torch
from conftest import run_command

from replication.core import judging, point_times, timing
from replication.core.implementations import Implementation, select
from replication.core.objectives import CAUCHY
from replication.core.paths import ROOT
from replication.core.problem import Problem
from replication.core.profiles import SweepSettings
from replication.core.results import append_record, read_records
from replication.core.series import NUMPY, TORCH_CPU
from replication.core.watch import TIMED_OUT
from replication.studies.crosscheck import read as crosscheck_read
from replication.studies.sweep import measure as sweep
from replication.studies.sweep import read as sweep_read
from replication.studies.sweep.records import as_read, point_key

SMOKE_POINTS = 2 * 2 * 6  # npix x nzern x (numpy, torch-cpu float64 and float32, on-device BFGS, Gauss-Newton start
#                           at the start and per grid)
needs_no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the path taken where CUDA is absent")


def cli(*args, **kwargs):
    """Run python -m replication with args from the repository root: in this process (conftest.run_command), or in
    a new interpreter where kwargs set its environment or input."""
    if not kwargs:
        return run_command(*args)
    return subprocess.run([sys.executable, "-m", "replication", *args], cwd=ROOT, capture_output=True, text=True,
                          check=False, **kwargs)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """A finished smoke sweep, run through the command line once for the module."""
    folder = tmp_path_factory.mktemp("smoke")
    completed = cli("sweep", "--profile", "smoke", "--impl", "numpy", "--impl", "torch-cpu", "--results", str(folder),
                    "--quiet")
    assert completed.returncode == 0, completed.stderr
    return folder


def test_smoke_sweep_records_every_point_with_its_outcome(smoke):
    records = read_records(smoke / "points.jsonl")
    assert len(records) == SMOKE_POINTS
    for record in records:
        assert {"impl", "npix", "nzern", "dtype", "setup_s", "fit_s", "total_s", "outcome"} <= set(record)
        assert record["estimated"] is False
        assert record["fit_s"]["min"] <= record["fit_s"]["median"] <= record["fit_s"]["max"]
        assert record["outcome"]["nit"] > 0
        assert len(record["outcome"]["x"]) == record["nparams"]
        assert ("grid_start_s" in record) == (record["minimizer"] == "scipy-gauss-newton-grid")
    by_point = {}
    for record in records:
        by_point.setdefault((record["npix"], record["nzern"]), set()).add(record["data_sha256"])
    assert all(len(hashes) == 1 for hashes in by_point.values())  # every implementation fitted the same data


def test_smoke_sweep_records_its_environment(smoke):
    (run,) = read_records(smoke / "runs.jsonl")
    for key in ("cpu", "cpu_count", "python", "numpy", "scipy", "torch", "threads", "torch_threads", "git_commit",
                "date", "run_id"):
        assert key in run
    assert run["torch_threads"] == run["threads"] == run["scipy_fft_workers"]


def test_a_complete_sweep_does_no_work_when_run_again(smoke):
    before = (smoke / "points.jsonl").read_text()
    completed = cli("sweep", "--profile", "smoke", "--impl", "numpy", "--impl", "torch-cpu", "--results", str(smoke),
                    "--quiet")
    assert completed.returncode == 0
    assert "nothing to run" in completed.stdout
    assert (smoke / "points.jsonl").read_text() == before
    assert len(read_records(smoke / "runs.jsonl")) == 1


def test_resume_after_kill_loses_nothing_and_repeats_nothing(tmp_path):
    points = tmp_path / "points.jsonl"
    process = subprocess.Popen([sys.executable, "-m", "replication", "sweep", "--profile", "smoke", "--impl", "numpy",
                                "--impl", "torch-cpu", "--results", str(tmp_path), "--quiet"], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not (points.exists() and points.read_text().count("\n") >= 2) and time.monotonic() < deadline:
        time.sleep(0.005)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    killed_with = len(read_records(points))
    assert 2 <= killed_with < SMOKE_POINTS, "the sweep was not interrupted mid-run"
    completed = cli("sweep", "--profile", "smoke", "--impl", "numpy", "--impl", "torch-cpu", "--results",
                    str(tmp_path), "--quiet")
    assert completed.returncode == 0, completed.stderr
    records = read_records(points)
    keys = [point_key(as_read(record)) for record in records]
    assert len(keys) == len(set(keys)) == SMOKE_POINTS


def test_truncated_last_line_is_reported_ignored_and_repaired(tmp_path):
    path = tmp_path / "points.jsonl"
    append_record(path, {"a": 1})
    append_record(path, {"a": 2})
    with path.open("a") as stream:
        stream.write('{"a": 3, "b"')
    with pytest.warns(UserWarning, match="truncated last line"):
        assert read_records(path) == [{"a": 1}, {"a": 2}]
    with pytest.warns(UserWarning, match="truncated last line"):
        read_records(path, repair=True)
    append_record(path, {"a": 4})
    assert read_records(path) == [{"a": 1}, {"a": 2}, {"a": 4}]


def test_damaged_line_in_the_middle_is_an_error(tmp_path):
    path = tmp_path / "points.jsonl"
    path.write_text('{"a": 1}\nnot json\n{"a": 2}\n')
    with pytest.raises(ValueError, match="line 2"):
        read_records(path)


@needs_no_cuda
def test_cuda_absent_is_recorded_and_skipped(tmp_path, capsys):
    assert not Implementation("torch-cuda").available()
    count = sweep.run_sweep(SweepSettings("smoke", impls=("torch-cuda",), threads=1), tmp_path, quiet=True)
    assert count == 0
    assert "not available on this machine" in capsys.readouterr().out
    assert read_records(tmp_path / "points.jsonl") == []


@needs_no_cuda
def test_timing_cuda_script_path_says_not_measured(tmp_path):
    completed = cli("sweep", "--profile", "smoke", "--impl", "torch-cuda", "--results", str(tmp_path), "--quiet")
    assert completed.returncode == 0
    assert "torch-cuda: not available on this machine" in completed.stdout


@needs_no_cuda
def test_an_implementation_this_machine_cannot_run_is_one_line_naming_its_series(tmp_path, capsys):
    """A sweep of several implementations, one of which cannot run here: one line for it, naming each series."""
    sweep.run_sweep(SweepSettings("smoke", impls=("numpy", "torch-cuda"), threads=1), tmp_path, quiet=True,
                    points={(16, 2)})
    lines = [line for line in capsys.readouterr().out.splitlines() if "not available on this machine" in line]
    assert lines == ["torch-cuda (torch-cuda, torch-cuda (float32), torch-cuda [on-device BFGS], torch-cuda (float32) "
                     "[on-device BFGS], torch-cuda [Gauss-Newton start], torch-cuda [Gauss-Newton start per grid]): "
                     "not available on this machine (torch.cuda.is_available() is False); skipped"]


def test_points_over_budget_are_one_fit_stopped_at_the_budget_and_never_read_as_values(tmp_path, monkeypatch):
    from replication.core import optimum

    monkeypatch.setattr(optimum, "TARGET", 1e-9)  # no fit stopped after one iteration comes this close
    monkeypatch.setitem(sweep.PROFILES, "tiny", sweep.Profile(npix=(16,), nzern=(2,), repeats=3, budget_s=1e-6))
    sweep.run_sweep(SweepSettings("tiny", impls=("numpy", "torch-cpu"), threads=1), tmp_path, quiet=True)
    records = read_records(tmp_path / "points.jsonl")
    assert len(records) == 6  # numpy, torch-cpu in float64 and float32, with on-device BFGS, from Gauss-Newton
    for record in records:
        assert not record["estimated"]
        assert record["time_limit_s"] == 1e-6
        assert record["stopped_at_limit"]
        assert len(record["total_s"]["all"]) == 1
        assert record["target"]["times"] == [None]
        assert "time limit" in record["outcome"]["message"]
        assert not record["outcome"]["success"]
    series, _ = sweep_read.load_sweep(tmp_path)
    assert all("stopped at its time limit" in point_times.how_it_ended(r) for p in series.values() for r in p.values())
    assert point_times.speedups(series, NUMPY, TORCH_CPU) == {}  # neither reached the target: no ratio...
    assert sweep_read.complete_sizes(series, NUMPY, TORCH_CPU)[(16, 2)].kind == judging.UNDETERMINED  # ...kept
    assert sweep_read.endings(series) == []  # a fit not allowed to end is not judged by where it ended
    assert sweep_read.stopped_at_limits(series) == 6


def test_a_resumed_sweep_measures_the_points_an_older_sweep_estimated(tmp_path, monkeypatch):
    """Sweeps before 2026-12-02 estimated the points over their budget; resumed, the sweep measures them and the
    measurement replaces the estimate (kept in the file, never read); an estimate after a measurement is refused."""
    from replication.core.results import RunError
    from replication.studies.sweep.records import read_points

    monkeypatch.setitem(sweep.PROFILES, "tiny", sweep.Profile(npix=(16,), nzern=(2,), repeats=1, budget_s=1e9))
    settings = SweepSettings("tiny", impls=("numpy",), threads=1)
    sweep.run_sweep(settings, tmp_path, quiet=True)
    path = tmp_path / "points.jsonl"
    measured = read_records(path)[0]
    estimate = {key: value for key, value in measured.items() if key not in ("target", "time_limit_s")} | {
        "estimated": True, "fit_s": {"median": 99.0}, "setup_s": None, "total_s": None, "outcome": None}
    path.write_text(json.dumps(estimate) + "\n")
    assert sweep.run_sweep(settings, tmp_path, quiet=True) == 1
    assert len(read_records(path)) == 2
    (point,) = read_points(path)
    assert not point.estimated
    assert point.target
    assert sweep.run_sweep(settings, tmp_path, quiet=True) == 0  # measured: done
    append_record(path, estimate)
    with pytest.raises(RunError, match="lines 2 and 3 hold two different records"):
        read_points(path)


def test_a_points_repeats_stop_where_the_next_would_take_it_past_the_budget():
    assert timing.another_repeat_fits([10.0], 20.0)  # 10 + 10
    assert not timing.another_repeat_fits([10.0, 12.0], 33.0)  # 22 + 12 > 33
    assert timing.another_repeat_fits([10.0, 12.0], 34.0)


def test_a_sweep_measures_as_many_repeats_as_the_budget_holds_and_stops_each_fit_at_the_limit(monkeypatch):
    """No prediction: the first fit always runs (to the limit at most); the next one only where the fits so far and
    one more as long as the longest fit within the budget; a fit stopped at the limit is the point's only one."""
    seconds = iter([4.0, 4.0, 4.0, 4.0, 4.0, 4.0, 30.0, 30.0])

    def fake_fit(impl, problem, p0, tol, trajectory, time_limit, target):
        fit_s = next(seconds)
        stopped = fit_s > time_limit
        return 0.0, fit_s, types.SimpleNamespace(status=TIMED_OUT if stopped else 0, limit=time_limit,
                                                 stopped_at_target=False)

    monkeypatch.setattr(timing, "timed_fit", fake_fit)
    monkeypatch.setattr(timing, "warm_up", lambda *args: None)
    _, fit_s, results = timing.time_fit(None, None, None, 5, 1e-8, time_limit=20.0, budget_s=12.0)
    assert fit_s == [4.0, 4.0, 4.0]  # 8 + 4 <= 12, then 12 + 4 > 12
    assert all(result.limit == 20.0 for result in results)
    _, fit_s, _ = timing.time_fit(None, None, None, 2, 1e-8, time_limit=20.0, budget_s=100.0)
    assert fit_s == [4.0, 4.0]  # never more than the repeats
    _, fit_s, results = timing.time_fit(None, None, None, 5, 1e-8, time_limit=20.0, budget_s=1e9)
    assert fit_s == [4.0, 30.0]  # stopped at the limit: no repeat after it
    assert results[-1].status == TIMED_OUT


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sweep", "--profile", "nope"], "invalid choice"),
        (["sweep", "--threads", "0"], "--threads"),
        (["sweep", "--impl", "fortran"], "invalid choice"),
        (["sweep", "--tol", "-1"], "--tol"),
        (["simulate"], "--output"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_argument_errors_are_clear_and_fail(args, message):
    completed = cli(*args)
    assert completed.returncode != 0
    assert message in completed.stderr


def test_help_explains_every_command():
    completed = cli("sweep", "--help")
    assert completed.returncode == 0
    for option in ("--profile", "--impl", "--results", "--threads", "--tol", "--quiet", "smoke", "quick", "paper"):
        assert option in completed.stdout


def test_simulate_writes_the_shared_data(tmp_path):
    path = tmp_path / "obs.npz"
    completed = cli("simulate", "--npix", "16", "--nzern", "2", "--seed", "4", "--output", str(path))
    assert completed.returncode == 0, completed.stderr
    import numpy as np

    with np.load(path) as saved:
        np.testing.assert_array_equal(saved["data"], Problem.simulated(16, 2, CAUCHY, seed=4).data)


def test_unknown_implementations_are_value_errors():
    with pytest.raises(ValueError, match="--impl"):
        select(["fortran"])


def test_crosscheck_smoke_passes_and_writes_json(tmp_path):
    completed = cli("crosscheck", "--points", "smoke", "--results", str(tmp_path))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    content = json.loads((tmp_path / "crosscheck.json").read_text())
    assert content["checks"]
    assert all(check["passed"] for check in content["checks"])
    assert {"beams", "objective", "gradient", "hessian", "fit parameters", "fit objective"} <= {
        c["check"] for c in content["checks"]}
    assert {c["objective"] for c in content["checks"]} == {None, "cauchy", "least-squares", "gaussian"}
    assert (tmp_path / "example.npz").exists()


def test_crosscheck_checks_each_thing_once_under_the_label_of_what_ran(tmp_path):
    from replication.studies.crosscheck.measure import run_crosscheck

    content = run_crosscheck(tmp_path, points="smoke", threads=1)
    keys = [(c["check"], c["npix"], c["nzern"], c["compare"], c["objective"]) for c in content["checks"]]
    assert len(keys) == len(set(keys))
    fits = [(f["impl"], f["dtype"], f["variant"], f["minimizer"], f["objective"], f["npix"]) for f in content["fits"]]
    assert len(fits) == len(set(fits))
    for fit in content["fits"]:
        ran = Implementation(fit["impl"], fit["dtype"], fit["variant"], fit["minimizer"])
        assert fit["gradient"] == ran.gradient_name
    labels = {Implementation(f["impl"], f["dtype"], f["variant"], f["minimizer"]).label for f in content["fits"]}
    assert labels >= {"numpy", "torch-cpu", "torch-cpu [on-device BFGS]"}
    assert not any("on-device" in c["compare"] for c in content["checks"] if not c["check"].startswith("fit"))


def test_choosing_gradients_never_imports_the_peer_where_jax_is_absent(monkeypatch):
    """The JAX peer is listed by default; where jax is missing, picking the gradient variants must not import it."""
    from replication.core.implementations import select, with_gradients

    monkeypatch.setitem(sys.modules, "jax", None)  # import jax raises ImportError
    monkeypatch.delitem(sys.modules, "replication.studies.peers.jax_peer", raising=False)
    chosen = with_gradients(select(None), ["finite-differences", "adjoint", "autograd"])
    labels = {impl.label for impl in chosen}
    assert {"numpy", "numpy [adjoint]", "torch-cpu", "torch-cpu [finite-differences]", "jax"} <= labels
    assert "replication.studies.peers.jax_peer" not in sys.modules


def test_the_exact_adjoint_is_also_timed_from_the_per_grid_matrix_and_no_other_variant_is():
    """Each tree's fastest path (the exact adjoint from the per-grid Gauss-Newton matrix) is a variant of its own;
    finite differences are not started from that matrix, and the JAX peer is timed from it with its own gradient."""
    from replication.core.implementations import select, with_gradients
    from replication.core.series import JAX_GRID_SEEDED, TORCH_FASTEST

    chosen = {impl.series for impl in with_gradients(select(["torch-cpu", "jax"]), ["adjoint", "autograd"])}
    assert {TORCH_FASTEST, JAX_GRID_SEEDED} <= chosen
    assert TORCH_FASTEST.label == "torch-cpu [adjoint] [Gauss-Newton start per grid]"
    everything = with_gradients(select(["numpy", "torch-cpu"]), ["finite-differences", "adjoint", "autograd"])
    grid_started = {impl.label for impl in everything if impl.minimizer == "scipy-gauss-newton-grid"}
    assert grid_started == {"torch-cpu [Gauss-Newton start per grid]", TORCH_FASTEST.label}
    assert TORCH_FASTEST not in {impl.series for impl in with_gradients(select(["torch-cpu"]), ["autograd"])}


def test_the_gpu_script_parses_and_its_sweeps_share_one_setting_of_threads():
    """replication/scripts/gpu_run.sh writes several sweeps into one sweep folder: they must agree on --threads
    (a sweep refuses to resume under other settings), and the script must be valid bash."""
    script = ROOT / "replication" / "scripts" / "gpu_run.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    text = script.read_text().replace("\\\n", " ")
    sweeps = [line for line in text.splitlines() if "replication sweep" in line and "--objective" not in line]
    assert len(sweeps) == 3
    assert all('--threads "$CORES"' in line for line in sweeps)
    assert all("--run \"$RUN\"" in line for line in text.splitlines() if "python3 -m replication" in line)


def test_crosscheck_fits_are_judged_at_the_points_optimum_and_timed_to_it(tmp_path):
    """Each cross-check fit records its Mahalanobis distance from the point's polished optimum (held by the NumPy
    fit) and its time to within 0.1 SE of it; the 'fit parameters' check is that distance between the fit and NumPy's,
    and the read side compares every fit (not only those at the optimum)."""
    from replication.core.optimum import mahalanobis
    from replication.studies.crosscheck.measure import run_crosscheck
    from replication.studies.crosscheck.records import read_crosscheck

    content = run_crosscheck(tmp_path, points="smoke", threads=1, objectives=(CAUCHY,))
    fits = content["fits"]
    for npix in {fit["npix"] for fit in fits}:
        here = [fit for fit in fits if fit["npix"] == npix]
        (reference,) = [fit for fit in here if fit["impl"] == "numpy" and not fit["variant"]]
        assert reference["optimum"]["polished"]
        for fit in here:
            assert fit["distance"] is not None
            if fit["distance"] <= 0.1:  # its last evaluation is in its trajectory: it got there
                assert fit["target_s"] is not None
            assert fit["target_s"] is None or 0 < fit["target_s"] <= fit["fit_s"]
        typed = read_crosscheck(tmp_path / "crosscheck.json")
        rows = [row for row in crosscheck_read.crosscheck_differences(typed, CAUCHY) if row.npix == npix]
        assert len(rows) == len(here) - 1
        assert all(row.comparable and row.basis == "Mahalanobis" for row in rows)
        other = next(fit for fit in here if fit is not reference)
        check = next(c for c in content["checks"] if c["check"] == "fit parameters" and c["npix"] == npix)
        assert check["value"] == pytest.approx(mahalanobis(other["x"], reference["x"],
                                                           reference["optimum"]["covariance"]))


def test_nzern_and_npix_choose_the_points_of_a_sweep_and_a_foreign_order_is_refused_by_name():
    from replication.core.profiles import PROFILES
    from replication.studies.sweep.command import chosen_points

    quick = PROFILES["quick"]
    assert chosen_points(quick, None, None) is None
    assert chosen_points(quick, (256, 512), (4, 8)) == {(256, 4), (256, 8), (512, 4), (512, 8)}
    assert {npix for npix, _ in chosen_points(quick, None, (4,))} == set(quick.npix)
    assert {nzern for _, nzern in chosen_points(quick, (32,), None)} >= set(quick.nzern)
    refused = cli("sweep", "--nzern", "5", "--results", "never-made")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines()[-1].endswith("--nzern 5: not a Zernike order of this profile "
                                                            "(2, 3, 4, 6, 8)")
    assert not (ROOT / "never-made").exists()


def test_the_peers_gate_writes_a_record_its_reader_takes_and_names_a_failure(tmp_path, monkeypatch):
    """peers-check's record (objectives by name) read back typed, with a stand-in peer (jax is not needed here):
    passed where every point agrees, and a point that does not is kept with its message."""
    from replication.core import registry
    from replication.studies.peers.measure import run_peers_check
    from replication.studies.peers.records import read_peers_check

    def check_against_numpy(npix, nzern, objective):
        if npix == 33 and objective.name == "least-squares":
            raise AssertionError("JAX peer disagrees with NumPy at npix 33")
        return 1e-16, 2e-15

    peer = types.SimpleNamespace(check_against_numpy=check_against_numpy, OBJECTIVE_TOLERANCE=1e-12,
                                 GRADIENT_TOLERANCE=1e-10)
    monkeypatch.setattr(type(registry.JAX), "module", lambda self: peer)
    monkeypatch.setattr(type(registry.JAX), "installed_versions", lambda self: {"jax": "0.10.2"})
    content = run_peers_check(tmp_path, points=((16, 2), (33, 3)))
    read = read_peers_check(tmp_path / "check.json")
    assert content["passed"] is False
    assert read.passed is False
    assert [(row.npix, row.objective, row.passed) for row in read.rows] == [
        (16, "cauchy", True), (16, "least-squares", True), (33, "cauchy", True), (33, "least-squares", False)]
    assert read.jax == "0.10.2"


def test_a_bench_sample_is_a_burst_of_calls_back_to_back_but_for_the_finite_differences(monkeypatch):
    """Each timed sample of a bench step is BURST calls made back to back (as a fit makes them) and divided by them;
    the finite differences, P + 1 evaluations already, one call; the row says how many."""
    from replication.studies.bench import measure as bench

    calls = {}
    real = bench.burst_seconds

    def counted(function, count):
        calls.setdefault(count, 0)
        calls[count] += 1
        return real(function, count)

    monkeypatch.setattr(bench, "burst_seconds", counted)
    row = bench.bench_point(16, 2, threads=1, repeats=3)
    assert row["burst"] == bench.BURST == 3
    finite_differences = sum(1 for name in row["ms"] if name in bench.FD_STEPS)
    assert calls[1] == finite_differences  # one round of each (repeats // 3)
    assert calls[bench.BURST] == 3 * (len(row["ms"]) - finite_differences)
    ticks = iter(range(100))
    assert real(lambda: next(ticks), 4) >= 0
    assert next(ticks) == 4  # four calls made

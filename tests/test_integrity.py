"""Results and inputs that cannot be corrupted or misread: each case a hostile user or a flaky machine tried."""

import json
import os
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
import torch
from conftest import run_command

import reference_numpy
import torch_impl
from replication.claims import speed
from replication.core import judging, runs
from replication.core.environment import machine_record
from replication.core.objectives import CAUCHY
from replication.core.paths import ROOT
from replication.core.problem import Problem
from replication.core.profiles import SweepSettings
from replication.core.results import append_record, read_records
from replication.report.render import render, render_all
from replication.studies.bench import measure as bench
from replication.studies.crosscheck import measure as crosscheck

needs_no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the path taken where CUDA is absent")


def cli(*args):
    """Run python -m replication with args from the repository root (in this process: conftest.run_command)."""
    return run_command(*args)


def one_line_error(completed, *words):
    """The command failed as argparse does: status 2, one line on stderr holding every word, no traceback."""
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert "Traceback" not in completed.stderr
    assert completed.stderr.strip().count("\n") == 0, completed.stderr
    for word in words:
        assert word in completed.stderr


@pytest.fixture
def empty_references(tmp_path):
    (tmp_path / "references").mkdir()
    return tmp_path / "references"


# Row 2: every argument and the output path are checked before the first point.

@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["bench", "--npix", "16", "32", "--nzern", "2", "21"], ["--nzern", "between 0 and 20", "21"]),
        (["bench", "--npix", "7"], ["--npix", "between 8 and 8192"]),
        (["sweep", "--threads", "100000"], ["--threads", "at most the cores present"]),  # row 9
        (["simulate", "--npix", "7", "--output", "x.npz"], ["--npix", "between 8 and 8192"]),  # row 8
        (["simulate", "--seed", "-1", "--output", "x.npz"], ["--seed", "non-negative"]),  # row 8
        (["crosscheck", "--threads", "0"], ["--threads"]),
    ],
)
def test_bad_arguments_are_refused_before_any_work(args, words, tmp_path):
    completed = subprocess.run([sys.executable, "-m", "replication", *args], cwd=tmp_path, capture_output=True,
                               text=True, check=False, env=os.environ | {"PYTHONPATH": str(ROOT)})
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    for word in words:
        assert word in completed.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["bench", "crosscheck", "sweep"])
def test_an_existing_file_named_as_results_folder_is_refused_at_once(command, tmp_path):
    path = tmp_path / "a-file"
    path.write_text("keep me")
    one_line_error(cli(command, "--results", str(path)), "is a file")
    assert path.read_text() == "keep me"


def test_an_interrupted_bench_keeps_its_rows_and_resumes(tmp_path, monkeypatch):
    measured = []
    real = bench.bench_point

    def interrupted(size, order, count, repeats, *options):
        if len(measured) == 1:
            raise KeyboardInterrupt
        measured.append((size, order))
        return real(size, order, count, repeats, *options)

    monkeypatch.setattr(bench, "bench_point", interrupted)
    with pytest.raises(KeyboardInterrupt):
        bench.run_bench(tmp_path, npix=(16,), nzern=(2, 3), threads=(1,), repeats=1, quiet=True)
    kept = json.loads((tmp_path / "bench.json").read_text())
    assert [row["nzern"] for row in kept["rows"]] == [2]
    assert kept["complete"] is False
    monkeypatch.setattr(bench, "bench_point", real)
    content = bench.run_bench(tmp_path, npix=(16,), nzern=(2, 3), threads=(1,), repeats=1, quiet=True)
    assert [row["nzern"] for row in content["rows"]] == [2, 3]
    assert content["rows"][0] == kept["rows"][0]
    assert content["complete"] is True
    with pytest.raises(ValueError, match="other settings"):
        bench.run_bench(tmp_path, npix=(16,), nzern=(4,), threads=(1,), repeats=1, quiet=True)


@pytest.mark.slow
def test_an_interrupted_crosscheck_keeps_its_points_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setitem(crosscheck.POINTS, "two", ((16, 2), (16, 3)))
    real = crosscheck.fit_checks
    calls = []

    def interrupted(impls, problem, objectives):
        if calls:
            raise KeyboardInterrupt
        calls.append(problem.nzern)
        return real(impls, problem, objectives)

    monkeypatch.setattr(crosscheck, "fit_checks", interrupted)
    with pytest.raises(KeyboardInterrupt):
        crosscheck.run_crosscheck(tmp_path, points="two", threads=1)
    kept = json.loads((tmp_path / "crosscheck.json").read_text())
    assert kept["done"] == [[16, 2]]
    assert kept["complete"] is False
    monkeypatch.setattr(crosscheck, "fit_checks", real)
    content = crosscheck.run_crosscheck(tmp_path, points="two", threads=1)
    assert content["done"] == [[16, 2], [16, 3]]
    assert content["checks"][: len(kept["checks"])] == kept["checks"]
    assert content["complete"] is True


# Row 3: a non-finite objective ends a fit with success=False, in both packages alike.

@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_a_fit_whose_objective_overflows_fails_and_says_why(package):
    problem = Problem.simulated(16, 2, CAUCHY)
    truth, data = problem.truth, problem.data
    data = data.copy()
    data[0, 3, 3] = 1e160
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "overflow encountered", RuntimeWarning)  # NumPy says so as well
        result = package.fit(package.make_setup(16, 2), data, truth)
    assert result.success is False
    assert "not finite" in result.message
    assert not np.isfinite(result.fun)
    assert result.nfev >= 1


# Rows 4 and 12: records are validated when read.

@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('{"impl": "numpy", "dtype": "float64", "npix": "abc", "nzern": 2}', ["line 1", "'npix'", "int"]),
        ('{"impl": "numpy", "dtype": "float64"}', ["line 1", "no key 'npix'"]),
        ("null", ["line 1", "expected a record, got null"]),
    ],
)
def test_malformed_point_records_are_errors_naming_file_line_and_key(line, words, tmp_path, empty_references):
    run = runs.create_run(tmp_path / "run", machine_record())
    (run / "sweep-smoke").mkdir()
    (run / "sweep-smoke" / "points.jsonl").write_text(line + "\n" + '{"a": 1}\n')
    completed = cli("sweep", "--profile", "smoke", "--run", str(run), "--quiet")
    one_line_error(completed, "points.jsonl", *words)
    with pytest.raises(ValueError, match=r"points\.jsonl") as error:
        render([run], empty_references, output=run, figures=run)
    for word in words:
        assert word in str(error.value)


def test_invalid_utf8_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "points.jsonl"
    path.write_bytes(b'{"a": 1}\n\xff\xfe\n')
    with pytest.raises(ValueError, match=r"points.jsonl: not UTF-8"):
        read_records(path)


def test_a_sweep_without_its_environment_record_says_so_in_the_report(tmp_path, empty_references):
    from replication.studies.sweep import measure as sweep

    run = runs.create_run(tmp_path / "run", machine_record())
    sweep.run_sweep(SweepSettings("smoke", impls=("torch-cpu",), threads=1), run / "sweep-smoke", quiet=True)
    (run / "sweep-smoke" / "runs.jsonl").unlink()
    text = render_all([run], empty_references, output=run, figures=run)["runs/your-run.md"]
    assert "no environment record" in text


# Row 5: settings are part of a sweep's identity.

def test_a_quick_sweep_into_a_smoke_sweep_folder_is_refused(tmp_path):
    folder = tmp_path / "sweep-smoke"
    append_record(folder / "runs.jsonl", {"profile": "smoke", "tol": 1e-8, "threads": 1})
    one_line_error(cli("sweep", "--profile", "quick", "--results", str(folder), "--threads", "1"),
                   "profile = 'smoke'", "profile = 'quick'")


# Row 8: expected conditions end in one line, never a traceback.

def default_sigint():
    """In the child: SIGINT back to its default, so that Python turns it into KeyboardInterrupt even where the
    test runs as a background job (whose shell starts it with SIGINT ignored, which Python then keeps)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_prints_one_line_saying_how_to_resume_and_exits_130(tmp_path):
    run = runs.create_run(tmp_path / "run", machine_record())
    points = run / "sweep-quick" / "points.jsonl"
    process = subprocess.Popen([sys.executable, "-m", "replication", "sweep", "--profile", "quick", "--impl", "numpy",
                                "--run", str(run), "--quiet"], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 120
        while not (points.exists() and points.read_text().count("\n") >= 1) and time.monotonic() < deadline:
            time.sleep(0.01)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:  # it ignored the signal: do not leave it running
            process.kill()
            process.communicate()
    assert process.returncode == 130
    assert "Traceback" not in stderr
    assert "interrupted" in stderr
    assert "resumes" in stderr
    assert len(read_records(points)) >= 1


def test_an_unwritable_output_is_one_line(tmp_path):
    one_line_error(cli("simulate", "--npix", "16", "--nzern", "2", "--output", "/proc/oof-test/obs.npz"),
                   "/proc/oof-test")


# Row 10: the file is written where it was named.

def test_simulate_writes_exactly_the_file_named(tmp_path):
    target = tmp_path / "out" / "noext"
    completed = cli("simulate", "--npix", "16", "--nzern", "2", "--output", str(target))
    assert completed.returncode == 0, completed.stderr
    assert f"wrote {target}:" in completed.stdout
    assert sorted(p.name for p in target.parent.iterdir()) == ["noext"]
    with np.load(target) as saved:
        np.testing.assert_array_equal(saved["data"], Problem.simulated(16, 2, CAUCHY).data)


# Row 11: nothing available is said as such.

@needs_no_cuda
def test_a_cuda_only_sweep_without_cuda_says_nothing_was_measured(tmp_path):
    completed = cli("sweep", "--profile", "smoke", "--impl", "torch-cuda", "--results", str(tmp_path), "--quiet")
    assert completed.returncode == 0
    assert "nothing to measure" in completed.stdout
    assert "are done" not in completed.stdout


# Rows 13-16: the library boundary, both packages alike.

@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p, d: (p.astype(complex), d), ["params", "real numbers", "complex"]),
        (lambda p, d: (p.astype(bool), d), ["params", "real numbers", "bool"]),
        (lambda p, d: (p, d + 0j), ["data", "real numbers", "complex"]),
        (lambda p, d: (p, d > 0), ["data", "real numbers", "bool"]),
    ],
)
def test_complex_and_boolean_arrays_are_refused(package, make, words):
    setup = package.make_setup(16, 2)
    problem = Problem.simulated(16, 2, CAUCHY)
    truth, data = problem.truth, problem.data
    params, data = make(truth, data)
    with pytest.raises(ValueError, match="real numbers") as error:
        package.negative_log_likelihood(params, setup, data)
    for word in words:
        assert word in str(error.value)


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_tensors_that_require_grad_are_read_by_value(package):
    setup = package.make_setup(16, 2)
    problem = Problem.simulated(16, 2, CAUCHY)
    truth, data = problem.truth, problem.data
    expected = package.negative_log_likelihood(truth, setup, data)
    params = torch.tensor(truth, requires_grad=True)
    observed = torch.tensor(data, requires_grad=True)
    assert package.negative_log_likelihood(params, setup, observed) == expected
    assert package.fit(setup, observed, params).success in (True, False)


@pytest.mark.parametrize(
    ("package", "setup"),
    [(reference_numpy, None), (torch_impl, None), (reference_numpy, "torch"), (torch_impl, "numpy")],
)
def test_a_setup_of_the_other_package_or_none_is_refused(package, setup):
    other = {"torch": torch_impl, "numpy": reference_numpy}
    setup = other[setup].make_setup(16, 2) if setup else None
    problem = Problem.simulated(16, 2, CAUCHY)
    truth, data = problem.truth, problem.data
    for call in (lambda: package.fit(setup, data, truth), lambda: package.beam_maps(truth, setup),
                 lambda: package.negative_log_likelihood(truth, setup, data)):
        with pytest.raises(ValueError, match=f"setup must be made by {package.__name__}.make_setup"):
            call()


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
@pytest.mark.parametrize(
    ("args", "options", "words"),
    [
        ((32, 3), {"oversamp": 1e9}, ["npix=32 with oversamp=1000000000.0", "0 dish pixel"]),
        ((32, 3), {"oversamp": 0.3}, ["oversamp", "at least 0.5"]),
        ((8, 20), {}, ["npix=8", "4 dish pixel", "233 fitted parameters"]),
        ((32, 3), {"sigma": 1e-300}, ["sigma=1e-300", "fewer than the 12 fitted parameters"]),
    ],
)
def test_degenerate_setups_are_refused_naming_the_argument(package, args, options, words):
    with pytest.raises(ValueError, match=words[0].replace(".", r"\.")) as error:
        package.make_setup(*args, **options)
    for word in words:
        assert word in str(error.value)


def test_c4_needs_three_measured_orders_at_npix_128_or_more():
    smoke_like = {(32, 2): 3.0, (32, 3): 9.0}
    assert speed.verdict_c4(smoke_like).verdict == judging.NOT_MEASURED

"""Sharded sweeps through submitit's local executor: the shards' union is the unsharded sweep, a sharded sweep
resumes only what is unfinished, a failed shard is named with its log, and ratios stay within one node."""

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from conftest import measured_point

from replication.core import point_times, runs
from replication.core.implementations import select
from replication.core.objectives import CAUCHY
from replication.core.paths import ROOT
from replication.core.profiles import SweepSettings
from replication.core.results import read_records
from replication.core.series import NUMPY, TORCH_CPU
from replication.report import load
from replication.report.render import render_all
from replication.studies.sweep import measure as sweep
from replication.studies.sweep import shards
from replication.studies.sweep.records import as_read, point_key

BOTH = SweepSettings("smoke", impls=("numpy", "torch-cpu"), threads=1)

pytest.importorskip("submitit")
pytestmark = pytest.mark.slow  # end-to-end sweeps through submitit: nox -s end_to_end


def keys_of(paths):
    return [point_key(as_read(record)) for path in paths for record in read_records(path)]


def shard_points_files(run):
    return sorted(run.glob("shards/*/*/sweep-smoke/points.jsonl"))


@pytest.fixture(scope="module")
def unsharded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("unsharded") / "sweep-smoke"
    sweep.run_sweep(SweepSettings("smoke", impls=("numpy", "torch-cpu"), threads=1), folder, quiet=True)
    return folder


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    run = tmp_path_factory.mktemp("sharded") / "2026-01-03_sharded"
    failed = shards.run_sharded_sweep(run, BOTH, 2, "local", time_min=10)
    assert failed == 0
    return run


def test_the_shards_hold_exactly_the_points_of_the_unsharded_sweep(unsharded, sharded):
    sharded_keys = keys_of(shard_points_files(sharded))
    assert len(sharded_keys) == len(set(sharded_keys))  # no point twice
    assert set(sharded_keys) == set(keys_of([unsharded / "points.jsonl"]))  # none missing
    assert len(shard_points_files(sharded)) == 2
    for node in sharded.glob("shards/*/*"):
        assert runs.read_run(node)["machine"]["hostname"]  # each shard records its node's machine
    info = runs.read_run(sharded)
    assert info["sharded"]["sweep-smoke"]["shards"] == 2


def test_the_report_reads_a_sharded_sweep_like_any_run_and_lists_its_nodes(sharded, tmp_path):
    (tmp_path / "reference").mkdir()
    run = load.load_run(sharded, own=True)
    assert {str(name) for name in run.series} == {"numpy", "torch-cpu", "torch-cpu (float32)",
                                                  "torch-cpu [on-device BFGS]", "torch-cpu [Gauss-Newton start]",
                                                  "torch-cpu [Gauss-Newton start per grid]"}
    assert {node["shard"] for node in run.nodes} == {"00-of-02", "01-of-02"}
    texts = render_all([sharded], tmp_path / "reference", output=tmp_path, figures=tmp_path / "figures")
    text = texts[f"runs/your-{sharded.name}.md"]
    assert "A sharded sweep" in text
    assert "| 00-of-02 | sweep-smoke |" in text


def test_a_resubmitted_sweep_runs_only_unfinished_shards_and_points(sharded, capsys):
    second = sorted(sharded.glob("shards/01-of-02/*"))[0]
    (second / "finished-sweep-smoke.json").unlink()
    points = second / "sweep-smoke" / "points.jsonl"
    lines = points.read_text().splitlines(keepends=True)
    kept = lines[:-3]
    points.write_text("".join(kept))
    plan = sharded / "shards-sweep-smoke.json"
    jobs_before = len(json.loads(plan.read_text())["jobs"])
    failed = shards.run_sharded_sweep(sharded, BOTH, 2, "local", time_min=10)
    assert failed == 0
    out = capsys.readouterr().out
    assert "1 not finished: 1" in out
    assert "shard 1: 3 point(s) measured" in out
    assert len(json.loads(plan.read_text())["jobs"]) == jobs_before + 1  # shard 0 was not resubmitted
    keys = keys_of(shard_points_files(sharded))
    assert len(keys) == len(set(keys)) == 24


def test_a_failed_shard_is_named_with_its_log(sharded, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(sharded, run)  # a finished sharded sweep of its own, made without running one again
    node = sorted(run.glob("shards/00-of-02/*"))[0]
    (node / "finished-sweep-smoke.json").unlink()
    points = node / "sweep-smoke" / "points.jsonl"
    points.write_text('{"impl": "numpy"}\n' + points.read_text())  # a damaged record, not the last line
    capsys.readouterr()
    assert shards.run_sharded_sweep(run, BOTH, 2, "local", time_min=10) == 1
    out = capsys.readouterr().out
    assert "shard 0 failed:" in out
    assert "points.jsonl: line 1" in out
    log = out.split("log: ")[-1].split()[0]
    assert log.endswith(".err")
    assert (run / "logs").exists()
    assert pathlib.Path(log).is_relative_to(run)  # the copy's own log, not the original's


def test_shards_split_the_points_once_each_and_evenly():
    profile = sweep.PROFILES["quick"]
    impls = select(["numpy", "torch-cpu"])
    parts = shards.shard_points(profile, impls, CAUCHY, 4)
    flat = [point for part in parts for point in part]
    assert sorted(flat) == sorted({(npix, nzern) for npix in profile.npix for nzern in profile.nzern} -
                                  set(profile.unidentifiable()))
    assert len(flat) == len(set(flat))
    cost = [sum(npix**2 * nzern for npix, nzern in part) for part in parts]
    assert max(cost) < 1.5 * min(cost)


def test_speedups_compare_records_of_one_node_only():
    series = {NUMPY: {(16, 2): measured_point(16, 2, 2.0, node="a"), (32, 2): measured_point(32, 2, 2.0, node="a")},
              TORCH_CPU: {(16, 2): measured_point(16, 2, 1.0, node="a"), (32, 2): measured_point(32, 2, 2.0, node="b")}}
    assert point_times.speedups(series, NUMPY, TORCH_CPU) == {(16, 2): 2.0}


def test_a_sharded_sweep_is_a_run_of_its_own(tmp_path):
    completed = subprocess.run([sys.executable, "-m", "replication", "sweep", "--profile", "smoke", "--shards", "2",
                                "--results", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, check=False)
    assert completed.returncode == 2
    assert "a sharded sweep is a run folder of its own" in completed.stderr
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_slurm_jobs_carry_the_cluster_settings(tmp_path, monkeypatch):
    """With an `srun` on PATH (a stand-in here), the batch file submitit would hand to sbatch."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "srun").write_text("#!/bin/sh\nexit 0\n")
    (fake / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    executor = shards.executor_for(tmp_path / "run", "slurm", partition="gpu", time_min=90, gpus=1, cpus=4)
    text = executor._make_submission_file_text("python -m job", "uid")
    for line in ("--partition=gpu", "--time=90", "--gpus-per-node=1", "--cpus-per-task=4",
                 "--job-name=oof-sweep-shard"):
        assert f"#SBATCH {line}" in text


def test_without_slurm_the_command_says_so_and_writes_nothing(tmp_path):
    completed = subprocess.run([sys.executable, "-m", "replication", "sweep", "--profile", "smoke", "--shards", "2",
                                "--executor", "slurm", "--run", str(tmp_path / "run")], cwd=ROOT,
                               capture_output=True, text=True, check=False, env={"PATH": "/usr/bin:/bin"})
    assert completed.returncode == 2
    assert "SLURM is not reachable from here" in completed.stderr
    assert not (tmp_path / "run" / "shards").exists()


@pytest.mark.parametrize("damage", ['{"jobs": [', '{"jobs": 3}', "[]"])
def test_a_damaged_shard_plan_is_refused_in_one_line_naming_it(sharded, tmp_path, damage):
    run = tmp_path / "run"
    shutil.copytree(sharded, run)
    (run / "shards-sweep-smoke.json").write_text(damage)
    with pytest.raises(runs.RunError, match=r"shards-sweep-smoke.json: "):
        shards.run_sharded_sweep(run, BOTH, 2, "local", time_min=10)

"""Kept trajectories and the audit: every time to target and end distance of a sweep recomputed from the files
alone; an altered record or trajectory is reported, never passed."""

import hashlib
import json
import shutil

import numpy as np
import pytest
from conftest import run_command

from replication.core import optimum
from replication.studies.sweep import audit, trajectories
from replication.studies.sweep.records import read_optima, read_points


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """A smoke sweep of NumPy and torch-cpu, timed to the target with kept trajectories."""
    run = tmp_path_factory.mktemp("audit") / "run"
    result = run_command("sweep", "--profile", "smoke", "--impl", "numpy", "--impl", "torch-cpu", "--run", run,
                         "--quiet")
    assert result.returncode == 0, result.stderr
    return run


def test_every_point_keeps_one_trajectory_per_repeat(smoke_run):
    folder = smoke_run / "sweep-smoke"
    for record in read_points(folder / "points.jsonl"):
        found = trajectories.read_trajectories(folder, record.trajectories, record.nparams)
        assert len(found) == len(record.total_s.all)
        for trajectory, fit_s in zip(found, record.fit_s.all, strict=True):
            assert np.all(np.diff(trajectory["seconds"]) >= 0)
            assert 0 < trajectory["seconds"][-1] <= fit_s
            assert list(trajectory["evaluations"]) == list(range(1, len(trajectory["seconds"]) + 1))
        end = np.array(record.outcome.x)
        assert np.min(np.abs(found[-1]["params"] - end).max(axis=1)) == 0  # the end point was evaluated


def test_the_audit_recomputes_every_recorded_value(smoke_run):
    result = run_command("audit", "--run", smoke_run)
    assert result.returncode == 0, result.stdout
    points = read_points(smoke_run / "sweep-smoke" / "points.jsonl")
    repeats = sum(len(record.total_s.all) for record in points)
    assert all(len(record.target.evaluations) == len(record.total_s.all) for record in points)
    # each repeat's time to target and its evaluations to it, each point's end distance
    assert f"{2 * repeats + len(points)} value(s) recomputed, 0 differ" in result.stdout


@pytest.mark.slow
def test_a_contributed_run_keeps_its_trajectories_and_audits_as_the_run_did(smoke_run, tmp_path):
    from replication.report.contribute import contribute

    reference = contribute(smoke_run, "a smoke sweep, for the test", reference=tmp_path / "reference")
    kept = sorted(path.name for path in (reference / "sweep-smoke" / "trajectories").glob("*.npz"))
    assert kept == sorted(path.name for path in (smoke_run / "sweep-smoke" / "trajectories").glob("*.npz"))
    assert kept
    result = run_command("audit", "--run", reference)
    assert result.returncode == 0, result.stdout
    assert ", 0 differ" in result.stdout


def altered_copy(smoke_run, tmp_path, change):
    copy = tmp_path / "run"
    shutil.copytree(smoke_run, copy)
    points = copy / "sweep-smoke" / "points.jsonl"
    records = [json.loads(line) for line in points.read_text().splitlines()]  # as written, to alter
    change(records, copy / "sweep-smoke")
    points.write_text("".join(json.dumps(record) + "\n" for record in records))
    return copy


def altered_time(target):
    target["times"][0] *= 1 + 1e-6


def altered_count(target):
    target["evaluations"][0] += 1


@pytest.mark.parametrize(("alter", "said"), [(altered_time, "repeat 1: time to target recorded"),
                                             (altered_count, "repeat 1: evaluations to target recorded")])
def test_an_altered_time_or_count_of_evaluations_to_target_is_reported(smoke_run, tmp_path, alter, said):
    def change(records, folder):
        alter(next(record for record in records if record["target"]["reached"])["target"])

    result = run_command("audit", "--run", altered_copy(smoke_run, tmp_path, change))
    assert result.returncode == 1
    assert said in result.stdout
    assert "1 differ from the record" in result.stdout


def test_a_count_of_evaluations_that_disagrees_with_its_time_is_refused_by_name(smoke_run, tmp_path):
    def change(records, folder):
        target = next(record for record in records if record["target"]["reached"])["target"]
        target["evaluations"][0] = None

    result = run_command("audit", "--run", altered_copy(smoke_run, tmp_path, change))
    assert result.returncode == 2
    assert "key 'target.evaluations': one count per repeat" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_an_altered_end_distance_is_reported(smoke_run, tmp_path):
    def change(records, folder):
        records[-1]["target"]["end_distance"] = (records[-1]["target"]["end_distance"] or 0) + 0.01

    result = run_command("audit", "--run", altered_copy(smoke_run, tmp_path, change))
    assert result.returncode == 1
    assert "end distance recorded" in result.stdout


def test_an_altered_trajectory_file_is_refused_in_one_line(smoke_run, tmp_path):
    def change(records, folder):
        path = folder / records[0]["trajectories"]["file"]
        content = bytearray(path.read_bytes())
        content[len(content) // 2] ^= 0xFF
        path.write_bytes(bytes(content))

    result = run_command("audit", "--run", altered_copy(smoke_run, tmp_path, change))
    assert result.returncode == 2
    assert "was altered" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("field", ["seconds", "evaluations", "params"])
def test_a_trajectory_of_the_wrong_shape_with_its_hash_recorded_is_refused_in_one_line(field, smoke_run, tmp_path):
    """A trajectories file rewritten with a 2-D array where one number per evaluation belongs (its SHA-256 recorded
    anew, so that only the shape is wrong) is refused naming the file, not met as a broadcast error in the audit."""
    def change(records, folder):
        entry = records[0]["trajectories"]
        path = folder / entry["file"]
        with np.load(path) as saved:
            arrays = {name: saved[name] for name in saved.files}
        arrays[f"{field}_0"] = np.stack([arrays[f"{field}_0"]] * 2, axis=-1)
        with path.open("wb") as stream:
            np.savez(stream, **arrays)
        entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()

    result = run_command("audit", "--run", altered_copy(smoke_run, tmp_path, change))
    assert result.returncode == 2
    assert "repeat 0: expected arrays of numbers" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_audit_agrees_with_the_recomputation_by_hand(smoke_run):
    """The first point's first repeat, recomputed here with numpy alone: distances under the optimum's covariance."""
    folder = smoke_run / "sweep-smoke"
    record = read_points(folder / "points.jsonl")[0]
    best = next(iter(read_optima(folder / "optima.jsonl").values()))
    trajectory = trajectories.read_trajectories(folder, record.trajectories, record.nparams)[0]
    offsets = trajectory["params"] - np.array(best.x)
    distances = np.sqrt(np.einsum("ij,ij->i", offsets, np.linalg.solve(np.array(best.covariance), offsets.T).T))
    near = np.flatnonzero(distances <= optimum.TARGET)
    expected = record.setup_s.all[0] + trajectory["seconds"][near[0]] if near.size else None
    assert audit.same(record.target.times[0], expected)
    assert record.target.evaluations[0] == (near[0] + 1 if near.size else None)  # one kept step per evaluation


def test_points_without_trajectories_are_not_auditable_never_agreeing(smoke_run, tmp_path):
    """A point whose record names no kept trajectories (as runs made before they were kept) is counted as not
    auditable, and none of its values as recomputed."""
    def change(records, folder):
        for record in records:
            record.pop("trajectories")

    found = audit.audit_run(altered_copy(smoke_run, tmp_path, change))
    assert found.checked == 0
    assert found.not_auditable > 0


def test_every_committed_run_that_keeps_trajectories_audits_clean_on_the_sandwich_yardstick():
    """The reference runs made since trajectories are kept: every recorded time to target and end distance
    recomputed from the kept trajectories to 1e-9 relative, and every optimum they judge against uses the sandwich
    covariance (older runs' other optima are left out of every rule: load.off_yardstick_points)."""
    from replication.core.paths import REFERENCE
    from replication.studies.sweep import audit
    from replication.studies.sweep.records import read_optima

    kept = [run for run in sorted(REFERENCE.iterdir()) if any(run.glob("sweep-*/trajectories/*.npz"))]
    assert kept, "no reference run keeps its trajectories"
    for run in kept:
        found = audit.audit_run(run)
        assert found.checked > 0
        assert not found.differences, (run.name, found.differences[:3])
        for path in run.glob("sweep-*/optima.jsonl"):
            assert all(record.sandwich for record in read_optima(path).values()), path


def test_every_committed_optimum_uses_the_sandwich_covariance():
    """One yardstick in every committed run: each sweep optimum (shards' too) records the sandwich covariance
    H^-1 J H^-1, so that every distance in standard errors is a Mahalanobis distance under it."""
    from replication.core.paths import REFERENCE
    from replication.studies.sweep.records import read_optima

    files = [*REFERENCE.glob("*/sweep-*/optima.jsonl"), *REFERENCE.glob("*/shards/*/*/sweep-*/optima.jsonl")]
    assert files
    for path in files:
        off = sorted(key for key, record in read_optima(path).items() if not record.sandwich)
        assert not off, (str(path.relative_to(REFERENCE)), off[:3])

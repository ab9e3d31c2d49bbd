"""Reference runs and the committed report are read-only in fact, whatever path names them; a damaged or linked
run never becomes a reference run."""

import shutil

import msgspec
import numpy as np
import pytest
from test_integrity import cli, one_line_error

from replication.core import runs
from replication.core.environment import machine_record
from replication.core.paths import FIGURES, PAPER, REFERENCE
from replication.report.contribute import contribute

A_REFERENCE = sorted(path for path in REFERENCE.iterdir() if (path / "crosscheck").is_dir())[-1]
"""The newest reference run with a cross-check and a quick sweep (what these tests damage copies of)."""


@pytest.mark.usefixtures("untouched")
@pytest.mark.parametrize(("arguments", "words"), [
    (["report", "--run", str(A_REFERENCE)], ["read-only"]),
    (["figures", "--run", str(A_REFERENCE)], ["read-only"]),
    (["figures", "--reference-only", "--output", str(A_REFERENCE / "figures")], ["read-only"]),
    (["simulate", "--output", str(A_REFERENCE / "crosscheck" / "example.npz")], ["read-only"]),
])
def test_no_command_writes_into_a_reference_run(arguments, words):
    one_line_error(cli(*arguments), *words)


@pytest.mark.usefixtures("untouched")
def test_your_report_never_overwrites_the_committed_one(tmp_path):
    run = runs.create_run(tmp_path / "2026-01-01_mine", machine_record())
    one_line_error(cli("report", "--run", str(run), "--output", str(PAPER)), "committed report")
    one_line_error(cli("figures", "--run", str(run), "--output", str(FIGURES)), "committed report")


def test_a_link_to_a_reference_run_is_not_a_run_to_write(tmp_path, monkeypatch):
    link = tmp_path / "x"
    link.symlink_to(A_REFERENCE, target_is_directory=True)
    monkeypatch.setattr(runs, "latest_run", lambda **options: link)
    with pytest.raises(runs.RunError, match="read-only"):
        runs.current_run(machine_record())


def test_contribute_refuses_a_link_and_a_damaged_record_naming_the_file_and_line(tmp_path):
    run = tmp_path / "2026-01-02_vm_test"
    shutil.copytree(A_REFERENCE, run, ignore=shutil.ignore_patterns("trajectories"))
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the repository\n")
    (run / "gpu.txt").unlink(missing_ok=True)
    (run / "gpu.txt").symlink_to(secret)
    with pytest.raises(runs.RunError, match=r"gpu\.txt: a link inside"):
        contribute(run, "a test", reference=tmp_path / "references")
    (run / "gpu.txt").unlink()
    points = run / "sweep-quick" / "points.jsonl"
    points.write_text(points.read_text() + '{"torn": \n')
    lines = points.read_text().count("\n")
    with pytest.raises(runs.RunError, match=rf"points.jsonl: line {lines} is not valid JSON"):
        contribute(run, "a test", reference=tmp_path / "references")
    assert not (tmp_path / "references").exists()


def test_a_torn_file_is_repaired_through_a_new_file_and_kept_whole_where_that_fails(tmp_path, monkeypatch):
    from replication.core import results

    path = tmp_path / "points.jsonl"
    good = "".join(f'{{"n": {n}}}\n' for n in range(16))
    path.write_text(good + '{"n": 16, "tor')

    def full_disk(*args):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(results.os, "replace", full_disk)
        with pytest.warns(UserWarning, match="truncated last line"), pytest.raises(OSError, match="left as it was"):
            results.read_records(path, repair=True)
    assert path.read_text() == good + '{"n": 16, "tor'  # nothing lost, nothing half-written
    assert not list(tmp_path.glob("*.repair"))
    with pytest.warns(UserWarning, match="truncated last line"):
        assert len(results.read_records(path, repair=True)) == 16
    assert path.read_text() == good


def test_a_sweep_repairs_a_torn_runs_file_before_appending_to_it(tmp_path):
    from replication.core.profiles import SweepSettings
    from replication.core.results import read_records
    from replication.studies.sweep import measure as sweep

    folder = tmp_path / "sweep-smoke"
    folder.mkdir()
    (folder / "runs.jsonl").write_text('{"profile": "smo')
    settings = SweepSettings("smoke", impls=("numpy",), threads=1)
    with pytest.warns(UserWarning, match="truncated last line"):
        sweep.run_sweep(settings, folder, quiet=True, points={(16, 2)})
    assert len(read_records(folder / "runs.jsonl")) == 1


def copy_of_a_reference(tmp_path):
    run = tmp_path / "2026-01-03_vm_copy"
    shutil.copytree(A_REFERENCE, run, ignore=shutil.ignore_patterns("trajectories"))
    (tmp_path / "none").mkdir(exist_ok=True)
    return run


@pytest.mark.parametrize("created", [None, 20261201, "yesterday"])
def test_a_run_record_without_a_start_date_is_refused_naming_the_key(tmp_path, created):
    import json

    run = copy_of_a_reference(tmp_path)
    info = json.loads((run / "run.json").read_text())
    info.pop("created")
    if created is not None:
        info["created"] = created
    (run / "run.json").write_text(json.dumps(info))
    with pytest.raises(runs.RunError, match="key 'created' must be"):
        runs.read_run(run)


@pytest.mark.parametrize(("change", "match"), [
    (lambda r: r["total_s"].update(median=0), r"key 'total_s.median': expected a number > 0"),
    (lambda r: r.update(minimizer="adam"), "name no known series"),
    (lambda r: r["outcome"]["convergence"].pop("stderr"), "has no key 'outcome.convergence.stderr'"),
])
def test_a_record_the_report_cannot_use_is_refused_naming_file_line_and_key(tmp_path, change, match):
    import json

    from replication.report import load

    run = copy_of_a_reference(tmp_path)
    points = run / "sweep-quick" / "points.jsonl"
    records = [json.loads(line) for line in points.read_text().splitlines()]
    change(records[2])
    points.write_text("".join(json.dumps(record) + "\n" for record in records))
    with pytest.raises(ValueError, match=rf"points.jsonl: line 3.*{match}"):
        load.load_run(run, own=True)


@pytest.mark.parametrize("content", ['{"checks": 5}', '{"checks": [', "[1, 2]"])
def test_a_damaged_crosscheck_file_is_named(tmp_path, content):
    from replication.report import load

    run = copy_of_a_reference(tmp_path)
    (run / "crosscheck" / "crosscheck.json").write_text(content)
    with pytest.raises(runs.RunError, match=r"crosscheck\.json"):
        load.load_run(run, own=True)


def test_repeated_option_values_are_measured_once():
    from replication.cli import build_parser
    from replication.core.options import once
    from replication.studies.sweep.command import sweep_settings

    args = build_parser().parse_args(["sweep", "--gradient", "adjoint", "--gradient", "adjoint", "--impl", "numpy",
                                      "--impl", "numpy"])
    settings = sweep_settings(args)
    assert (settings.gradients, settings.impls) == (("adjoint",), ("numpy",))
    assert once([16, 16, 32]) == (16, 32)


def test_a_sweep_keeps_its_settings_even_without_its_runs_file(tmp_path):
    from replication.core.profiles import SweepSettings
    from replication.studies.sweep import measure as sweep

    folder = tmp_path / "sweep-smoke"
    sweep.run_sweep(SweepSettings("smoke", impls=("numpy",), threads=1), folder, quiet=True, points={(16, 2)})
    (folder / "runs.jsonl").unlink()
    with pytest.raises(runs.RunError, match="tol"):
        sweep.run_sweep(SweepSettings("smoke", impls=("numpy",), threads=1, tol=1e-2), folder, quiet=True)


def test_one_run_has_one_lock_whatever_option_names_its_folder(tmp_path):
    run = runs.create_run(tmp_path / "2026-01-04_run", machine_record())
    with runs.exclusive(run):
        completed = cli("sweep", "--profile", "smoke", "--results", str(run / "sweep-smoke"), "--threads", "1",
                        "--impl", "numpy")
    assert completed.returncode != 0
    assert "lock" in completed.stderr.lower() or "another" in completed.stderr.lower(), completed.stderr


def test_a_plain_sweep_into_a_sharded_run_is_refused_before_measuring(tmp_path):
    import json

    run = runs.create_run(tmp_path / "2026-01-05_sharded", machine_record())
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(info | {"sharded": {"sweep-smoke": {"shards": 2}}}))
    one_line_error(cli("sweep", "--profile", "smoke", "--run", str(run), "--threads", "1"), "--shards 2")
    assert not (run / "sweep-smoke").exists()


def test_more_shards_than_points_is_refused_before_any_folder_is_made(tmp_path):
    one_line_error(cli("sweep", "--profile", "smoke", "--shards", "500", "--run", str(tmp_path / "run"),
                       "--executor", "local", "--threads", "1"), "--shards 500", "point(s)")
    assert not (tmp_path / "run").exists()


def test_records_are_strict_json_with_null_for_what_is_not_finite(tmp_path):
    import json

    from replication.core.fit_records import Account
    from replication.core.results import append_record, read_records

    path = tmp_path / "points.jsonl"
    append_record(path, {"convergence": {"stderr": [1.0, float("nan")], "newton_stderr": float("inf"),
                                         "expected_decrease": 0.0, "rounding": 0.0, "grad_norm": 0.0}})
    text = path.read_text()
    assert "NaN" not in text
    assert "Infinity" not in text
    json.loads(text, parse_constant=lambda name: pytest.fail(f"non-standard JSON constant {name}"))
    (record,) = read_records(path)
    account = record["convergence"]
    assert account["null"] == "not finite"
    typed = msgspec.convert(account, Account)  # as a reader reads it: null, then NaN where a number is asked for
    assert np.isnan(typed.judging_stderr[1])
    assert np.isnan(typed.judging_newton)
    assert not typed.at_optimum

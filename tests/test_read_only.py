"""Reference runs and the committed report are read-only in fact, whatever path names them; a damaged or linked
run never becomes a reference run."""

import hashlib
import shutil

import pytest

from replication import runs
from replication.paths import FIGURES, PAPER, REFERENCE
from tests.test_integrity import cli, one_line_error

A_REFERENCE = sorted(path for path in REFERENCE.iterdir() if path.is_dir())[-1]


def checksums():
    """Every committed file the harness must never write, with its hash."""
    files = [path for folder in (REFERENCE, PAPER, FIGURES) for path in folder.rglob("*") if path.is_file()]
    return {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in files}


@pytest.fixture(scope="module")
def untouched():
    before = checksums()
    yield
    assert checksums() == before, "a command wrote into the reference runs or the committed report"


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
    run = runs.create_run(tmp_path / "2026-01-01_mine")
    one_line_error(cli("report", "--run", str(run), "--output", str(PAPER)), "committed report")
    one_line_error(cli("figures", "--run", str(run), "--output", str(FIGURES)), "committed report")


def test_a_link_to_a_reference_run_is_not_a_run_to_write(tmp_path, monkeypatch):
    link = tmp_path / "x"
    link.symlink_to(A_REFERENCE, target_is_directory=True)
    monkeypatch.setattr(runs, "latest_run", lambda base=None: link)
    with pytest.raises(runs.RunError, match="read-only"):
        runs.current_run()


def test_contribute_refuses_a_link_and_a_damaged_record_naming_the_file_and_line(tmp_path):
    run = tmp_path / "2026-01-02_vm_test"
    shutil.copytree(A_REFERENCE, run)
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the repository\n")
    (run / "gpu.txt").unlink(missing_ok=True)
    (run / "gpu.txt").symlink_to(secret)
    with pytest.raises(runs.RunError, match="not a regular file"):
        runs.contribute(run, "a test", reference=tmp_path / "references")
    (run / "gpu.txt").unlink()
    points = run / "sweep-quick" / "points.jsonl"
    points.write_text(points.read_text() + '{"torn": \n')
    lines = points.read_text().count("\n")
    with pytest.raises(runs.RunError, match=rf"points.jsonl: line {lines} is not valid JSON"):
        runs.contribute(run, "a test", reference=tmp_path / "references")
    assert not (tmp_path / "references").exists()


def test_a_torn_file_is_repaired_through_a_new_file_and_kept_whole_where_that_fails(tmp_path, monkeypatch):
    from replication import results

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
    from replication import sweep
    from replication.profiles import SweepSettings
    from replication.results import read_records

    folder = tmp_path / "sweep-smoke"
    folder.mkdir()
    (folder / "runs.jsonl").write_text('{"profile": "smo')
    settings = SweepSettings("smoke", impls=("numpy",), threads=1)
    with pytest.warns(UserWarning, match="truncated last line"):
        sweep.run_sweep(settings, folder, quiet=True, points={(16, 2)})
    assert len(read_records(folder / "runs.jsonl")) == 1

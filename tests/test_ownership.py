"""A rendering owns only what it wrote: report and figures remove as stale only the files their previous rendering
into the same folder wrote (its manifest, results.MANIFEST), and leave a person's files there, saying so once."""

import json
import multiprocessing
import shutil
import time

import numpy as np
import pytest
from conftest import run_command

from replication.core import runs
from replication.core.environment import machine_record
from replication.core.paths import REFERENCE
from replication.core.results import MANIFEST, keep_only_what_was_made, owned_files
from replication.report import contribute as contributing

TWO = ("2026-12-05_vm_amd-epyc-2c-1thread_closure-half-noise",
       "2026-12-05_vm_amd-epyc-2c-1thread_closure")


SWEEPS = ("2026-11-29_vm_xeon-16c_nvidia-h200", "2026-12-01_vm_xeon-2c")
"""Two reference runs with a sweep: each draws figures of its own under figures/runs/."""


def two_references(tmp_path, names=TWO):
    folder = tmp_path / "reference"
    for name in names:
        shutil.copytree(REFERENCE / name, folder / name)
    return folder


def test_a_report_removes_only_the_appendices_it_wrote_and_leaves_a_persons_files(tmp_path):
    reference, output = two_references(tmp_path), tmp_path / "out"
    options = ("--reference", reference, "--reference-only", "--output", output)
    assert run_command("report", *options).returncode == 0
    assert owned_files(output / "runs") == {f"{name}.md" for name in TWO}
    (output / "runs" / "my-notes.md").write_text("kept\n")
    shutil.rmtree(reference / TWO[1])
    again = run_command("report", *options)
    assert again.returncode == 0
    assert not (output / "runs" / f"{TWO[1]}.md").exists()  # the appendix of a run no longer shown
    assert (output / "runs" / f"{TWO[0]}.md").is_file()
    assert (output / "runs" / "my-notes.md").read_text() == "kept\n"
    assert again.stdout.count("that no report wrote (first: my-notes.md)") == 1
    assert owned_files(output / "runs") == {f"{TWO[0]}.md"}


def test_a_report_into_a_folder_it_never_wrote_removes_nothing(tmp_path):
    reference, output = two_references(tmp_path), tmp_path / "out"
    (output / "runs").mkdir(parents=True)
    (output / "runs" / "an-older-report.md").write_text("a person's\n")
    completed = run_command("report", "--reference", reference, "--reference-only", "--output", output)
    assert completed.returncode == 0
    assert (output / "runs" / "an-older-report.md").read_text() == "a person's\n"
    assert "left 1 file(s)" in completed.stdout


@pytest.mark.slow  # draws every figure of two runs twice (9 s): nox -s end_to_end
def test_figures_remove_only_the_figures_they_drew_and_leave_a_persons_images(tmp_path):
    reference, output = two_references(tmp_path, SWEEPS), tmp_path / "out"
    options = ("--reference", reference, "--reference-only", "--output", output)
    assert run_command("figures", *options).returncode == 0
    drawn = owned_files(output / "figures" / "runs")
    assert drawn
    mine = output / "figures" / "runs" / "my-plots" / "sketch.png"
    mine.parent.mkdir()
    mine.write_bytes(b"not a figure of ours")
    shutil.rmtree(reference / SWEEPS[1])
    again = run_command("figures", *options)
    assert again.returncode == 0
    assert mine.read_bytes() == b"not a figure of ours"
    assert "that no figures command drew (first: my-plots/sketch.png)" in again.stdout
    kept = owned_files(output / "figures" / "runs")
    assert kept < drawn
    assert all(name.startswith(SWEEPS[0]) for name in kept)
    for name in drawn - kept:
        assert not (output / "figures" / "runs" / name).exists()
    assert not (output / "figures" / "runs" / SWEEPS[1]).exists()  # the folder it emptied


@pytest.mark.parametrize(("command", "persons"), [
    ("report", "REPORT.md"), ("report", "runs/2026-12-01_vm_xeon-2c.md"),
    pytest.param("figures", "figures/fig1_time_vs_grid_size.png", marks=pytest.mark.slow),  # 13 s: drawn twice
    pytest.param("figures", "figures/runs/2026-12-01_vm_xeon-2c/fig1_x.svg", marks=pytest.mark.slow)])
def test_a_rendering_never_overwrites_a_file_it_did_not_write_in_a_folder_you_named(tmp_path, command, persons):
    reference, output = two_references(tmp_path, SWEEPS), tmp_path / "out"
    options = ("--reference", reference, "--reference-only", "--output", output)
    mine = output / persons
    mine.parent.mkdir(parents=True)
    mine.write_text("a person's\n")
    refused = run_command(command, *options)
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith(f"--output {output}: {mine} is there and no rendering wrote it; move it, or "
                                           "name another folder")
    assert mine.read_text() == "a person's\n"
    assert not (output / "DETAILS.md").exists()
    assert not list((output / "figures").glob("fig0*"))  # refused before anything was written
    mine.unlink()
    for _ in range(2):  # then it renders, and renders again over what it wrote
        assert run_command(command, *options).returncode == 0
    first = "REPORT.md" if command == "report" else "fig1_time_vs_grid_size.png"
    assert first in owned_files(output if command == "report" else output / "figures")


def test_a_manifest_that_is_a_link_is_not_believed(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    elsewhere = tmp_path / "list"
    elsewhere.write_text("precious.md\n")
    (folder / MANIFEST).symlink_to(elsewhere)
    (folder / "precious.md").write_text("x")
    assert owned_files(folder) == set()
    assert keep_only_what_was_made(folder, [], folder.glob("*.md")) == ([], [folder / "precious.md"])
    assert (folder / "precious.md").exists()


def slow_contribute(run, reference, started):
    """A contribute whose copies take a while (in a process of its own): the window another contribute races."""
    real_copy = contributing.shutil.copy2

    def slow_copy(source, destination):
        started.set()
        time.sleep(0.3)
        return real_copy(source, destination)

    contributing.shutil.copy2 = slow_copy
    contributing.contribute(run, "the first contribute", reference)


def test_two_contributes_of_one_run_in_two_processes_publish_one_complete_reference(tmp_path):
    run = runs.create_run(tmp_path / "runs" / "2026-11-30_lab-7", machine_record())
    source = REFERENCE / "2026-12-01_vm_xeon-2c"
    for record in ("sweep-quick/points.jsonl", "sweep-quick/runs.jsonl", "retrieval-quick/points.jsonl"):
        (run / record).parent.mkdir(exist_ok=True)
        (run / record).write_text((source / record).read_text().splitlines(keepends=True)[0])  # one valid record
    reference = tmp_path / "reference"
    context = multiprocessing.get_context("fork")
    started = context.Event()
    first = context.Process(target=slow_contribute, args=(run, reference, started))
    first.start()
    assert started.wait(120)
    with pytest.raises(runs.RunError, match="another process"):  # refused by the run's lock, touching nothing
        contributing.contribute(run, "the second contribute", reference)
    first.join(120)
    assert first.exitcode == 0
    target = reference / run.name
    assert runs.read_run(target)["note"] == "the first contribute"
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == [
        "retrieval-quick/points.jsonl", "run.json", "sweep-quick/points.jsonl", "sweep-quick/runs.jsonl"]
    assert [p.name for p in reference.iterdir()] == [run.name]  # no staging folder left behind


def test_contribute_refuses_a_run_the_figures_cannot_draw_naming_the_file(tmp_path):
    """A record file every check before the copy admits (a readable .npz of plain arrays) that the figures cannot
    use (residuals in 2 axes, not 3) is refused before anything is copied: contribute runs every reader a reference
    run meets (report, figures, audit)."""
    run = tmp_path / "runs" / "2026-12-09_lab"
    shutil.copytree(REFERENCE / "2026-12-06_vm_amd-epyc-2c_real-maps", run)
    info = json.loads((run / "run.json").read_text())
    info.pop("note")
    (run / "run.json").write_text(json.dumps(info))
    residuals = run / "real-maps" / "residuals-grasp-26ghz.npz"
    np.savez(residuals, residual=np.zeros((4, 4)))
    with pytest.raises(runs.RunError, match=rf"{residuals}: array 'residual': expected numbers in 3 axes"):
        contributing.contribute(run, "a damaged run", tmp_path / "reference")
    assert not (tmp_path / "reference").exists() or not any((tmp_path / "reference").iterdir())

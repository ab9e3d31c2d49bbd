"""Retiring a reference run: its headline, the commit that keeps its records and why, written once and shown in
DETAILS.md after its folder is gone; refused, in one line, where the design names the run, where it is retired
already, where no reason is given and where its records are not committed as they are."""

import shutil
import subprocess

import pytest

from replication.claims import design, speed
from replication.core import format as fmt
from replication.core.judging import weakest_npix
from replication.core.objectives import CAUCHY
from replication.core.paths import REFERENCE, RESULTS
from replication.core.runs import RunError
from replication.core.series import NUMPY, TORCH_CPU
from replication.report import load
from replication.report import retire as retiring
from replication.report.render import render_all
from replication.studies.sweep import read as sweep_read

SOURCE = "2026-12-05_vm_amd-epyc-2c-4"
"""A reference run copied under another name (the design names it, so it cannot be retired as itself)."""


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A git checkout holding one committed reference run that the design does not name."""
    reference = tmp_path / "results" / "reference"
    shutil.copytree(REFERENCE / SOURCE, reference / "2026-12-02_vm_lab-2c")
    git("init", "-q", cwd=tmp_path)
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", "-A", cwd=tmp_path)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "runs", cwd=tmp_path)
    monkeypatch.setattr(retiring.paths, "ROOT", tmp_path)
    return reference


def test_a_retired_run_keeps_its_headline_and_commit_and_is_shown_after_its_folder_is_gone(checkout):
    retired = checkout.parent / "retired.jsonl"
    why = "Superseded **by** <b>a newer run</b>."
    entry = retiring.retire("2026-12-02_vm_lab-2c", why, checkout, retired)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout.parent.parent, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert entry.commit == head
    run = load.load_run(checkout / "2026-12-02_vm_lab-2c", own=False)
    c3 = speed.verdict_c3(sweep_read.complete_sizes(run.judged(CAUCHY)[1], NUMPY, TORCH_CPU))
    said = f"C3 {fmt.times(c3.value, False)} (npix {weakest_npix(c3.by_npix)}): {c3.verdict}"
    assert any(line.startswith("the Cauchy likelihood: ") and said in line for line in entry.headline)
    assert entry.rule == "time to solution"
    assert retiring.read_retired(retired) == [entry]
    with pytest.raises(RunError, match="retired already"):
        retiring.retire("2026-12-02_vm_lab-2c", why, checkout, retired)
    shutil.rmtree(checkout / "2026-12-02_vm_lab-2c")
    details = render_all([], checkout, output=checkout.parent / "out", figures=checkout.parent / "figures")
    row = next(line for line in details["DETAILS.md"].splitlines() if "`2026-12-02_vm_lab-2c`" in line)
    assert f"| {head[:7]} |" in row
    assert "<b>" not in row  # a person's words are never markup
    assert "\\*\\*by\\*\\*" in row


def test_a_run_the_design_names_a_missing_reason_and_uncommitted_records_are_refused(checkout, tmp_path):
    retired = tmp_path / "retired.jsonl"
    with pytest.raises(RunError, match="the design names it"):
        retiring.retire(design.DESIGN[0].folder, "why", checkout, retired)
    with pytest.raises(RunError, match="--why"):
        retiring.retire("2026-12-02_vm_lab-2c", "  ", checkout, retired)
    with pytest.raises(RunError, match="not a reference run"):
        retiring.retire("2026-12-02_vm_nowhere", "why", checkout, retired)
    (checkout / "2026-12-02_vm_lab-2c" / "run.json").write_text("{}\n")
    with pytest.raises(RunError, match="not committed as it is"):
        retiring.retire("2026-12-02_vm_lab-2c", "why", checkout, retired)
    assert not retired.exists()


def test_the_committed_retirements_name_runs_that_are_gone_and_that_the_design_does_not_name():
    entries = retiring.read_retired(RESULTS / "retired.jsonl")
    assert entries
    for entry in entries:
        assert not (REFERENCE / entry.folder).exists()
        assert entry.folder not in design.BY_FOLDER
    assert {reference.folder for reference in design.DESIGN} == {path.name for path in REFERENCE.iterdir()
                                                                  if path.is_dir()}
    # the designed experiment's ten runs (issue 57: at most 10) and the closure beyond the fitted orders' three
    assert len([r for r in design.DESIGN if r.protocol is not design.CLOSURE_BEYOND]) <= 10
    assert len(design.DESIGN) <= 13

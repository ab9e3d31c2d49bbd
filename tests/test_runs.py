"""Runs belong to a machine: naming, resuming, read-only reference runs, one writer per run, fixed settings."""

import datetime
import hashlib
import json
import shutil
import subprocess
import sys
import time

import msgspec
import pytest
from conftest import run_command

from replication import cli
from replication.core import paths, registry, runs
from replication.core.environment import environment_record, machine_record
from replication.core.paths import PAPER, REFERENCE, ROOT
from replication.core.profiles import SweepSettings
from replication.core.results import append_record, read_records
from replication.report.contribute import contribute
from replication.report.render import render_all
from replication.studies.sweep import measure as sweep
from replication.studies.sweep.records import as_read, point_key

MACHINE = {"hostname": "lab-7", "cpu": "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz", "cpu_count": 32,
           "gpu": "NVIDIA A100-SXM4-40GB"}


def cli_run(*args):
    """Run python -m replication with args from the repository root (in this process: conftest.run_command)."""
    return run_command(*args)


def tree_digest(folder):
    """A hash of every file's path and bytes under folder: any write shows."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return digest.hexdigest()


@pytest.fixture
def own_runs(tmp_path, monkeypatch):
    """results/runs/ moved to a temporary folder, so that default runs never touch the checkout."""
    monkeypatch.setattr(paths, "RUNS", tmp_path / "runs")
    return tmp_path / "runs"


def test_a_run_is_named_after_its_date_and_machine():
    date = datetime.datetime(2026, 11, 30, tzinfo=datetime.timezone.utc)
    assert runs.run_name(MACHINE, date) == "2026-11-30_lab-7_xeon-gold-6130-32c_nvidia-a100-sxm4-40gb"
    assert runs.run_name(MACHINE | {"gpu": None}, date) == "2026-11-30_lab-7_xeon-gold-6130-32c"
    assert runs.machine_label(msgspec.convert(MACHINE, runs.Machine)) == (
        "Intel Xeon Gold 6130 @ 2.10GHz, 32 cores + NVIDIA A100-SXM4-40GB")


def test_writers_resume_this_machines_newest_run_and_start_one_when_asked(own_runs):
    first = runs.current_run(machine_record())
    assert first.parent == own_runs
    assert runs.read_run(first)["machine"] == machine_record()
    assert runs.current_run(machine_record()) == first
    second = runs.current_run(machine_record(), new=True)
    assert second != first
    assert second.name.startswith(first.name)
    assert runs.current_run(machine_record()) == second
    other = runs.create_run(own_runs / "2099-01-01_elsewhere", machine=MACHINE)
    assert runs.latest_run() == second  # another machine's run is never resumed here
    assert runs.latest_run(machine=MACHINE) == other


def test_reference_runs_are_shipped_and_complete():
    references = runs.reference_runs()
    assert len(references) >= 2
    for folder in references:
        info = runs.read_run(folder)
        assert info["name"] == folder.name
        assert set(runs.MACHINE_KEYS) <= set(info["machine"])
        assert list(folder.glob("sweep-*/points.jsonl")) or (folder / "real-maps" / "stages.jsonl").is_file() or (
            folder / "closure" / "closure.jsonl").is_file(), f"{folder.name}: no sweep, no real maps, no closure test"
    # runs of the quick profile are whole replications; a paper-profile run may hold its sweep alone
    quick = [folder for folder in references if (folder / "sweep-quick").is_dir()]
    assert len(quick) >= 2
    assert all((folder / "crosscheck" / "crosscheck.json").is_file() for folder in quick)


def test_no_run_is_ever_made_inside_the_reference_runs(own_runs):
    reference = runs.reference_runs()[0]
    with pytest.raises(runs.RunError, match="read-only"):
        runs.create_run(reference, machine_record())
    with pytest.raises(runs.RunError, match="read-only"):
        runs.check_writable(reference / "sweep-quick", "--results")
    assert not runs.is_reference(runs.current_run(machine_record()))


@pytest.mark.parametrize("option", ["--run", "--results"])
@pytest.mark.parametrize("command", ["sweep", "crosscheck", "bench"])
def test_commands_refuse_to_write_into_a_reference_run(command, option):
    before = tree_digest(REFERENCE)
    target = runs.reference_runs()[0] / ("sweep-quick" if option == "--results" else "")
    completed = cli_run(command, option, str(target))
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1, completed.stderr
    assert "read-only" in completed.stderr
    assert option in completed.stderr
    assert tree_digest(REFERENCE) == before


def test_a_second_writer_is_refused_at_once_and_a_killed_writer_leaves_no_lock(tmp_path):
    run = runs.create_run(tmp_path / "run", machine_record())
    points = run / "sweep-quick" / "points.jsonl"
    first = subprocess.Popen([sys.executable, "-m", "replication", "sweep", "--profile", "quick", "--impl", "numpy",
                              "--run", str(run), "--quiet"], cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not (points.exists() and points.read_text().count("\n") >= 1) and time.monotonic() < deadline:
            time.sleep(0.01)
        second = cli_run("sweep", "--profile", "quick", "--impl", "numpy", "--run", str(run), "--quiet")
        assert first.poll() is None, "the first sweep ended before the second started"
        assert second.returncode == 2
        assert f"pid {first.pid}" in second.stderr
        assert str(run) in second.stderr
    finally:
        first.kill()
        first.wait()
    keys = [point_key(as_read(record)) for record in read_records(points)]
    assert len(keys) == len(set(keys))  # nothing recorded twice
    with runs.exclusive(run):  # kill -9 released the lock
        pass


def test_resuming_a_sweep_under_other_settings_is_refused_naming_the_setting(tmp_path):
    folder = tmp_path / "sweep-smoke"
    append_record(folder / "runs.jsonl", {"profile": "smoke", "tol": 1e-6, "threads": 1})
    with pytest.raises(runs.RunError, match=r"tol = 1e-06.*tol = 1e-08"):
        sweep.run_sweep(SweepSettings("smoke", impls=("numpy",), threads=1), folder, quiet=True)
    assert not (folder / "points.jsonl").exists()


def test_a_sweep_whose_settings_and_sessions_were_lost_still_refuses_other_settings(tmp_path):
    folder = tmp_path / "sweep-smoke"
    settings = SweepSettings("smoke", impls=("numpy",), threads=1)
    sweep.run_sweep(settings, folder, quiet=True, points={(16, 2)})
    (folder / "settings.json").unlink()
    (folder / "runs.jsonl").unlink()
    before = (folder / "points.jsonl").read_text()
    with pytest.raises(runs.RunError, match=r"points.jsonl: line 1: .*tol = 1e-08.*tol = 0.01"):
        sweep.run_sweep(SweepSettings("smoke", impls=("numpy",), threads=1, tol=1e-2), folder, quiet=True)
    assert (folder / "points.jsonl").read_text() == before


def test_a_finished_crosscheck_is_kept_not_redone(tmp_path):
    run = runs.create_run(tmp_path / "run", machine_record())
    (run / "crosscheck").mkdir()
    finished = json.dumps({"points": "smoke", "checks": [], "environment": environment_record(1), "schema": 3})
    (run / "crosscheck" / "crosscheck.json").write_text(finished)
    completed = cli_run("crosscheck", "--points", "smoke", "--run", str(run))
    assert completed.returncode == 0
    assert "already done" in completed.stdout
    assert (run / "crosscheck" / "crosscheck.json").read_text() == finished
    other = cli_run("crosscheck", "--points", "default", "--run", str(run))
    assert other.returncode == 2
    assert "points = 'smoke'" in other.stderr


def test_report_of_your_run_goes_into_the_run_and_leaves_the_committed_report_alone(own_runs, tmp_path, capsys):
    committed = (PAPER / "REPORT.md").read_bytes()
    run = runs.current_run(machine_record())
    (tmp_path / "no-references").mkdir()
    assert cli.main(["report", "--reference", str(tmp_path / "no-references")]) == 0
    assert (run / "REPORT.md").is_file()
    assert (run / "mirror_diff.html").is_file()
    out = capsys.readouterr().out
    summary = out[:out.index("wrote ")].strip().splitlines()  # the short answer ends before the files written
    assert summary[0].startswith(f"Your run {run.name}: ")
    assert any(line.strip().startswith("C3 ") for line in summary)
    assert summary[-1].startswith(f"Report: {run / 'REPORT.md'}")
    assert len(summary) <= 15
    assert "**" not in "".join(summary)
    assert (PAPER / "REPORT.md").read_bytes() == committed


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["report", "--run", "/no/such/run"], "--run /no/such/run: not a run folder"),
        (["figures", "--reference", "/no/such/folder"], "--reference /no/such/folder: no such folder"),
        (["sweep", "--run", "x", "--new-run"], "--run"),
        (["sweep", "--results", "x", "--run", "y"], "--results"),
    ],
)
def test_bad_run_options_are_one_line_errors(args, message):
    completed = cli_run(*args)
    assert completed.returncode == 2
    assert message in completed.stderr
    assert "Traceback" not in completed.stderr


def test_a_contributed_run_becomes_a_new_reference_run_with_its_records_only(tmp_path):
    run = runs.create_run(tmp_path / "runs" / "2026-11-30_lab-7_xeon-32c", machine_record())
    point = (paths.REFERENCE / "2026-12-01_vm_xeon-2c" / "sweep-quick" / "points.jsonl").read_text()
    (run / "sweep-smoke").mkdir()
    (run / "sweep-smoke" / "points.jsonl").write_text(point.splitlines(keepends=True)[0])  # a valid record
    session = (paths.REFERENCE / "2026-12-01_vm_xeon-2c" / "sweep-quick" / "runs.jsonl").read_text()
    (run / "sweep-smoke" / "runs.jsonl").write_text(session.splitlines(keepends=True)[0])  # a valid session record
    fit = (paths.REFERENCE / "2026-12-01_vm_xeon-2c" / "retrieval-quick" / "points.jsonl").read_text()
    (run / "retrieval-smoke").mkdir()
    (run / "retrieval-smoke" / "points.jsonl").write_text(fit.splitlines(keepends=True)[0])  # a retrieval's record
    (run / "REPORT.md").write_text("rendered")
    (run / "figures").mkdir()
    reference = tmp_path / "reference"
    target = contribute(run, "A lab machine: smoke sweep.", reference)
    assert target == reference / run.name
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == [
        "retrieval-smoke/points.jsonl", "run.json", "sweep-smoke/points.jsonl", "sweep-smoke/runs.jsonl"]
    assert runs.read_run(target)["note"] == "A lab machine: smoke sweep."
    assert runs.reference_runs(reference) == [target]
    with pytest.raises(runs.RunError, match="never overwritten"):
        contribute(run, "again", reference)
    with pytest.raises(runs.RunError, match="--note"):
        contribute(run, " ", tmp_path / "elsewhere")


FORGED_NOTE = ("ok\n\n| Claim | verdict |\n| --- | --- |\n| C3 | **reproduced 100x** |\n\n<script>alert(1)</script> "
               "[a link](http://example.org) # heading")


def test_a_note_carrying_markdown_and_html_is_rendered_as_text(tmp_path):
    run = runs.create_run(tmp_path / "runs" / "2026-11-30_lab-7", machine_record())
    reference = tmp_path / "reference"
    target = contribute(run, FORGED_NOTE, reference)
    texts = render_all([], reference, output=tmp_path / "out", figures=tmp_path / "out" / "figures")
    appendix = texts[f"runs/{target.name}.md"]
    note_line = next(line for line in appendix.splitlines() if line.startswith("ok "))
    assert "\\| C3 \\| \\*\\*reproduced 100x\\*\\* \\|" in note_line  # one line of text, every marker escaped
    assert "&lt;script&gt;" in note_line
    assert "\\[a link\\]" in note_line
    for text in texts.values():
        assert "| C3 | **reproduced 100x** |" not in text
        assert "<script>" not in text


@pytest.mark.parametrize("name", [".hidden", "a|b", "x`y", "with space", "br<br>"])
def test_a_run_name_outside_its_character_set_is_refused(tmp_path, name):
    with pytest.raises(runs.RunError, match="a run's name uses"):
        runs.create_run(tmp_path / name, machine_record())
    assert not (tmp_path / name).exists()


def test_a_machine_name_carrying_markup_is_refused_in_one_line(tmp_path):
    run = runs.create_run(tmp_path / "2026-11-30_lab-7", machine_record())
    info = json.loads((run / "run.json").read_text())
    info["machine"]["gpu"] = "GPU | **fast** <b>"
    (run / "run.json").write_text(json.dumps(info))
    with pytest.raises(runs.RunError, match=r"'machine\.gpu': letters, digits"):
        runs.read_run(run)
    assert runs.machine_text("Intel(R) Xeon(R) CPU @ 2.20GHz | <x> _y_") == "Intel(R) Xeon(R) CPU @ 2.20GHz x y"


def damaged_json(relative, change):
    """A damage of a JSON file of the run: change(content) edits it in place."""
    def damage(run):
        path = run / relative
        content = json.loads(path.read_text())
        change(content)
        path.write_text(json.dumps(content))
    return damage


def damaged_line(relative, change):
    """A damage of the first record of a JSON-lines file of the run."""
    def damage(run):
        path = run / relative
        lines = path.read_text().splitlines()
        record = json.loads(lines[0])
        change(record)
        path.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    return damage


DAMAGES = {
    "crosscheck without compare": ("2026-12-01_vm_xeon-2c", damaged_json(
        "crosscheck/crosscheck.json", lambda c: c["checks"][0].pop("compare"))),
    "bench row without times": ("2026-12-01_vm_xeon-2c", damaged_json(
        "bench/bench.json", lambda c: c["rows"][0].update(ms=None))),
    "peers check without rows": ("2026-12-01_vm_xeon-2c", damaged_json(
        "peers/check.json", lambda c: c.pop("rows"))),
    "point with a text size": ("2026-12-01_vm_xeon-2c", damaged_line(
        "sweep-quick/points.jsonl", lambda r: r.update(npix="x"))),
    "point with a text tol": ("2026-12-01_vm_xeon-2c", damaged_line(
        "sweep-quick/points.jsonl", lambda r: r.update(tol="x"))),
    "session without cpu": ("2026-12-01_vm_xeon-2c", damaged_line(
        "sweep-quick/runs.jsonl", lambda r: r.pop("cpu"))),
    "retrieval without rms": ("2026-12-01_vm_xeon-2c", damaged_line(
        "retrieval-quick/points.jsonl", lambda r: r.pop("rms"))),
    "settings not JSON": ("2026-12-01_vm_xeon-2c", lambda run: (run / "sweep-quick" / "settings.json").write_text(
        "{not json")),
    "optimum without x": ("2026-12-05_vm_amd-epyc-2c-4", damaged_line(
        "sweep-quick/optima.jsonl", lambda r: r.pop("x"))),
    "real-maps stage without fits": ("2026-12-06_vm_amd-epyc-2c_real-maps", damaged_line(
        "real-maps/stages.jsonl", lambda r: r.pop("fits"))),
    "pyoof fit without cost": ("2026-12-06_vm_amd-epyc-2c_real-maps", damaged_line(
        "pyoof/pyoof.jsonl", lambda r: r.pop("cost"))),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_contribute_refuses_a_damaged_record_of_every_kind(tmp_path, damage):
    name, change = DAMAGES[damage]
    run = tmp_path / "runs" / name
    shutil.copytree(REFERENCE / name, run)
    change(run)
    with pytest.raises(runs.RunError):
        contribute(run, "a damaged run", tmp_path / "reference")
    assert not (tmp_path / "reference" / name).exists()


@pytest.mark.parametrize("where", ["paper", "figures"])
def test_a_writer_aimed_into_the_committed_report_is_refused_and_creates_nothing(where):
    before = sorted(p.relative_to(ROOT) for p in (ROOT / where).rglob("*"))
    for option in ("--run", "--results"):
        completed = run_command("crosscheck", "--points", "smoke", option, ROOT / where / "mine")
        assert completed.returncode == 2
        assert "committed report or figures" in completed.stderr
    assert sorted(p.relative_to(ROOT) for p in (ROOT / where).rglob("*")) == before


def test_a_run_is_not_made_in_a_folder_of_unrelated_files(tmp_path):
    folder = tmp_path / "2026-11-30_lab"
    folder.mkdir()
    (folder / "thesis.tex").write_text("mine")
    with pytest.raises(runs.RunError, match="holds files but is not a run"):
        runs.create_run(folder, machine_record())
    assert sorted(p.name for p in folder.iterdir()) == ["thesis.tex"]


def test_a_sweep_of_only_unavailable_implementations_says_so_and_makes_no_folder(tmp_path):
    unavailable = next((name for name in registry.names() if registry.get(name).why_unavailable()), None)
    if unavailable is None:
        pytest.skip("every registered implementation runs on this machine")
    completed = run_command("sweep", "--profile", "smoke", "--impl", unavailable, "--run", tmp_path / "2026-12-03_x")
    assert completed.returncode == 0
    assert "nothing to measure" in completed.stdout
    assert not (tmp_path / "2026-12-03_x").exists()


def test_a_run_named_twice_is_shown_once(tmp_path):
    run = runs.create_run(tmp_path / "2026-11-30_lab-7", machine_record())
    completed = run_command("report", "--run", run, "--run", run, "--output", tmp_path / "out")
    assert completed.returncode == 0
    assert [p.name for p in (tmp_path / "out" / "runs").iterdir() if p.name.startswith("your-")] == [
        "your-2026-11-30_lab-7.md"]
    header = next(line for line in (tmp_path / "out" / "DETAILS.md").read_text().splitlines()
                  if line.startswith("| Claim |"))
    assert header.count("runs/your-2026-11-30_lab-7.md") == 1  # one column, not two


def test_the_crosscheck_help_names_the_points_it_checks():
    from replication.studies.crosscheck.measure import POINTS

    completed = run_command("crosscheck", "--help")
    assert f"smoke: {POINTS['smoke'][0]}" in " ".join(completed.stdout.split())


def optima_lines(folder):
    return [json.loads(line) for line in (folder / "optima.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("damage", ["another point's", "of another size"])
def test_a_recorded_optimum_that_is_not_its_points_is_refused_naming_the_file(tmp_path, damage):
    folder = tmp_path / "sweep-smoke"
    settings = SweepSettings("smoke", impls=("numpy",), threads=1)
    sweep.run_sweep(settings, folder, quiet=True, points={(16, 2), (32, 2)})
    first, second = optima_lines(folder)
    if damage == "another point's":  # each line under the other's key: same size, other data
        keys = ("npix", "data_sha256")
        first, second = first | {k: second[k] for k in keys}, second | {k: first[k] for k in keys}
    else:  # consistent in itself (the reader's checks pass), one parameter short of its point's
        first |= {"x": first["x"][:-1], "stderr": first["stderr"][:-1],
                  "covariance": [row[:-1] for row in first["covariance"][:-1]]}
    (folder / "optima.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (first, second)))
    (folder / "points.jsonl").unlink()  # the points measured again, each with its recorded optimum
    with pytest.raises(runs.RunError, match=r"optima\.jsonl: the optimum recorded for npix"):
        sweep.run_sweep(settings, folder, quiet=True, points={(16, 2), (32, 2)})


def test_a_bench_with_one_point_too_large_measures_none_of_them(tmp_path):
    completed = run_command("bench", "--npix", "16", "8192", "--nzern", "2", "--threads", "1", "--repeats", "1",
                            "--results", tmp_path / "bench")
    assert completed.returncode == 2
    assert "npix=8192" in completed.stderr
    assert completed.stdout == ""
    assert not (tmp_path / "bench").exists()


def test_figures_and_report_with_the_same_output_agree_on_where_the_figures_are(tmp_path):
    reference = tmp_path / "reference"
    real_maps = "2026-12-06_vm_amd-epyc-2c_real-maps"
    shutil.copytree(REFERENCE / real_maps, reference / real_maps)
    options = ("--reference", reference, "--reference-only", "--output", tmp_path / "out")
    before = run_command("report", *options)
    assert before.returncode == 0
    assert "not drawn under" in before.stdout  # said, not left as broken links
    assert run_command("figures", *options).returncode == 0
    after = run_command("report", *options)
    assert after.returncode == 0
    assert "not drawn under" not in after.stdout
    assert (tmp_path / "out" / "figures" / "fig9_real_maps_surface.png").is_file()


def test_a_report_of_a_run_being_written_says_so(tmp_path):
    run = runs.create_run(tmp_path / "2026-11-30_lab-7", machine_record())
    with runs.exclusive(run):
        completed = run_command("report", "--run", run, "--output", tmp_path / "out")
    assert completed.returncode == 0
    assert "being written now (pid" in completed.stdout
    assert runs.writer_of(run) is None
    quiet = run_command("report", "--run", run, "--output", tmp_path / "out")
    assert "being written" not in quiet.stdout

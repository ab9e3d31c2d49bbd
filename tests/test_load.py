"""The load of other processes recorded with each timed point, and a run measured on a busy machine said so."""

import re
import subprocess
import sys
import time

import pytest

from replication.core import load
from replication.core.environment import machine_record
from replication.core.fit_records import Load
from replication.core.load import LOADED_CORES, load_summary, watching_load
from replication.core.paths import REFERENCE

pytestmark = pytest.mark.skipif(load.cpu_seconds() is None, reason="/proc/stat is Linux's")


SPINNER = "import time\nend = time.perf_counter() + 1.5\nwhile time.perf_counter() < end:\n    pass"
"""Another process keeping one core busy for 1.5 s."""


def spin(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_another_process_spinning_is_counted_and_our_own_work_is_not():
    with watching_load() as own:
        spin(0.6)
    other = subprocess.Popen([sys.executable, "-c", SPINNER])
    time.sleep(0.2)  # its interpreter starts
    with watching_load() as busy:
        time.sleep(0.8)
    other.wait()
    assert own["others_busy_cores"] < busy["others_busy_cores"]
    assert busy["others_busy_cores"] > LOADED_CORES
    assert own["load_1min"] is not None


def test_the_summary_counts_the_loaded_points_and_ignores_unrecorded_ones():
    summary = load_summary([None, Load(load_1min=1.0, others_busy_cores=0.1),
                            Load(load_1min=2.0, others_busy_cores=1.4), Load(load_1min=None, others_busy_cores=None)])
    assert (summary.recorded, summary.judged, summary.loaded_count, summary.loaded) == (2, 2, 1, True)
    assert (summary.median, summary.largest) == (pytest.approx(0.75), 1.4)
    assert not load_summary([]).loaded


def test_a_reading_too_short_to_tell_is_recorded_but_never_judges_the_machine():
    """/proc/stat counts in 10 ms ticks: a point of 50 ms on a quiet machine can read a busy core. Such a reading
    (shorter than MIN_WINDOW_S) is kept and counted as recorded, never as loaded; a point recorded before readings
    kept their window is judged by its fits' total seconds, a lower bound of it."""
    import msgspec

    from replication.studies.sweep.records import read_points

    short = Load(load_1min=0.1, others_busy_cores=0.96, seconds=0.05)
    long = Load(load_1min=0.1, others_busy_cores=0.02, seconds=12.0)
    summary = load_summary([short, long])
    assert (summary.recorded, summary.judged, summary.loaded, summary.largest) == (2, 1, False, 0.02)
    assert load_summary([msgspec.structs.replace(short, seconds=load.MIN_WINDOW_S)]).loaded
    first = read_points(REFERENCE / "2026-12-05_vm_amd-epyc-2c-3" / "sweep-quick" / "points.jsonl")[0]
    old = msgspec.structs.replace(first, load=Load(load_1min=0.1, others_busy_cores=0.9),
                                  total_s=msgspec.structs.replace(first.total_s, all=[0.02, 0.03]))
    assert load.point_load(old).seconds == pytest.approx(0.05)
    assert not load_summary([load.point_load(old)]).loaded
    with watching_load() as reading:
        time.sleep(0.05)
    assert reading["seconds"] == pytest.approx(0.05, abs=0.04)


def test_a_run_measured_on_a_loaded_machine_says_so_in_its_appendix_and_on_the_first_screen(tmp_path, monkeypatch):
    from replication.core import runs
    from replication.core.profiles import Profile, SweepSettings
    from replication.report.render import render_all
    from replication.studies.sweep import measure as sweep

    busy = iter([(0.0, 0.0), (1e6, 1.0)] * 100)  # others busy for 1e6 CPU seconds while the point was measured
    monkeypatch.setattr(load, "cpu_seconds", lambda: next(busy))
    monkeypatch.setattr(load, "MIN_WINDOW_S", 0.0)  # the tiny point lasts less than a reading needs
    monkeypatch.setitem(sweep.PROFILES, "smoke", Profile(npix=(128,), nzern=(2,), repeats=1, budget_s=30.0))
    run = runs.create_run(tmp_path / "run", machine_record())
    sweep.run_sweep(SweepSettings("smoke", impls=("numpy", "torch-cpu"), threads=1), run / "sweep-smoke", quiet=True)
    (tmp_path / "reference").mkdir()
    texts = render_all([run], tmp_path / "reference", output=run, figures=run / "figures")
    said = re.search(r"\*\*measured on a loaded machine\*\*: at (\d+) of the (\d+) points", texts["runs/your-run.md"])
    assert said is not None
    assert said.group(1) == said.group(2)  # every point of the sweep
    assert "Measured on a loaded machine" in texts["REPORT.md"]
    screen = texts["REPORT.md"][:texts["REPORT.md"].index("Every verdict of every run")]
    c3 = next(line for line in screen.splitlines() if line.startswith("| C3 | "))
    assert c3.endswith("(loaded machine) |")  # a timing verdict: the load said beside it, not only in the caveats
    assert "Your run (" in screen



def test_a_busy_machine_is_warned_of_before_measuring_with_more_threads_than_are_free(monkeypatch):
    readings = iter([(0.0, 0.0), (3.0, 0.0)])  # others kept 3 CPU seconds busy over the window
    monkeypatch.setattr(load, "cpu_seconds", lambda: next(readings))
    monkeypatch.setattr(load.os, "cpu_count", lambda: 2)
    warning = load.contention_warning(2, window_s=1.0)
    assert warning.startswith("warning: other processes keep")
    assert "--threads 1" in warning
    assert load.contention_warning(1, window_s=0.01) is None  # one thread: nothing to warn of


def test_free_cores_count_a_core_taken_from_half_of_it_busy():
    assert [load.free_cores(others, 2) for others in (None, 0.0, 0.49, 0.5, 1.2, 1.5, 7.0)] == [2, 2, 2, 1, 1, 1, 1]
    assert load.free_cores(2.6, 16) == 13


def test_a_measuring_command_measures_with_the_cores_others_leave_free_and_records_why(tmp_path, monkeypatch,
                                                                                         capsys):
    from replication.core import environment, measurement
    from replication.core.results import write_json

    monkeypatch.setattr(measurement, "cores", lambda: 2)
    monkeypatch.setattr(measurement, "default_threads", lambda: 2)
    monkeypatch.setattr(measurement.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(measurement, "others_busy_now", lambda: 0.9)  # another process holds a core
    busy = measurement.chosen_threads(None, tmp_path)
    assert (busy, busy.chosen_by, busy.others_busy_cores) == (1, "free cores", 0.9)
    assert "threads: 1 (other processes keep 0.9 cores busy; --threads 2 overrides)" in capsys.readouterr().out
    record = environment.environment_record(busy)
    assert (record["threads"], record["threads_chosen_by"], record["others_busy_cores_at_start"]) == (
        1, "free cores", 0.9)
    assert type(record["threads"]) is int

    monkeypatch.setattr(measurement, "others_busy_now", lambda: 0.1)
    quiet = measurement.chosen_threads(None, tmp_path)
    assert (quiet, quiet.chosen_by) == (2, "free cores")
    given = measurement.chosen_threads(2, tmp_path)  # --threads overrides, however busy
    assert (given, given.chosen_by) == (2, "--threads")
    write_json(tmp_path / measurement.SETTINGS_FILE, {"threads": 1})  # a run begun on one thread resumes on one
    monkeypatch.setattr(measurement, "others_busy_now", lambda: 0.0)
    resumed = measurement.chosen_threads(None, tmp_path)
    assert (resumed, resumed.chosen_by) == (1, "resumed")


def test_a_sweep_command_on_a_busy_machine_measures_on_the_free_core_and_its_appendix_says_so(tmp_path, monkeypatch):
    from replication import cli
    from replication.core import measurement, runs
    from replication.core.profiles import Profile
    from replication.core.records import read_run_records
    from replication.report.render import render_all
    from replication.studies.sweep import measure as sweep

    monkeypatch.setattr(measurement, "cores", lambda: 2)
    monkeypatch.setattr(measurement, "default_threads", lambda: 2)
    monkeypatch.setattr(measurement.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(measurement, "others_busy_now", lambda: 1.0)
    monkeypatch.setitem(sweep.PROFILES, "tiny", Profile(npix=(16,), nzern=(2,), repeats=1, budget_s=30.0))
    run = runs.create_run(tmp_path / "run", machine_record())
    assert cli.main(["sweep", "--profile", "tiny", "--impl", "numpy", "--run", str(run), "--quiet"]) == 0
    session, = read_run_records(run / "sweep-tiny" / "runs.jsonl")
    assert (session.threads, session.threads_chosen_by) == (1, "free cores")
    assert measurement.chosen_threads(None, run / "sweep-tiny").chosen_by == "resumed"  # its settings: 1 thread
    (tmp_path / "reference").mkdir()
    texts = render_all([run], tmp_path / "reference", output=run, figures=run / "figures")
    assert "1 thread(s) (chosen: other processes kept 1 cores busy at its start)" in texts["runs/your-run.md"]


def test_a_loaded_run_of_yours_says_so_beside_each_timing_verdict_not_only_among_the_caveats(tmp_path):
    """A run measured beside other work (the answering reference run, taken as yours, with each point's reading
    saying another process kept a core busy) gets no unqualified verdict from its load: the terminal's answer and
    each timed claim's cell say the machine was loaded."""
    import json
    import shutil

    from replication.core.paths import REFERENCE
    from replication.report.render import context, your_runs_summary

    run = tmp_path / "2026-12-03_mine"
    shutil.copytree(REFERENCE / "2026-12-05_vm_amd-epyc-2c-3", run)
    for path in run.glob("sweep-*/points.jsonl"):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for record in records:
            if record.get("load"):
                record["load"] |= {"others_busy_cores": 1.0, "seconds": 2.0}
        path.write_text("".join(json.dumps(record) + "\n" for record in records))
    (tmp_path / "reference").mkdir()
    values = context([run], tmp_path / "reference", output=run, figures=run / "figures")
    answer = your_runs_summary(values, run).splitlines()
    timed = [line for line in answer if line.strip().startswith(("C3 ", "C4 "))]
    assert len(timed) == 2
    assert all(line.endswith("(on a loaded machine: may read low)") for line in timed)
    assert not any("loaded" in line for line in answer if line.strip().startswith(("C5a", "C5b", "C6")))
    table = values.claim_tables[0]
    c3 = table["rows"][[row["id"] for row in table["rows"]].index("C3")]["cells"][0]
    assert any("measured on a loaded machine" in table["notes"][mark - 1] for mark in c3.notes)


def test_two_runs_are_compared_point_by_point_and_a_run_against_itself_reads_one(capsys):
    """The comparison a run beside a busy core is read with (docs/replicate.md): a run against itself gives 1.00x at
    every torch point of its sweeps at npix 256; a missing folder is refused in one line, exit status 2."""
    from replication.core.paths import REFERENCE
    from replication.studies.sweep import compare

    run = REFERENCE / "2026-12-05_vm_amd-epyc-2c-3"
    ratios = compare.time_ratios(run, run, 256)
    assert set(ratios) == {"sweep-quick", "sweep-quick-gaussian"}
    assert all(value == 1.0 for found in ratios.values() for value in found.values())
    assert sum(len(found) for found in ratios.values()) > 20
    assert compare.main([str(run), str(run)]) == 0
    assert "median 1.00x" in capsys.readouterr().out
    assert compare.main([str(run), str(run / "nope")]) == 2
    assert capsys.readouterr().err.count("\n") == 1

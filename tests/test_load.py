"""The load of other processes recorded with each timed point, and a run measured on a busy machine said so."""

import subprocess
import sys
import time

import pytest

from replication.core import load
from replication.core.environment import machine_record
from replication.core.load import LOADED_CORES, load_summary, watching_load

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
    summary = load_summary([None, {"load_1min": 1.0, "others_busy_cores": 0.1},
                            {"load_1min": 2.0, "others_busy_cores": 1.4},
                            {"load_1min": None, "others_busy_cores": None}])
    assert summary == {"recorded": 2, "loaded_count": 1, "loaded": True, "median": pytest.approx(0.75),
                       "largest": 1.4}
    assert not load_summary([])["loaded"]


def test_a_run_measured_on_a_loaded_machine_says_so_in_its_appendix_and_on_the_first_screen(tmp_path, monkeypatch):
    from replication.core import runs
    from replication.core.profiles import Profile, SweepSettings
    from replication.report.render import render_all
    from replication.studies.sweep import measure as sweep

    busy = iter([(0.0, 0.0), (1e6, 1.0)] * 100)  # others busy for 1e6 CPU seconds while the point was measured
    monkeypatch.setattr(load, "cpu_seconds", lambda: next(busy))
    monkeypatch.setitem(sweep.PROFILES, "tiny", Profile(npix=(16,), nzern=(2,), repeats=1, budget_s=30.0))
    run = runs.create_run(tmp_path / "run", machine_record())
    sweep.run_sweep(SweepSettings("tiny", impls=("numpy",), threads=1), run / "sweep-tiny", quiet=True)
    (tmp_path / "reference").mkdir()
    texts = render_all([run], tmp_path / "reference", output=run, figures=run / "figures")
    assert "**measured on a loaded machine**: at 1 of 1 points" in texts["runs/your-run.md"]
    assert "Measured on a loaded machine" in texts["REPORT.md"]


def test_a_busy_machine_is_warned_of_before_measuring_with_more_threads_than_are_free(monkeypatch):
    readings = iter([(0.0, 0.0), (3.0, 0.0)])  # others kept 3 CPU seconds busy over the window
    monkeypatch.setattr(load, "cpu_seconds", lambda: next(readings))
    monkeypatch.setattr(load.os, "cpu_count", lambda: 2)
    warning = load.contention_warning(2, window_s=1.0)
    assert warning.startswith("warning: other processes keep")
    assert "--threads 1" in warning
    assert load.contention_warning(1, window_s=0.01) is None  # one thread: nothing to warn of

"""One writer discipline for every file the harness writes: through a temporary file beside the target, renamed over
it (never written in place), refusing a target that is a link, a FIFO, a device, a folder or a file with another
hard link, leaving the previous file intact where a write fails (a full disk)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import run_command

from replication.core import plotting
from replication.core.paths import ROOT
from replication.core.results import (
    RunError,
    append_record,
    atomic_stream,
    write_atomically,
    write_json,
    write_text_if_changed,
    writing_into,
)


def savez(path):
    with atomic_stream(path) as stream:
        np.savez(stream, x=np.zeros(2))


def savefig(path):
    figure, axis = plotting.subplots()
    axis.plot([0, 1])
    plotting.save(figure, path.parent, path.name.removesuffix(".png"))


WRITERS = {
    "write_json": lambda path: write_json(path, {"a": 1}),
    "write_atomically": lambda path: write_atomically(path, b"new"),
    "append_record": lambda path: append_record(path, {"a": 1}),
    "write_text_if_changed": lambda path: write_text_if_changed(path, "new\n"),
    "atomic_stream (savez)": savez,
    "plotting.save": savefig,
}


@pytest.mark.parametrize("writer", WRITERS)
def test_a_hard_link_is_refused_by_every_writer_and_nothing_changes(tmp_path, writer):
    (tmp_path / "elsewhere").mkdir()
    original = tmp_path / "elsewhere" / "theirs.png"
    original.write_text("theirs\n")
    own = tmp_path / "run" / "ours.png"
    own.parent.mkdir()
    os.link(original, own)
    with writing_into(tmp_path / "run"), pytest.raises(RunError, match="hard links"):
        WRITERS[writer](own)
    assert original.read_text() == "theirs\n"
    assert sorted(p.name for p in own.parent.iterdir()) == ["ours.png"]  # no temporary file left


@pytest.mark.parametrize("writer", WRITERS)
def test_a_fifo_is_refused_by_every_writer_and_stays_a_fifo(tmp_path, writer):
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    with writing_into(tmp_path), pytest.raises(RunError, match="not a regular file"):
        WRITERS[writer](fifo)
    assert fifo.is_fifo()


def test_simulate_refuses_a_fifo_as_its_output_in_one_line(tmp_path):
    fifo = tmp_path / "out.npz"
    os.mkfifo(fifo)
    completed = run_command("simulate", "--npix", "16", "--nzern", "2", "--output", fifo)
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1
    assert "not a regular file" in completed.stderr
    assert fifo.is_fifo()


FULL_DISK = """
import resource, signal, sys, pathlib
from replication.core.results import write_text_if_changed, writing_into
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
path = pathlib.Path(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # as a disk that fills after 4 kB
with writing_into(path.parent):
    try:
        write_text_if_changed(path, "x" * 100_000)
    except OSError as error:
        print(type(error).__name__)
"""


def test_a_full_disk_while_the_report_is_written_leaves_the_previous_file_intact(tmp_path):
    report = tmp_path / "REPORT.md"
    report.write_text("the previous report\n")
    completed = subprocess.run([sys.executable, "-c", FULL_DISK, str(report)], cwd=ROOT, capture_output=True,
                               text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "OSError"
    assert report.read_text() == "the previous report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["REPORT.md"]


def test_appending_a_record_rewrites_through_a_temporary_file(tmp_path):
    path = tmp_path / "points.jsonl"
    with writing_into(tmp_path):
        append_record(path, {"a": 1})
        inode = path.stat().st_ino
        append_record(path, {"a": 2})
    assert [json.loads(line) for line in path.read_text().splitlines()] == [{"a": 1}, {"a": 2}]
    assert path.stat().st_ino != inode  # renamed over, never written in place

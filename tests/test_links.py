"""No link, loop, duplicate or oversized option gets past a writer or a reader: each is one line (exit 2) naming
it, and no committed file changes."""

import json
import shutil

import pytest
from conftest import run_command
from test_read_only import A_REFERENCE

from replication import cli
from replication.core import runs
from replication.core.environment import machine_record
from replication.core.paths import REFERENCE
from replication.core.results import links_inside

POINTS = "sweep-quick/points.jsonl"


@pytest.fixture
def refused(capsys):
    """Run the command line in this process; assert it refused in one line (exit 2) holding every word."""
    def check(arguments, *words):
        assert cli.main([str(argument) for argument in arguments]) == 2
        error = capsys.readouterr().err.strip()
        assert error.count("\n") == 0, error
        for word in words:
            assert word in error, error
    return check


@pytest.fixture
def run(tmp_path):
    """An empty run folder of this machine."""
    return runs.create_run(tmp_path / "2026-01-05_links", machine_record())


@pytest.fixture
def copied(tmp_path):
    """A copy of a reference run, as your own run."""
    folder = tmp_path / "2026-01-07_copy"
    shutil.copytree(A_REFERENCE, folder, ignore=shutil.ignore_patterns("trajectories"))
    return folder


@pytest.mark.usefixtures("untouched")
def test_a_points_file_linked_to_a_reference_run_is_refused_by_the_sweep(run, refused):
    (run / "sweep-smoke").mkdir()
    (run / "sweep-smoke" / "points.jsonl").symlink_to(A_REFERENCE / POINTS)
    refused(["sweep", "--profile", "smoke", "--impl", "numpy", "--run", str(run), "--quiet"],
                   "points.jsonl: a link inside")


@pytest.mark.usefixtures("untouched")
def test_a_sweep_folder_linked_elsewhere_is_refused(run, tmp_path, refused):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run / "sweep-smoke").symlink_to(elsewhere, target_is_directory=True)
    refused(["sweep", "--profile", "smoke", "--impl", "numpy", "--run", str(run), "--quiet"],
                   "sweep-smoke: a link inside")
    assert list(elsewhere.iterdir()) == []


@pytest.mark.usefixtures("untouched")
def test_a_run_folder_that_is_a_link_to_a_reference_run_is_refused(tmp_path, refused):
    link = tmp_path / "2026-01-06_link"
    link.symlink_to(A_REFERENCE, target_is_directory=True)
    for arguments in (["sweep", "--profile", "smoke", "--impl", "numpy", "--run", str(link), "--quiet"],
                      ["report", "--run", str(link)], ["crosscheck", "--points", "smoke", "--run", str(link)]):
        refused([*arguments], "read-only")


@pytest.mark.usefixtures("untouched")
def test_a_report_file_linked_to_a_reference_file_is_refused(copied, refused):
    (copied / "REPORT.md").symlink_to(A_REFERENCE / "sweep-quick" / "settings.json")
    refused(["report", "--run", str(copied)], "REPORT.md: a link inside")


@pytest.mark.usefixtures("untouched")
def test_contribute_refuses_a_folder_linked_outside_the_run(copied, tmp_path, refused):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "crosscheck.json").write_text(json.dumps({"checks": [], "environment": {}}))
    shutil.rmtree(copied / "crosscheck")
    (copied / "crosscheck").symlink_to(outside, target_is_directory=True)
    before = sorted(path.name for path in REFERENCE.iterdir())
    refused(["contribute", "--run", str(copied), "--note", "a test"], "crosscheck: a link inside")
    assert sorted(path.name for path in REFERENCE.iterdir()) == before


@pytest.mark.usefixtures("untouched")
def test_a_link_loop_is_one_line_for_the_writer_and_the_reader(copied, refused):
    loop = copied / "sweep-quick" / "points.jsonl"
    loop.unlink()
    loop.symlink_to(loop)
    refused(["sweep", "--profile", "quick", "--impl", "numpy", "--run", str(copied), "--quiet"],
                   "points.jsonl: a link inside")
    refused(["report", "--run", str(copied)], "points.jsonl: a link inside")


@pytest.mark.usefixtures("untouched")
def test_a_point_recorded_twice_with_another_time_is_refused_naming_both_lines(copied, refused):
    path = copied / POINTS
    lines = path.read_text().splitlines()
    record = json.loads(lines[4])
    record["total_s"]["median"] *= 100
    path.write_text("\n".join([*lines, json.dumps(record)]) + "\n")
    for arguments in (["report", "--run", str(copied)], ["contribute", "--run", str(copied), "--note", "a test"]):
        refused([*arguments], f"lines 5 and {len(lines) + 1} hold two different records")


@pytest.mark.usefixtures("untouched")
def test_a_point_recorded_twice_alike_renders_but_is_not_contributed(copied, tmp_path, refused):
    path = copied / POINTS
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, lines[4]]) + "\n")
    assert cli.main(["report", "--run", str(copied), "--output", str(tmp_path / "out")]) == 0
    refused(["contribute", "--run", str(copied), "--note", "a test"],
                   f"lines 5 and {len(lines) + 1} hold the same record twice")


def test_a_huge_shard_count_is_refused_before_anything_is_allocated(tmp_path, refused):
    refused(["sweep", "--profile", "smoke", "--shards", "99999999999999999999", "--run", tmp_path / "r"],
            "--shards 99999999999999999999", "at most")
    assert not (tmp_path / "r").exists()


def test_a_sharded_sweep_never_joins_a_run_holding_the_plain_sweep(run, refused):
    (run / "sweep-smoke").mkdir()
    (run / "sweep-smoke" / "points.jsonl").write_text("")
    refused(["sweep", "--profile", "smoke", "--shards", "2", "--run", str(run)],
                   "holds the plain (unsharded) sweep-smoke")


@pytest.mark.usefixtures("untouched")
@pytest.mark.parametrize(("content", "words"), [
    ({"checks": [{}], "environment": {}}, ["checks item 1 has no key 'check'"]),
    ({"environment": {}}, ["record 1 has no key 'checks'"]),
    ({"checks": [], "environment": {}, "fits": [{"impl": "numpy"}]}, ["fits item 1 has no key 'nit'"]),
    ({"checks": [], "environment": {}, "schema": 3, "fits": [{"impl": "cupy", "npix": 8, "nzern": 2, "x": [],
      "fun": 1.0, "nit": 1, "nfev": 1, "success": True, "message": "", "dtype": "float64", "variant": "",
      "minimizer": "scipy"}]}, ["fits item 1: names no known series ('cupy')"]),
])
def test_a_cross_check_the_schema_refuses_is_one_line(copied, content, words, refused):
    recorded = json.loads((copied / "crosscheck" / "crosscheck.json").read_text())["environment"]
    content = content | {"environment": recorded}  # a whole environment: the damage is elsewhere
    (copied / "crosscheck" / "crosscheck.json").write_text(json.dumps(content))
    refused(["report", "--run", str(copied)], *words)
    refused(["report", "--reference", str(copied.parent), "--reference-only", "--output",
                       str(copied.parent / "out")], *words)


def test_the_reference_runs_hold_no_link():
    assert links_inside(REFERENCE) == []


@pytest.mark.usefixtures("untouched")
@pytest.mark.parametrize("arguments", [
    ["sweep", "--profile", "smoke", "--impl", "numpy", "--quiet", "--run"],
    ["sweep", "--profile", "smoke", "--impl", "numpy", "--quiet", "--results"],
    ["crosscheck", "--points", "smoke", "--run"],
    ["bench", "--npix", "16", "--nzern", "2", "--run"],
    ["retrieve", "--profile", "smoke", "--quiet", "--run"],
    ["report", "--output"],
    ["figures", "--output"],
    ["simulate", "--output"],
])
def test_a_reference_run_reached_through_dot_dot_is_refused(arguments, refused, tmp_path):
    detour = REFERENCE.parent / "runs" / ".." / "reference" / A_REFERENCE.name
    target = detour / ("crosscheck/example.npz" if arguments[0] == "simulate" else "")
    extra = ["--reference-only"] if arguments[0] in ("report", "figures") else []
    refused([*arguments, str(target), *extra], "read-only")


@pytest.mark.parametrize("command", [("report", "--output"), ("figures", "--output"), ("sweep", "--run"),
                                     ("crosscheck", "--results"), ("simulate", "--output")])
def test_a_link_loop_is_refused_in_one_line_by_every_command(tmp_path, command):
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "a").symlink_to(tmp_path / "b")
    name, option = command
    completed = run_command(name, option, tmp_path / "a" / "x")
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1
    assert "cannot be followed" in completed.stderr


@pytest.mark.parametrize("command", ["report", "figures"])
@pytest.mark.parametrize("what", ["file", "link to a folder"])
def test_an_output_that_is_not_a_folder_is_refused_in_one_line_naming_it(copied, refused, tmp_path, command, what):
    output = tmp_path / "out"
    if what == "file":
        output.write_text("a user's file\n")
    else:
        (tmp_path / "elsewhere").mkdir()
        output.symlink_to(tmp_path / "elsewhere")
    refused([command, "--run", copied, "--output", output], f"--output {output}: not a folder")
    if what == "file":
        assert output.read_text() == "a user's file\n"
    else:
        assert not list((tmp_path / "elsewhere").iterdir())

"""Damaged records, made by a seeded generator from copies of the committed reference runs: every reader renders
the run or refuses it with a RunError (one line on the command line), never another exception, and no committed
file changes."""

import json
import random
import shutil

import numpy as np
import pytest
from conftest import run_command

from replication.core.paths import REFERENCE
from replication.core.records import load_json
from replication.core.results import RunError, read_records, writing_into
from replication.report.figures import draw_all
from replication.report.render import load_runs, render_all

RUNS = sorted(path for path in REFERENCE.iterdir() if (path / "crosscheck").is_dir())[-2:]
"""Two reference runs with a cross-check, sweeps, benches (and, for one, retrieval and peers' records)."""
KINDS = ("run.json", "sweep-*/points.jsonl", "sweep-*/runs.jsonl", "sweep-*/settings.json",
         "crosscheck/crosscheck.json", "bench*/bench.json", "retrieval-*/points.jsonl", "peers/check.json")
DAMAGES_PER_FILE = 5
ODD_VALUES = (None, "", "text", "é\u202e\U0001f600", -1, 0, 1e308, float("nan"), float("inf"), [], {}, [None], True,
              {"median": None})


def record_files(run):
    """The record files of a run, one of each name per kind (the first in name order)."""
    return [sorted(run.glob(kind))[0] for kind in KINDS if list(run.glob(kind))]


def values_in(node, path=()):
    """Every (path, value) inside a JSON value, depth first."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from values_in(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from values_in(value, (*path, index))


def replaced(node, path, value, drop=False):
    """A copy of a JSON value with the value at path replaced (or, where drop, removed)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    copy = dict(node) if isinstance(node, dict) else list(node)
    if drop and not rest:
        del copy[head]
        return copy
    copy[head] = replaced(node[head], rest, value, drop)
    return copy


def damage_json(text, rng):
    """One damage of one JSON document: a value replaced by an odd one, a key dropped, or the text cut."""
    how = rng.choice(("replace", "drop", "cut"))
    if how == "cut":
        return text[: rng.randrange(len(text))]
    content = json.loads(text)
    places = [path for path, _ in values_in(content) if path]
    if not places:
        return text[: len(text) // 2]
    path = rng.choice(places)
    if how == "drop":
        return json.dumps(replaced(content, path, None, drop=True))
    return json.dumps(replaced(content, path, rng.choice(ODD_VALUES)))


def damage(path, rng):
    """Damage one file in place: a JSON file as a whole, a JSON-lines file one of its lines (or a line repeated
    with another value, or the file cut)."""
    text = path.read_text()
    if path.suffix == ".json":
        path.write_text(damage_json(text, rng))
        return
    lines = text.splitlines()
    index = rng.randrange(len(lines))
    if rng.random() < 0.2:
        lines.append(damage_json(lines[index], rng))  # a repeat of a record, changed
    else:
        lines[index] = damage_json(lines[index], rng).replace("\n", " ")
    path.write_text("\n".join(lines) + "\n")


def cases():
    """(run, record file, seed) of every damage made."""
    return [(run, relative, seed) for run in RUNS for relative in [f.relative_to(run) for f in record_files(run)]
            for seed in range(DAMAGES_PER_FILE)]


@pytest.mark.usefixtures("untouched")
@pytest.mark.parametrize(("run", "relative", "seed"), cases(),
                         ids=[f"{run.name[:16]}-{relative}-{seed}" for run, relative, seed in cases()])
def test_a_damaged_record_renders_or_is_refused_in_one_line(run, relative, seed, tmp_path):
    copy = tmp_path / "2026-01-08_damaged"
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("trajectories"))  # the report reads none
    rng = random.Random(f"{run.name}/{relative}/{seed}")
    damage(copy / relative, rng)
    (tmp_path / "reference").mkdir()
    try:
        render_all([copy], tmp_path / "reference", output=tmp_path / "out", figures=tmp_path / "out" / "figures")
    except RunError as error:
        message = str(error)
        assert "\n" not in message
        assert str(relative.name) in message or "run.json" in message, message


def edited_run(tmp_path, run, relative, edit):
    """A copy of a reference run with one record of one file edited (edit(record) changes it in place)."""
    copy = tmp_path / "2026-01-08_edited"
    shutil.copytree(REFERENCE / run, copy, ignore=shutil.ignore_patterns("trajectories"))
    lines = (copy / relative).read_text().splitlines()
    record = json.loads(lines[0])
    edit(record)
    (copy / relative).write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    (tmp_path / "reference").mkdir()
    return copy


def test_a_point_whose_target_is_null_is_refused_the_writer_never_writes_one(tmp_path):
    copy = edited_run(tmp_path, "2026-12-05_vm_amd-epyc-2c-5", "sweep-quick/points.jsonl",
                      lambda record: record.update(target=None))
    with pytest.raises(RunError, match=r"points.jsonl: line 1, key 'target': expected a record, got null$"):
        render_all([copy], tmp_path / "reference", output=tmp_path / "out", figures=tmp_path / "out" / "figures")


def test_a_stage_whose_optimum_is_not_finite_renders_with_a_dash(tmp_path):
    copy = edited_run(tmp_path, "2026-12-06_vm_amd-epyc-2c_real-maps", "real-maps/stages.jsonl",
                      lambda record: record["optimum"].update(fun=None))
    texts = render_all([copy], tmp_path / "reference", output=tmp_path / "out", figures=tmp_path / "out" / "figures")
    appendix = next(text for name, text in texts.items() if name.startswith("runs/"))
    assert "| 1 |" in appendix
    assert any(line.startswith("| 1 | ") and "| — |" in line for line in appendix.splitlines())


@pytest.mark.parametrize(("run", "relative", "key", "value", "words"), [
    ("2026-12-05_vm_amd-epyc-2c-1thread_closure", "closure/closure.jsonl", "orders", [], "key 'orders'"),
    ("2026-12-05_vm_amd-epyc-2c-1thread_closure", "closure/closure.jsonl", "truth", [], "key 'truth'"),
    ("2026-12-05_vm_amd-epyc-2c-1thread_closure", "closure/closure.jsonl", "npix", 0, "key 'npix'"),
    ("2026-12-06_vm_amd-epyc-2c_real-maps", "real-maps/sources.jsonl", "npix", 0, "key 'npix'"),
    ("2026-12-05_vm_amd-epyc-2c-5", "sweep-quick/points.jsonl", "nzern", 99, "key 'nzern'")])
def test_a_value_no_writer_makes_is_refused_by_its_model_naming_the_field(run, relative, key, value, words, tmp_path):
    """The models hold what the writers make: a grid make_setup refuses, an order beyond its range, no order or no
    truth at all are refused as read, in one line, not met as a division by zero or an empty max() downstream."""
    copy = edited_run(tmp_path, run, relative, lambda record: record.update({key: value}))
    with pytest.raises(RunError, match=rf"{relative.split('/')[-1]}: line 1, {words}"):
        render_all([copy], tmp_path / "reference", output=tmp_path / "out", figures=tmp_path / "out" / "figures")


@pytest.mark.parametrize(("relative", "content"), [
    ("real-maps/residuals-grasp-26ghz.npz", b"not a zip at all"),
    ("real-maps/residuals-grasp-26ghz.npz", "residual-as-text"),
    ("pyoof/pyoof-phase-grasp-26ghz.npz", b"PK\x03\x04 truncated"),
    ("pyoof/pyoof-phase-grasp-26ghz.npz", "phase-flat")])
def test_a_junk_array_file_is_refused_in_one_line_by_the_report_and_the_figures(relative, content, tmp_path):
    copy = edited_run(tmp_path, "2026-12-06_vm_amd-epyc-2c_real-maps", "real-maps/sources.jsonl", lambda r: None)
    path = copy / relative
    if content == "residual-as-text":
        np.savez(path, residual=np.array(["a", "b"]))
    elif content == "phase-flat":
        np.savez(path, phase=np.zeros(7))
    else:
        path.write_bytes(content)
    def read():  # the figures read the residuals, the report pyoof's phases
        if relative.startswith("real-maps/"):
            with writing_into(tmp_path / "drawn"):
                return draw_all(load_runs([copy], tmp_path / "reference"), tmp_path / "drawn")
        return render_all([copy], tmp_path / "reference", output=tmp_path / "out", figures=tmp_path / "out" / "figures")

    with pytest.raises(RunError) as refused:
        read()
    assert str(path) in str(refused.value)
    assert "\n" not in str(refused.value)


FORGED = "<img src=x onerror=alert(1)> | **x** | [a](http://example.org) `"
"""A string no writer makes, carrying HTML, a table's cell border, emphasis, a link and a code span's end."""


def test_strings_a_run_recorded_are_rendered_as_text_never_as_markup(tmp_path):
    """Versions and commits in runs.jsonl, the cross-check's fit messages and check names reach the report escaped
    (or as a code span they cannot end), whatever their content: no tag, no cell, no link, no emphasis of theirs."""
    copy = edited_run(tmp_path, "2026-12-05_vm_amd-epyc-2c-3", "sweep-quick/runs.jsonl",
                      lambda record: record.update(numpy=FORGED, git_commit=FORGED, date=FORGED))
    crosscheck = json.loads((copy / "crosscheck" / "crosscheck.json").read_text())
    crosscheck["fits"][0]["message"] = FORGED
    crosscheck["checks"][0] |= {"check": FORGED, "compare": FORGED}
    (copy / "crosscheck" / "crosscheck.json").write_text(json.dumps(crosscheck))
    texts = render_all([copy], tmp_path / "reference", output=tmp_path / "out", figures=tmp_path / "out" / "figures")
    appendix = next(text for name, text in texts.items() if name.startswith("runs/"))
    assert "&lt;img src=x onerror=alert(1)&gt; \\| \\*\\*x\\*\\* \\| \\[a\\](http://example.org) \\`" in appendix
    assert "`<img src=x onerror=alert(1)> \\| **x** \\| [a](http://example.org) '`" in appendix  # the commit
    for text in texts.values():
        assert FORGED not in text
        assert "<img" not in text.replace("`<img", "")  # only inside the commit's code span


NUMBERS_NEVER_WRITTEN = ("Infinity", "-Infinity", "NaN", "1e999", "9" * 5000)
"""Number literals the writers' strict JSON never holds (a number not finite is written as null): json.loads reads
the first four as inf/NaN and raises a ValueError of its own on an integer of more than 4300 digits."""


@pytest.mark.parametrize("literal", NUMBERS_NEVER_WRITTEN, ids=lambda text: text[:9])
def test_a_number_the_writers_never_write_is_refused_naming_the_line_even_on_the_last(literal, tmp_path):
    path = tmp_path / "points.jsonl"
    path.write_text(f'{{"a": 1}}\n{{"a": {literal}}}\n')
    for repair in (False, True):  # the last line is damaged, not truncated: repair never cuts it
        with pytest.raises(RunError, match=r"points.jsonl: line 2: .*the file was edited$"):
            read_records(path, repair=repair)
    assert path.read_text() == f'{{"a": 1}}\n{{"a": {literal}}}\n'
    document = tmp_path / "bench.json"
    document.write_text(f'{{"rows": [], "seconds": {literal}}}')
    with pytest.raises(RunError, match=r"bench.json: not valid JSON"):
        load_json(document)


@pytest.mark.parametrize("literal", ["1e999", "9" * 5000])
def test_the_report_refuses_such_a_number_in_one_line_with_status_2(literal, tmp_path):
    copy = edited_run(tmp_path, "2026-12-05_vm_amd-epyc-2c-5", "sweep-quick/points.jsonl", lambda record: None)
    lines = (copy / "sweep-quick" / "points.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace('"nzern": ', f'"nzern": {literal}, "was": ', 1)
    (copy / "sweep-quick" / "points.jsonl").write_text("\n".join(lines) + "\n")
    done = run_command("report", "--run", copy, "--out", tmp_path / "out")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("the file was edited")
    assert "points.jsonl: line 1: " in done.stderr

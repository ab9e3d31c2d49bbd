"""Every field of every record kind found in the reference runs, damaged one at a time (null, another type, another
length, missing, negative where a time), read by the reader `contribute` and the report use: a one-line refusal
naming the file, or a reading the record's typed model documents (an optional field), never another exception."""

import json

import pytest

from replication.core.paths import REFERENCE
from replication.core.results import RunError
from replication.report.contribute import check_record_file

ODD = "\u202etext"
"""A string where something else belongs (with a right-to-left mark: nothing a person wrote is trusted)."""


def record_files():
    """(kind, relative path, first record) of every JSON record file of the reference runs, one per kind and set of
    fields (the same kind recorded by older code may hold other fields)."""
    found, seen = [], set()
    for path in sorted(REFERENCE.glob("*/**/*.json*")):
        if "trajectories" in path.parts or path.suffix not in (".json", ".jsonl"):
            continue
        relative = path.relative_to(REFERENCE).parts[1:]
        kind = "/".join(part.split("-")[0] if index == 0 else part for index, part in enumerate(relative))
        text = path.read_text()
        record = json.loads(text.splitlines()[0]) if path.suffix == ".jsonl" else shortened(json.loads(text))
        signature = (kind, tuple(sorted(field for field, _ in fields_of(record))))
        if signature not in seen:
            seen.add(signature)
            found.append((kind, relative, record))
    return found


def shortened(content):
    """A JSON file's record with each top-level list cut to its first three items (a cross-check's checks and fits:
    every item has the same fields, and the reader reads each alike)."""
    return {key: value[:3] if isinstance(value, list) else value for key, value in content.items()}


def fields_of(node, path=()):
    """Every (path, value) inside a record, depth first; of a list, its first item only."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield (*path, key), value
            yield from fields_of(value, (*path, key))
    elif isinstance(node, list) and node:
        yield (*path, 0), node[0]
        yield from fields_of(node[0], (*path, 0))


def damages(path, value):
    """The damages of one field: (words, new value or MISSING)."""
    yield "null", None
    yield "another type", 7 if isinstance(value, str) else ODD
    if isinstance(path[-1], str):
        yield "missing", MISSING
    if isinstance(value, list) and value:
        yield "one item short", value[:-1]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and is_time(path):
        yield "negative", -1.0


MISSING = object()


def is_time(path):
    return any(isinstance(part, str) and (part.endswith("_s") or part in ("times", "seconds", "ms")) for part in path)


def damaged(node, path, value):
    """A copy of node with the field at path replaced by value (removed where MISSING)."""
    head, rest = path[0], path[1:]
    copy = dict(node) if isinstance(node, dict) else list(node)
    if not rest:
        if value is MISSING:
            del copy[head]
        else:
            copy[head] = value
        return copy
    copy[head] = damaged(node[head], rest, value)
    return copy


def read_or_refuse(target, what):
    """None where the reader admits the file, else its refusal's text; any other exception fails the test."""
    try:
        check_record_file(target)
    except RunError as error:
        return str(error)
    except Exception as error:
        pytest.fail(f"{what}: {type(error).__name__}: {error}")
    return None


FILES = record_files()


@pytest.mark.parametrize(("kind", "relative", "record"), FILES, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(FILES)])
def test_each_damaged_field_is_refused_in_one_line_or_read_as_documented(kind, relative, record, tmp_path):
    target = tmp_path.joinpath(*relative)
    target.parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "run.json").write_text((REFERENCE / "2026-12-05_vm_amd-epyc-2c-3" / "run.json").read_text())
    readings = []
    for path, value in fields_of(record):
        for words, new in damages(path, value):
            target.write_text(json.dumps(damaged(record, path, new)) + "\n")
            refusal = read_or_refuse(target, f"{kind}, {'.'.join(map(str, path))} {words}")
            if refusal is None:
                readings.append((path, words))
            else:
                assert "\n" not in refusal
                assert str(target) in refusal
    target.write_text(json.dumps(record) + "\n")
    check_record_file(target)  # the record as recorded is read: the damages above are what was refused
    if relative[-1] != "settings.json":  # read only by a resuming writer, which compares it key by key
        assert len(readings) < sum(1 for path, value in fields_of(record) for _ in damages(path, value))


def test_a_new_point_field_needs_its_study_only(tmp_path, monkeypatch):
    """A field a study adds to its point model (here a subclass stands in for one more line in
    studies/sweep/records.py's MeasuredPoint) is checked as written (as_written), read back as an attribute of the
    typed point and refused, damaged, naming it, with no change to the core's records; a record written before it
    reads its default, and keys no model names are kept out of the typed point."""
    from replication.core.records import as_written
    from replication.core.results import RunError
    from replication.studies.sweep import records

    class WithField(records.MeasuredPoint, kw_only=True):
        warm_s: float | None = None

    monkeypatch.setattr(records, "MeasuredPoint", WithField)
    source = REFERENCE / "2026-12-05_vm_amd-epyc-2c-3" / "sweep-quick" / "points.jsonl"
    record = json.loads(source.read_text().splitlines()[0])
    path = tmp_path / "sweep-quick" / "points.jsonl"
    path.parent.mkdir()
    for extra, expected in (({"warm_s": 0.5}, 0.5), ({}, None)):
        written = as_written(path, 1, record | extra | {"unnamed": 1}, records.check_point)
        path.write_text(json.dumps(written) + "\n")
        assert read_or_refuse(path, "a new field") is None
        (read,) = records.read_points(path)
        assert read.warm_s == expected
        assert not hasattr(read, "unnamed")
    with pytest.raises(RunError, match="key 'warm_s'"):
        as_written(path, 1, record | {"warm_s": "fast"}, records.check_point)


def test_a_new_point_field_reaches_a_report_cell_as_an_attribute(tmp_path, monkeypatch):
    """The same field read by a claim's evaluate (as a claim added in one file would) reaches the claims table's
    cell as an attribute of the typed point: no reader, cell or template names it."""
    import shutil

    from replication import claims
    from replication.core.judging import Verdict
    from replication.core.objectives import CAUCHY
    from replication.report import load
    from replication.report.cells import Notes, run_claims
    from replication.studies.sweep import records

    class WithField(records.MeasuredPoint, kw_only=True):
        warm_s: float | None = None

    monkeypatch.setattr(records, "MeasuredPoint", WithField)
    source = REFERENCE / "2026-12-05_vm_amd-epyc-2c-3"
    run_folder = tmp_path / source.name
    shutil.copytree(source / "sweep-quick", run_folder / "sweep-quick")
    shutil.copy(source / "run.json", run_folder / "run.json")
    points = run_folder / "sweep-quick" / "points.jsonl"
    lines = [json.loads(line) for line in points.read_text().splitlines()]
    points.write_text("".join(json.dumps(line | {"warm_s": 0.25}) + "\n" for line in lines))

    def evaluate(run, objective):
        warm = {record.warm_s for series in run.judged(objective)[1].values() for record in series.values()
                if isinstance(record, WithField)}
        return Verdict(value=max(warm), verdict="reproduced", text=f"warm {max(warm)} s") if warm else Verdict()

    toy = claims.Claim("C9", "Toy: warm-up recorded.", "warm-up", None, "recorded", "warm-up seconds", 0.0, 0.0,
                       evaluate=evaluate)
    monkeypatch.setattr(claims, "CLAIMS", (*claims.CLAIMS, toy))
    cells = run_claims(load.load_run(run_folder, own=False), CAUCHY, Notes())
    assert cells["C9"].text == "warm 0.25 s"
    assert cells["C9"].found.value == 0.25

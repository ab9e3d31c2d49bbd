"""Every reader is total over what the record models admit: a field of a reference record replaced by a value drawn
from its model's own type (msgspec.inspect: its bounds, its nulls, its list lengths, nested records), and every
reader a reference run meets (the report, the figures, the audit, contribute's check) then reads the run or refuses
it in one line, never another exception. Seeded: the same draws every time; marked slow (nox -s end_to_end)."""

import json
import random
import shutil
import warnings

import msgspec
import pytest
from msgspec import inspect

from replication.core.fit_records import OptimumRecord
from replication.core.paths import REFERENCE
from replication.core.records import RunRecord
from replication.core.reduction import pyoof_fit
from replication.core.results import RunError, writing_into
from replication.report import contribute as contributing
from replication.report.figures import draw_all
from replication.report.render import load_runs, render_all
from replication.studies.bench.records import Bench
from replication.studies.closure import records as closure_records
from replication.studies.crosscheck.records import Crosscheck
from replication.studies.peers.records import PeersCheck
from replication.studies.real_maps import records as real_records
from replication.studies.retrieval.records import RetrievalRecord
from replication.studies.sweep.audit import audit_run
from replication.studies.sweep.records import MeasuredPoint, SweepSession

KINDS = [("2026-12-05_vm_amd-epyc-2c-5", "sweep-quick/points.jsonl", MeasuredPoint),
         ("2026-12-05_vm_amd-epyc-2c-5", "sweep-quick/optima.jsonl", OptimumRecord),
         ("2026-12-05_vm_amd-epyc-2c-5", "sweep-quick/runs.jsonl", SweepSession),
         ("2026-12-05_vm_amd-epyc-2c-4", "retrieval-quick/points.jsonl", RetrievalRecord),
         ("2026-12-06_vm_amd-epyc-2c_real-maps", "real-maps/stages.jsonl", real_records.RealStage),
         ("2026-12-06_vm_amd-epyc-2c_real-maps", "real-maps/sources.jsonl", real_records.RealSource),
         ("2026-12-06_vm_amd-epyc-2c_real-maps", "real-maps/tapers.jsonl", real_records.RealTaper),
         ("2026-12-06_vm_amd-epyc-2c_real-maps", "real-maps/starts.jsonl", real_records.RealStart),
         ("2026-12-06_vm_amd-epyc-2c_real-maps", "real-maps/runs.jsonl", RunRecord),
         ("2026-12-05_vm_amd-epyc-2c-1thread_closure", "closure/runs.jsonl", RunRecord),
         ("2026-12-06_vm_amd-epyc-2c_real-maps", "pyoof/pyoof.jsonl", pyoof_fit.PyoofFit),
         ("2026-12-05_vm_amd-epyc-2c-1thread_closure", "closure/closure.jsonl", closure_records.Closure),
         ("2026-12-05_vm_amd-epyc-2c-1thread_closure", "closure/bound.jsonl", closure_records.ClosureBound),
         ("2026-12-05_vm_amd-epyc-2c-1thread_closure", "closure/pyoof/pyoof-closure.jsonl",
          closure_records.PyoofClosureFit),
         ("2026-12-05_vm_amd-epyc-2c-5", "crosscheck/crosscheck.json", Crosscheck),
         ("2026-12-05_vm_amd-epyc-2c-5", "bench/bench.json", Bench),
         ("2026-12-05_vm_amd-epyc-2c-5", "peers/check.json", PeersCheck)]
"""(reference run, record file, its model) of every record kind the readers of a reference run meet (a .jsonl file:
its first line drawn anew; a .json file: the whole record)."""
DRAWS = 4
"""Records drawn per kind."""
STRINGS = ("", "x", "<b>|*_`", "numpy", "torch-cpu", "float64", "nan", "cauchy")


def drawn(kind, rng, base=None):
    """A value of msgspec's type `kind`, near base where one is given (a list keeps its length half the time, a
    record its other fields)."""
    if isinstance(kind, inspect.Metadata):
        return drawn(kind.type, rng, base)
    if isinstance(kind, inspect.UnionType):
        return drawn(rng.choice(kind.types), rng, base)
    if isinstance(kind, inspect.NoneType):
        return None
    if isinstance(kind, inspect.BoolType):
        return rng.choice([True, False])
    if isinstance(kind, inspect.IntType):
        low = kind.ge if kind.ge is not None else kind.gt + 1 if kind.gt is not None else -3
        high = kind.le if kind.le is not None else kind.lt - 1 if kind.lt is not None else low + 10**6
        return rng.choice([low, min(high, low + 1), high, rng.randint(low, min(high, low + 1000))])
    if isinstance(kind, inspect.FloatType):
        low = kind.ge if kind.ge is not None else kind.gt if kind.gt is not None else -1e6
        high = kind.le if kind.le is not None else kind.lt if kind.lt is not None else 1e6
        value = rng.choice([low, high, (low + high) / 2, rng.uniform(low, high)])
        if value in (kind.gt, kind.lt):  # an open bound: just inside it
            value = (low + high) / 2 if high > low else low * (1 + 1e-9) + 1e-12
        return float(value)
    if isinstance(kind, inspect.StrType):
        return rng.choice(STRINGS)
    if isinstance(kind, inspect.ListType):
        if isinstance(base, list) and rng.random() < 0.5:
            return [drawn(kind.item_type, rng, item) for item in base]
        least = kind.min_length or 0
        return [drawn(kind.item_type, rng) for _ in range(rng.choice([least, least + 1, least + 2]))]
    if isinstance(kind, inspect.StructType):
        record = dict(base) if isinstance(base, dict) else {}
        for field in kind.fields:
            if field.name not in record or rng.random() < 0.3:
                record[field.name] = drawn(field.type, rng, record.get(field.name))
        return record
    return base


def admitted_draw(record, model, rng):
    """(field, record with that field drawn anew) admitted by model, or None where this draw is not admitted."""
    field = rng.choice(inspect.type_info(model).fields)
    changed = record | {field.name: drawn(field.type, rng, record.get(field.name))}
    try:
        msgspec.convert(changed, type=model, strict=True)
    except msgspec.ValidationError:
        return None
    return field.name, changed


def every_reader(run, tmp_path):
    """Run every reader a reference run meets on run: report, figures, audit, contribute's check."""
    render_all([run], tmp_path / "reference", output=tmp_path / "out", figures=tmp_path / "out" / "figures")
    with writing_into(tmp_path / "drawn"):
        draw_all(load_runs([run], tmp_path / "reference"), tmp_path / "drawn")
    audit_run(run)
    contributing.contributed_files(run)


CASES = [(run, relative, model, draw) for run, relative, model in KINDS for draw in range(DRAWS)]


@pytest.mark.slow
@pytest.mark.parametrize(("run", "relative", "model", "draw"), CASES,
                         ids=[f"{relative}-{draw}" for _, relative, _, draw in CASES])
def test_every_reader_reads_or_refuses_in_one_line_a_record_its_model_admits(run, relative, model, draw, tmp_path):
    rng = random.Random(f"{run}/{relative}/{draw}")
    copy = tmp_path / "2026-01-08_drawn"
    shutil.copytree(REFERENCE / run, copy)
    whole = relative.endswith(".json")
    lines = [(copy / relative).read_text()] if whole else (copy / relative).read_text().splitlines()
    found = None
    while found is None:  # the first admitted draw of this seed's sequence
        found = admitted_draw(json.loads(lines[0]), model, rng)
    field, record = found
    (copy / relative).write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    (tmp_path / "reference").mkdir()
    refusal = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # matplotlib's on a figure with nothing to draw
            every_reader(copy, tmp_path)
    except RunError as refused:
        refusal = str(refused)
    assert refusal is None or "\n" not in refusal, f"{field}: {refusal}"


def undeclared_keys(record, model):
    """The keys of a record its model does not declare: kept and not checked as it is read (a newer or older
    record's extras), so no reader may need them."""
    declared = {field.name for field in inspect.type_info(model).fields}
    return sorted(key for key in record if key not in declared)


@pytest.mark.slow
@pytest.mark.parametrize(("run", "relative", "model"), KINDS, ids=[relative for _, relative, _ in KINDS])
def test_every_reader_reads_or_refuses_in_one_line_a_record_without_the_keys_its_model_does_not_declare(
        run, relative, model, tmp_path):
    copy = tmp_path / "2026-01-08_drawn"
    shutil.copytree(REFERENCE / run, copy)
    whole = relative.endswith(".json")
    lines = [(copy / relative).read_text()] if whole else (copy / relative).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    removed = undeclared_keys(records[0], model)
    (copy / relative).write_text("\n".join(json.dumps({key: value for key, value in record.items()
                                                       if key not in removed}) for record in records) + "\n")
    (tmp_path / "reference").mkdir()
    refusal = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            every_reader(copy, tmp_path)
    except RunError as refused:
        refusal = str(refused)
    assert refusal is None or "\n" not in refusal, f"{removed}: {refusal}"

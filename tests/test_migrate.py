"""Records written by older code are brought into today's schema once, by `python -m replication migrate`, each kind
by its study's records module; the readers refuse an older record in one line naming that command and convert
nothing; every reference run is in today's schema."""

import json
import shutil

import pytest
from conftest import run_command

from replication.core.paths import REFERENCE
from replication.core.records import RECORD_SCHEMA, migrated_fit
from replication.core.results import RunError
from replication.core.series import Series
from replication.report.migrate import migrate_run
from replication.studies.bench.records import BENCH_RENAMED, migrated_bench, read_bench, read_bench_record
from replication.studies.crosscheck.records import CROSSCHECK_SCHEMA, migrated_crosscheck, read_crosscheck
from replication.studies.retrieval.records import read_retrieval
from replication.studies.sweep.records import migrated_point, read_points

ANSWERING = REFERENCE / "2026-12-05_vm_amd-epyc-2c-3"


def todays_point(gradient="adjoint"):
    """A point record of today's schema from the answering reference run (Cauchy, scipy's BFGS)."""
    for line in (ANSWERING / "sweep-quick" / "points.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["gradient"] == gradient and record["minimizer"] == "scipy" and not record["estimated"]:
            return record
    raise AssertionError("no such point in the answering run")


def version_one(record):
    """The same point as version-1 code wrote it: no schema, minimizer or objective, the adjoint called analytic."""
    older = {key: value for key, value in record.items() if key not in ("schema", "minimizer", "objective")}
    return older | {"gradient": "analytic" if record["gradient"] == "adjoint" else record["gradient"]}


def test_a_version_one_point_migrates_to_the_record_todays_code_writes():
    record = todays_point()
    assert migrated_point(version_one(record)) == record
    assert migrated_point(record) is record  # today's schema: as it is
    fit = migrated_fit(version_one(record))
    assert (fit["gradient"], fit["minimizer"], fit["schema"]) == ("adjoint", "scipy", RECORD_SCHEMA)
    assert "objective" not in fit  # a retrieval fit names no objective


def todays_fit():
    """A retrieval record of today's schema from the one-thread reference run."""
    path = ANSWERING.parent / "2026-12-05_vm_amd-epyc-2c-4" / "retrieval-quick" / "points.jsonl"
    return json.loads(path.read_text().splitlines()[0])


@pytest.mark.parametrize(("reader", "record"), [(read_points, todays_point), (read_retrieval, todays_fit)])
def test_a_reader_refuses_an_older_record_in_one_line_naming_the_migration(tmp_path, reader, record):
    path = tmp_path / "points.jsonl"
    path.write_text(json.dumps(version_one(record())) + "\n")
    with pytest.raises(RunError, match=r"line 1: written by older code \(schema 1; this code reads 2\); bring it up "
                                       r"to date with `python -m replication migrate"):
        reader(path)


def test_older_cross_checks_migrate_to_todays_fields_and_schema_one_repeats_are_left_out():
    fit = {"npix": 32, "nzern": 3, "x": [0.0]}
    checks = [{"check": "model", "compare": "numpy vs torch-cpu"},
              {"check": "model", "compare": "torch-cpu [on-device BFGS] vs numpy"}]
    one = {"checks": checks, "fits": [fit | {"impl": "torch-cpu"}, fit | {"impl": "torch-cpu [on-device BFGS]"}]}
    migrated = migrated_crosscheck(one)
    assert [(f["impl"], f["minimizer"], f["objective"]) for f in migrated["fits"]] == [("torch-cpu", "scipy",
                                                                                        "cauchy")]
    assert migrated["checks"] == checks[:1]
    assert migrated["migrated"] == {"from_schema": 1, "repeated_checks": 1}
    assert migrated["schema"] == CROSSCHECK_SCHEMA
    two = migrated_crosscheck(one | {"schema": 2})
    assert [(f["impl"], f["minimizer"]) for f in two["fits"]] == [("torch-cpu", "scipy"), ("torch-cpu", "torchmin")]
    assert two["migrated"] == {"from_schema": 2, "repeated_checks": 0}
    assert migrated_crosscheck(two) is two


def test_an_older_bench_is_refused_until_its_steps_are_renamed(tmp_path):
    path = tmp_path / "bench.json"
    content = json.loads((ANSWERING.parent / "2026-12-05_vm_amd-epyc-2c-5" / "bench" / "bench.json").read_text())
    old, new = next(iter(BENCH_RENAMED.items()))

    def renamed(steps):
        return {old if step == new else step: value for step, value in steps.items()}

    older = content | {"rows": [row | {table: renamed(row[table]) for table in ("ms", "x_floor", "x_own_floor",
                                                                                   "repeats", "warm_up_s")
                                       if isinstance(row.get(table), dict)} for row in content["rows"]]}
    path.write_text(json.dumps(older))
    with pytest.raises(RunError, match="written by older code"):
        read_bench_record(path)
    assert migrated_bench(older) == content
    assert migrated_bench(content) is content


def test_the_command_migrates_a_run_once_and_the_readers_then_read_it(tmp_path):
    run = tmp_path / "run"
    (run / "sweep-quick").mkdir(parents=True)
    (run / "crosscheck").mkdir()
    shutil.copy(ANSWERING / "run.json", run)
    record = todays_point()
    (run / "sweep-quick" / "points.jsonl").write_text(json.dumps(version_one(record)) + "\n")
    crosscheck = json.loads((ANSWERING / "crosscheck" / "crosscheck.json").read_text())
    labelled = [{key: value for key, value in fit.items() if key not in ("dtype", "variant", "minimizer")}
                | {"impl": Series(fit["impl"], fit["dtype"], fit["variant"], fit["minimizer"]).label}
                for fit in crosscheck["fits"]]  # schema 2 named each fit's series by its label
    (run / "crosscheck" / "crosscheck.json").write_text(json.dumps(crosscheck | {"schema": 2, "fits": labelled}))
    done = run_command("migrate", "--run", run)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("migrated to today's schema") == 2
    (point,) = read_points(run / "sweep-quick" / "points.jsonl")
    assert point.series == Series(record["impl"], record["dtype"], "adjoint", "scipy")
    assert [fit.series for fit in read_crosscheck(run / "crosscheck" / "crosscheck.json").fits] == \
        [fit.series for fit in read_crosscheck(ANSWERING / "crosscheck" / "crosscheck.json").fits]
    again = run_command("migrate", "--run", run)
    assert "nothing to migrate" in again.stdout
    assert run_command("migrate", "--run", tmp_path / "none").returncode == 2
    (tmp_path / "not-a-run").mkdir()
    refused = run_command("migrate", "--run", tmp_path / "not-a-run")
    assert refused.returncode == 2
    assert "not a run folder (no run.json)" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_every_reference_run_is_in_todays_schema():
    for path in sorted(REFERENCE.glob("*/**/points.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            migrate = migrated_point if path.parent.name.startswith("sweep-") else migrated_fit
            assert migrate(record) is record, path
    for path in sorted(REFERENCE.glob("*/crosscheck/crosscheck.json")):
        assert migrated_crosscheck(json.loads(path.read_text()))["schema"] == CROSSCHECK_SCHEMA
        assert read_crosscheck(path).schema == CROSSCHECK_SCHEMA
    for path in sorted(REFERENCE.glob("*/bench*/bench.json")):
        content = json.loads(path.read_text())
        assert migrated_bench(content) is content, path
        assert read_bench(path) is not None


def test_migrate_refuses_a_link_in_a_run_folder(tmp_path):
    run = tmp_path / "run"
    (run / "sweep-quick").mkdir(parents=True)
    shutil.copy(ANSWERING / "run.json", run)
    (run / "sweep-quick" / "points.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    with pytest.raises(RunError, match="not a regular file"):
        migrate_run(run)

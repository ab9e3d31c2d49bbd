"""Records: what the harness writes it reads back (older records are migrated once: tests/test_migrate.py)."""

import json

import pytest

from replication.core import point_times, registry, runs
from replication.core.environment import machine_record
from replication.core.objectives import CAUCHY, LEAST_SQUARES
from replication.core.profiles import SweepSettings
from replication.report.render import render_all
from replication.studies.sweep import measure as sweep
from replication.studies.sweep.records import read_points


@pytest.fixture(scope="module")
def least_squares_run(tmp_path_factory):
    """A run holding a least-squares smoke sweep of the NumPy reference: at npix 16 some Hessians are not
    positive definite, so its accounts hold standard errors recorded as null."""
    run = runs.create_run(tmp_path_factory.mktemp("ls") / "2026-01-04_ls", machine_record())
    settings = SweepSettings("smoke", objective=LEAST_SQUARES, impls=("numpy",), threads=1)
    sweep.run_sweep(settings, run / "sweep-smoke-least-squares", quiet=True)
    return run


def test_a_least_squares_smoke_sweep_reads_back_with_its_undefined_numbers_as_null(least_squares_run):
    path = least_squares_run / "sweep-smoke-least-squares" / "points.jsonl"
    records = read_points(path)
    assert len(records) == 4
    assert len(path.read_text().splitlines()) == 4
    undefined = [r for r in records if r.outcome.convergence.newton_stderr is None]
    assert {(r.npix, r.nzern) for r in undefined} == {(16, 2), (16, 3)}  # indefinite Hessians
    assert all(point_times.how_it_ended(r) == "not at a minimum (Hessian not positive definite)" for r in undefined)


def test_a_least_squares_smoke_sweep_resumes_and_renders(least_squares_run, tmp_path):
    settings = SweepSettings("smoke", objective=LEAST_SQUARES, impls=("numpy",), threads=1)
    assert sweep.run_sweep(settings, least_squares_run / "sweep-smoke-least-squares", quiet=True) == 0
    (tmp_path / "reference").mkdir()
    texts = render_all([least_squares_run], tmp_path / "reference", output=tmp_path / "out",
                       figures=tmp_path / "out" / "figures")
    assert "least-squares" in texts["runs/your-2026-01-04_ls.md"]


def test_a_null_where_a_number_is_required_is_refused_naming_file_line_and_key(least_squares_run, tmp_path):
    path = least_squares_run / "sweep-smoke-least-squares" / "points.jsonl"
    record = json.loads(path.read_text().splitlines()[0])
    record["fit_s"]["median"] = None
    damaged = tmp_path / "points.jsonl"
    damaged.write_text(json.dumps(record) + "\n")
    with pytest.raises(ValueError, match=r"points.jsonl: line 1, key 'fit_s.median': expected a number, got null"):
        read_points(damaged)


@pytest.mark.slow
def test_every_kind_of_run_the_harness_writes_reads_back_and_renders(tmp_path, monkeypatch):
    """One run of each kind of record, on grids made tiny: both objectives, the gradient variants, retrieval, the
    cross-check and the bench in one run, and a sharded sweep in a run of its own; each renders."""
    from replication.core.profiles import PROFILES, Profile
    from replication.studies.bench import measure as bench
    from replication.studies.crosscheck import measure as crosscheck
    from replication.studies.retrieval import measure as retrieval
    from replication.studies.retrieval.profiles import RETRIEVAL_PROFILES, RetrievalProfile
    from replication.studies.sweep import shards

    monkeypatch.setitem(PROFILES, "smoke", Profile(npix=(16,), nzern=(2,), repeats=1, budget_s=10.0))
    monkeypatch.setitem(RETRIEVAL_PROFILES, "smoke", RetrievalProfile(points=((16, 2),), rms=(0.5,), seeds=(1,)))
    monkeypatch.setitem(crosscheck.POINTS, "smoke", ((16, 2),))
    run = runs.create_run(tmp_path / "runs" / "2026-01-09_every", machine_record())
    impls = (registry.NUMPY.name, registry.TORCH_CPU.name)
    for settings in (SweepSettings("smoke", impls=impls, threads=1),
                     SweepSettings("smoke", objective=LEAST_SQUARES, impls=impls[:1], threads=1),
                     SweepSettings("smoke", impls=impls, gradients=registry.GRADIENTS, threads=1)):
        sweep.run_sweep(settings, run / settings.folder_name, quiet=True)
    retrieval.run_retrieval(run / "retrieval-smoke", profile="smoke", threads=1, quiet=True)
    crosscheck.run_crosscheck(run / "crosscheck", points="smoke", threads=1, objectives=(CAUCHY,))
    bench.run_bench(run / "bench", npix=(16,), nzern=(2,), threads=(1,), repeats=1, quiet=True)
    sharded = runs.create_run(tmp_path / "runs" / "2026-01-09_sharded", machine_record())
    assert shards.run_sharded_sweep(sharded, SweepSettings("smoke", impls=impls, threads=1), 1, "local") == 0
    (tmp_path / "reference").mkdir()
    texts = render_all([run, sharded], tmp_path / "reference", output=tmp_path / "out",
                       figures=tmp_path / "out" / "figures")
    every, split = texts["runs/your-2026-01-09_every.md"], texts["runs/your-2026-01-09_sharded.md"]
    for words in ("sweep-smoke-least-squares", "numpy [adjoint]", "torch-cpu [finite-differences]",
                  "Retrieval from a cold start", "Cross-check", "bench"):
        assert words in every, words
    assert "shard" in split

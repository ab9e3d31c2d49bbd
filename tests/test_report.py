"""Figures and report: rendered from a smoke run, verdict rules both ways, committed report up to date."""

import math
import os
import pathlib
import shutil
import statistics
import sys
import types

import pytest
from conftest import both

from replication import claims
from replication.claims import agreement, mechanism, speed
from replication.core import judging, point_times, runs
from replication.core.environment import machine_record
from replication.core.paths import FIGURES, PAPER
from replication.core.profiles import SweepSettings
from replication.core.results import MANIFEST, owned_files
from replication.core.series import CUDA_SEEDED, NUMPY, TORCH_CPU, TORCH_CUDA, TORCH_SEEDED, Series
from replication.report.figures import draw_all
from replication.report.render import claims_summary, load_runs, render, render_all
from replication.studies.crosscheck import measure as crosscheck
from replication.studies.sweep import measure as sweep


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    """A run folder with a smoke sweep and a smoke cross-check, made in-process once for the module."""
    run = runs.create_run(tmp_path_factory.mktemp("runs") / "2026-01-01_test", machine_record())
    sweep.run_sweep(SweepSettings("smoke", impls=("numpy", "torch-cpu"), threads=1), run / "sweep-smoke", quiet=True)
    crosscheck.run_crosscheck(run / "crosscheck", points="smoke", threads=1)
    return run


@pytest.fixture
def no_references(tmp_path):
    """An empty reference folder: the smoke run alone."""
    (tmp_path / "reference").mkdir()
    return tmp_path / "reference"


def test_report_renders_from_a_smoke_run(smoke_run, no_references):
    texts = render_all([smoke_run], no_references, output=smoke_run, figures=smoke_run / "figures")
    text, appendix = both(texts), texts["runs/your-2026-01-01_test.md"]
    table = claims_summary(text)
    for claim in ("C1", "C2", "C3", "C4", "C5a", "C5b", "C6"):
        assert f"| {claim}: " in table
    cauchy, least_squares = table.split("\n\n")
    assert cauchy.count("not measured") == 4  # C1, C2 need a GPU; C3, C4 grids of npix >= 128
    assert least_squares.count("not measured") == 4  # C1-C4; C5a and C5b have the cross-check's fits
    assert "no least-squares sweep in this run" in text
    assert "your run" in table
    assert "(runs/your-2026-01-01_test.md)" in table
    assert "## Timing" in appendix
    assert "## Timing" not in text
    assert "This run holds no bench" in appendix
    assert "| 32 | 3 |" in appendix


def test_your_run_stands_beside_every_reference_run(smoke_run):
    text = both(render_all([smoke_run], output=smoke_run, figures=smoke_run / "figures"))
    header = claims_summary(text).splitlines()[1]
    references = [run for run in runs.reference_runs() if any(run.glob("sweep-*")) or (run / "crosscheck").is_dir()]
    assert references, "the repository ships reference runs"
    assert header.count("your run") == 1
    assert header.count("reference") == len(references)  # every one that timed or checked something
    assert header.index("your run") < header.index("reference")


@pytest.fixture(scope="module")
def smoke_drawing(smoke_run, tmp_path_factory):
    """The smoke run's figures, drawn once for the module: their folder and paths."""
    folder = tmp_path_factory.mktemp("smoke-figures")
    references = tmp_path_factory.mktemp("no-references")
    return folder, draw_all(load_runs([smoke_run], references), folder)


def test_every_figure_is_written_and_not_empty(smoke_drawing):
    _, paths = smoke_drawing
    names = {path.name for path in paths}
    for figure in ("fig1_time_vs_grid_size", "fig2_time_vs_zernike_order", "fig3_speedup_vs_grid_size",
                   "fig4_example_fit", "fig5_agreement"):
        assert {f"{figure}.png", f"{figure}.svg"} <= names
    assert all(path.stat().st_size > 5000 for path in paths)


@pytest.mark.parametrize(
    ("verdict", "met", "partly", "missed"),
    [
        (speed.verdict_c1, {(512, 4): 60.0}, {(512, 4): 20.0}, {(512, 4): 3.0}),
        (speed.verdict_c2, {(256, 2): 6.0, (512, 2): 8.0}, {(256, 2): 3.0}, {(256, 2): 1.5, (64, 2): 50.0}),
        (speed.verdict_c3, {(128, 2): 9.0, (32, 2): 1.0}, {(256, 4): 2.5}, {(512, 2): 1.2, (32, 2): 40.0}),
        (speed.verdict_c4, {(512, 2): 10.0, (512, 4): 11.0, (512, 6): 11.5, (512, 8): 12.0},
         {(512, 2): 6.0, (512, 4): 7.5, (512, 6): 9.0, (512, 8): 11.0},
         {(512, 2): 2.0, (512, 4): 4.0, (512, 6): 9.0, (512, 8): 20.0}),
    ],
)
def test_speed_up_verdicts_both_ways(verdict, met, partly, missed):
    assert verdict(met).verdict == judging.REPRODUCED
    assert verdict(partly).verdict == judging.PARTLY
    assert verdict(missed).verdict == judging.NOT_REPRODUCED
    assert verdict({}).verdict == judging.NOT_MEASURED


def test_c2_and_c3_must_hold_at_every_grid_size():
    ratios = {(256, 2): 2.5, (256, 4): 2.6, (512, 2): 12.0, (512, 4): 12.0, (512, 6): 14.0}
    result = speed.verdict_c2(ratios)
    assert result.by_npix == {256: 2.55, 512: 12.0}
    assert result.value == 2.55
    assert result.verdict == judging.PARTLY
    assert speed.verdict_c3({(64, 2): 1.0, **ratios}).value == 2.55  # below 128 does not count


def test_c4_uses_the_largest_grid_with_every_fixed_order_from_npix_128():
    result = speed.verdict_c4({(512, 2): 10.0, (512, 4): 10.5, (512, 6): 10.7, (512, 8): 11.0, (1024, 2): 1.0,
                                  (1024, 8): 9.0, (256, 2): 1.0, (256, 4): 1.0, (256, 6): 1.0, (256, 8): 50.0})
    assert result.npix == 512
    assert result.spread == pytest.approx(1.1)
    assert abs(result.value) < 0.1
    too_small = {(64, n): 10.0 for n in (2, 4, 6, 8)} | {(128, 2): 10.0, (128, 8): 10.0}
    assert speed.verdict_c4(too_small).verdict == judging.NOT_MEASURED


def test_c4_slope_is_one_for_a_speed_up_proportional_to_the_parameters():
    ratios = {(256, n): 0.5 * claims.parameter_count(n) for n in (2, 4, 6, 8)}
    assert speed.verdict_c4(ratios).value == pytest.approx(1.0)


@pytest.mark.parametrize("extra", [{}, {3: 100.0}, {3: 0.01, 5: 50.0, 7: 1.0, 9: 1e3}])
def test_c4_judges_the_fixed_orders_whatever_else_a_run_measured(extra):
    """Runs that measured other orders besides n = 2, 4, 6, 8 get the same C4 from the same fixed-order ratios."""
    fixed = {(512, 2): 4.0, (512, 4): 6.0, (512, 6): 8.0, (512, 8): 12.0}
    base = speed.verdict_c4(fixed)
    other = speed.verdict_c4(fixed | {(512, n): value for n, value in extra.items()})
    assert (other.value, other.verdict, other.spread) == (base.value, base.verdict, base.spread)


def test_c1_is_the_median_over_orders_at_the_largest_grid_with_the_largest_ratio_beside_it():
    ratios = {(256, 8): 400.0, (512, 2): 20.0, (512, 4): 30.0, (512, 8): 60.0}
    result = speed.verdict_c1(ratios)
    assert (result.value, result.npix, result.max, result.point) == (30.0, 512, 400.0, (256, 8))
    assert result.verdict == judging.PARTLY  # one outlier does not make it reproduced


def test_c5a_compares_only_pairs_of_solutions_and_c5b_counts_endings():
    def pair(max_stderr, comparable, npix=64):
        return judging.Pair(TORCH_CPU, NUMPY, npix, 3, max_stderr, "Mahalanobis", comparable)

    close, far, short = pair(0.01, True), pair(0.5, True, 128), pair(0.5, False, 256)
    assert agreement.verdict_c5a([close], [close, short]).verdict == judging.REPRODUCED
    assert agreement.verdict_c5a([close], [close, short]).not_comparable == 1
    assert agreement.verdict_c5a([], [far]).verdict == judging.NOT_REPRODUCED
    assert agreement.verdict_c5a([], [pair(0.01, True, 32 + n) for n in range(19)] + [far]).verdict == judging.PARTLY
    assert agreement.verdict_c5a([], [short]).verdict == judging.NOT_MEASURED
    assert agreement.verdict_c5b([True] * 10).verdict == judging.REPRODUCED
    assert agreement.verdict_c5b([True] * 9 + [False]).verdict == judging.PARTLY
    assert agreement.verdict_c5b([False]).verdict == judging.NOT_REPRODUCED
    assert agreement.verdict_c5b([]).verdict == judging.NOT_MEASURED


def test_c5a_counts_a_comparison_once_however_often_its_data_were_refitted():
    """The cross-check and the sweep fit the same data at a point: their fits of one pair of series there are one
    comparison, judged by the farther apart."""
    def pair(max_stderr, npix=64, source="sweep", first=TORCH_CPU, second=NUMPY):
        return judging.Pair(first, second, npix, 3, max_stderr, "Mahalanobis", True, source)

    found = agreement.verdict_c5a([pair(0.02, source="cross-check")], [pair(0.01), pair(0.5, npix=128)])
    assert (found.passed, found.total) == (1, 2)
    assert agreement.verdict_c5a([pair(0.2, source="cross-check")], [pair(0.01)]).passed == 0
    assert agreement.verdict_c5a([], [pair(0.01), pair(0.01, first=NUMPY, second=TORCH_CPU)]).total == 1
    short = judging.Pair(TORCH_CPU, NUMPY, 64, 3, 0.5, "Mahalanobis", False)
    assert agreement.verdict_c5a([], [pair(0.01), short]).not_comparable == 0  # compared by its other refit


def test_c6_verdict_both_ways():
    def mirror(share):
        return types.SimpleNamespace(share=share)

    assert agreement.verdict_c6(mirror(0.85)).verdict == judging.REPRODUCED
    assert agreement.verdict_c6(mirror(0.7)).verdict == judging.PARTLY
    assert agreement.verdict_c6(mirror(0.3)).verdict == judging.NOT_REPRODUCED


def test_points_stopped_at_the_budget_read_as_bounds_and_older_estimates_as_estimates(no_references, tmp_path,
                                                                                        monkeypatch):
    from replication.core import optimum
    from replication.core.results import append_record, read_records

    monkeypatch.setattr(optimum, "TARGET", 1e-9)  # no fit stopped after one iteration comes this close
    monkeypatch.setitem(sweep.PROFILES, "tiny", sweep.Profile(npix=(16,), nzern=(2,), repeats=1, budget_s=1e-6))
    run = runs.create_run(tmp_path / "run", machine_record())
    sweep.run_sweep(SweepSettings("tiny", impls=("numpy", "torch-cpu"), threads=1), run / "sweep-tiny", quiet=True)
    text = render_all([run], no_references, output=run, figures=run / "figures")["runs/your-run.md"]
    row = next(line for line in text.splitlines() if line.startswith("| 16 | 2 |"))
    assert row.count(">= ") == 6
    assert row.count("†") == 6
    assert "(est.)" not in row
    older = run / "sweep-older"  # what sweeps before 2026-12-02 wrote for a point over the budget
    older.mkdir()
    for record in read_records(run / "sweep-tiny" / "points.jsonl"):
        append_record(older / "points.jsonl", {key: value for key, value in record.items() if key not in (
            "target", "time_limit_s", "stopped_at_limit")} | {"estimated": True, "setup_s": None, "total_s": None,
                                                              "outcome": None, "fit_s": {"median": 2.0}})
    shutil.rmtree(run / "sweep-tiny")
    older.rename(run / "sweep-tiny")
    text = render_all([run], no_references, output=run, figures=run / "figures")["runs/your-run.md"]
    row = next(line for line in text.splitlines() if line.startswith("| 16 | 2 |"))
    assert row.count("~2 (est.)") == 6


def test_committed_report_is_exactly_what_the_reference_runs_render(reference_texts):
    texts = reference_texts
    for name, text in texts.items():
        assert (PAPER / name).read_text() == text, (
            f"{name}: re-run `python -m replication report --reference-only` and commit the result")
    assert sorted(path.name for path in (PAPER / "runs").glob("*.md")) == sorted(
        name.removeprefix("runs/") for name in texts if name.startswith("runs/"))
    assert owned_files(PAPER / "runs") == {name.removeprefix("runs/") for name in texts if name.startswith("runs/")}


def test_rendering_twice_gives_the_same_bytes(smoke_run, smoke_drawing, no_references, tmp_path):
    all_runs = load_runs([smoke_run], no_references)  # the references' drawing: the committed figures test
    folder, paths = smoke_drawing
    first = {path.relative_to(folder): path.read_bytes() for path in paths}
    second = {path.relative_to(tmp_path / "b"): path.read_bytes() for path in draw_all(all_runs, tmp_path / "b")}
    assert {path.suffix for path in first} == {".png", ".svg"}
    assert first == second
    assert render([smoke_run], no_references, output=smoke_run, figures=folder) == render(
        [smoke_run], no_references, output=smoke_run, figures=folder)
    assert all(b"<dc:date>" not in content for content in first.values())


@pytest.fixture(scope="module")
def variants_run(tmp_path_factory):
    """A run with every gradient timed at npix 16 and 32, one order (so each median is the one ratio)."""
    run = runs.create_run(tmp_path_factory.mktemp("variants") / "2026-01-02_test", machine_record())
    profile = sweep.Profile(npix=(16, 32), nzern=(2,), repeats=1, budget_s=30.0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sweep.PROFILES, "smoke", profile)
        settings = SweepSettings("smoke", impls=("numpy", "torch-cpu"), threads=1,
                                 gradients=("finite-differences", "adjoint", "autograd"))
        sweep.run_sweep(settings, run / "sweep-smoke", quiet=True)
    return run


def test_gradient_variants_are_series_of_their_own(variants_run):
    (run,) = load_runs([variants_run], reference=variants_run / "none")
    assert {str(name) for name in run.series} == {"numpy", "numpy [adjoint]", "torch-cpu", "torch-cpu [adjoint]",
                               "torch-cpu [finite-differences]", "torch-cpu (float32)",
                               "torch-cpu [on-device BFGS]", "torch-cpu [Gauss-Newton start]",
                               "torch-cpu [Gauss-Newton start per grid]",
                               "torch-cpu [adjoint] [Gauss-Newton start per grid]"}
    # the gradient variants in float64, with scipy's BFGS from the identity, and the exact adjoint from the per-grid
    # matrix too (torch's fastest path)
    nfev = {str(name): points[(32, 2)].outcome.nfev for name, points in run.series.items()}
    assert nfev["numpy [adjoint]"] < nfev["numpy"]
    assert nfev["torch-cpu [finite-differences]"] > nfev["torch-cpu"]


def test_the_decomposition_multiplies_back_to_the_whole(variants_run):
    (run,) = load_runs([variants_run], reference=variants_run / "none")
    result = mechanism.decomposition(run.series)
    assert [name for name, *_ in result.factors] == ["algorithm", "library", "autograd", "start"]  # no GPU
    assert result.last == TORCH_SEEDED
    for npix, row in result.rows.items():
        assert row.orders == [2]
        product = row["algorithm"] * row["library"] * row["autograd"] * row["start"]
        assert product == pytest.approx(row.whole, rel=1e-12), npix
        assert row.product_is_whole
    text = render([variants_run], variants_run / "none-ref", output=variants_run, figures=variants_run / "figures")
    assert "## Where the speed-up comes from" in text
    assert "the product column equals the whole" in text


def test_the_factors_form_a_chain_from_numpy_and_the_start_follows_the_device_where_it_was_measured():
    from replication.core.series import NUMPY_ADJOINT, TORCH_ADJOINT

    measured = {NUMPY, NUMPY_ADJOINT, TORCH_ADJOINT, TORCH_CPU, TORCH_SEEDED}
    names = [(name, fast) for name, _, fast, _ in mechanism.chain_of(measured)]
    assert names == [("algorithm", NUMPY_ADJOINT), ("library", TORCH_ADJOINT), ("autograd", TORCH_CPU),
                     ("start", TORCH_SEEDED)]
    on_gpu = [(name, fast) for name, _, fast, _ in mechanism.chain_of(measured | {TORCH_CUDA, CUDA_SEEDED})]
    assert on_gpu[-2:] == [("device", TORCH_CUDA), ("start", CUDA_SEEDED)]
    assert [name for name, *_ in mechanism.chain_of(measured - {TORCH_ADJOINT})] == ["algorithm"]


def test_geometric_means_over_orders_multiply_where_medians_would_not():
    """Three orders whose factor ratios have different medians: the geometric means still multiply."""
    from conftest import measured_point

    def point(seconds, nzern):
        return measured_point(128, nzern, seconds)

    times = {"numpy": (12.0, 40.0, 90.0), "numpy [adjoint]": (1.0, 8.0, 3.0),
             "torch-cpu [adjoint]": (1.0, 2.0, 2.0), "torch-cpu": (0.4, 2.0, 0.5)}
    series = {Series.parse(name): {(128, n): point(t, n) for n, t in zip((2, 4, 8), values, strict=True)}
              for name, values in times.items()}
    row = mechanism.decomposition(series).rows[128]
    medians = [statistics.median(point_times.speedups(series, slow, fast).values())
               for _, slow, fast, _ in mechanism.FACTORS[:3]]
    whole = statistics.median(point_times.speedups(series, NUMPY, TORCH_CPU).values())
    assert math.prod(medians) != pytest.approx(whole, rel=1e-3)  # medians of ratios do not multiply
    assert row.product == pytest.approx(row.whole, rel=1e-12)
    assert row.product_is_whole


def test_the_decomposition_figure_is_drawn(variants_run, tmp_path):
    (tmp_path / "none").mkdir()
    paths = draw_all(load_runs([variants_run], reference=tmp_path / "none"), tmp_path / "figures")
    assert {"fig6_speedup_decomposition.png", "fig6_speedup_decomposition.svg"} <= {path.name for path in paths}


def test_a_run_without_variants_has_no_decomposition(smoke_run, no_references):
    (run,) = load_runs([smoke_run], no_references)
    assert not mechanism.decomposition(run.series)


def test_rewording_a_tree_changes_no_byte_of_the_committed_report(monkeypatch):
    """Runs are shown with their own code: C6 and the side-by-side page come from the runs' commits, and whether a
    run's code is main's is judged on syntax trees without docstrings. A docstring changed in torch_impl/ therefore
    leaves every rendered byte as committed; a change of code marks the runs stale."""
    from replication.core import model_code

    real = model_code.working_sources()
    path = "torch_impl/likelihood.py"
    start = real[path].index('"""') + 3
    reworded = real | {path: real[path][:start] + "Reworded. " + real[path][start:]}
    assert model_code.identity(reworded).hash == model_code.identity(real).hash
    monkeypatch.setattr(model_code, "working_sources", lambda root=None: reworded)
    for name, text in render_all().items():
        assert (PAPER / name).read_text() == text, name
    changed = real | {path: real[path] + "\nCHANGED = 1\n"}
    monkeypatch.setattr(model_code, "working_sources", lambda root=None: changed)
    assert "stale: model code differs from main's" in both(render_all())


def test_committed_figures_are_what_the_reference_runs_draw_and_no_tick_labels_overlap(monkeypatch, tmp_path):
    """Every figure the reference runs draw (drawn once, for both checks) is byte for byte the committed one, no
    committed figure is stale; and, laid out as saved, no two visible tick labels of an axis overlap."""
    from replication.core import plotting

    drawn = []
    real_save = plotting.save

    def keep(figure, folder, name):
        drawn.append((name, figure))
        return real_save(figure, folder, name)

    for module in [module for name, module in sys.modules.items() if name.startswith("replication.")]:
        if getattr(module, "save", None) is real_save:  # every figure module saves through plotting.save
            monkeypatch.setattr(module, "save", keep)
    paths = draw_all(load_runs([]), tmp_path)
    for path in paths:
        name = path.relative_to(tmp_path)
        assert path.read_bytes() == (FIGURES / name).read_bytes(), (
            f"{name}: re-run `python -m replication figures --reference-only` and commit the result")
    committed = {path.relative_to(FIGURES) for path in FIGURES.rglob("*") if path.is_file()}
    manifest = pathlib.Path("runs", MANIFEST)
    assert committed - {manifest} == {path.relative_to(tmp_path) for path in paths}, "stale figures under figures/"
    assert owned_files(FIGURES / "runs") == {path.relative_to(tmp_path / "runs").as_posix() for path in paths
                                             if path.is_relative_to(tmp_path / "runs")}
    assert drawn
    for name, figure in drawn:
        renderer = figure.canvas.get_renderer()
        for axis in figure.axes:
            for ticks in (axis.get_xticklabels(), axis.get_yticklabels()):
                boxes = [label.get_window_extent(renderer) for label in ticks
                         if label.get_visible() and label.get_text()]
                for i, first in enumerate(boxes):
                    for second in boxes[i + 1:]:
                        assert not first.overlaps(second), f"{name}: tick labels overlap on {axis.get_title()!r}"


def test_a_source_archive_renders_the_committed_report_byte_for_byte(tmp_path):
    """`git archive HEAD | tar -x` (how releases ship) holds no git history: the runs' model code at their recorded
    commits is read from paper/model_code.json, so the rendering there is the committed one, byte for byte; and the
read side renders it all without loading torch."""
    import subprocess
    import sys

    from replication.core.paths import ROOT

    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: no archive to make")
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp_path)], input=archive, check=True)
    environment = {**os.environ, "OOF_REPLICATION_ROOT": str(tmp_path), "GIT_CEILING_DIRECTORIES": str(tmp_path.parent)}
    # `python -m replication report --reference-only --check`, then which torch modules the rendering loaded
    script = ("import sys; from replication.cli import main; done = main(['report', '--reference-only', '--check']); "
              "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'torch_impl', 'torchmin',"
              " 'jax'))); sys.exit(done)")
    checked = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=environment, capture_output=True,
                             text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "DIFFERS" not in checked.stdout
    assert "LOADED []" in checked.stdout.splitlines(), "the read side rendered the report with torch loaded"


def test_the_committed_report_and_its_details_stay_short():
    """The answer under 16 kB, every verdict under 30 kB: what is longer lives one link away (METHODS.md, the real
    maps' REAL_MAPS.md, each run's appendix)."""
    from replication.core.paths import PAPER

    assert len((PAPER / "REPORT.md").read_bytes()) < 16_000
    assert len((PAPER / "DETAILS.md").read_bytes()) < 30_000

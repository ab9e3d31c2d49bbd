"""Figures and report: rendered from smoke results, verdict rules both ways, committed report up to date."""

import pytest

from replication import analysis, crosscheck, sweep
from replication.figures import draw_all
from replication.paths import PAPER, RESULTS
from replication.report import claims_summary, render


@pytest.fixture(scope="module")
def smoke_results(tmp_path_factory):
    """Smoke sweep and smoke cross-check results, made in-process once for the module."""
    root = tmp_path_factory.mktemp("results")
    sweep.run_sweep("smoke", root / "smoke", ["numpy", "torch-cpu"], threads=1, quiet=True)
    crosscheck.run_crosscheck(root / "crosscheck", points="smoke", threads=1)
    return root


def render_smoke(root):
    return render(root / "smoke", gpu_results=root / "no-gpu", crosscheck_folder=root / "crosscheck",
                  bench_folder=root / "no-bench")


def test_report_renders_from_smoke_results(smoke_results):
    text = render_smoke(smoke_results)
    table = claims_summary(text)
    for claim in ("C1", "C2", "C3", "C4", "C5", "C6"):
        assert f"| {claim} |" in table
    assert table.count("not measured here") == 3  # C1 and C2 need a GPU, C3 grids of npix >= 128
    assert "## Timing" in text
    assert "Not run: `nox -s bench`" in text
    assert "| 32 | 3 |" in text


def test_every_figure_is_written_and_not_empty(smoke_results, tmp_path):
    paths = draw_all(smoke_results / "smoke", tmp_path, gpu_results=smoke_results / "no-gpu",
                     crosscheck_folder=smoke_results / "crosscheck")
    names = {path.name for path in paths}
    for figure in ("fig1_time_vs_grid_size", "fig2_time_vs_zernike_order", "fig3_speedup_vs_grid_size",
                   "fig4_example_fit", "fig5_agreement"):
        assert {f"{figure}.png", f"{figure}.svg"} <= names
    assert all(path.stat().st_size > 5000 for path in paths)


@pytest.mark.parametrize(
    ("verdict", "met", "partly", "missed"),
    [
        (analysis.verdict_c1, {(512, 4): 60.0}, {(512, 4): 20.0}, {(512, 4): 3.0}),
        (analysis.verdict_c2, {(256, 2): 6.0, (512, 2): 8.0}, {(256, 2): 3.0}, {(256, 2): 1.5, (64, 2): 50.0}),
        (analysis.verdict_c3, {(128, 2): 9.0, (32, 2): 1.0}, {(256, 4): 2.5}, {(512, 2): 1.2, (32, 2): 40.0}),
        (analysis.verdict_c4, {(512, 2): 10.0, (512, 8): 12.0}, {(512, 2): 4.0, (512, 8): 12.0},
         {(512, 2): 2.0, (512, 8): 20.0}),
    ],
)
def test_speed_up_verdicts_both_ways(verdict, met, partly, missed):
    assert verdict(met)["verdict"] == analysis.REPRODUCED
    assert verdict(partly)["verdict"] == analysis.PARTLY
    assert verdict(missed)["verdict"] == analysis.NOT_REPRODUCED
    assert verdict({})["verdict"] == analysis.NOT_MEASURED


def test_c2_and_c3_must_hold_at_every_grid_size():
    ratios = {(256, 2): 2.5, (256, 4): 2.6, (512, 2): 12.0, (512, 4): 12.0, (512, 6): 14.0}
    result = analysis.verdict_c2(ratios)
    assert result["by_npix"] == {256: 2.55, 512: 12.0}
    assert result["value"] == 2.55
    assert result["verdict"] == analysis.PARTLY
    assert analysis.verdict_c3({(64, 2): 1.0, **ratios})["value"] == 2.55  # below 128 does not count


def test_c4_uses_the_largest_grid_with_several_orders():
    result = analysis.verdict_c4({(512, 2): 10.0, (1024, 2): 1.0, (256, 2): 1.0, (256, 8): 50.0, (512, 8): 11.0})
    assert result["npix"] == 512
    assert result["value"] == pytest.approx(1.1)


def test_c5_verdict_both_ways():
    good = [{"check": "fit parameters", "passed": True}, {"check": "beams", "passed": False}]
    assert analysis.verdict_c5(good, [{"max_stderr": 0.01}])["verdict"] == analysis.REPRODUCED
    assert analysis.verdict_c5(good, [{"max_stderr": 0.5}])["verdict"] == analysis.NOT_REPRODUCED
    many = [{"max_stderr": 0.01}] * 19 + [{"max_stderr": 0.5}]
    assert analysis.verdict_c5([], many)["verdict"] == analysis.PARTLY
    assert analysis.verdict_c5([], [])["verdict"] == analysis.NOT_MEASURED


def test_c6_verdict_both_ways():
    assert analysis.verdict_c6({"share": 0.85})["verdict"] == analysis.REPRODUCED
    assert analysis.verdict_c6({"share": 0.7})["verdict"] == analysis.PARTLY
    assert analysis.verdict_c6({"share": 0.3})["verdict"] == analysis.NOT_REPRODUCED


def test_estimated_points_are_marked_in_the_report(smoke_results, tmp_path, monkeypatch):
    monkeypatch.setitem(sweep.PROFILES, "tiny", sweep.Profile(npix=(16,), nzern=(2,), repeats=1, budget_s=0.0))
    sweep.run_sweep("tiny", tmp_path / "tiny", ["numpy", "torch-cpu"], threads=1, quiet=True)
    text = render(tmp_path / "tiny", gpu_results=tmp_path / "none", crosscheck_folder=tmp_path / "none",
                  bench_folder=tmp_path / "none")
    row = next(line for line in text.splitlines() if line.startswith("| 16 | 2 |"))
    assert row.count("(est.)") == 3


def test_committed_report_is_exactly_what_the_results_render():
    committed = (PAPER / "REPORT.md").read_text()
    assert committed == render(RESULTS / "quick"), "re-run `python -m replication report` and commit the result"

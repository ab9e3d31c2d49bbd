"""Every sentence the report prints must be true of its numbers: a synthetic run whose numbers would make the
old statements false (a fast fit that stopped short, a C1 point elsewhere than the largest grid, factors that do
not multiply), and checks that the report says what its numbers say."""

import dataclasses
import json
import pathlib
import types

import msgspec
import pytest
from conftest import both, measured_point

from replication.claims import design, mechanism, speed
from replication.claims.mechanism import decomposition_run
from replication.claims.retrieval import retrieval_claims
from replication.core import format as fmt
from replication.core import judging, point_times, runs, timing
from replication.core.environment import machine_record
from replication.core.mirror import mirror_table
from replication.core.objectives import CAUCHY
from replication.core.paths import PAPER, REFERENCE
from replication.core.problem import Problem
from replication.core.series import JAX, NUMPY, TORCH_ADJOINT, TORCH_CPU, TORCH_CUDA
from replication.report import cells, load, sections
from replication.report import render as report
from replication.report.render import render_all
from replication.report.screen import design_rows
from replication.studies.bench import read as bench_read
from replication.studies.bench.records import BenchRead
from replication.studies.peers import read as peers_read
from replication.studies.retrieval.records import FROM_TRUTH, PLAIN, read_retrieval
from replication.studies.sweep import read as sweep_read

SOURCE = REFERENCE / "2026-12-01_vm_xeon-2c" / "sweep-quick"
"""Real records to start from (valid by construction); the tests change the numbers that matter."""


def records():
    return [json.loads(line) for line in (SOURCE / "points.jsonl").read_text().splitlines()]


def write_run(folder, points, threads=3, cores=7):
    """A run folder holding a quick Cauchy sweep of the given records, timed with `threads` of `cores`."""
    runs.create_run(folder, machine_record())
    sweep = folder / "sweep-quick"
    sweep.mkdir()
    environment = json.loads((SOURCE / "runs.jsonl").read_text().splitlines()[0])
    environment |= {"threads": threads, "cpu_count": cores}
    (sweep / "runs.jsonl").write_text(json.dumps(environment) + "\n")
    (sweep / "points.jsonl").write_text("".join(json.dumps(record) + "\n" for record in points))
    return folder


def scaled(seconds, factor):
    """A timing summary (median, min, max, all) with every time multiplied by factor."""
    return {key: [v * factor for v in value] if key == "all" else value * factor for key, value in seconds.items()}


def paper_series(points):
    return [r for r in points if r["impl"] in ("numpy", "torch-cpu") and r["dtype"] == "float64"
            and not r.get("gradient") and (r.get("minimizer") or "scipy") == "scipy"]


@pytest.fixture
def synthetic(tmp_path):
    """NumPy and torch-cpu of the reference run, plus a torch-cuda series 40x faster than torch-cpu except at
    (128, 4), 300x; and a torch-cpu fit at (512, 4) that stopped short of the optimum in 1 ms."""
    points = paper_series(records())
    cuda = []
    for record in points:
        if record["impl"] == "torch-cpu":
            factor = 300.0 if (record["npix"], record["nzern"]) == (128, 4) else 40.0
            copy = json.loads(json.dumps(record)) | {"impl": "torch-cuda"}
            copy["total_s"] = scaled(record["total_s"], 1 / factor)
            cuda.append(copy)
    for record in points:
        if (record["impl"], record["npix"], record["nzern"]) == ("torch-cpu", 512, 4):
            record["total_s"] = scaled(record["total_s"], 1e-3 / record["total_s"]["median"])
            # both accounts (the sandwich one is read where the run recorded it): 5x the rule's 0.1 SE
            record["outcome"]["convergence"] |= {"newton_stderr": 0.5, "newton_sandwich": 0.5}
    (tmp_path / "reference").mkdir()
    return write_run(tmp_path / "synthetic", points + cuda), tmp_path / "reference"


def test_a_fit_that_stopped_short_enters_no_ratio_and_is_marked(synthetic):
    run_folder, references = synthetic
    texts = render_all([run_folder], references, output=run_folder, figures=run_folder / "figures")
    (run,) = report.load_runs([run_folder], references)
    ratios = point_times.speedups(run.series, NUMPY, TORCH_CPU)
    assert (512, 4) not in ratios
    row = next(line for line in texts["runs/your-synthetic.md"].splitlines() if line.startswith("| 512 | 4 |"))
    assert "0.001 †" in row
    cells = [cell.strip() for cell in row.split("|")]
    assert cells[-4] == "—"  # numpy / torch-cpu at that point: no ratio
    c3 = speed.verdict_c3(sweep_read.complete_sizes(run.series, NUMPY, TORCH_CPU))
    assert f"{fmt.times(c3.value)} at npix" in both(texts)
    reasons = sweep_read.left_out(run.series)
    assert f"{reasons['stopped before the optimum']} stopped before the optimum" in both(texts)
    assert "their times enter no ratio" in both(texts)


def test_c1_names_its_point_and_the_threads_numpy_had(synthetic):
    run_folder, references = synthetic
    text = both(render_all([run_folder], references, output=run_folder, figures=run_folder / "figures"))
    (run,) = report.load_runs([run_folder], references)
    c1 = speed.verdict_c1(point_times.speedups(run.series, NUMPY, TORCH_CUDA))
    assert c1.point == (128, 4)  # the largest ratio is not at the largest grid: the cell must say both
    largest = fmt.times(c1.max, False)
    assert (f"{fmt.times(c1.value)} at npix {c1.npix} (max {largest} at npix 128, n = 4); "
            "NumPy on 3 of 7 cores") in text
    assert "torch-cpu on 3 of 7 cores" in text


def test_the_product_sentence_is_printed_only_where_the_factors_multiply_to_the_whole(synthetic, monkeypatch):
    run_folder, references = synthetic
    real = mechanism.decomposition

    def off_by_a_tenth(series):
        result = real(series)
        return dataclasses.replace(result, rows={npix: dataclasses.replace(
            row, ratios=row.ratios | {mechanism.WHOLE: row.whole * 1.1}, product_is_whole=False)
            for npix, row in result.rows.items()})

    variants = records()
    write = write_run(run_folder.parent / "variants", variants)
    text = both(render_all([write], references, output=write, figures=write / "figures"))
    assert "the product column equals the whole" in text
    monkeypatch.setattr(mechanism, "decomposition", off_by_a_tenth)
    text = both(render_all([write], references, output=write, figures=write / "figures"))
    assert "## Where the speed-up comes from" in text
    assert "the product column equals the whole" not in text
    assert "taken over different points" in text


def test_the_warm_up_the_report_describes_is_the_one_the_timing_makes(reference_texts):
    """The report says one untimed value and gradient precedes the timed fits: time_fit's first call."""
    calls = []

    class Package:
        def value_and_grad(self, *args, **kwargs):
            calls.append("value_and_grad")

        def negative_log_likelihood(self, *args, **kwargs):
            calls.append("negative_log_likelihood")

        def fit(self, *args, **kwargs):
            calls.append("fit")
            return types.SimpleNamespace(status=0)

    class Impl:
        package, gradient_name, minimizer, fit_options = Package(), "autograd", "scipy", {"minimizer": "scipy"}
        name, dtype, device = "stand-in", "float64", "cpu"

        def make_setup(self, npix, nzern):
            return None

        def synchronize(self):
            pass

        def fit_keywords(self, problem, p0):
            return self.fit_options

    timing.time_fit(Impl(), Problem.simulated(16, 2, CAUCHY), None, repeats=2, tol=1e-8)
    assert calls == ["value_and_grad", "fit", "fit"]
    text = both(reference_texts)
    assert "after one untimed value and\n  gradient with the fit's own gradient" in text


def test_c6_counts_only_modules_that_differ(reference_texts):
    """The readability section counts the code of the newest run shown (report.mirror_sources), module pairs that
    differ only."""
    from replication.core import model_code

    text = both(reference_texts)
    all_runs = report.load_runs([])
    main = model_code.identity(model_code.working_sources())
    codes = {run.folder: cells.run_code(run, main) for run in all_runs}
    _rows, total, identical = mirror_table(report.mirror_sources(all_runs, codes))
    assert f"**{total.same} of {total.total} ({100 * total.share:.0f}%)**" in text
    if identical.modules:
        assert f"({identical.lines} lines that" in text
        assert identical.modules[0] in text.split("Identical by construction")[1].split("\n")[0]
    else:  # the shown code keeps no byte-identical module in the two trees: nothing is set apart
        assert "Identical by construction" not in text


def test_a_size_with_a_fit_that_stopped_short_is_left_out_of_the_per_size_verdicts(synthetic):
    """C3's median at a size must be over every order measured there: a size with a non-solution is left out,
    not judged on the orders that remain."""
    run_folder, references = synthetic
    (run,) = report.load_runs([run_folder], references)
    every = point_times.speedups(run.series, NUMPY, TORCH_CPU)
    complete = sweep_read.complete_sizes(run.series, NUMPY, TORCH_CPU)
    left_out = {key[0] for key in every} - {key[0] for key in complete}
    assert 512 in left_out  # the stopped-short torch fit
    assert left_out <= {512, 32}  # and npix 32, whose n = 8 is not identifiable
    assert all(key in complete for key in every if key[0] not in left_out)
    assert 512 not in speed.verdict_c3(complete).by_npix


def test_the_p_dependence_sentence_needs_both_matched_gradients_to_hold(monkeypatch, reference_texts):
    sentence = "comes from NumPy's finite differences"
    real = mechanism.decomposition
    shown = decomposition_run(report.load_runs([]))
    text = both(reference_texts)
    if sentence in text:
        c4 = real(shown.series).c4
        assert [c4["finite differences"].verdict, c4["exact (adjoint)"].verdict] == ["reproduced"] * 2

    def adjoint_fails(series):
        result = real(series)
        if result:
            result.c4["exact (adjoint)"] = dataclasses.replace(result.c4["exact (adjoint)"],
                                                            verdict=judging.NOT_REPRODUCED)
        return result

    monkeypatch.setattr(mechanism, "decomposition", adjoint_fails)
    assert sentence not in both(render_all())


def test_c4_reads_the_same_whether_a_run_measured_more_orders_than_the_fixed_set(tmp_path):
    """Two runs with the same records at n = 2, 4, 6, 8, one also with n = 3: the same C4 cell in the report."""
    points = paper_series(records())
    (tmp_path / "reference").mkdir()
    every = write_run(tmp_path / "every", points)
    fixed = write_run(tmp_path / "fixed", [r for r in points if r["nzern"] != 3])
    cells = []
    for run in (every, fixed):
        text = both(render_all([run], tmp_path / "reference", output=run, figures=run / "figures"))
        cells.append(next(line for line in text.splitlines() if line.startswith("| C4:")))
    assert cells[0] == cells[1]
    assert "slope" in cells[0]


def peer_record(npix, nzern, seconds, nfev):
    """A measured fit that ended with success (no exact account): a time to solution of `seconds`."""
    return measured_point(npix, nzern, seconds, nfev=nfev, fit_s={"median": seconds - 0.01})


def test_the_peers_section_names_the_fastest_and_says_why_from_the_numbers():
    from replication.core.series import JAX

    series = {TORCH_ADJOINT: {(256, 4): peer_record(256, 4, 0.05, 30), (512, 4): peer_record(512, 4, 0.4, 30)},
              JAX: {(256, 4): peer_record(256, 4, 0.06, 30), (512, 4): peer_record(512, 4, 0.3, 30)}}
    peers = peers_read.peers(series)
    fastest = {(row.npix, row.nzern): row.fastest for row in peers.rows}
    assert fastest == {(256, 4): TORCH_ADJOINT, (512, 4): JAX}
    assert peers.readings[0].startswith("npix 256, n = 4: fastest torch-cpu [adjoint] (0.05 s)")
    assert peers.readings[1].startswith("npix 512, n = 4: fastest jax (0.3 s)")
    assert "torch's exact adjoint took 0.83x JAX's time with 30 evaluations to JAX's 30" in peers.readings[0]
    assert "torch's exact adjoint took 1.33x JAX's time" in peers.readings[1]
    target = next(t for t in peers.targets if "at most JAX's" in t.target)
    assert target.met is False  # 512 is slower, though 256 is faster
    series[TORCH_ADJOINT][(512, 4)] = peer_record(512, 4, 0.29, 30)
    assert next(t for t in peers_read.peers(series).targets if "at most JAX's" in t.target).met is True


def test_the_fastest_paths_target_is_judged_at_the_median_over_the_points():
    """torch's fastest path against JAX from the same matrix: met where the median ratio over the points is at most 1,
    whatever one point says; the reading names both evaluation counts and the cost of each."""
    from replication.core.series import JAX_GRID_SEEDED, TORCH_FASTEST

    def judged(series):
        pair = f"{TORCH_FASTEST} / {JAX_GRID_SEEDED}"
        return next(t for t in peers_read.peers(series).targets if t.pair == pair)

    points = ((256, 4), (256, 8), (512, 4), (512, 8))
    times = (0.02, 0.03, 0.09, 0.5)
    fastest = {key: peer_record(*key, seconds, 12) for key, seconds in zip(points, times, strict=True)}
    series = {TORCH_FASTEST: fastest, JAX_GRID_SEEDED: {key: peer_record(*key, 0.1, 12) for key in points}}
    target = judged(series)
    assert len(target.ratios) == 4
    assert target.met is True  # ratios 0.2, 0.3, 0.9, 5: median 0.6
    series[TORCH_FASTEST][(256, 8)] = peer_record(256, 8, 0.3, 12)  # ratios 0.2, 3, 0.9, 5: median 1.95
    assert judged(series).met is False
    reading = peers_read.peers(series).readings[0]
    assert "from the same per-grid matrix, torch's exact adjoint took 0.20x JAX's time with 12 evaluations" in reading


def test_the_algorithmic_limit_is_the_fewest_evaluations_times_the_fastest_floor():
    """A point's limit: the fewest evaluations to the target of any way there (its first repeat's) times the
    fastest floor of the bench at the sweep's threads; a way's time over it; the target met at <= 3x everywhere."""
    from replication.core.series import JAX_GRID_SEEDED, TORCH_FASTEST
    from replication.studies.bench.records import BenchRow

    def targeted(npix, nzern, seconds, evaluations):
        target = {"se": 0.1, "times": [seconds, seconds], "reached": 2, "end_distance": 0.01,
                  "evaluations": [evaluations, evaluations]}
        return measured_point(npix, nzern, seconds, total_s={"median": seconds, "all": [seconds, seconds]},
                              target=target)

    series = {TORCH_FASTEST: {(512, 8): targeted(512, 8, 0.12, 9), (256, 4): targeted(256, 4, 0.02, 7)},
              JAX_GRID_SEEDED: {(512, 8): targeted(512, 8, 0.09, 8), (256, 4): targeted(256, 4, 0.01, 7)}}
    rows = [BenchRow(npix=npix, nzern=5, threads=threads, ms={"floor_torch": torch_ms, "floor_jax": jax_ms},
                     x_floor={"floor_torch": 1.0, "floor_jax": jax_ms / torch_ms})
            for npix, threads, torch_ms, jax_ms in ((512, 1, 5.0, 4.0), (512, 2, 3.0, 2.5), (256, 1, 1.0, 1.2))]
    floors = bench_read.fastest_floors(BenchRead(environments=[], floor="", rows=rows), 1)
    assert floors == {512: 4.0, 256: 1.0}
    peers = peers_read.peers(series, floors)
    by_point = {(row.npix, row.nzern): row for row in peers.limits}
    assert by_point[(512, 8)].evaluations == 8
    assert by_point[(512, 8)].best == JAX_GRID_SEEDED
    assert by_point[(512, 8)].limit_ms == pytest.approx(32.0)
    assert by_point[(512, 8)].over[TORCH_FASTEST] == pytest.approx(0.12 / 0.032)
    assert by_point[(256, 4)].over[TORCH_FASTEST] == pytest.approx(0.02 / 0.007)
    target = peers.targets[-1]
    assert target.target.startswith("torch's fastest path within 3x of the algorithmic limit")
    assert target.met is False  # 3.75x at 512/8
    series[TORCH_FASTEST][(512, 8)] = targeted(512, 8, 0.09, 9)
    assert peers_read.peers(series, floors).targets[-1].met is True
    assert peers_read.peers(series).limits == []  # no bench: no limit


def test_the_retrieval_section_says_what_its_fits_say(synthetic):
    from test_retrieval import record


    run_folder, references = synthetic
    fits = []
    for seed in (1, 2):
        fits += [record(TORCH_ADJOINT, FROM_TRUTH, fun=-100.0, seed=seed),
                 record(NUMPY, PLAIN, fun=-100.0, seed=seed, seconds=9.0),
                 record(TORCH_CPU, PLAIN, fun=-100.0 + (28.0 if seed == 2 else 0.0), seed=seed,
                        seconds=1.0)]
    for order in (2, 4, 6, 8):  # C4's orders at npix 128: the speed-up grows with P
        for method, seconds in ((TORCH_ADJOINT, 0.5), (NUMPY, float(order)), (TORCH_CPU, 1.0)):
            start = FROM_TRUTH if method == TORCH_ADJOINT else PLAIN
            fits.append(record(method, start, fun=-10.0, seed=1, seconds=seconds) | {"npix": 128, "nzern": order})
    folder = run_folder / "retrieval-quick"
    folder.mkdir()
    (folder / "points.jsonl").write_text("".join(json.dumps(fit) + "\n" for fit in fits))
    texts = render_all([run_folder], references, output=run_folder, figures=run_folder / "figures")
    main = both(texts)[both(texts).index("## Retrieval from a cold start"):]
    appendix = texts["runs/your-synthetic.md"]
    assert "12 cold-start fits; 11 global optimum, 1 local minimum." in appendix
    interval = fmt.share_range(judging.wilson(5, 6))
    assert f"| 1 | 6 of 6 (61-100%); 0.01 | 5 of 6 ({interval}); 0.01 | 0.01 |" in appendix  # rms 1: numpy, torch
    c3, c4 = retrieval_claims(read_retrieval(folder / "points.jsonl")).values()
    assert c3.by_npix == {128: pytest.approx(5.0)}  # medians of 2, 4, 6, 8 (32: too small)
    assert c4.verdict == "not reproduced"
    assert f"| C3: CPU torch ~10x NumPy | {fmt.times(c3.value)} at npix 128: **reproduced** |" in appendix
    assert f"slope {c4.value:.2f} at npix 128" in appendix
    assert f"C3 {fmt.times(c3.value)} at npix 128: reproduced" in main  # DETAILS' line of the run
    assert "| 32 | 3 | 1 | 2/2; 9 s, 12 ev; 0.01 rad | 1/2; 1 s, 12 ev; 0.01 rad | 0.02 |" in appendix


def test_the_compiled_variant_sentences_say_where_each_way_was_fastest(tmp_path):
    """Compiled autograd faster than eager at npix 256 only; the adjoint fastest at 128 only: the appendix says
    exactly that, from the bench-compile rows."""
    run_folder = write_run(tmp_path / "compiled", paper_series(records()))
    (tmp_path / "reference").mkdir()

    def row(npix, eager, compiled, adjoint):
        ms = {"floor_torch": 1.0, "torch_value_and_grad": eager, "torch_compiled_value_and_grad": compiled,
              "torch_adjoint_value_and_grad": adjoint}
        return {"npix": npix, "nzern": 5, "threads": 2, "ms": ms, "x_floor": dict(ms),
                "warm_up_s": {"torch_compiled_value_and_grad": 3.0}}

    session = json.loads((REFERENCE / "2026-12-05_vm_amd-epyc-2c-5" / "bench" / "bench.json").read_text())
    bench = {"rows": [row(128, 2.0, 2.5, 1.0), row(256, 4.0, 3.0, 3.5)], "environments": session["environments"][:1],
             "floor": session["floor"], "complete": True}  # a bench writes its session's environment before any row
    (run_folder / "bench-compile").mkdir()
    (run_folder / "bench-compile" / "bench.json").write_text(json.dumps(bench))
    reading = bench_read.compiled_reading(msgspec.convert(bench, BenchRead))
    assert (reading["faster"], reading["slower"]) == ("npix 256", "npix 128")
    assert (reading["adjoint_fastest"], reading["adjoint_not_fastest"]) == ("npix 128", "npix 256")
    text = render_all([run_folder], tmp_path / "reference", output=run_folder,
                      figures=run_folder / "figures")["runs/your-compiled.md"]
    assert "Compiled autograd is faster than eager autograd at npix 256 (not at npix 128);" in text
    assert "the eager exact adjoint is faster than both at npix 128 (not at npix 256)." in text


def test_the_jax_line_gives_the_range_of_the_runs_own_ratios():
    """The answer's line on JAX: for each reference run that timed JAX, the range of torch's time to solution over
    JAX's at npix 256 and 512 is that of the run's fits at the optimum; a peer that failed its gate gets no line."""
    text = (PAPER / "DETAILS.md").read_text()
    with_jax = [run for run in report.load_runs([], REFERENCE) if JAX in run.series]
    assert with_jax
    for run in with_jax:
        ratios = [value for (npix, _), value in point_times.speedups(run.series, TORCH_ADJOINT,
                                                                  JAX).items() if npix in (256, 512)]
        line = next(line for line in text.splitlines() if line.startswith("Against JAX") and run.title in line)
        assert f"exact adjoint {fmt.times(min(ratios), False)} to {fmt.times(max(ratios), False)}" in line
        run.peers_check = msgspec.structs.replace(run.peers_check, passed=False)
        assert sections.against_jax(run) is None


def test_the_first_screen_gives_the_answering_runs_own_verdicts_and_pools_nothing():
    """The answer's table: one column per objective of the run the design names to answer the claims, each C3 cell
    that run's own verdict recomputed here from its records; no other run's C3 value in the row; every line of the
    table has the table's columns; the sentence above it says the same C3 values."""
    from replication.core.objectives import CAUCHY, GAUSSIAN

    text = (PAPER / "REPORT.md").read_text()
    all_runs = report.load_runs([], REFERENCE)
    assert design.DESIGN[0].protocol is design.QUICK
    (answering,) = [run for run in all_runs if run.folder.name == design.DESIGN[0].folder]
    start = text.index("| Claim | The paper |")
    table = text[start:text.index("\n\n", start)].splitlines()
    assert [cell.strip() for cell in table[0].split("|")[1:-1]] == [
        "Claim", "The paper", "Least squares in noise units", "Cauchy likelihood"]
    assert len(table) == 2 + 5  # C1-C4 and C5a: the paper's claims
    assert {line.count("|") for line in table} == {5}
    row = next(line for line in table if line.startswith("| C3 | ")).split("|")
    briefs = []
    for objective, column in ((GAUSSIAN, 3), (CAUCHY, 4)):
        c3 = speed.verdict_c3(sweep_read.complete_sizes(answering.judged(objective)[1], NUMPY, TORCH_CPU))
        briefs.append(f"{fmt.times(c3.value, False)} (npix {judging.weakest_npix(c3.by_npix)})")
        assert row[column].strip() == f"{briefs[-1]}: {c3.verdict}"
    for run in all_runs:
        if run is not answering and run.series:
            other = speed.verdict_c3(sweep_read.complete_sizes(run.series, NUMPY, TORCH_CPU)).value
            if other is not None and fmt.times(other, False) not in briefs:
                assert fmt.times(other, False) not in "|".join(row[3:])
    answer = " ".join(text[text.index("## The answer"):start].split())
    assert (f"by {briefs[0]} under least squares in noise units and {briefs[1]} under the Cauchy likelihood, at the "
            "weakest grid size of npix >= 128 (the paper: ~10x)") in answer


def test_the_first_screen_is_narrow_and_says_each_bar_and_term_it_uses():
    """The first screen (sentences, table, legend, the runs beside it, the history, caveats, figure) stays within 120
    characters a line; the legend under the table gives every paper claim's bar as the claims hold it, and defines
    the slope and the bound."""
    from replication import claims

    text = (PAPER / "REPORT.md").read_text()
    first = text[:text.index("Every verdict of every run")].splitlines()
    assert max(map(len, first)) <= 120
    screen = " ".join(first)
    assert "![" in screen
    assert "Caveats:" in first
    for claim in claims.CLAIMS:
        if claim.paper:
            assert f"{claim.id} {claim.threshold}" in screen
    assert "A slope is that of log(speed-up) against log(P)" in screen
    assert "'>=' marks a bound" in screen


def test_the_answer_figure_caption_names_only_what_it_draws(synthetic):
    """The answer figure's caption is made from its plan: every series it names is drawn; it draws the run the
    design names to answer the claims, and no GPU history (that has a figure of its own)."""
    from replication.claims import answer_figure as answer_figures
    from replication.claims import design

    all_runs = report.load_runs([], REFERENCE)
    plan = answer_figures.answer_plan(all_runs)
    caption = answer_figures.answer_caption(plan)
    for label, *_ in plan.a + plan.b:
        assert label in caption
    assert plan.cpu.folder.name == design.DESIGN[0].folder
    assert "torch-cuda" not in caption
    run_folder, references = synthetic
    (own,) = report.load_runs([run_folder], references)
    without_gpu = {name: points for name, points in own.series.items() if name != TORCH_CUDA}
    own.sweeps["sweep-quick"] = (without_gpu, own.sweeps["sweep-quick"][1])
    alone = answer_figures.answer_plan([own])
    assert not any("torch-cuda" in label for label, *_ in alone.a)
    assert "torch-cuda" not in (answer_figures.answer_caption(alone) or "")


def test_every_time_figure_caption_names_its_runs_and_what_their_times_measure():
    """The answer figure names each line's run and measure (only runs timed to a solution), its panel (b) draws C4's
    orders only; the paper's figures say which measure their run's times are."""
    from replication.claims import C4_ORDERS, parameter_count
    from replication.claims import answer_figure as answer_figures
    from replication.studies.sweep import figures as sweep_figures

    all_runs = report.load_runs([], REFERENCE)
    plan = answer_figures.answer_plan(all_runs)
    caption = answer_figures.answer_caption(plan)
    for *_, linestyle, run in plan.a:
        measure = sweep_read.time_measure(run.series)
        assert f"{run.short_title}, {measure}" in caption
        assert (linestyle == "--") == (measure == sweep_read.TIME_TO_STOP)
    assert {sweep_read.time_measure(run.series) for *_, run in plan.a} == {
        sweep_read.TIME_TO_SOLUTION}  # figure 1 draws no run judged by the older rule
    for _, counts, _, _ in plan.b:
        assert set(counts) <= {parameter_count(n) for n in C4_ORDERS}
    for run in (run for run in all_runs if run.series):
        measure = sweep_read.time_measure(run.series)
        for figure in (sweep_figures.TIME_VS_GRID_SIZE, sweep_figures.TIME_VS_ZERNIKE_ORDER):
            text = figure.caption(run)
            assert measure in text
            assert run.title in text
            estimated = any(r.estimated for name in sweep_figures.PAPER_SERIES
                            for r in run.series.get(name, {}).values())
            assert ("estimated, not run" in text) == estimated


def test_an_estimated_point_is_never_on_the_measured_points_solid_line():
    """The GPU reference run estimated NumPy at npix 512, n >= 6: drawn hollow on a dotted line, never on the solid
    line of its measured points."""
    import matplotlib.figure

    from replication.studies.sweep import figures as sweep_figures

    (gpu,) = [run for run in report.load_runs([], REFERENCE) if TORCH_CUDA in run.series]
    points = {key: record for key, record in gpu.series[NUMPY].items() if key[0] == 512}
    estimated = {key[1] for key, record in points.items() if record.estimated}
    assert estimated, "the GPU run estimated none of NumPy's points at npix 512: choose another grid"
    axis = matplotlib.figure.Figure().subplots()
    sweep_figures.plot_series(axis, points, NUMPY, lambda key: key[1])
    solid = [set(line.get_xdata()) for line in axis.get_lines() if line.get_linestyle() == "-"
             and len(line.get_xdata()) > 1 and line.get_marker() in ("None", "", None)]
    assert solid
    assert not any(xs & estimated for xs in solid)
    dotted = [set(line.get_xdata()) for line in axis.get_lines() if line.get_linestyle() == ":"]
    assert any(estimated <= xs for xs in dotted)
    hollow = {x for line in axis.get_lines() if line.get_markerfacecolor() == "white" for x in line.get_xdata()}
    assert hollow == estimated


def test_the_gpu_claims_of_an_older_run_are_indicative_never_judged():
    """C1 and C2 rest on a history run judged by time to stop: the table says "not measured" under each objective,
    no verdict; the history line gives the old value as indicative, with its limits."""
    text = (PAPER / "REPORT.md").read_text()
    (gpu,) = [run for run in report.load_runs([], REFERENCE) if TORCH_CUDA in run.series]
    assert not sweep_read.timed_to_targets(gpu.series)
    c1 = speed.verdict_c1(sweep_read.complete_sizes(gpu.series, NUMPY, TORCH_CUDA))
    for claim in ("C1", "C2"):
        row = next(line for line in text.splitlines() if line.startswith(f"| {claim} | "))
        assert row.endswith("| not measured | not measured |")
    history = " ".join(next(part for part in text.split("\n- ") if part.startswith("Xeon 16c + H200")).split())
    assert f"C1 {fmt.times(c1.value, False)} (npix {c1.npix})" in history
    assert "time to stop" in history
    assert "indicative only" in history


def test_each_claim_is_defined_in_one_place():
    """replication/claims.py holds every claim; each has a rule, the report's tables take their order and words from
    it, and the first screen's rows are the claims of the paper (ours left out)."""
    from replication import claims

    assert [claim.id for claim in claims.CLAIMS] == list(cells.CLAIMS) == list(cells.RULES)
    text = (PAPER / "REPORT.md").read_text()
    rows = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| C") and
            not line.startswith("| Claim")]
    paper_claims = [claim.id for claim in claims.CLAIMS if claim.paper]
    assert rows[:len(paper_claims)] == paper_claims
    for claim in claims.CLAIMS:
        rule = claims.BY_ID[claim.id].rule
        assert rule.text.startswith(claim.measure)
        assert (rule.reproduced, rule.partly, rule.upper) == (claim.reproduced, claim.partly, claim.upper)
        assert claim in speed.TIMED if claim.timed else claim not in speed.TIMED
    (run,) = [run for run in report.load_runs([], REFERENCE) if TORCH_CUDA in run.series]
    judged = speed.judge_timed(run.series)
    assert list(judged) == [claim.id for claim in speed.TIMED]
    c3 = speed.verdict_c3(sweep_read.complete_sizes(run.series, NUMPY, TORCH_CPU))
    assert (judged["C3"].value, judged["C3"].verdict) == (c3.value, c3.verdict)


def test_a_peers_cell_of_a_fit_that_is_not_a_solution_prints_no_value_ratio():
    """The appendices' peers tables: a fit marked † (not a solution, or never within its target) shows no ratio
    (older runs: it enters none) or a bound (runs timed to the target), never a plain value."""
    import re

    found = 0
    for path in (PAPER / "runs").glob("*.md"):
        for line in path.read_text().splitlines():
            if " ev, " not in line:
                continue
            for ratio in re.findall(r" † \(([^)]*(?:\([^)]*\))?[^)]*)\)", line):
                found += 1
                assert ratio == "—" or ratio.startswith((">=", "<=", "undetermined")), (path.name, ratio)
    assert found  # the committed appendices hold such cells


def test_the_profile_sentence_gives_the_budget_and_the_limit_the_sweep_fits_under(monkeypatch, reference_texts):
    """The report's budget and limit are those measure_point hands each point's fits."""
    from replication.core.implementations import Implementation
    from replication.core.profiles import PROFILES
    from replication.studies.sweep import measure as sweep

    quick, paper = PROFILES["quick"], PROFILES["paper"]
    text = " ".join(both(reference_texts).split())
    assert f"as many repeats as {quick.budget_s:g} s hold (paper profile: {paper.budget_s:g} s)" in text
    assert f"each fit is stopped at {quick.fit_limit_s:g} s ({paper.fit_limit_s:g} s), its time then a bound" in text
    handed = {}

    def fake_time_fit(*args, time_limit=None, budget_s=None, **kwargs):
        handed.update(time_limit=time_limit, budget_s=budget_s)
        raise StopIteration

    monkeypatch.setattr(sweep, "time_fit", fake_time_fit)
    with pytest.raises(StopIteration):
        sweep.measure_point(Implementation("numpy"), 16, 2, quick, 1e-8, "t", CAUCHY)
    assert handed == {"time_limit": quick.fit_limit_s, "budget_s": quick.budget_s}


def test_the_first_screen_says_where_the_speed_up_comes_from_in_numbers():
    """The mechanism sentence: the library factor (same exact gradient both sides) and the algorithm factor (exact
    gradient against finite differences) over the sizes of the decomposed run, from its records."""
    from replication.claims.mechanism import decomposition_run

    text = " ".join((PAPER / "REPORT.md").read_text().split())
    run = decomposition_run(report.load_runs([], REFERENCE))
    rows = mechanism.decomposition(run.series).rows
    def over_sizes(name):
        return fmt.value_range([row[name] for row in rows.values()], lambda v: fmt.times(v, False))

    paper = [row.paper for row in rows.values()]
    assert [float(value) for value in paper if not value.is_bound] == pytest.approx(
        [float(row["algorithm"] * row["library"] * row["autograd"]) for row, value in zip(rows.values(), paper,
                                                                                           strict=True)
         if not value.is_bound], rel=1e-9)  # the paper's whole is the product of its three factors
    assert f"with the same exact gradient on both sides torch is {over_sizes('library')} as fast as NumPy" in text
    assert f"which cost P + 1 evaluations each, gives {over_sizes('algorithm')} in NumPy alone" in text
    assert f"torch's autograd {over_sizes('autograd')} as fast as our hand-written gradient" in text
    assert f"the paper's own NumPy differences -> torch autograd, {over_sizes('paper')}" in text
    assert f"beyond the paper, adds {over_sizes('start')}" in text
    screen = text[:text.index("| Claim | The paper")]
    assert "Where it comes from" in screen


def test_two_runs_of_one_day_machine_and_profile_are_told_apart_by_their_time_of_day(tmp_path):
    import shutil

    source = REFERENCE / "2026-12-05_vm_amd-epyc-2c-5"
    for name, clock in (("2026-12-03_vm_a", "17:40"), ("2026-12-03_vm_b", "19:42")):
        shutil.copytree(source / "sweep-quick", tmp_path / name / "sweep-quick")
        info = json.loads((source / "run.json").read_text())
        info["created"] = info["created"][:11] + clock + info["created"][16:]
        (tmp_path / name / "run.json").write_text(json.dumps(info))
    runs = report.load_runs([], tmp_path)
    titles = [run.title for run in runs]
    assert len(set(titles)) == len(titles)
    clocked = [run for run in runs if run.clock]
    assert len(clocked) == 2  # one day, one machine, one profile: told apart by the time each was made
    for run in clocked:
        assert run.title.endswith(f", {run.info.created[11:16]}")
    (alone,) = load.tell_apart([load.load_run(clocked[0].folder, own=False)])
    assert alone.clock == ""  # alone, nothing to tell it from


def test_no_rendered_line_starts_with_what_markdown_reads_as_a_quote_or_a_tag():
    """A wrapped '>=' (a bound) or '<=' at a line's start would render as a block quote or a tag: the report's own
    wordwrap keeps such a word with the one before it, in every committed page."""
    pages = [PAPER / "REPORT.md", PAPER / "DETAILS.md", *sorted((PAPER / "runs").glob("*.md"))]
    found = [f"{page.name}:{number}" for page in pages
             for number, line in enumerate(page.read_text().splitlines(), 1) if line.lstrip().startswith((">", "<"))]
    assert not found, found


def test_the_design_table_has_a_row_per_protocol_naming_each_of_its_runs_once():
    """DETAILS' design table: the closure's noise levels (one protocol) share a row, each run linked; a folder the
    design names that is absent is said to be, and every folder appears once."""
    machine = types.SimpleNamespace(cpu="AMD EPYC 7B13", cpu_count=2, gpu=None)

    def run(folder):
        return types.SimpleNamespace(folder=pathlib.Path(folder), own=False, sweeps={}, machine=machine,
                                     profile_label="", clock="", appendix_name=folder,
                                     info=types.SimpleNamespace(created="2026-12-05T00:00:00"))

    present = [run(reference.folder) for reference in design.DESIGN if reference.protocol is not design.BENCH]
    rows = design_rows(present)
    assert [row["protocol"] for row in rows] == list(dict.fromkeys(r.protocol.name for r in design.DESIGN))
    closure = next(row for row in rows if row["protocol"] == design.CLOSURE.name)
    assert [r["appendix"] for r in closure["runs"]] == [
        f"runs/{r.folder}.md" for r in design.DESIGN if r.protocol is design.CLOSURE]
    bench = next(row for row in rows if row["protocol"] == design.BENCH.name)
    assert [r["run"] for r in bench["runs"]] == [f"{r.folder} (not here)" for r in design.DESIGN
                                                 if r.protocol is design.BENCH]
    assert bench["runs"][0]["appendix"] is None
    assert sum(len(row["runs"]) for row in rows) == len(design.DESIGN)
    assert {row["load"] for row in rows} == {"—"}  # no sweep in these stand-ins: nothing to call quiet or loaded

"""The sensitivity table: each verdict under other rules, tested against the records it is computed from (a reference
run's points read here as plain JSON) and against today's verdicts in the claims table."""

import json
import statistics

import pytest

from replication.claims import C3_ORDERS as JUDGED_ORDERS
from replication.claims import sensitivity
from replication.claims.claim import Alternative
from replication.core.judging import Verdict
from replication.core.objectives import CAUCHY
from replication.core.paths import REFERENCE
from replication.core.series import NUMPY, TORCH_CPU
from replication.report import load
from replication.report.cells import Notes, run_claims
from replication.report.sensitivity import cell_text

RUN = REFERENCE / "2026-12-05_vm_amd-epyc-2c-3"
"""A run timed to the target whose speed-ups at npix >= 256 are all values (no fit left short of the target)."""


@pytest.fixture(scope="module")
def judged():
    run = load.load_run(RUN, own=False)
    return run, {(row.claim.id, row.rule.words): row.found for row in sensitivity.judge_all(run, CAUCHY)}


C3_ORDERS = (2, 4, 6, 8)
"""The orders C3 reads, as the report states them (claims.C3_ORDERS: asserted the same below)."""


def test_c3_reads_the_fixed_orders_the_report_states():
    assert JUDGED_ORDERS == C3_ORDERS


def medians_from_points(min_npix):
    """{npix: median over C3's orders of median(NumPy's times to target) / median(torch-cpu's)} from points.jsonl,
    a repeat that never reached the target taken at its total time (where NumPy's: the ratio's least value)."""
    points = [json.loads(line) for line in (RUN / "sweep-quick" / "points.jsonl").read_text().splitlines()]
    paper = {series: {(p["npix"], p["nzern"]): p for p in points if p["impl"] == series.impl
                      and p["dtype"] == "float64" and p.get("gradient", "") == ""
                      and p.get("minimizer", "scipy") == "scipy"} for series in (NUMPY, TORCH_CPU)}
    ratios, bounds = {}, set()
    for key, slow in paper[NUMPY].items():
        fast = paper[TORCH_CPU].get(key)
        if key[0] < min_npix or fast is None or key[1] not in C3_ORDERS:
            continue
        times = [[total if time is None else time for time, total in zip(p["target"]["times"], p["total_s"]["all"],
                                                                          strict=True)] for p in (slow, fast)]
        assert None not in fast["target"]["times"], f"{key}: torch-cpu censored; choose another run"
        if None in slow["target"]["times"]:
            bounds.add(key[0])
        ratios.setdefault(key[0], []).append(statistics.median(times[0]) / statistics.median(times[1]))
    return {npix: statistics.median(values) for npix, values in ratios.items()}, bounds


def test_c3_over_larger_grids_is_what_the_points_give(judged):
    _, rows = judged
    medians, bounds = medians_from_points(256)
    values = {npix: value for npix, value in medians.items() if npix not in bounds}
    weakest = min(values, key=values.get)
    assert all(medians[npix] > values[weakest] for npix in bounds)  # a least value above it: not the weakest
    assert rows[("C3", "weakest grid of npix >= 256")].text == f"{values[weakest]:.3g}x at npix {weakest}"
    assert rows[("C3", "largest grid measured")].value >= medians[max(medians)] * (1 - 1e-12)


def test_a_higher_bar_grades_the_same_value_harder(judged):
    _, rows = judged
    today = rows[("C3", "weakest grid of npix >= 128, bar 5x (today's)")]
    harder = rows[("C3", "weakest grid of npix >= 128, bar 7x")]
    assert float(harder.value) == float(today.value)
    assert harder.verdict == ("reproduced" if today.value >= 7 else "partly" if today.value >= 2
                              else "not reproduced")


def test_todays_rows_are_the_claims_tables_verdicts(judged):
    run, rows = judged
    cells = run_claims(run, CAUCHY, Notes())
    for claim, rule in sensitivity.alternatives():
        if rule.today:
            assert rows[(claim.id, rule.words)].verdict == cells[claim.id].verdict, claim.id
    looser = rows[("C5a", "within 0.5 SE")]
    assert looser.total == cells["C5a"].found.total
    assert looser.passed >= cells["C5a"].found.passed


def test_a_rule_that_changes_a_verdict_is_listed_and_one_that_does_not_is_not():
    claim = sensitivity.CLAIMS[2]
    rows = [sensitivity.Judged(claim, Alternative(words, words == "today", None), Verdict(verdict=verdict))
            for words, verdict in (("today", "partly"), ("other", "reproduced"), ("same", "partly"),
                                   ("open", "undetermined"))]
    assert [row.rule.words for row in sensitivity.flips(rows)] == ["other"]
    assert cell_text(sensitivity.Judged(claim, rows[0].rule, Verdict())) == "—"

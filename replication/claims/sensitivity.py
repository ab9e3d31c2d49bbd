"""Each verdict under other rules a referee could equally defend, from the same records: C1 at the largest grid
where every order was measured, C3 over larger grids only, at the largest grid or with a higher bar, C4 at each grid
size that has its orders, C5a with a looser yardstick. DETAILS.md shows them beside today's rule, so that a verdict
that flips under another reading of the claim is seen to flip."""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable

from replication.claims import BY_ID, C3_ORDERS, C4_MIN_NPIX, C4_ORDERS, SAME_SOLUTION_STDERR
from replication.claims.verdicts import RULES, slope_at, verdict_c1, verdict_c3, verdict_c4
from replication.core.format import times
from replication.core.judging import (
    NOT_MEASURED,
    UNDETERMINED,
    Rule,
    aggregate,
    as_ratios,
    share_verdict,
    weakest_npix,
)


@dataclasses.dataclass(frozen=True)
class Evidence:
    """What one run's claims are judged on under one objective: {claim: {(npix, nzern): Ratio}} of the timed claims
    (sweep.read.complete_sizes of the claim's series) and C5a's pairs (rows with max_stderr, the Mahalanobis
    distance in standard errors)."""

    ratios: dict
    pairs: list


@dataclasses.dataclass(frozen=True)
class Alternative:
    """One rule for one claim: its words, whether it is today's, and how it judges a run's Evidence (-> {"value",
    "verdict", "text"}: text the value in a few words, None where not measured)."""

    claim: str
    words: str
    today: bool
    judge: Callable[[Evidence], dict]


def not_measured() -> dict:
    return {"value": None, "verdict": NOT_MEASURED, "text": None}


def size_text(value, npix) -> str:
    return f"{times(value, False)} at npix {npix}"


def c1_today(evidence: Evidence) -> dict:
    found = verdict_c1(evidence.ratios["C1"])
    return found | {"text": found["npix"] and size_text(found["value"], found["npix"])}


def c1_every_order(evidence: Evidence) -> dict:
    """C1's median at the largest grid that has every order the run measured anywhere (not only some)."""
    ratios = as_ratios(evidence.ratios["C1"])
    orders = {nzern for _, nzern in ratios}
    complete = [npix for npix in {npix for npix, _ in ratios}
                if {nzern for size, nzern in ratios if size == npix} == orders]
    return median_at(ratios, max(complete), "C1") if complete else not_measured()


def median_at(ratios: dict, npix: int, claim: str) -> dict:
    """The median over orders of the speed-ups at one grid size, graded by the claim's rule."""
    value = aggregate(statistics.median, [v for (size, _), v in ratios.items() if size == npix])
    return {"value": value, "verdict": RULES[claim].grade(value), "text": size_text(value, npix)}


def c3_from(min_npix: int, rule: Rule | None = None) -> Callable[[Evidence], dict]:
    """C3's smallest per-size median over npix >= min_npix, graded by rule (default: C3's)."""

    def judge(evidence: Evidence) -> dict:
        found = verdict_c3(evidence.ratios["C3"], min_npix)
        if found["value"] is None:
            return not_measured()
        npix = weakest_npix(found["by_npix"])
        verdict = (rule or RULES["C3"]).grade(found["value"])
        return {"value": found["value"], "verdict": verdict, "text": size_text(found["value"], npix)}

    return judge


def c3_largest(evidence: Evidence) -> dict:
    """C3's median over its orders (C3_ORDERS) at the largest grid measured (C1's reading of 'large grids')."""
    ratios = {key: ratio for key, ratio in as_ratios(evidence.ratios["C3"]).items() if key[1] in C3_ORDERS}
    sizes = [npix for npix, _ in ratios if npix >= 128]
    return median_at(ratios, max(sizes), "C3") if sizes else not_measured()


def slope_words(found: dict) -> str:
    if found["value"] is not None:
        return f"slope {found['value']:.2f} at npix {found['npix']}"
    low, high = found["known"]
    known = f">= {low:.2f}" if math.isinf(high) and math.isfinite(low) else f"<= {high:.2f}" if math.isinf(low) \
        and math.isfinite(high) else f"{low:.2f} to {high:.2f}" if math.isfinite(low) and math.isfinite(high) \
        else "open"
    return f"slope {known} at npix {found['npix']}"


def c4_today(evidence: Evidence) -> dict:
    found = verdict_c4(evidence.ratios["C4"])
    return found | {"text": found["npix"] and slope_words(found)}


def c4_at(npix: int) -> Callable[[Evidence], dict]:
    """C4's slope at one grid size, where the run has every order C4 takes there."""

    def judge(evidence: Evidence) -> dict:
        values = {nzern: value for (size, nzern), value in as_ratios(evidence.ratios["C4"]).items()
                  if size == npix and nzern in C4_ORDERS}
        if len(values) != len(C4_ORDERS):
            return not_measured()
        found = slope_at(npix, dict(sorted(values.items())))
        return found | {"text": slope_words(found)}

    return judge


def c5a_within(limit: float) -> Callable[[Evidence], dict]:
    """C5a's share of pairs within limit standard errors."""

    def judge(evidence: Evidence) -> dict:
        found = share_verdict([row["max_stderr"] <= limit for row in evidence.pairs], RULES["C5a"])
        return found | {"text": f"{found['passed']} of {found['total']}" if found["total"] else None}

    return judge


C4_SIZES = (128, 256, 512, 1024, 2048)
"""The grid sizes at which C4's slope is shown, where a run has its orders (npix >= C4_MIN_NPIX)."""

ALTERNATIVES = (
    Alternative("C1", "largest grid measured (today's)", True, c1_today),
    Alternative("C1", "largest grid with every order measured", False, c1_every_order),
    Alternative("C3", "weakest grid of npix >= 128, bar 5x (today's)", True, c3_from(128)),
    Alternative("C3", "weakest grid of npix >= 256", False, c3_from(256)),
    Alternative("C3", "largest grid measured", False, c3_largest),
    Alternative("C3", "weakest grid of npix >= 128, bar 7x", False,
                c3_from(128, Rule(BY_ID["C3"].measure, 7, BY_ID["C3"].partly))),
    Alternative("C4", "largest grid where the verdict is determined (today's)", True, c4_today),
    *(Alternative("C4", f"at npix {npix}", False, c4_at(npix)) for npix in C4_SIZES if npix >= C4_MIN_NPIX),
    Alternative("C5a", f"within {SAME_SOLUTION_STDERR} SE (today's)", True, c5a_within(SAME_SOLUTION_STDERR)),
    Alternative("C5a", "within 0.2 SE", False, c5a_within(0.2)),
    Alternative("C5a", "within 0.5 SE", False, c5a_within(0.5)),
)
"""Every rule the sensitivity table shows, today's first for each claim (C2 has no alternative here: it already
takes every grid of npix >= 256)."""


def judge_all(evidence: Evidence) -> list[dict]:
    """Each alternative's judgement of one run: [{"claim", "words", "today", "value", "verdict", "text"}]."""
    return [{"claim": rule.claim, "words": rule.words, "today": rule.today} | rule.judge(evidence)
            for rule in ALTERNATIVES]


def flips(judged: list[dict]) -> list[dict]:
    """The alternatives whose verdict differs from today's rule of the same claim (neither undetermined nor not
    measured)."""
    today = {row["claim"]: row["verdict"] for row in judged if row["today"]}
    settled = (NOT_MEASURED, UNDETERMINED)
    return [row for row in judged if not row["today"] and row["verdict"] not in settled
            and today[row["claim"]] not in settled and row["verdict"] != today[row["claim"]]]

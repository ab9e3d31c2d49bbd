"""Each verdict under other rules a referee could equally defend, from the same records: each claim declares them
(Claim.alternatives, today's rule first): C1 at the largest grid where every order was measured, C3 over larger
grids only, at the largest grid or with a higher bar, C4 at each grid size that has its orders, C5a with a looser
yardstick (C2 has none here: it already takes every grid of npix >= 256). METHODS.md shows them beside today's rule,
so that a verdict that flips under another reading of the claim is seen to flip."""

import dataclasses

from replication.claims import CLAIMS, Alternative, Claim
from replication.core.judging import NOT_MEASURED, UNDETERMINED, Verdict
from replication.core.objectives import CAUCHY, Objective


@dataclasses.dataclass(frozen=True)
class Judged:
    """One rule's judgement of one run: the claim, the rule (an Alternative) and what it found."""

    claim: Claim
    rule: Alternative
    found: Verdict

    @property
    def today(self) -> bool:
        return self.rule.today


def alternatives() -> list[tuple[Claim, Alternative]]:
    """Every rule the sensitivity table shows, claim by claim in the report's order, today's first for each."""
    return [(claim, rule) for claim in CLAIMS for rule in claim.alternatives]


def judge_all(run, objective: Objective = CAUCHY) -> list[Judged]:
    """Each alternative's judgement of one run, in the order of alternatives()."""
    return [Judged(claim, rule, rule.judge(run, objective)) for claim, rule in alternatives()]


def flips(judged: list[Judged]) -> list[Judged]:
    """The alternatives whose verdict differs from today's rule of the same claim (neither undetermined nor not
    measured)."""
    today = {row.claim.id: row.found.verdict for row in judged if row.today}
    settled = (NOT_MEASURED, UNDETERMINED)
    return [row for row in judged if not row.today and row.found.verdict not in settled
            and today[row.claim.id] not in settled and row.found.verdict != today[row.claim.id]]

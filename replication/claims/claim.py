"""What a claim is: its words, its rule, and how the report judges it on a run. The paper's claims (claims.speed:
C1-C4, claims.agreement: C5a, C5b, C6) and a claim added as one file (claims.ADDED) are the same kind of value, and
the report reads every one of them through the same methods."""

import dataclasses
from collections.abc import Callable

from replication.core.judging import Rule, Verdict
from replication.core.objectives import CAUCHY, Objective
from replication.core.plotting import Figure
from replication.core.series import Series

SAME_SOLUTION_STDERR = 0.1
"""Largest parameter difference, in standard errors, for two fits to count as the same solution."""
C4_MIN_NPIX, C4_ORDERS = 128, (2, 4, 6, 8)
"""The evidence C4 needs: every order of a fixed set, the same in every profile, at one grid size of npix >= 128
(the paper's claim reaches order 8; P runs 8, 17, 30, 47)."""
C3_ORDERS = C4_ORDERS
"""The orders C3's speed-up is read over at each grid size: C4's fixed set, timed by every profile and objective, so
that a run's own order set (the quick profile's n = 2, 3, 4, 6, 8, the paper's 2-9) does not move its C3."""


def parameter_count(nzern):
    """P: the Zernike terms of orders 1..nzern (piston left out) and the three illumination parameters."""
    return (nzern + 1) * (nzern + 2) // 2 - 1 + 3


@dataclasses.dataclass(frozen=True)
class Alternative:
    """One rule a referee could equally defend for a claim (METHODS.md's sensitivity table): its words, whether it is
    the claim's own (today's), and judge: (run, objective) -> Verdict, its text the value in a few words."""

    words: str
    today: bool
    judge: Callable[..., Verdict]


@dataclasses.dataclass(frozen=True, eq=False)
class Claim:
    """One claim: id (C1 ...), statement (in our words), short (a few words), paper (the first screen's words and
    hardware; None for a check of ours), threshold (for *reproduced*, in a few words); its rule: measure (what is
    measured), reproduced and partly (the bars; the measure must reach them, or stay at or below them where
    upper); ratio: for a claim judged on times to solution, the speed-up it judges, (slower, faster) series.

    How it is judged on a run, each a function the report calls and nothing else: evaluate (run, objective ->
    core.judging.Verdict, its text the cell's few words); words (a verdict -> its value in a few words, where the
    claim words verdicts judged on other evidence: the retrievals'); brief (a verdict -> its value in the fewest
    words, for the first screen); reason (why not measured: words, or run, objective -> words); notes (run,
    objective, verdict -> the notes beside its cell); scope (verdicts -> what limits them, in a few words each)
    and caveats ([(run's name, run, verdict)], objective -> sentences); alternatives (the sensitivity table's rows,
    today's first); figure, draw (all runs, folder -> paths written) and shows (all runs -> the arguments of the
    figure's caption, or None where it is not drawn)."""

    id: str
    statement: str
    short: str
    paper: str | None
    threshold: str
    measure: str
    reproduced: float
    partly: float
    upper: bool = False
    ratio: tuple[Series, Series] | None = None
    evaluate: Callable[..., Verdict] | None = None
    words: Callable[[Verdict], str] | None = None
    brief: Callable[[Verdict], str] | None = None
    reason: str | Callable[..., str] = "not measured in this run"
    notes: Callable[..., list] | None = None
    scope: Callable[..., list] | None = None
    caveats: Callable[..., list] | None = None
    alternatives: tuple[Alternative, ...] = ()
    figure: Figure | None = None
    draw: Callable | None = None
    shows: Callable | None = None

    @property
    def rule(self) -> Rule:
        """The rule that grades it (what is measured and its two bars)."""
        return Rule(self.measure, self.reproduced, self.partly, self.upper)

    @property
    def timed(self):
        """Whether the claim is judged on times to solution."""
        return self.ratio is not None

    def judge(self, run, objective: Objective = CAUCHY) -> Verdict:
        """Its verdict on one run under one objective (not measured where it has no evaluation)."""
        return self.evaluate(run, objective) if self.evaluate else Verdict()

    def why_not_measured(self, run, objective: Objective) -> str:
        """Why it could not be judged on a run, in a few words."""
        return self.reason(run, objective) if callable(self.reason) else self.reason

    def notes_on(self, run, objective: Objective, found: Verdict) -> list[str]:
        """The notes beside its cell of one run (beyond the load, a bound and why not measured)."""
        return self.notes(run, objective, found) if self.notes else []

    def briefly(self, found: Verdict) -> str:
        """Its value on one run in the fewest words (default: its text)."""
        return self.brief(found) if self.brief else found.text or "—"

    def limits(self, found: list[Verdict]) -> list[str]:
        """What limits several runs' values of it, in a few words each."""
        return self.scope(found) if self.scope else []

    def caveats_on(self, measured: list, objective: Objective = CAUCHY) -> list[str]:
        """Its own caveats over [(run's name, run, verdict)] judged under one objective."""
        return self.caveats(measured, objective) if self.caveats else []

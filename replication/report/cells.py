"""One run's cells of the claims table: each claim's verdict on the run (claims.Claim.judge, the same path for every
claim), its few words, and the numbered notes beside it."""

import dataclasses

from replication import claims
from replication.claims.claim import Claim
from replication.core import judging, model_code
from replication.core.judging import Verdict
from replication.core.load import measured_quiet
from replication.core.objectives import CAUCHY, Objective
from replication.report import load
from replication.studies.sweep import read as sweep_read

CLAIMS = {claim.id: claim.statement for claim in claims.CLAIMS}
"""The paper's claims, in our words (replication/claims; paper/MODEL.md gives the paper's setup)."""


RULES = {claim.id: claim.rule.text for claim in claims.CLAIMS}
"""How each verdict is computed from the results (each claim's rule)."""


@dataclasses.dataclass(frozen=True)
class Cell:
    """One claim on one run: its value in a few words (text), its verdict, the numbers of its notes, what the claim
    found (a core.judging.Verdict), and whether it is a timing verdict of a run measured on a loaded machine."""

    text: str
    verdict: str
    notes: list
    found: Verdict
    loaded: bool = False


class Notes:
    """Numbered notes under a table: the same text gets the same number."""

    def __init__(self):
        self.texts = []

    def mark(self, text):
        if text not in self.texts:
            self.texts.append(text)
        return self.texts.index(text) + 1


def reason_not_measured(claim: Claim, run, objective: Objective) -> str:
    """Why a claim could not be judged on a run, in a few words: no sweep of the objective, else the claim's own
    reason."""
    if not run.judged(objective)[1]:
        return "no sweep in this run" if objective is CAUCHY else "no least-squares sweep in this run"
    return claim.why_not_measured(run, objective)


def left_out_text(series):
    """'N of M measured fits ... (K stopped before the optimum, ...)', or None: for a sweep timed to the target,
    the fits whose times are bounds; for an older one, those whose times enter no ratio."""
    reasons = sweep_read.left_out(series)
    if not reasons:
        return None
    measured = sum(not record.estimated for points in series.values() for record in points.values())
    parts = ", ".join(f"{count} {reason}" for reason, count in reasons.items())
    if sweep_read.timed_to_targets(series):
        return (f"{sum(reasons.values())} of {measured} measured fits of this sweep are not solutions ({parts}); "
                "their ratios enter as bounds")
    return (f"{sum(reasons.values())} of {measured} measured fits of this sweep are not solutions ({parts}); "
            "their times enter no ratio")


def undetermined_text(claim: Claim, found: Verdict) -> str:
    """Why a verdict is undetermined: the grades its bound allows."""
    grades = " or ".join(claim.rule.possible(*found.extent()))
    return f"a bound (a fit never came within the target): {grades}, the measurements cannot tell which"


@dataclasses.dataclass(frozen=True)
class CodeStanding:
    """How a run's model code stands against main's: stale True where it differs as code (docstrings and comments
    aside), False where it is main's, None where not known; a short line saying so; C6 of the run's own code (or
    None); the commits its sessions recorded; the modules that differ, where stale."""

    stale: bool | None
    text: str
    mirror: object = None
    commits: list[str] = dataclasses.field(default_factory=list)
    differing: list[str] = dataclasses.field(default_factory=list)


def run_code(run, main) -> CodeStanding:
    """How a run's model code stands against main's (main: model_code.identity of the working tree)."""
    codes = model_code.run_code(load.run_environments(run))
    known = [code for code in codes if code.hash is not None]
    if not known:
        return CodeStanding(None, "model code not known (no commit recorded)")
    commits = [commit for code in known for commit in code.commits]
    differing = sorted({path for code in known for path in model_code.differing_modules(code.modules, main.modules)})
    where = f" (commit{'s' if len(commits) > 1 else ''} {', '.join(c[:7] for c in commits)})" if commits else ""
    if not differing:
        return CodeStanding(False, f"model code = main's{where}", known[-1].mirror, commits)
    every = set(main.modules) | {path for code in known for path in code.modules}
    names = f"all {len(differing)} modules" if set(differing) == every else f"{len(differing)} of {len(every)} modules"
    return CodeStanding(True, f"stale: model code differs from main's in {names}{where}", known[-1].mirror, commits,
                        [path.replace("reference_numpy/", "numpy:").replace("torch_impl/", "torch:")
                         for path in differing])


def run_claims(run, objective: Objective, notes: Notes) -> dict:
    """{claim id: Cell} of one run under one objective, every claim judged by its own evaluation, the notes numbered
    in notes: beside each timing verdict of a loaded run, why a claim is not measured or undetermined, the fits of a
    timed claim that are bounds, then the claim's own."""
    series = run.judged(objective)[1]
    left = left_out_text(series)
    loaded = LOADED_TEXT if series and not measured_quiet(run) else None
    cells = {}
    for claim in claims.CLAIMS:
        found = claim.judge(run, objective)
        marks = []
        if loaded and claim.timed and found.verdict != judging.NOT_MEASURED:  # beside each timing verdict, first
            marks.append(notes.mark(loaded))
        if found.verdict == judging.NOT_MEASURED:
            marks.append(notes.mark(reason_not_measured(claim, run, objective)))
        elif found.verdict == judging.UNDETERMINED:
            marks.append(notes.mark(undetermined_text(claim, found)))
        elif claim.timed and left:
            marks.append(notes.mark(left))
        marks += [notes.mark(text) for text in claim.notes_on(run, objective, found)]
        cells[claim.id] = Cell(found.text or "—", found.verdict, marks, found, bool(loaded) and claim.timed)
    return cells


LOADED_TEXT = ("measured on a loaded machine: other processes kept cores busy at some points, so its times, torch's "
               "most, read lower than a quiet machine's; a verdict below the bar may be the load's")
"""The note beside each timing verdict of a run measured on a loaded machine."""

"""The report's first screen, read from the design (claims.design): the run that answers the claims (yours first
where you have one, then the reference) with each paper claim judged under each objective it measured, the other
runs of the design judged alone beside it, and the history apart. Nothing is pooled across runs."""

import dataclasses

from replication import claims
from replication.claims import design
from replication.claims.claim import Claim
from replication.claims.timed_words import cores_of
from replication.core.judging import NOT_MEASURED, Verdict
from replication.core.load import LOADED_CORES, measured_quiet
from replication.core.objectives import CAUCHY, Objective
from replication.report.first_screen import first_screen_legend, short_name
from replication.studies.sweep import read as sweep_read

PAPER_CLAIMS = tuple(claim for claim in claims.CLAIMS if claim.paper)
"""The claims the first screen judges: the paper's (and an added claim with the paper's words)."""


@dataclasses.dataclass(frozen=True)
class Judgement:
    """One claim on one run under one objective: its verdict, and whether the run was measured on a loaded machine
    (said beside a timing verdict)."""

    claim: Claim
    found: Verdict
    loaded: bool

    @property
    def measured(self) -> bool:
        return self.found.verdict != NOT_MEASURED

    @property
    def text(self) -> str:
        """'7.25x (npix 128): reproduced', 'not measured', '...: not reproduced (loaded machine)'."""
        if not self.measured:
            return "not measured"
        return (f"{self.claim.briefly(self.found)}: {self.found.verdict}"
                + (" (loaded machine)" if self.loaded and self.claim.timed else ""))


@dataclasses.dataclass(frozen=True)
class RunAnswer:
    """One run's answer: its name, its place in the design, the objectives it was judged under, per paper claim its
    judgement under each objective (rows: {claim id: [Judgement]}), and its caveats."""

    run: object
    name: str
    reference: design.Reference
    objectives: list
    rows: dict
    caveats: list

    @property
    def quiet(self) -> bool:
        return measured_quiet(self.run)

    def judged(self, claim: Claim) -> list[Judgement]:
        return self.rows[claim.id]


def objectives_of(run, reference: design.Reference) -> list[Objective]:
    """The objectives a run is judged under on the first screen: its protocol's that it has a sweep of (the Cauchy
    likelihood, the report's default, for a run without one: its cross-check's claims)."""
    return [objective for objective in reference.protocol.objectives if run.judged(objective)[0]] or [CAUCHY]


def run_answer(run, code: dict) -> RunAnswer:
    """A run's answer on the first screen (code: its cells.run_code)."""
    reference = design.reference_of(run)
    objectives = objectives_of(run, reference)
    loaded = bool(run.sweeps) and not measured_quiet(run)
    rows = {claim.id: [Judgement(claim, claim.judge(run, objective), loaded) for objective in objectives]
            for claim in PAPER_CLAIMS}
    return RunAnswer(run, short_name(run), reference, objectives, rows, run_caveats(run, code, objectives, rows))


def run_caveats(run, code: dict, objectives, rows) -> list[str]:
    """What limits one run's answer: each claim's own caveats under each objective, its code, its load, its rule."""
    caveats = []
    for claim in PAPER_CLAIMS:
        notes = []
        for objective, judgement in zip(objectives, rows[claim.id], strict=True):
            if judgement.measured:
                notes += [note for note in claim.limits([judgement.found])
                          + claim.caveats_on([(short_name(run), run, judgement.found)], objective)
                          if note not in notes]
        caveats += [f"**{claim.id}**: {'; '.join(notes)}."] if notes else []
    if code.stale:
        commits = ", ".join(commit[:7] for commit in code.commits)
        caveats.append(f"Made with older model code (commit {commits}; the modules that differ from this commit's: "
                       "[the runs](DETAILS.md#runs)).")
    if run.sweeps and not measured_quiet(run):
        caveats.append(f"Measured on a loaded machine (other processes kept >= {LOADED_CORES} cores busy at some "
                       "points): its times, torch's most, read lower than a quiet machine's, and a timing verdict "
                       "below the bar may be the load's.")
    if run.series and not sweep_read.timed_to_targets(run.series):
        caveats.append("Judged by the time to the optimiser's stop (recorded before times to target).")
    return caveats


def beside_line(run, reference: design.Reference) -> str:
    """A run of the design judged alone beside the answer: 'EPYC 2c, 12-02, 1 thread (the quick profile on one
    thread): under least squares ...: C3 6.1x (npix 512): partly; ...'."""
    parts = []
    for objective in objectives_of(run, reference):
        judged = [Judgement(claim, claim.judge(run, objective), False) for claim in reference.protocol.checks]
        judged = [judgement for judgement in judged if judgement.measured]
        if judged:
            parts.append(f"{plain_title(objective)}: " + "; ".join(f"{j.claim.id} {j.text}" for j in judged))
    load = "" if measured_quiet(run) else ", measured on a loaded machine"
    return f"{short_name(run)} ({reference.protocol.name}{load}): " + "; ".join(parts) if parts else ""


def history_line(run, reference: design.Reference, code: dict) -> str:
    """A history run in one line: its values as the older rule found them, indicative only, never judged."""
    found = [(claim, claim.judge(run, objective)) for objective in objectives_of(run, reference)
             for claim in reference.protocol.checks]
    values = "; ".join(f"{claim.id} {claim.briefly(verdict)}" for claim, verdict in found
                       if verdict.verdict != NOT_MEASURED)
    limits = (["older code"] if code.stale else []) + (
        ["time to stop"] if run.series and not sweep_read.timed_to_targets(run.series) else [])
    made = reference.protocol.name + (f"; {', '.join(limits)}" if limits else "")
    return f"{short_name(run)} ({made}): {values or 'nothing measured'}, indicative only"


def plain_title(objective: Objective) -> str:
    """An objective's title without its aside: 'the Cauchy likelihood', 'least squares in noise units'."""
    return objective.title.split(" (")[0]


def header(objective: Objective) -> str:
    """An objective as a column's header: 'Least squares in noise units', 'Cauchy likelihood'."""
    words = plain_title(objective).removeprefix("the ")
    return words[0].upper() + words[1:]


def lead(answer: RunAnswer, code: dict) -> str:
    """The sentence above a run's table: whose run, how it was made, and C3 under each objective it measured."""
    run = answer.run
    state = "quiet at every point" if answer.quiet else "on a loaded machine"
    made = "model code = this commit's" if code.stale is False else "older model code" if code.stale \
        else "model code unknown"
    threads = cores_of(run, answer.objectives[0]) if answer.objectives else "no sweep"
    text = (f"{'Your run' if run.own else 'The reference run'} ({answer.name}; {answer.reference.protocol.name}, "
            f"{threads}, {state}; {made})")
    c3 = [(objective, judgement) for objective, judgement in zip(answer.objectives, answer.judged(claims.C3),
                                                                  strict=True) if judgement.measured]
    if not c3:
        return text + "."
    return (text + ": torch reached the solution sooner than NumPy by " + " and ".join(
        f"{claims.C3.briefly(judgement.found)} under {plain_title(objective)}" for objective, judgement in c3)
        + ", at the weakest grid size of npix >= 128 (the paper: ~10x).")


@dataclasses.dataclass(frozen=True)
class FirstScreen:
    """The first screen: the answers (yours first, then the reference's), a lead sentence and the objectives'
    headers of each, the design's other runs judged beside them (a line each), the history runs (a line each), the
    paper's claims no run of the design measured (their ids) and the words under the table (each bar, what a slope
    and a bound are: first_screen.first_screen_legend)."""

    answers: list[RunAnswer]
    leads: list[str]
    headers: list[list[str]]
    beside: list[str]
    history: list[str]
    unmeasured: list[str]
    legend: str = dataclasses.field(default_factory=first_screen_legend)


def first_screen(all_runs, codes) -> FirstScreen:
    """The first screen: the answers (yours first, then the reference's), the design's other runs beside them, the
    history, and which claims no run of the design measured (codes: {run folder: cells.run_code})."""
    shown = design.answering(all_runs)
    reference = design.answering([run for run in all_runs if not run.own])
    shown_runs = [shown] + ([reference] if reference is not shown else [])
    answers = [run_answer(run, codes[run.folder]) for run in shown_runs if run is not None]
    checks, history = design.beside(all_runs, reference)
    return FirstScreen(
        answers=answers, leads=[lead(answer, codes[answer.run.folder]) for answer in answers],
        headers=[[header(objective) for objective in answer.objectives] for answer in answers],
        beside=[line for run, ref in checks if (line := beside_line(run, ref))],
        history=[history_line(run, ref, codes[run.folder]) for run, ref in history],
        unmeasured=[claim.id for claim in PAPER_CLAIMS
                    if not any(j.measured for answer in answers for j in answer.judged(claim))])


def design_rows(all_runs) -> list[dict]:
    """DETAILS.md's table of the design: a row per protocol, in the design's order, with what it answers or checks
    and each reference run the design names for it ({run, appendix}: a folder that is absent is said to be), and
    whether their sweeps were measured quiet."""
    present = {run.folder.name: run for run in all_runs if not run.own}
    rows = {}
    for reference in design.DESIGN:
        protocol, run = reference.protocol, present.get(reference.folder)
        role = ("history" if reference.history else "answers " + ", ".join(c.id for c in protocol.answers)
                if protocol.answers else "checks " + ", ".join(c.id for c in protocol.checks) if protocol.checks
                else "its own section")
        row = rows.setdefault((protocol.name, role), {
            "protocol": protocol.name, "words": protocol.words, "role": role, "runs": [], "loads": [],
            "threads": "default" if protocol.threads is None else str(protocol.threads),
            "objectives": ", ".join(plain_title(o) for o in protocol.objectives) or "—"})
        row["runs"].append({"run": short_name(run) if run else f"{reference.folder} (not here)",
                            "appendix": f"runs/{run.appendix_name}.md" if run else None})
        row["loads"].append("—" if run is None or not run.sweeps else "quiet" if measured_quiet(run) else
                            "loaded: not the quiet machine its protocol asks for" if protocol.quiet else "loaded")
    return [row | {"load": ", ".join(dict.fromkeys(row.pop("loads")))} for row in rows.values()]

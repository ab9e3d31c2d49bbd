"""The claims judged on where fits ended and on the code, C5a, C5b and C6: the implementations reach the same
solution, every fit timed ended at the optimum, the port keeps the lines alike. Each claim's verdict on a run, its
notes, its words over several runs and its other rules (METHODS.md's sensitivity table)."""

import dataclasses

from replication.claims.claim import SAME_SOLUTION_STDERR, Alternative, Claim
from replication.claims.speed import off_yardstick_note
from replication.core import model_code
from replication.core.judging import NOT_MEASURED, Pair, Share, Verdict, share_verdict
from replication.core.objectives import Objective
from replication.core.optimum import TARGET, ended_at_target
from replication.core.series import NUMPY, TORCH_CPU, TORCH_CUDA
from replication.core.simulation import STOPPED_AT_OPTIMUM
from replication.studies.crosscheck import read as crosscheck_read
from replication.studies.sweep import read as sweep_read


@dataclasses.dataclass(frozen=True, kw_only=True)
class Agreement(Share):
    """C5a's verdict: the share of pairs within SAME_SOLUTION_STDERR, the worst pair (a row), the pairs not compared
    (a fit of the pair is not a solution)."""

    worst: Pair | None = None
    not_comparable: int = 0


C5A_SERIES = (NUMPY, TORCH_CPU, TORCH_CUDA)
"""The float64 series whose pairs C5a judges: the paper's own (NumPy with finite differences, torch autograd; scipy's
BFGS). Other series (float64 gradient variants, the on-device BFGS, JAX) are reported beside it, not judged."""


def distinct(pairs: list[Pair]) -> list[Pair]:
    """One pair per comparison (Pair.comparison: refits of the same data by the same two series are one piece of
    evidence, not several): of its refits, the farthest apart."""
    worst = {}
    for pair in pairs:
        if pair.comparison not in worst or pair.max_stderr > worst[pair.comparison].max_stderr:
            worst[pair.comparison] = pair
    return list(worst.values())


def verdict_c5a(crosscheck_fits, sweep_differences) -> Agreement:
    """C5a, the implementations agree: each float64 fit within SAME_SOLUTION_STDERR standard error of the other fits
    of the same data, over the cross-check's fits and the sweep's, each comparison counted once (distinct); all
    reproduced, >= 90% partly; the worst pair kept. Runs that time to a target: every pair of fits, by the Mahalanobis
    distance under the point's optimum. Older runs: against the NumPy fit, where both fits are solutions (a
    comparison of two fits stopped short of the optimum says where each stopped, not whether the implementations
    agree)."""
    every = list(crosscheck_fits) + list(sweep_differences)
    rows = distinct([row for row in every if row.comparable])
    compared = {row.comparison for row in rows}
    share = share_verdict([row.max_stderr <= SAME_SOLUTION_STDERR for row in rows], C5A.rule)
    return Agreement(**vars(share), worst=max(rows, key=lambda row: row.max_stderr) if rows else None,
                     not_comparable=len({row.comparison for row in every if not row.comparable} - compared))


def verdict_c5b(fit_endings) -> Share:
    """C5b, the fits reached the optimum: each measured fit with an exact account (cross-check and sweep) ended
    at the optimum (optimum.ended_at_target); all reproduced, >= 90% partly."""
    return share_verdict(list(fit_endings), C5B.rule)


def verdict_c6(mirror) -> Verdict:
    """C6, readable port: share of lines identical between the trees once library names are folded, over the
    modules that differ at all (byte-identical modules call no array-library function that differs and are
    counted apart); >= 0.8 reproduced, >= 0.6 partly."""
    return Verdict(value=mirror.share, verdict=C6.rule.grade(mirror.share))


def c5a_pairs(run, objective: Objective):
    """C5a's pairs of one run under one objective: (the cross-check's and the sweep's pairs of the paper's float64
    series, which C5a judges; the pairs of other series, reported beside it)."""
    name, series = run.judged(objective)
    crosscheck = crosscheck_read.crosscheck_differences(run.crosscheck, objective)
    differences = sweep_read.fit_differences(series, optima=run.optima.get(name))

    def paper_pair(row):
        return row.series in C5A_SERIES and row.against in C5A_SERIES

    judged = [[row for row in rows if paper_pair(row)] for rows in (crosscheck, differences)]
    return judged[0], judged[1], [row for row in crosscheck + differences if not paper_pair(row)]


def judged_pairs(run, objective: Objective) -> list[Pair]:
    """The pairs C5a judges on a run, those that can be compared (both fits solutions)."""
    crosscheck, differences, _ = c5a_pairs(run, objective)
    return [row for row in crosscheck + differences if row.comparable]


def worst_pair_text(c5a: Agreement) -> str:
    """C5a's worst pair: '; worst 0.04 SE (numpy / torch-cpu, npix 512, n = 8)'."""
    worst = c5a.worst
    if worst is None:
        return ""
    return f"; worst {worst.max_stderr:.2g} SE ({worst.against} / {worst.series}, npix {worst.npix}, n = {worst.nzern})"


def evaluate_c5a(run, objective: Objective) -> Agreement:
    c5a = verdict_c5a(*c5a_pairs(run, objective)[:2])
    return c5a.worded(c5a.total and f"{c5a.passed} of {c5a.total} comparisons within {SAME_SOLUTION_STDERR} SE"
                      + worst_pair_text(c5a))


def notes_c5a(run, objective: Objective, found: Agreement) -> list[str]:
    """C5a's notes: points not judged, pairs not compared, the other series' agreement, BFGS's standard errors."""
    _, differences, others = c5a_pairs(run, objective)
    notes = off_yardstick_note(run, objective) if found.verdict != NOT_MEASURED else []
    if found.not_comparable:
        why = ("was stopped at the sweep's time limit" if sweep_read.stopped_at_limits(run.judged(objective)[1])
               else "is not a solution")
        notes.append(f"{found.not_comparable} pair(s) not compared: a fit of the pair {why}")
    beside = verdict_c5a(others, [])
    if beside.total:
        notes.append(f"not judged, other series (gradient variants, on-device BFGS, JAX): {beside.passed} of "
                     f"{beside.total} within {SAME_SOLUTION_STDERR} SE")
    if any(row.basis == "BFGS" for row in differences):
        notes.append("no exact account in this run: BFGS's standard errors")
    return notes


def c5a_within(limit: float):
    """C5a's share of pairs within limit standard errors."""

    def judge(run, objective: Objective) -> Verdict:
        found = share_verdict([row.max_stderr <= limit for row in distinct(judged_pairs(run, objective))],
                              C5A.rule)
        return found.worded(f"{found.passed} of {found.total}" if found.total else None)

    return judge


def evaluate_c5b(run, objective: Objective) -> Share:
    series = run.judged(objective)[1]
    endings = sweep_read.endings(series) + [
        ended_at_target(fit.distance, fit.convergence) for fit in (run.crosscheck.fits if run.crosscheck else [])
        if fit.objective == objective.name and fit.convergence]
    c5b = verdict_c5b(endings)
    return c5b.worded(c5b.total and f"{c5b.passed} of {c5b.total} at the optimum")


def notes_c5b(run, objective: Objective, found: Share) -> list[str]:
    limited = sweep_read.stopped_at_limits(run.judged(objective)[1])
    return [f"{limited} fit(s) stopped at the sweep's time limit, not counted: they were not allowed to end"] \
        if limited else []


def mirror_of(run):
    """C6's count of lines alike in the model code a run was measured with (its last code known: a Mirror), or
    None."""
    known = [code for code in model_code.run_code(run.environments()) if code.hash is not None]
    return known[-1].mirror if known else None


def evaluate_c6(run, objective: Objective) -> Verdict:
    mirror = mirror_of(run)
    if not mirror:
        return Verdict()
    return verdict_c6(mirror).worded(f"{mirror.share:.0%} of {mirror.total} lines")


C5A = Claim(
    "C5a", "All implementations converge to the same solution within the algorithm's tolerances.",
    "same solution", "same solution", "all within 0.1 SE",
    f"share of the pairs of the paper's float64 fits of the same data (NumPy finite differences, torch "
    f"autograd on CPU and GPU; scipy BFGS), cross-check and sweep, within {SAME_SOLUTION_STDERR} standard "
    "error of each other: every pair, as the Mahalanobis distance under the point's optimum (runs "
    "that record no optimum: largest parameter difference against NumPy in its fit's standard errors, pairs of "
    "solutions only); the worst pair shown; other series reported, not judged. A comparison counts once: the "
    "cross-check's and the sweep's fits of one pair of series at one point fit the same data, and count as one, "
    "the farther apart; each run is judged alone (a refit of the same data in another run is not more evidence, "
    "and runs are never pooled)", 1.0, 0.9,
    evaluate=evaluate_c5a, brief=lambda c5a: f"{c5a.passed}/{c5a.total}, worst {c5a.worst.max_stderr:.2g} SE",
    reason="no comparable pair of fits in this run", notes=notes_c5a,
    alternatives=(Alternative(f"within {SAME_SOLUTION_STDERR} SE (today's)", True, c5a_within(SAME_SOLUTION_STDERR)),
                  Alternative("within 0.2 SE", False, c5a_within(0.2)),
                  Alternative("within 0.5 SE", False, c5a_within(0.5))))
C5B = Claim(
    "C5b", "(Ours, not the paper's.) Every fit ended at the optimum, so its time is a time to solution.",
    "our check: fits at the optimum", None, "all at the optimum",
    "share of the fits with an exact account that ended at the optimum on the time to target's yardstick: "
    f"their end within {TARGET} standard error of the point's optimum (Mahalanobis, sandwich covariance), so "
    "that no fit counted there has a censored time (runs before times to target: the Newton step left <= "
    f"{STOPPED_AT_OPTIMUM} standard error, sandwich where recorded)", 1.0, 0.9,
    evaluate=evaluate_c5b, reason="no fit with an exact account in this run", notes=notes_c5b)
C6 = Claim(
    "C6", "The PyTorch code stays as readable as the NumPy code (small, local changes; same structure).",
    "our check: lines alike between the trees, not readability itself", None, ">= 80% of lines alike",
    "share of non-blank lines identical between the trees once numpy/torch names are folded, over the "
    "modules that differ (byte-identical modules counted apart)", 0.8, 0.6, evaluate=evaluate_c6)

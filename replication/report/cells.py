"""One run's cells of the claims table: what was measured for each claim, its verdict, and why a claim was not
measured."""

import numpy as np

from replication import claims
from replication.claims import verdicts as claim_verdicts
from replication.core import judging, model_code, point_times
from replication.core.format import times
from replication.core.load import LOADED_CORES, measured_quiet
from replication.core.objectives import CAUCHY, Objective
from replication.core.optimum import ended_at_target
from replication.core.series import NUMPY, TORCH_CPU, TORCH_CUDA
from replication.report import load
from replication.studies.crosscheck import read as crosscheck_read
from replication.studies.sweep import read as sweep_read

CLAIMS = {claim.id: claim.statement for claim in claims.CLAIMS}
"""The paper's claims, in our words (replication/claims.py; paper/MODEL.md gives the paper's setup)."""


SHORT = {claim.id: claim.short for claim in claims.CLAIMS}
"""Each claim in a few words, for the tables and the answer."""


RULES = {key: rule.text for key, rule in claim_verdicts.RULES.items()}
"""How each verdict is computed from the results (claims.verdicts makes them)."""


TIMED = tuple(claim.id for claim in claims.CLAIMS if claim.timed)
"""The claims judged on times to solution."""


def host_cores(records):
    """'2 of 16 cores': the threads NumPy and torch-cpu ran with on the sweep's host, from its run records."""
    pairs = sorted({(record.threads, record.cpu_count, fewer_for_others(record)) for record in records})
    return ", ".join(f"{threads} of {cores} cores" + (" (as many as others left free)" if fewer else "")
                     for threads, cores, fewer in pairs) or "threads not recorded"


def fewer_for_others(record):
    """Whether a session measured with fewer threads than by default because other processes kept cores busy."""
    others = record.others_busy_cores_at_start or 0
    return record.threads_chosen_by == "free cores" and others >= LOADED_CORES


class Notes:
    """Numbered notes under a table: the same text gets the same number."""

    def __init__(self):
        self.texts = []

    def mark(self, text):
        if text not in self.texts:
            self.texts.append(text)
        return self.texts.index(text) + 1


def reason_not_measured(claim, series, objective: Objective):
    """Why a claim could not be judged on a run's sweep, in a few words."""
    names = set(series)
    if not series:
        return "no sweep in this run" if objective is CAUCHY else "no least-squares sweep in this run"
    if claim in ("C1", "C2") and TORCH_CUDA not in names:
        return "no GPU series in this run"
    if claim in TIMED and not {NUMPY, TORCH_CPU} <= names:
        return "NumPy and torch-cpu were not both timed"
    solved = point_times.speedups(series, NUMPY, TORCH_CPU)
    old_rule = not sweep_read.timed_to_targets(series)
    if claim in ("C3", "C4") and not solved and sweep_read.left_out(series) and old_rule:
        return "no point where both NumPy's and torch-cpu's fits are solutions"
    if claim in ("C2", "C3", "C4") and sweep_read.left_out(series) and old_rule:
        return "no grid size large enough where every measured pair of fits is a pair of solutions"
    if claim == "C3":
        return "no measured pair at npix >= 128"
    if claim == "C4":
        return (f"no grid of npix >= {claims.C4_MIN_NPIX} with every order n = "
                + ", ".join(map(str, claims.C4_ORDERS)) + " measured")
    if claim == "C5b":
        return "no fit with an exact account in this run"
    if claim == "C5a":
        return "no comparable pair of fits in this run"
    return claims.BY_ID[claim].reason if claim in claims.BY_ID else "not measured in this run"


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


C5A_SERIES = (NUMPY, TORCH_CPU, TORCH_CUDA)
"""The float64 series whose pairs C5a judges: the paper's own (NumPy with finite differences, torch autograd; scipy's
BFGS). Other series (float64 gradient variants, the on-device BFGS, JAX) are reported beside it, not judged."""


def c5a_pairs(run, series, objective):
    """C5a's pairs of one run under one objective: (the cross-check's and the sweep's pairs of the paper's float64
    series, which C5a judges; the pairs of other series, reported beside it)."""
    crosscheck = crosscheck_read.crosscheck_differences(run.crosscheck, objective)
    name = run.judged(objective)[0]
    differences = sweep_read.fit_differences(series, optima=run.optima.get(name))

    def paper_pair(row):
        return row["series"] in C5A_SERIES and row.get("against", NUMPY) in C5A_SERIES

    judged = [[row for row in rows if paper_pair(row)] for rows in (crosscheck, differences)]
    return judged[0], judged[1], [row for row in crosscheck + differences if not paper_pair(row)]


def c5_parts(run, series, objective):
    """C5a and C5b of one run under one objective, and C5a's comparison for the series it does not judge."""
    crosscheck, differences, others = c5a_pairs(run, series, objective)
    endings = sweep_read.endings(series) + [
        ended_at_target(fit.distance, fit.convergence) for fit in (run.crosscheck.fits if run.crosscheck else [])
        if fit.objective == objective.name and fit.convergence]
    return (claim_verdicts.verdict_c5a(crosscheck, differences), claim_verdicts.verdict_c5b(endings), differences,
            claim_verdicts.verdict_c5a(others, []))


def worst_pair_text(c5a):
    """C5a's worst pair: 'worst 0.04 SE (numpy / torch-cpu, npix 512, n = 8)'."""
    worst = c5a["worst"]
    if worst is None:
        return ""
    return (f"; worst {worst['max_stderr']:.2g} SE ({worst.get('against', NUMPY)} / {worst['series']}, npix "
            f"{worst['npix']}, n = {worst['nzern']})")


def slope_text(c4):
    """C4's cell: the slope at its grid with its range over the repeats' ranges; a range where a censored fit leaves
    it open ("slope >= 1.2")."""
    if c4["value"] is not None:
        low, high = (f"{end:.2f}" for end in c4["repeats"])
        spread = f"slope {c4['value']:.2f}" + ("" if low == high else f" ({low} to {high})")
        above = c4.get("open_above") or []
        passed = f" (at npix {', '.join(map(str, above))} bounds leave the verdict open)" if above else ""
        return f"{spread} at npix {c4['npix']}, spread {times(c4['spread'])}{passed}"
    low, high = c4["known"]
    known = f">= {low:.2f}" if np.isinf(high) and np.isfinite(low) else f"<= {high:.2f}" if np.isinf(low) and \
        np.isfinite(high) else f"{low:.2f} to {high:.2f}" if np.isfinite(low) and np.isfinite(high) else "open"
    above = c4.get("open_above") or []
    passed = f"; at npix {', '.join(map(str, above))} bounds leave the verdict open" if above else ""
    return f"slope {known} at npix {c4['npix']} (a bound: a fit never reached the target{passed})"


def per_size_text(by_npix):
    """'npix 256: 2.2x (2.0-2.3); npix 512: ...'"""
    return "; ".join(f"npix {npix}: {times(value)}" for npix, value in by_npix.items())


def timed_cells(series, records):
    """The measured text of C1-C4 of one sweep, and the verdicts."""
    verdicts = claim_verdicts.judge_timed(series)
    c1, c2, c3, c4 = (verdicts[key] for key in ("C1", "C2", "C3", "C4"))
    cores = host_cores(records)
    text = {
        "C1": c1["npix"] and f"{times(c1['value'])} at npix {c1['npix']} (max {times(c1['max'], False)} at npix "
                             f"{c1['point'][0]}, n = {c1['point'][1]}); NumPy on {cores}",
        "C2": c2["by_npix"] and f"{per_size_text(c2['by_npix'])}; torch-cpu on {cores}",
        "C3": c3["by_npix"] and f"{times(c3['value'])} at npix {judging.weakest_npix(c3['by_npix'])}",
        "C4": c4["npix"] and slope_text(c4),
    }
    return text, verdicts


def undetermined_text(claim, verdict):
    """Why a timed claim's verdict is undetermined: the grades its bound allows."""
    rule = claim_verdicts.RULES[claim]
    if claim == "C4":
        low, high = judging.absolute_range(*verdict["known"])
    else:
        low, high = verdict["value"].floor, verdict["value"].ceiling
    grades = " or ".join(rule.possible(low, high))
    return f"a bound (a fit never came within the target): {grades}, the measurements cannot tell which"


def run_code(run, main):
    """How a run's model code stands against main's (main: model_code.identity of the working tree): {"stale": True
    where it differs as code (docstrings and comments aside), False where it is main's, None where not known; "text":
    a short line saying so; "mirror": C6 of the run's own code (or None)}."""
    codes = model_code.run_code(load.run_environments(run))
    known = [code for code in codes if code["hash"] is not None]
    if not known:
        return {"stale": None, "text": "model code not known (no commit recorded)", "mirror": None, "commits": []}
    commits = [commit for code in known for commit in code["commits"]]
    differing = sorted({path for code in known for path in model_code.differing_modules(code["modules"],
                                                                                        main["modules"])})
    where = f" (commit{'s' if len(commits) > 1 else ''} {', '.join(c[:7] for c in commits)})" if commits else ""
    if not differing:
        return {"stale": False, "text": f"model code = main's{where}", "mirror": known[-1]["mirror"],
                "commits": commits}
    every = set(main["modules"]) | {path for code in known for path in code["modules"]}
    names = f"all {len(differing)} modules" if set(differing) == every else f"{len(differing)} module(s): " + \
        ", ".join(path.replace("reference_numpy/", "numpy:").replace("torch_impl/", "torch:") for path in differing)
    return {"stale": True, "text": f"stale: model code differs from main's in {names}{where}",
            "mirror": known[-1]["mirror"], "commits": commits}


def run_claims(run, code, objective, notes):
    """{claim: cell} of one run under one objective: a short value, the verdict, and numbered notes (code: the run's
    run_code, whose mirror C6 reads)."""
    name, series = run.judged(objective)
    records = run.sweeps[name][1] if name else []
    text, verdicts = timed_cells(series, records)
    c5a, c5b, differences, others = c5_parts(run, series, objective)
    text["C5a"] = c5a["total"] and (f"{c5a['passed']} of {c5a['total']} within {claims.SAME_SOLUTION_STDERR} SE"
                                    + worst_pair_text(c5a))
    limited = sweep_read.stopped_at_limits(series)
    text["C5b"] = c5b["total"] and f"{c5b['passed']} of {c5b['total']} at the optimum"
    mirror = code["mirror"]
    text["C6"] = mirror and f"{mirror['share']:.0%} of {mirror['total']} lines"
    verdicts |= {"C5a": c5a, "C5b": c5b,
                 "C6": claim_verdicts.verdict_c6(mirror) if mirror
                 else {"value": None, "verdict": judging.NOT_MEASURED}}
    for claim in claims.CLAIMS:
        if claim.evaluate is not None:  # a claim added with its own evaluation (claims.ADDED)
            verdicts[claim.id] = claim.evaluate(run, objective)
            text[claim.id] = verdicts[claim.id]["text"]
    cells = {}
    left = left_out_text(series)
    off = run.off_yardstick.get(name)
    off = off and (f"{off} point(s) of this sweep not judged: their optimum's covariance is the inverse Hessian "
                   "(recorded before 2026-12-03), not the sandwich every rule judges on")
    loaded = LOADED_TEXT if series and not measured_quiet(run) else None
    for key in CLAIMS:
        verdict = verdicts[key]["verdict"]
        marks = []
        if loaded and key in TIMED and verdict != judging.NOT_MEASURED:  # beside each timing verdict, first
            marks.append(notes.mark(loaded))
        if verdict == judging.NOT_MEASURED:
            marks.append(notes.mark(reason_not_measured(key, series, objective)))
        elif verdict == judging.UNDETERMINED:
            marks.append(notes.mark(undetermined_text(key, verdicts[key])))
        elif key in TIMED and left:
            marks.append(notes.mark(left))
        if off and (key in TIMED or key == "C5a") and verdict != judging.NOT_MEASURED:
            marks.append(notes.mark(off))
        if key == "C5a" and c5a["not_comparable"]:
            why = "was stopped at the sweep's time limit" if limited else "is not a solution"
            marks.append(notes.mark(f"{c5a['not_comparable']} pair(s) not compared: a fit of the pair {why}"))
        if key == "C5b" and limited:
            marks.append(notes.mark(f"{limited} fit(s) stopped at the sweep's time limit, not counted: they were not "
                                    "allowed to end"))
        if key == "C5a" and others["total"]:
            marks.append(notes.mark(f"not judged, other series (gradient variants, on-device BFGS, JAX): "
                                    f"{others['passed']} of {others['total']} within "
                                    f"{claims.SAME_SOLUTION_STDERR} SE"))
        if key == "C5a" and any(row["basis"] == "BFGS" for row in differences):
            marks.append(notes.mark("no exact account in this run: BFGS's standard errors"))
        cells[key] = {"text": text[key] or "—", "verdict": verdict, "notes": marks, "found": verdicts[key],
                      "loaded": bool(loaded) and key in TIMED}
    return cells


LOADED_TEXT = ("measured on a loaded machine: other processes kept cores busy at some points, so its times, torch's "
               "most, read lower than a quiet machine's; a verdict below the bar may be the load's")
"""The note beside each timing verdict of a run measured on a loaded machine."""

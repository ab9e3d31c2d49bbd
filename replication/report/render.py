"""The report: REPORT.md (the answer, the claims, the paper's figures) and one appendix per run (every table
behind a cell), rendered with jinja2 from the recorded runs only.

Without runs of your own it renders the committed reference runs into paper/; with them, your runs appear
beside the references in a report written into your run's folder.
"""

import functools
import math
import os
import pathlib
import re

import jinja2
import numpy as np

from reference_numpy.gradient import STEPS
from replication import claims
from replication.claims import mechanism as claim_mechanism
from replication.claims import verdicts as claim_verdicts
from replication.core import judging, model_code, optimum, paths, runs
from replication.core.mirror import mirror_table, side_by_side_page
from replication.core.paths import FIGURES, PAPER, ROOT, TEMPLATES
from replication.core.profiles import PROFILES, RETRIEVAL_PROFILES
from replication.core.registry import floor_step
from replication.core.results import check_target, write_text_if_changed, writing_into
from replication.core.series import JAX, NUMPY, RENAMED, TORCH_ADJOINT, TORCH_CPU, TORCH_CUDA, ordered
from replication.core.simulation import (
    STOPPED_AT_OPTIMUM,
    covariance_scale,
    ended_at_optimum,
    identifiable,
    judging_newton,
    rank_deficiency,
)
from replication.report import load
from replication.report.figures import (
    PAPER_SERIES,
    answer_caption,
    answer_plan,
    crosscheck_run,
    decomposition_run,
    figure_run,
    fit_distances,
    grid_size_orders,
    other_panels,
    real_maps_run,
    retrieval_run,
)
from replication.studies.bench.records import AUTOGRAD_PARTS
from replication.studies.crosscheck import read as crosscheck_read
from replication.studies.crosscheck.records import crosscheck_fits, fit_series
from replication.studies.peers import read as peers_read
from replication.studies.real_maps.read import findings as real_maps_findings
from replication.studies.real_maps.read import pyoof_lines, ratio_text, real_maps_section, simulated_beside
from replication.studies.sweep import read as sweep_read

CLAIMS = {claim.id: claim.statement for claim in claims.CLAIMS}
"""The paper's claims, in our words (replication/claims.py; paper/MODEL.md gives the paper's setup)."""
SHORT = {claim.id: claim.short for claim in claims.CLAIMS}
"""Each claim in a few words, for the tables and the answer."""
RULES = {key: rule.text for key, rule in claim_verdicts.RULES.items()}
"""How each verdict is computed from the results (the functions of replication.analysis)."""
TIMED = tuple(claim.id for claim in claims.CLAIMS if claim.timed)
"""The claims judged on times to solution."""
OBJECTIVE_TITLES = {"cauchy": "the Cauchy likelihood (our default)",
                    "gaussian": "least squares in noise units",
                    "least-squares": "least squares as published (the author's unscaled sum)"}


def number(value, digits=3):
    """A number with `digits` significant figures, or an em dash for nothing."""
    if value is None:
        return "—"
    return f"{value:.{digits}g}"


def times(value, interval=True):
    """A speed-up's cell: the value and its range over pairs of repeats ("9.5x (8.1-10)"), a bound marked as one
    (">= 12x"), or plain for a number without a range."""
    if value is None:
        return "—"
    if not isinstance(value, judging.Ratio):
        return f"{value:.3g}x"
    if value.kind == judging.UNDETERMINED:
        return "undetermined"
    if value.kind == judging.BETWEEN:
        return f"{value.floor:.3g}x to {value.ceiling:.3g}x (bounds)"
    if value.kind != judging.VALUE:
        return f"{'>=' if value.kind == judging.AT_LEAST else '<='} {value:.3g}x"
    low, high = short_number(value.low), short_number(value.high)
    if not interval or low == high:
        return f"{value:.3g}x"
    return f"{value:.3g}x ({low}-{high})"


def share_range(interval):
    """A share's interval in per cent: '60-98%'."""
    return "—" if interval is None else f"{100 * interval[0]:.0f}-{100 * interval[1]:.0f}%"


def short_number(value):
    """Two significant figures, without an exponent below 10,000 (150, not 1.5e+02)."""
    return f"{value:.0f}" if 100 <= abs(value) < 1e4 else f"{value:.2g}"


def sci(value):
    """A small number in scientific notation, two significant figures."""
    return "—" if value is None else f"{value:.1e}"


def seconds_cell(record):
    """Median seconds of a point: to the target, then to the optimiser's stop where the point records a target
    ("0.12 / 0.15"; a fit that never reached it ">= 12 / 12 †", a bound); estimated values carry a tilde, older fits
    that are not solutions a dagger."""
    if record is None:
        return ""
    value = sweep_read.seconds(record)
    if record["estimated"]:
        return f"~{value:.3g} (est.)"
    solved = sweep_read.is_solution(record)
    if sweep_read.timed_to_target(record):
        stop = sweep_read.stop_seconds(record)
        return f"{'' if solved else '>= '}{value:.3g} / {stop:.3g}" + ("" if solved else " †")
    return f"{value:.3g}" + ("" if solved else " †")


RATIO_COLUMNS = ((NUMPY, TORCH_CPU), (NUMPY, TORCH_CUDA), (TORCH_CPU, TORCH_CUDA))


def timing_rows(series):
    """Rows of the timing table: per (npix, nzern) each series' seconds and the speed-ups (solutions only)."""
    keys = sorted({key for points in series.values() for key in points})
    names = ordered(series)
    ratio_columns = [pair for pair in RATIO_COLUMNS if all(name in series for name in pair)]
    rows = []
    for key in keys:
        cells = [seconds_cell(series[name].get(key)) for name in names]
        ratios = [sweep_read.speedups(series, slow, fast).get(key) for slow, fast in ratio_columns]
        rows.append({"npix": key[0], "nzern": key[1], "cells": cells, "ratios": [times(r) for r in ratios]})
    return names, [f"{a} / {b}" for a, b in ratio_columns], rows


def host_cores(records):
    """'2 of 16 cores': the threads NumPy and torch-cpu ran with on the sweep's host, from its run records."""
    pairs = sorted({(record.get("threads"), record.get("cpu_count")) for record in records})
    return ", ".join(f"{threads} of {cores} cores" for threads, cores in pairs) or "threads not recorded"


class Notes:
    """Numbered notes under a table: the same text gets the same number."""

    def __init__(self):
        self.texts = []

    def mark(self, text):
        if text not in self.texts:
            self.texts.append(text)
        return self.texts.index(text) + 1


def reason_not_measured(claim, series, objective="cauchy"):
    """Why a claim could not be judged on a run's sweep, in a few words."""
    names = set(series)
    if not series:
        return "no sweep in this run" if objective == "cauchy" else "no least-squares sweep in this run"
    if claim in ("C1", "C2") and TORCH_CUDA not in names:
        return "no GPU series in this run"
    if claim in TIMED and not {NUMPY, TORCH_CPU} <= names:
        return "NumPy and torch-cpu were not both timed"
    solved = sweep_read.speedups(series, NUMPY, TORCH_CPU)
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
    return "no comparable pair of fits in this run"


def left_out_text(series):
    """'N of M measured fits ... (K stopped before the optimum, ...)', or None: for a sweep timed to the target,
    the fits whose times are bounds; for an older one, those whose times enter no ratio."""
    reasons = sweep_read.left_out(series)
    if not reasons:
        return None
    measured = sum(not record["estimated"] for points in series.values() for record in points.values())
    parts = ", ".join(f"{count} {reason}" for reason, count in reasons.items())
    if sweep_read.timed_to_targets(series):
        return (f"{sum(reasons.values())} of {measured} measured fits of this sweep are not solutions ({parts}); "
                "their ratios enter as bounds")
    return (f"{sum(reasons.values())} of {measured} measured fits of this sweep are not solutions ({parts}); "
            "their times enter no ratio")


C5A_SERIES = (NUMPY, TORCH_CPU, TORCH_CUDA)
"""The float64 series whose pairs C5a judges: the paper's own (NumPy with finite differences, torch autograd; scipy's
BFGS). Other series (float64 gradient variants, the on-device BFGS, JAX) are reported beside it, not judged."""


def c5_parts(run, series, objective):
    """C5a and C5b of one run under one objective, and C5a's comparison for the series it does not judge."""
    crosscheck = crosscheck_read.crosscheck_differences(run.crosscheck, objective)
    name = run.judged(objective)[0]
    differences = sweep_read.fit_differences(series, optima=run.optima.get(name))
    endings = sweep_read.endings(series) + [
        ended_at_optimum(fit) for fit in crosscheck_fits(run.crosscheck)
        if fit.get("objective", "cauchy") == objective and fit.get("convergence")]

    def paper_pair(row):
        return row["series"] in C5A_SERIES and row.get("against", NUMPY) in C5A_SERIES

    judged = [[row for row in rows if paper_pair(row)] for rows in (crosscheck, differences)]
    others = [row for row in crosscheck + differences if not paper_pair(row)]
    return (claim_verdicts.verdict_c5a(*judged), claim_verdicts.verdict_c5b(endings), judged[1],
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


def retrieval_section(run, appendix):
    """What the report shows of a run's cold-start retrieval (its largest profile), or None without one: how the
    fits ended, per aberration size and per point, and C3, C4 judged on the cold-start fits beside the sweep's."""
    from replication.studies.retrieval import read as cold_start

    name, records = run.retrieval_shown
    if not name:
        return None
    success = cold_start.success_table(records)
    methods = sorted({method for row in success for method in row["cells"]}, key=lambda m: (m[0].sort_key(), m[1]))
    cold = cold_start.retrieval_claims(records)
    _, truth = timed_cells(run.series, [])
    judged_claims = []
    for key in ("C3", "C4"):
        cells = []
        for verdict in (cold[key], truth[key]):
            if verdict["verdict"] == judging.NOT_MEASURED:
                cells.append(judging.NOT_MEASURED)
            elif key == "C3":
                weakest = judging.weakest_npix(verdict["by_npix"])
                cells.append(f"{times(verdict['value'])} at npix {weakest}: **{verdict['verdict']}**")
            else:
                cells.append(f"{slope_text(verdict)}: **{verdict['verdict']}**")
        judged_claims.append({"claim": key, "short": SHORT[key], "cold": cells[0], "truth": cells[1]})
    return {"title": run.title, "appendix": appendix, "folder": shown(run.folder / name),
            "profile": name.removeprefix("retrieval-"), "fits": len(cold_start.judged(records)),
            "methods": [{"key": method, "label": cold_start.method_label(*method)} for method in methods],
            "success": success, "points": cold_start.point_table(records), "claims": judged_claims,
            "endings": cold_start.endings_count(records), "same_optimum": cold_start.SAME_OPTIMUM_NLL,
            "by_distance": any(map(cold_start.judged_by_distance, records)),
            "settings": RETRIEVAL_PROFILES.get(name.removeprefix("retrieval-"))}


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
    cells = {}
    left = left_out_text(series)
    off = run.off_yardstick.get(name)
    off = off and (f"{off} point(s) of this sweep not judged: their optimum's covariance is the inverse Hessian "
                   "(recorded before 2026-12-03), not the sandwich every rule judges on")
    for key in CLAIMS:
        verdict = verdicts[key]["verdict"]
        marks = []
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
        cells[key] = {"text": text[key] or "—", "verdict": verdict, "notes": marks, "found": verdicts[key]}
    return cells


def claim_table(all_runs, codes, objective):
    """The claims table of one objective: per claim and run a cell, and the notes under the table (codes: {run
    folder: run_code})."""
    notes = Notes()
    per_run = [run_claims(run, codes[run.folder], objective, notes) for run in all_runs]
    rows = [{"id": key, "short": SHORT[key], "cells": [cells[key] for cells in per_run]} for key in CLAIMS]
    return {"objective": objective, "title": OBJECTIVE_TITLES[objective], "rows": rows, "notes": notes.texts}


PAPER_SAYS = {claim.id: claim.paper for claim in claims.CLAIMS if claim.paper}
"""The paper's claims in a few words, with its hardware where it matters, for the first screen."""
THRESHOLDS = {claim.id: claim.threshold for claim in claims.CLAIMS}
"""Each claim's threshold for *reproduced*, in a few words (the full rules: claim_verdicts.RULES)."""


def short_name(run):
    """A run's name in the first screen: CPU family, cores, GPU, and the date and what tells it from another run
    of that machine ('EPYC 2c, 12-02, 1 thread')."""
    machine = run.machine
    family = next((word for word in ("EPYC", "Xeon", "Ryzen", "Core", "Apple") if word in str(machine["cpu"])),
                  str(machine["cpu"]).split()[0])
    gpu = f" + {machine['gpu'].replace('NVIDIA ', '')}" if machine.get("gpu") else ""
    return f"{family} {machine['cpu_count']}c{gpu}, {run.info['created'][5:10]}{run.profile_label}"


def value_range(values, format_value):
    """'a' or 'a to b' over values (floats), each end written by format_value."""
    low, high = min(values, key=float), max(values, key=float)
    return format_value(low) if format_value(low) == format_value(high) else \
        f"{format_value(low)} to {format_value(high)}"


def ours_cell(key, measured):
    """Our value of a claim over the runs that measured it: the range of the runs' values."""
    found = [cell["found"] for _, cell in measured]
    if key in ("C1", "C3"):
        return values_and_bounds([f["value"] for f in found])
    if key == "C2":
        return "; ".join(", ".join(f"{times(v, False)} ({npix})" for npix, v in f["by_npix"].items())
                         for f in found)
    if key == "C4":  # a run's value, or the least its bounds allow (-inf: open, no bound from below)
        ends = [(f["value"], False) if f["value"] is not None else (f["known"][0], True) for f in found]
        known = sorted(end for end in ends if math.isfinite(end[0]))  # open ones: in the caveat (caveat_cell)
        if not known:
            return "slope open"
        slopes = [(">= " if bound else "") + f"{value:.2f}" for value, bound in (known[0], known[-1])]
        return "slope " + (slopes[0] if slopes[0] == slopes[1] else f"{slopes[0]} to {slopes[1]}")
    worst = max(float(f["worst"]["max_stderr"]) for f in found if f["worst"])
    return f"{sum(f['passed'] for f in found)}/{sum(f['total'] for f in found)} pairs, worst {worst:.2g} SE"


def values_and_bounds(ratios):
    """The runs' speed-ups of one claim: the range of the values, the bounds counted beside it ('3.97x to 7.25x
    (+1 bound)'; bound_text gives them), so that no range joins a value with a bound; the bounds alone without a
    value."""
    values = [r for r in ratios if not (isinstance(r, judging.Ratio) and r.is_bound)]
    bounds = [r for r in ratios if isinstance(r, judging.Ratio) and r.is_bound]
    if not values:
        return ", ".join(bound_text(r) for r in sorted(bounds, key=lambda r: r.floor))
    return value_range(values, lambda v: times(v, False)) + (f" (+{len(bounds)} bound{'s' if len(bounds) > 1 else ''})"
                                                             if bounds else "")


def bound_text(ratio):
    """A bound in words: '>= 19x', '<= 2x', '3.15x-6.37x (bounds)'."""
    return f"{ratio.floor:.3g}x-{ratio.ceiling:.3g}x (bounds)" if ratio.kind == judging.BETWEEN else times(ratio)


def where_cell(key, measured):
    """Where a claim was measured: the grid sizes its values come from and the runs' short names."""
    found = [cell["found"] for _, cell in measured]
    sizes = sorted({npix for f in found for npix in (
        [f["npix"]] if key in ("C1", "C4") else list(f["by_npix"]) if key == "C2" else
        [judging.weakest_npix(f["by_npix"])] if key == "C3" else [])})
    grid = (f"npix {sizes[0]}" + (f"-{sizes[-1]}" if len(sizes) > 1 else "") + "; ") if sizes else ""
    if len(measured) == 1:
        return grid + short_name(measured[0][0]).split(",")[0]
    return grid.removesuffix("; ") or f"{len(measured)} runs"


def verdict_cell(key, measured, total):
    """How many runs gave each verdict, '4 reproduced, 1 partly' (the bars are in the legend under the table)."""
    counts = {}
    for _, cell in measured:
        counts[cell["verdict"]] = counts.get(cell["verdict"], 0) + 1
    return ", ".join(f"{count} {verdict}" for verdict, count in counts.items())


def caveat_cell(key, measured, sections):
    """The main caveat of a claim, from what its runs are: one run only, a run made with other code or judged by
    the old rule; for C4, what the same gradient on both sides gives."""
    notes = []
    stale = sum(sections[run.folder.name]["code"]["stale"] is True for run, _ in measured)
    unknown = sum(sections[run.folder.name]["code"]["stale"] is None for run, _ in measured)
    old = sum(sections[run.folder.name]["old_rule"] for run, _ in measured)
    if len(measured) == 1:
        notes.append("one run" + (", older code" if stale else "") + (", code unknown" if unknown else "")
                     + (", time to stop" if old else ""))
    else:
        notes += [f"older code {stale}/{len(measured)}"] if stale else []
        notes += [f"code unknown {unknown}/{len(measured)}"] if unknown else []
        notes += [f"time to stop {old}/{len(measured)}"] if old else []
    if key == "C2":
        for run, _ in measured[:1]:
            gpu = [sweep_read.seconds(record) for record in run.series.get(TORCH_CUDA, {}).values()
                   if not record["estimated"] and sweep_read.is_solution(record)]
            sizes = sorted({npix for npix, _ in run.series.get(TORCH_CUDA, {})})
            if gpu:
                notes.append(f"torch-cuda {min(gpu):.2g}-{max(gpu):.2g} s, npix {sizes[0]}-{sizes[-1]}")
    if key == "C1":
        orders = [cell["found"]["orders"] for _, cell in measured
                  if len(cell["found"]["orders"]) < len(claims.C4_ORDERS)]
        if orders:
            notes.append(f"n = {', '.join(map(str, min(orders, key=len)))} only")
    for run, cell in measured if key in ("C1", "C3") else []:
        value = cell["found"]["value"]
        if isinstance(value, judging.Ratio) and value.is_bound:
            size = judging.weakest_npix(cell["found"]["by_npix"]) if key == "C3" else cell["found"]["npix"]
            notes.append(f"a bound on {short_name(run)}: {bound_text(value)} at npix {size}")
    if key == "C4":
        opened = sum(cell["found"]["value"] is None and not math.isfinite(cell["found"]["known"][0])
                     for _, cell in measured)
        if opened:
            notes.append(f"on {opened} run(s) the bounds leave the slope unknown from below")
        same = [(run, sections[run.folder.name]["decomposition"]["c4"]["exact (adjoint)"]) for run, _ in measured
                if sections[run.folder.name]["decomposition"]]
        same = [(run, found) for run, found in same if found["value"] is not None]
        if same:
            notes.append("with the exact gradient on both sides, slope " +
                         value_range([found["value"] for _, found in same], lambda v: f"{v:.2f}"))
    return "; ".join(notes) or "—"


def first_screen(table, judged_runs, sections):
    """The first screen's table (one row per paper claim, from the claims table of one objective) and the facts its
    sentences state: per claim the paper's words, our values over the runs judged by today's rule (time to target),
    where, the verdicts, the caveat. Runs judged by time to the optimiser's stop are never pooled with them: a claim
    only they measured reads "not measured with today's rule", their value beside it as indicative (history)."""
    by_folder = {section["folder_name"]: section for section in sections}
    current = [not by_folder[run.folder.name]["old_rule"] for run in judged_runs]
    rows = []
    for row in table["rows"]:
        if row["id"] not in PAPER_SAYS:
            continue
        cells = list(zip(judged_runs, row["cells"], current, strict=True))
        measured = [(run, cell) for run, cell, today in cells if today and cell["verdict"] != judging.NOT_MEASURED]
        older = [(run, cell) for run, cell, today in cells if not today and cell["verdict"] != judging.NOT_MEASURED]
        if not measured:
            rows.append({"id": row["id"], "paper": PAPER_SAYS[row["id"]],
                         "ours": "not measured with today's rule" if older else "not measured", "where": "—",
                         "verdict": "—" if older else "not measured",
                         "caveat": indicative_caveat(row["id"], older, by_folder) if older else None})
            continue
        rows.append({"id": row["id"], "paper": PAPER_SAYS[row["id"]], "ours": ours_cell(row["id"], measured),
                     "where": where_cell(row["id"], measured),
                     "verdict": verdict_cell(row["id"], measured, len(measured)),
                     "caveat": caveat_cell(row["id"], measured, by_folder)})
    today = [run for run, now in zip(judged_runs, current, strict=True) if now]
    stale = [short_name(run) for run in today if by_folder[run.folder.name]["code"]["stale"]]
    unknown = [short_name(run) for run in today if by_folder[run.folder.name]["code"]["stale"] is None]
    old = [short_name(run) for run, now in zip(judged_runs, current, strict=True) if not now]
    caveats = [f"**{row['id']}**: {row['caveat']}." for row in rows if row["caveat"] not in (None, "—")]
    if stale:
        caveats.append(f"Made with older model code (the same model; its code has changed since, the modules "
                       f"named in [the runs](DETAILS.md#runs)): {'; '.join(stale)}.")
    if unknown:
        caveats.append(f"Model code unknown (no commit or code recorded that this copy can read): "
                       f"{'; '.join(unknown)}.")
    if old:
        caveats.append(f"Not pooled: {len(old)} run(s) judged by the time to the optimiser's stop (recorded before "
                       f"times to target), their values in [the history](DETAILS.md#runs-judged-by-the-older-rule): "
                       f"{'; '.join(old)}.")
    unmeasured = [row["id"] for row in rows if row["ours"] == "not measured"]
    if unmeasured:
        caveats.append(f"Not measured by any run: {', '.join(unmeasured)}.")
    return {"rows": {row["id"]: row for row in rows}, "caveats": caveats, "runs": len(today),
            "machines": sorted({short_name(run).split(",")[0] for run in today}), "legend": first_screen_legend(),
            "history": history_rows(table, judged_runs, current)}


def mechanism(decomposed, run):
    """The first screen's sentence on where the CPU speed-up comes from, from the decomposition of the run that
    timed the gradient variants (decomposed: its section): the same exact gradient on both sides (library) against
    the exact gradient replacing finite differences (algorithm), each over the grid sizes measured; None without it."""
    if not decomposed or not decomposed["decomposition"] or not sweep_read.timed_to_targets(run.series):
        return None  # a run judged by time to stop is never on the first screen
    rows = decomposed["decomposition"]["rows"]
    library = [row["library"] for row in rows.values() if row.get("library") is not None]
    algorithm = [row["algorithm"] for row in rows.values() if row.get("algorithm") is not None]
    if not library or not algorithm:
        return None
    sizes = f"npix {min(rows)}-{max(rows)}" if len(rows) > 1 else f"npix {min(rows)}"
    return (f"Where it comes from ({sizes}, {run.short_title}): with the same exact gradient on both sides torch "
            f"is {value_range(library, lambda v: times(v, False))} as fast as NumPy (the library); the ~10x is the "
            f"exact gradient replacing finite differences, which cost P + 1 evaluations each: "
            f"{value_range(algorithm, lambda v: times(v, False))} in NumPy alone "
            "([decomposition](#where-the-speed-up-comes-from)).")


def indicative_caveat(key, older, sections):
    """What runs judged by the older rule found of a claim no run of today's rule measured: their value, never
    pooled or judged, with its limits in words."""
    limits = ["time to stop"]
    if any(sections[run.folder.name]["code"]["stale"] for run, _ in older):
        limits.insert(0, "older code")
    if key == "C1":
        orders = [cell["found"]["orders"] for _, cell in older if len(cell["found"]["orders"]) < len(claims.C4_ORDERS)]
        limits += [f"n = {', '.join(map(str, min(orders, key=len)))} only"] if orders else []
    shared = sorted({part.strip() for _, cell in older for part in cell["text"].split(";")
                     if " of " in part and "cores" in part})
    runs_named = "; ".join(short_name(run) for run, _ in older)
    return (f"indicative only, not judged: {ours_cell(key, older)} ({runs_named}; {', '.join(limits + shared)})")


def history_rows(table, judged_runs, current):
    """The runs judged by the older rule, each with its cells of the paper's claims as that rule found them."""
    rows = []
    for index, (run, now) in enumerate(zip(judged_runs, current, strict=True)):
        if now:
            continue
        cells = {row["id"]: row["cells"][index] for row in table["rows"] if row["id"] in PAPER_SAYS}
        rows.append({"run": short_name(run), "title": run.title, "appendix": f"runs/{run.appendix_name}.md",
                     "cells": {key: "—" if cell["verdict"] == judging.NOT_MEASURED else
                               f"{cell['text']}: {cell['verdict']}" for key, cell in cells.items()}})
    return rows


def first_screen_legend():
    """The words under the first screen's table: each claim's bar, what a slope and a bound are."""
    bars = "; ".join(f"{claim.id} {claim.threshold}" for claim in claims.CLAIMS if claim.paper)
    return (f"Reproduced if: {bars}; partly at a lower bar ([rules](DETAILS.md#how-the-verdicts-are-computed)). "
            "A slope is that of log(speed-up) against log(P): 0 where the speed-up does not depend on P, 1 where it "
            "grows as P (a finite-difference gradient costs P + 1 evaluations). '>=' marks a bound: a fit that "
            "never reached the solution counts at its total time. Ranges in brackets: over every pair of repeats.")


def answer(table, all_runs):
    """The first screen's sentences, from the verdicts of one table: per claim, its verdict on each run that
    measured it (once where every run has the same cell); the claims no run measured in one line."""
    lines, unmeasured = [], []
    for row in table["rows"]:
        measured = [(run, cell) for run, cell in zip(all_runs, row["cells"], strict=True)
                    if cell["verdict"] != judging.NOT_MEASURED]
        if not measured:
            unmeasured.append(row["id"])
            continue
        if len(measured) == len(all_runs) and len({(c["verdict"], c["text"]) for _, c in measured}) == 1:
            text = f"{measured[0][1]['verdict']} ({measured[0][1]['text']}) on every run"
        else:
            groups = {}
            for run, cell in measured:
                groups.setdefault(cell["verdict"], []).append(f"{run.short_title} ({cell['text']})")
            text = "; ".join(f"{verdict} on {', '.join(names)}" for verdict, names in groups.items())
            if len(measured) < len(all_runs):
                text += f"; not measured on {len(all_runs) - len(measured)} of {len(all_runs)} runs"
        lines.append({"id": row["id"], "short": row["short"], "text": text})
    if unmeasured:
        lines.append({"id": ", ".join(unmeasured), "short": "", "text": "not measured on any run (the notes under "
                                                                       "the table say why)"})
    return lines


TARGET_POINT = (2, 5)
"""(threads, nzern) of the bench's performance targets, reported at every npix, judged at npix 512."""
TARGETS = (("numpy_adjoint_value_and_grad", "NumPy value + exact (adjoint) gradient", 2.5),
           ("torch_adjoint_value_and_grad", "torch value + exact (adjoint) gradient", 2.5),
           ("torch_value_and_grad", "torch value + autograd gradient", 5.0),
           ("torch_public_adjoint_prepared", "public value_and_grad, adjoint, prepared data", 3.0),
           ("torch_public_autograd_prepared", "public value_and_grad, autograd, prepared data", 5.0))
"""(step, what, limit): each step's multiple of its own library's 3-FFT floor must be <= limit."""
PUBLIC_OVERHEAD = (("torch_public_adjoint_prepared", "torch_adjoint_value_and_grad", 1.10, 256),)
"""(public step, internal step, limit, smallest npix judged): a user's loop over the public API against the
internal path it calls, the same data already prepared."""
LIKELIHOOD_TARGET = 1.5
"""NumPy's objective alone at 1 thread may take at most this multiple of torch's: the libraries' own speed."""


def bench_targets(bench):
    """The performance targets: per npix at 2 threads and nzern 5, each step's multiple of its own library's
    FFT floor (NumPy: scipy.fft; torch: torch.fft) and of torch's, judged at npix 512."""
    if not bench:
        return []
    targets = []
    for row in bench["rows"]:
        if (row["threads"], row["nzern"]) != TARGET_POINT or "numpy_adjoint_value_and_grad" not in row["ms"]:
            continue
        for step, what, limit in TARGETS:
            if step not in row["ms"]:
                continue  # a bench made before the step was timed
            value = row["ms"][step] / row["ms"][floor_step(step)]
            targets.append({"target": f"{what}, npix {row['npix']}: <= {limit:g}x its library's floor",
                            "value": times(value), "torch_floor": times(row["x_floor"][step]),
                            "met": (value <= limit) if row["npix"] == 512 else None})
        for step, internal, limit, smallest in PUBLIC_OVERHEAD:
            if step in row["ms"] and row["npix"] >= smallest:
                value = row["ms"][step] / row["ms"][internal]
                targets.append({"target": f"a loop over the public API, prepared data, against the internal path, "
                                          f"npix {row['npix']}: <= {limit:g}x", "value": times(value),
                                "torch_floor": "", "met": value <= limit})
    for row in bench["rows"]:
        if row["threads"] == 1:
            value = row["numpy_over_torch_nll"]
            targets.append({"target": f"NumPy likelihood <= {LIKELIHOOD_TARGET:g}x torch likelihood, 1 thread, "
                                      f"npix {row['npix']}, nzern {row['nzern']}", "value": times(value),
                            "torch_floor": "", "met": value <= LIKELIHOOD_TARGET})
    return targets


def bench_profiles(bench):
    """Rows of the step profiles (nzern 5, or the bench's first order): where a value-and-gradient goes."""
    rows = [row for row in (bench or {}).get("rows", []) if "profile_ms" in row]
    orders = sorted({row["nzern"] for row in rows})
    keep = 5 if 5 in orders else (orders[0] if orders else None)
    order = {step: place for place, step in enumerate(STEPS + AUTOGRAD_PARTS)}
    return [{"threads": row["threads"], "npix": row["npix"], "nzern": row["nzern"],
             "walk": " ".join(RENAMED.get(word, word) for word in walk.split()),
             "steps": dict(sorted(steps.items(), key=lambda item: order.get(item[0], len(order)))),
             "total": sum(steps.values()),
             "floor": row["ms"][floor_step(walk)]}
            for row in rows if row["nzern"] == keep for walk, steps in row["profile_ms"].items()]


ALLOCATOR_STEPS = {"numpy_nll": "NumPy objective", "torch_nll": "torch objective",
                   "torch_value_and_grad": "torch value + autograd gradient",
                   "numpy_adjoint_value_and_grad": "NumPy value + adjoint gradient",
                   "torch_adjoint_value_and_grad": "torch value + adjoint gradient"}
"""The bench steps the allocator comparison shows: {record key: what it is}."""


def allocator_effect(bench, default_bench):
    """Rows comparing the bench with the allocator settings against glibc's defaults, same steps."""
    if not bench or not default_bench:
        return []
    default = {(r["threads"], r["npix"], r["nzern"]): r for r in default_bench["rows"]}
    rows = []
    for row in bench["rows"]:
        other = default.get((row["threads"], row["npix"], row["nzern"]))
        if other:
            rows.append({"threads": row["threads"], "npix": row["npix"], "nzern": row["nzern"],
                         "steps": {what: (other["ms"][name], row["ms"][name]) for name, what in
                                   ALLOCATOR_STEPS.items() if name in row["ms"] and name in other["ms"]}})
    return rows


def compiled_reading(bench_compile):
    """The bench-compile rows holding the compiled variant, and what they say: {"rows", "faster" / "slower" (where
    compiled autograd beat eager autograd, or did not), "adjoint_fastest" / "adjoint_not_fastest" (where the eager
    exact adjoint beat both, or did not)}, each a phrase naming the points ('npix 256, 512'); {} without rows."""
    rows = [row for row in (bench_compile or {"rows": []})["rows"] if "torch_compiled_value_and_grad" in row["ms"]]
    if not rows:
        return {}
    one_setting = len({(row["nzern"], row["threads"]) for row in rows}) == 1

    def points(chosen):
        if one_setting:
            return "npix " + ", ".join(str(row["npix"]) for row in chosen) if chosen else ""
        return "; ".join(f"npix {r['npix']}, n = {r['nzern']}, {r['threads']} thread(s)" for r in chosen)

    def split(wins):
        """(the points where wins(row) holds, those where it does not), as phrases."""
        return points([r for r in rows if wins(r["ms"])]), points([r for r in rows if not wins(r["ms"])])

    faster, slower = split(lambda ms: ms["torch_compiled_value_and_grad"] < ms["torch_value_and_grad"])
    adjoint_fastest, adjoint_not_fastest = split(lambda ms: ms["torch_adjoint_value_and_grad"] < min(
        ms["torch_compiled_value_and_grad"], ms["torch_value_and_grad"]))
    return {"rows": rows, "faster": faster, "slower": slower, "adjoint_fastest": adjoint_fastest,
            "adjoint_not_fastest": adjoint_not_fastest}


def fit_row(fit):
    """A cross-check fit as the convergence table shows it."""
    account = fit["convergence"]
    scale = covariance_scale(fit["fun"], 3 * fit["npix"] ** 2, len(fit["x"]), fit["objective"])
    ratio = np.sqrt(scale) * np.array(fit["stderr_bfgs"], dtype=float) / np.array(account["stderr"], dtype=float)
    finite = ratio[np.isfinite(ratio)]
    return {"impl": fit_series(fit).label, "npix": fit["npix"], "nzern": fit["nzern"],
            "objective": fit["objective"], "nit": fit["nit"], "nfev": fit["nfev"], "success": fit["success"],
            "message": fit["message"],
            "grad_norm": account["grad_norm"], "newton": judging_newton(account),
            "decrease": account["expected_decrease"], "rounding": account["rounding"],
            "at_optimum": judging_newton(account) <= STOPPED_AT_OPTIMUM,
            "bfgs_ratio": (float(finite.min()), float(finite.max())) if finite.size else None}


def relative(path, start):
    """path relative to start, in forward slashes (links in the report)."""
    return pathlib.Path(os.path.relpath(pathlib.Path(path).resolve(), pathlib.Path(start).resolve())).as_posix()


def shown(folder):
    """A folder as the report names it: relative to the repository where it lies inside it."""
    folder = pathlib.Path(folder).resolve()
    return folder.relative_to(ROOT).as_posix() if folder.is_relative_to(ROOT) else str(folder)


def environment_of(run):
    """The environment record describing a run's software: its judged sweep's first, else its cross-check's."""
    name = run.judged("cauchy")[0]
    if name and run.sweeps[name][1]:
        return run.sweeps[name][1][0]
    if run.crosscheck:
        return run.crosscheck["environment"]
    if run.bench:
        return run.bench["environments"][0]
    return None


def crosscheck_summary(run):
    """The cross-check in one line's numbers: checks passed, the check closest to its tolerance, the failures."""
    checks = crosscheck_read.crosscheck_checks(run.crosscheck)
    if not checks:
        return None
    finite = [c for c in checks if c["value"] is not None and np.isfinite(c["value"]) and c["tolerance"] > 0]
    closest = max(finite, key=lambda c: c["value"] / c["tolerance"]) if finite else None
    dropped = len(run.crosscheck["checks"]) - len(checks)
    return {"passed": sum(c["passed"] for c in checks), "total": len(checks), "closest": closest,
            "failed": [c for c in checks if not c["passed"]], "dropped": dropped}


def sweep_sections(run):
    """Each sweep of a run: its timing table (non-solutions marked), records and how its fits ended."""
    sweeps = []
    for name, (series, records) in run.sweeps.items():
        if series:
            names, ratio_columns, rows = timing_rows(series)
            sweeps.append({"profile": name.removeprefix("sweep-").removesuffix("-least-squares"),
                           "objective": sweep_read.sweep_objective(name),
                           "folder": shown(run.folder / (name if (run.folder / name).is_dir() else "shards")),
                           "names": names, "ratio_columns": ratio_columns, "rows": rows, "runs": records,
                           "targeted": sweep_read.timed_to_targets(series),
                           "left_out": left_out_text(series), "convergence": sweep_read.convergence_rows(series)})
    return sweeps


def run_figures(run, figures, start):
    """The run's own figures (paths relative to start) that figures.draw_run draws."""
    if not run.series:
        return []
    folder = figures / "runs" / run.appendix_name
    names = ["fig1_time_vs_grid_size", "fig2_time_vs_zernike_order"]
    names += ["fig7_other_series"] if other_panels(run) else []
    return [relative(folder / f"{name}.png", start) for name in names]


def run_sections(run, figures, start):
    """What an appendix shows of one run: its sweeps' tables, checks, comparisons and benches."""
    return {"title": run.title, "folder": shown(run.folder), "own": run.own, "note": run.info.get("note"),
            "nodes": run.nodes, "appendix": f"runs/{run.appendix_name}.md",
            "decomposition": claim_mechanism.decomposition(run.series), "peers": peers_read.peers(run.series),
            "peers_check": run.peers_check, "bench_peers": run.bench_peers,
            "machine": run.machine, "environment": environment_of(run), "profile": run.profile,
            "sweeps": sweep_sections(run), "crosscheck": run.crosscheck,
            "crosscheck_checks": crosscheck_read.crosscheck_checks(run.crosscheck),
            "crosscheck_summary": crosscheck_summary(run),
            "crosscheck_fits": [fit_row(fit) for fit in crosscheck_fits(run.crosscheck)
                                if fit.get("convergence")],
            "bench": run.bench, "bench_targets": bench_targets(run.bench),
            "bench_profiles": bench_profiles(run.bench),
            "allocator": allocator_effect(run.bench, run.bench_default),
            "compiled": compiled_reading(run.bench_compile),
            "figures": run_figures(run, figures, start),
            "retrieval": retrieval_section(run, f"runs/{run.appendix_name}.md"),
            "real_maps": real_maps_section(run)}


def load_runs(own_runs, reference=None):
    """Your runs (in the order given), then every reference run (in name order)."""
    own = [load.load_run(folder, own=True) for folder in own_runs]
    return own + [load.load_run(folder, own=False) for folder in runs.reference_runs(reference)]


def main_figures(all_runs, figures, output):
    """The main report's figures that figures.draw_all draws for these runs: (path, caption)."""
    shown_run = figure_run(all_runs)
    decomposed = decomposition_run(all_runs)
    checked = crosscheck_run(all_runs)
    chosen = []
    if shown_run is not None:
        series = ", ".join(str(name) for name in PAPER_SERIES if name in shown_run.series)
        orders = ", ".join(map(str, grid_size_orders(shown_run)))
        chosen += [("fig1_time_vs_grid_size", f"Figure 1 (the paper's figure): time to solution against grid size "
                                              f"at n = {orders}; {series}; {shown_run.title}"),
                   ("fig2_time_vs_zernike_order", f"Figure 2: time to solution against the Zernike order; "
                                                  f"{shown_run.title}"),
                   ("fig3_speedup_vs_grid_size", "Figure 3: NumPy / torch-cpu against grid size, every run "
                                                 "(median over orders; open triangles: bounds)")]
    if decomposed is not None:
        chosen.append(("fig6_speedup_decomposition", f"Figure 6: where the speed-up comes from; {decomposed.title}"))
    if checked is not None:
        if (checked.folder / "crosscheck" / "example.npz").exists():
            chosen.append(("fig4_example_fit", f"Figure 4: a retrieval from zero aberration; {checked.title}"))
        what = ("where every fit ended, as its distance from its point's optimum" if fit_distances(checked) else
                "NumPy against torch fits, Cauchy")
        chosen.append(("fig5_agreement", f"Figure 5: {what}; {checked.title}"))
    return [{"path": relative(figures / f"{name}.png", output), "caption": caption} for name, caption in chosen]


def mirror_commit(all_runs, codes):
    """The commit whose code the readability section shows: the newest run's last whose code git (or, in a source
    archive, the committed rendering's cache) can give; None without one."""
    for run in sorted(all_runs, key=lambda run: (run.own, run.info["created"]), reverse=True):
        for commit in reversed(codes[run.folder]["commits"]):
            if model_code.sources_or_cached(commit):
                return commit
    return None


def mirror_sources(all_runs, codes):
    """The code the readability section shows (C6's modules and the side-by-side page): that of mirror_commit (so
    that rewording a tree does not change the report); the working tree without one."""
    commit = mirror_commit(all_runs, codes)
    return model_code.sources_or_cached(commit) if commit else model_code.working_sources()


def unidentifiable(all_runs):
    """The points of the profiles and of the runs' records that make_setup refuses as not identifiable, with
    the rank of their design and the parameter count."""
    keys = {key for profile in PROFILES.values() for key in profile.unidentifiable()}
    keys |= {key for run in all_runs for points in run.series.values() for key in points
             if not identifiable(*key)}
    return [{"npix": npix, "nzern": nzern, "rank": error.rank, "exact": error.exact, "nparams": error.nparams}
            for npix, nzern in sorted(keys) for error in [rank_deficiency(npix, nzern)]]


def context(own_runs=(), reference=None, output=PAPER, figures=FIGURES):
    """Everything the main template shows, read from the run folders; and each run's appendix context."""
    all_runs = load_runs(own_runs, reference)
    main = model_code.identity(model_code.working_sources())
    codes = {run.folder: run_code(run, main) for run in all_runs}
    sources = mirror_sources(all_runs, codes)
    mirror_rows, mirror_total, identical = mirror_table(sources)
    judged = [run for run in all_runs if load.judges_claims(run)]
    tables = [claim_table(judged, codes, objective) for objective in OBJECTIVE_TITLES
              if objective != "gaussian" or any(run.judged(objective)[0] for run in judged)]
    sections = [run_sections(run, figures, output / "runs") | {
        "code": codes[run.folder], "old_rule": bool(run.series) and not sweep_read.timed_to_targets(run.series),
        "folder_name": run.folder.name} for run in all_runs]
    shown_run = decomposition_run(all_runs)
    decomposed = next((section for run, section in zip(all_runs, sections, strict=True) if run is shown_run), None)
    return number_figures({
        "answer": [{"title": table["title"], "lines": answer(table, judged)} for table in tables],
        "first_screen": first_screen(tables[0], judged, sections),
        "mechanism": mechanism(decomposed, shown_run),
        "environments": [environment for run in all_runs for environment in load.run_environments(run)],
        "mirror_commit": mirror_commit(all_runs, codes),
        "answer_figure": answer_figure_shown(all_runs, figures, output),
        "claim_tables": tables, "claims": CLAIMS, "rules": RULES,
        "runs": sections,
        "claim_runs": [s for run, s in zip(all_runs, sections, strict=True) if load.judges_claims(run)],
        "decomposed": decomposed, "unidentifiable": unidentifiable(all_runs),
        "mirror_rows": mirror_rows, "mirror_total": mirror_total, "identical": identical, "mirror_sources": sources,
        "profiles": PROFILES, "figures": main_figures(all_runs, figures, output),
        "same_solution": claims.SAME_SOLUTION_STDERR, "stopped_at_optimum": STOPPED_AT_OPTIMUM,
        "target_se": optimum.TARGET, "optimum_tol": optimum.OPTIMUM_TOL,
        "model": relative(PAPER / "MODEL.md", output),
        "reference_folder": shown(reference or paths.REFERENCE), "own": any(run.own for run in all_runs),
        "retrievals": [section["retrieval"] for section in sections if section["retrieval"]],
        "against_jax": [line for line in (against_jax(run, codes[run.folder]) for run in all_runs) if line],
        "jax_points": JAX_POINTS,
        "retrieval_figure": retrieval_figure(all_runs, figures, output),
        "real_maps": real_maps_shown(all_runs, sections, figures, output),
    })


FIGURE_NUMBER = re.compile(r"^Figure \d+")


def number_figures(values):
    """Number the main report's figures in the order a reader meets them (the answer's, the paper's figures, the
    cold starts', the real maps'): each caption's 'Figure N: ' written here, whatever file it comes from."""
    shown = [values["answer_figure"], *values["figures"], values["retrieval_figure"],
             *((values["real_maps"] or {}).get("figures") or [])]
    for number, figure in enumerate((figure for figure in shown if figure), 1):
        caption = figure["caption"]
        figure["caption"] = FIGURE_NUMBER.sub(f"Figure {number}", caption) if FIGURE_NUMBER.match(caption) else \
            f"Figure {number}: {caption}"
    return values


def real_maps_shown(all_runs, sections, figures, output):
    """The main report's real-maps section: that of the run figures.real_maps_run picks, with its findings and
    figures 9 and 10; None where no run has real-maps fits."""
    shown_run = real_maps_run(all_runs)
    if shown_run is None:
        return None
    section = next(s["real_maps"] for run, s in zip(all_runs, sections, strict=True) if run is shown_run)
    if section is None:
        return None
    kind = (shown_run.machine.get("cpu"), shown_run.machine.get("cpu_count"))
    same_machine = sorted(all_runs, key=lambda run: (run is not shown_run,
                                                     (run.machine.get("cpu"), run.machine.get("cpu_count")) != kind))
    beside = next(((run, found) for run in same_machine if (found := simulated_beside(run))), None)
    simulated = beside and beside[1] | {"title": beside[0].title}
    return section | {"title": shown_run.title, "appendix": f"runs/{shown_run.appendix_name}.md",
                      "simulated": simulated, "findings": real_maps_findings(section), "pyoof": pyoof_lines(section),
                      "figures": [{"path": relative(figures / f"{name}.png", output), "caption": caption}
                                  for name, caption in real_maps_figures(shown_run.title)]}


def real_maps_figures(title):
    """The real maps' figures and their captions."""
    return (("fig9_real_maps_surface", f"Figure 9: the surface error each source's last fit implies (tilts and piston "
                                       f"removed); {title}"),
            ("fig10_real_maps_residuals", f"Figure 10: residuals of the last fits, in units of each map's noise; "
                                          f"{title}"))


JAX_POINTS = (256, 512)
"""The grid sizes at which The answer sets torch against the JAX peer (those of the peer targets)."""


def against_jax(run, code=None):
    """The JAX line of The answer for a run that timed the peer and whose peer passed its gate: per torch
    gradient, the range of its time to solution over JAX's at npix JAX_POINTS (fits at the optimum only), and the
    commits of the run's model code (code: its run_code), since runs differ in code as well as machine; or None."""
    if JAX not in run.series or not (run.peers_check or {}).get("passed"):
        return None
    ranges = []
    for series, what in ((TORCH_ADJOINT, "exact adjoint"), (TORCH_CPU, "autograd")):
        ratios = [value for (npix, _), value in sweep_read.speedups(run.series, series, JAX).items()
                  if npix in JAX_POINTS]
        if ratios:
            ranges.append({"what": what, "low": times(min(ratios), False), "high": times(max(ratios), False)})
    commits = ", ".join(commit[:7] for commit in (code or {}).get("commits", []))
    return {"title": run.title, "appendix": run.appendix_name, "ranges": ranges,
            "code": f"model code of commit {commits}" if commits else "model code not recorded"} if ranges else None


def answer_figure_shown(all_runs, figures, output):
    """The answer's figure (figures.answer_figure) with its caption, where a run has a sweep; else None."""
    if not any(run.series for run in all_runs):
        return None
    caption = answer_caption(answer_plan(all_runs))
    return caption and {"path": relative(figures / "fig0_answer.png", output), "caption": caption.rstrip(".")}


def retrieval_figure(all_runs, figures, output):
    """Figure 8 (retrieval from a cold start) with its caption, where a run has a retrieval; else None."""
    shown_run = retrieval_run(all_runs)
    if shown_run is None:
        return None
    return {"path": relative(figures / "fig8_retrieval.png", output),
            "caption": f"Figure 8: retrieval from zero aberration; {shown_run.title}"}


@functools.cache
def environment():
    """The jinja2 environment of the report's templates (made once: it compiles each template once, and again
    only where the template file changed)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(number=number, times=times, sci=sci, all=all, ratio_text=ratio_text, slope=slope_text,
                       share_range=share_range)
    return env


def render_all(own_runs=(), reference=None, output=PAPER, figures=FIGURES):
    """{path relative to output: Markdown text}: REPORT.md and runs/<run>.md for each run shown."""
    values = context(own_runs, reference, output, figures)
    env = environment()
    texts = {"REPORT.md": env.get_template("REPORT.md.j2").render(**values),
             "DETAILS.md": env.get_template("DETAILS.md.j2").render(**values)}
    for run in values["runs"]:
        texts[run["appendix"]] = env.get_template("RUN.md.j2").render(
            run=run, profiles=values["profiles"], same_solution=values["same_solution"],
            stopped_at_optimum=values["stopped_at_optimum"], report=relative(output / "REPORT.md", output / "runs"))
    texts[MIRROR_PAGE] = side_by_side_page(values["mirror_sources"])
    if output.resolve() == PAPER.resolve() and not own_runs:
        texts[model_code.CACHE_NAME] = model_code.cache_text(values["environments"], values["mirror_commit"])
    return texts


MIRROR_PAGE = "mirror_diff.html"
"""The side-by-side page of the two trees, beside REPORT.md."""


def render(own_runs=(), reference=None, output=PAPER, figures=FIGURES):
    """The main report's Markdown text (REPORT.md) for your runs (none: the committed report)."""
    return render_all(own_runs, reference, output, figures)["REPORT.md"]


def render_command(own_runs, reference, output, figures, check=False):
    """Write (or with check, compare) REPORT.md, the runs' appendices and the side-by-side diff; prints the
    claims tables."""
    texts = render_all(own_runs, reference, output, figures)
    committed = not own_runs and output.resolve() == PAPER.resolve()
    if check:
        stale = [name for name, text in texts.items()
                 if not (output / name).exists() or (output / name).read_text() != text]
        for name in texts:
            print(f"{output / name}: {'DIFFERS FROM' if name in stale else 'matches'} a fresh rendering")
        return 1 if stale else 0
    with writing_into(output, figures, committed=committed):
        for name, text in texts.items():
            (output / name).parent.mkdir(parents=True, exist_ok=True)
            write_text_if_changed(output / name, text)
        for stale in sorted(set((output / "runs").glob("*.md")) - {output / name for name in texts}):
            check_target(stale).unlink()  # the appendix of a run no longer shown
    print(claims_summary(texts["DETAILS.md"]))
    appendices = sum(name.startswith("runs/") for name in texts)
    print(f"wrote {output / 'REPORT.md'}, {output / 'DETAILS.md'}, {appendices} appendix(es) under "
          f"{output / 'runs'} and {output / MIRROR_PAGE}")
    return 0


def claims_summary(text):
    """The claims tables of a rendered report (one per objective), for the terminal."""
    lines = text.splitlines()
    tables = []
    for start, line in enumerate(lines):
        if line.startswith("| Claim |") and not line.startswith("| Claim | The paper"):
            end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
            title = next((lines[i] for i in range(start - 1, -1, -1) if lines[i].startswith("#")), "")
            tables.append("\n".join([title.lstrip("# "), *lines[start:end]]))
    return "\n\n".join(tables)

"""DETAILS.md's sensitivity table: each verdict of each run under today's rule and under the alternatives of
claims.sensitivity, from the same records, under the Cauchy likelihood."""

from replication.claims import CLAIMS, sensitivity
from replication.core.judging import NOT_MEASURED
from replication.core.objectives import CAUCHY, Objective
from replication.core.series import TORCH_CUDA
from replication.report import cells
from replication.report.first_screen import short_name
from replication.studies.sweep import read as sweep_read

OBJECTIVE = CAUCHY
"""The objective the sensitivity table judges (the paper's and the first screen's)."""


def evidence_of(run, objective: Objective = OBJECTIVE) -> sensitivity.Evidence:
    """What a run's claims are judged on under one objective: each timed claim's speed-ups and C5a's judged pairs."""
    _, series = run.judged(objective)
    ratios = {claim.id: sweep_read.complete_sizes(series, *claim.ratio) for claim in CLAIMS
              if claim.timed}
    crosscheck, differences, _ = cells.c5a_pairs(run, series, objective)
    return sensitivity.Evidence(ratios, [row for row in crosscheck + differences if row["comparable"]])


def shown_runs(judged_runs, sections):
    """The runs the table shows: those judged by today's rule, then older ones with a GPU series (the only
    evidence for C1 and C2, marked as judged by the older rule)."""
    old = {section["folder_name"]: section["old_rule"] for section in sections}
    today = [run for run in judged_runs if not old[run.folder.name]]
    gpu = [run for run in judged_runs if old[run.folder.name] and TORCH_CUDA in run.judged(OBJECTIVE)[1]]
    return today + gpu, {run.folder.name: old[run.folder.name] for run in today + gpu}


def sensitivity_table(judged_runs, sections) -> dict | None:
    """{"columns": [{name, appendix, old_rule}], "rows": [{claim, words, today, cells: [text]}], "flips": [words]};
    None without a run to show."""
    runs, old = shown_runs(judged_runs, sections)
    if not runs:
        return None
    judged = [sensitivity.judge_all(evidence_of(run)) for run in runs]
    rows = []
    for place, rule in enumerate(sensitivity.ALTERNATIVES):
        found = [run_rows[place] for run_rows in judged]
        if all(row["verdict"] == NOT_MEASURED for row in found):
            continue
        rows.append({"claim": rule.claim, "words": rule.words, "today": rule.today,
                     "cells": [cell_text(row) for row in found]})
    return {"columns": [{"name": short_name(run), "appendix": f"runs/{run.appendix_name}.md",
                         "old_rule": old[run.folder.name]} for run in runs],
            "rows": rows, "flips": flip_lines(runs, judged)}


def flip_lines(runs, judged) -> list[str]:
    """Each alternative rule that changes a verdict, in one line: 'C3 weakest grid of npix >= 256: partly ->
    reproduced on EPYC 2c, 12-02, 1 thread'."""
    changes = {}
    for run, run_rows in zip(runs, judged, strict=True):
        today = {row["claim"]: row["verdict"] for row in run_rows if row["today"]}
        for row in sensitivity.flips(run_rows):
            key = (row["claim"], row["words"], today[row["claim"]], row["verdict"])
            changes.setdefault(key, []).append(short_name(run))
    order = [(rule.claim, rule.words) for rule in sensitivity.ALTERNATIVES]
    return [f"{claim} {words}: {before} -> {after} on {'; '.join(names)}"
            for (claim, words, before, after), names in sorted(changes.items(),
                                                               key=lambda item: order.index(item[0][:2]))]


def cell_text(row: dict) -> str:
    """'7.25x at npix 128: reproduced', or a dash where the run does not measure it."""
    return "—" if row["verdict"] == NOT_MEASURED else f"{row['text']}: {row['verdict']}"

"""METHODS.md's sensitivity table: each verdict of each run under today's rule and under the alternatives of
claims.sensitivity, from the same records, under the Cauchy likelihood."""

from replication.claims import sensitivity
from replication.core.judging import NOT_MEASURED
from replication.core.objectives import CAUCHY
from replication.core.series import TORCH_CUDA
from replication.report.first_screen import short_name

OBJECTIVE = CAUCHY
"""The objective the sensitivity table judges (the paper's and the first screen's)."""


def shown_runs(judged_runs, sections):
    """The runs the table shows: those judged by today's rule, then older ones with a GPU series (the only
    evidence for C1 and C2, marked as judged by the older rule)."""
    old = {section.folder_name: section.old_rule for section in sections}
    today = [run for run in judged_runs if not old[run.folder.name]]
    gpu = [run for run in judged_runs if old[run.folder.name] and TORCH_CUDA in run.judged(OBJECTIVE)[1]]
    return today + gpu, {run.folder.name: old[run.folder.name] for run in today + gpu}


def sensitivity_table(judged_runs, sections) -> dict | None:
    """{"columns": [{name, appendix, old_rule}], "rows": [{claim, words, today, cells: [text]}], "flips": [words]};
    None without a run to show."""
    runs, old = shown_runs(judged_runs, sections)
    if not runs:
        return None
    judged = [sensitivity.judge_all(run, OBJECTIVE) for run in runs]
    rows = []
    for place, (claim, rule) in enumerate(sensitivity.alternatives()):
        found = [run_rows[place] for run_rows in judged]
        if all(row.found.verdict == NOT_MEASURED for row in found):
            continue
        rows.append({"claim": claim.id, "words": rule.words, "today": rule.today,
                     "cells": [cell_text(row) for row in found]})
    return {"columns": [{"name": short_name(run), "appendix": f"runs/{run.appendix_name}.md",
                         "old_rule": old[run.folder.name]} for run in runs],
            "rows": rows, "flips": flip_lines(runs, judged)}


def flip_lines(runs, judged) -> list[str]:
    """Each alternative rule that changes a verdict, in one line: 'C3 weakest grid of npix >= 256: partly ->
    reproduced on EPYC 2c, 12-02, 1 thread'."""
    changes = {}
    for run, run_rows in zip(runs, judged, strict=True):
        today = {row.claim.id: row.found.verdict for row in run_rows if row.today}
        for row in sensitivity.flips(run_rows):
            key = (row.claim.id, row.rule.words, today[row.claim.id], row.found.verdict)
            changes.setdefault(key, []).append(short_name(run))
    order = [(claim.id, rule.words) for claim, rule in sensitivity.alternatives()]
    return [f"{claim} {words}: {before} -> {after} on {'; '.join(names)}"
            for (claim, words, before, after), names in sorted(changes.items(),
                                                               key=lambda item: order.index(item[0][:2]))]


def cell_text(row: sensitivity.Judged) -> str:
    """'7.25x at npix 128: reproduced', or a dash where the run does not measure it."""
    return "—" if row.found.verdict == NOT_MEASURED else f"{row.found.text}: {row.found.verdict}"

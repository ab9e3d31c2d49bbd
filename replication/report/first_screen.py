"""The report's first screen: the claims table over every run judged by today's rule (what the paper says, ours,
where, the verdict, the caveats), the mechanism sentence and the answer above it."""

from replication import claims
from replication.claims.claim import Claim
from replication.core import judging
from replication.core.format import times, value_range
from replication.core.load import LOADED_CORES
from replication.core.objectives import Objective
from replication.report.cells import Notes, run_claims
from replication.studies.sweep import read as sweep_read


def claim_table(all_runs, objective: Objective):
    """The claims table of one objective: per claim and run a cell (cells.Cell), and the notes under the table."""
    notes = Notes()
    per_run = [run_claims(run, objective, notes) for run in all_runs]
    rows = [{"id": claim.id, "claim": claim, "short": claim.short, "cells": [cells[claim.id] for cells in per_run]}
            for claim in claims.CLAIMS]
    return {"objective": objective.name, "title": objective.title, "rows": rows, "notes": notes.texts}


def short_name(run):
    """A run's name in the first screen: CPU family, cores, GPU, and the date and what tells it from another run
    of that machine ('EPYC 2c, 12-02, 1 thread')."""
    machine = run.machine
    family = next((word for word in ("EPYC", "Xeon", "Ryzen", "Core", "Apple") if word in machine.cpu),
                  machine.cpu.split()[0])
    gpu = f" + {machine.gpu.replace('NVIDIA ', '')}" if machine.gpu else ""
    return f"{family} {machine.cpu_count}c{gpu}, {run.info.created[5:10]}{run.profile_label}{run.clock}"


def ours_cell(claim: Claim, measured):
    """Our value of a claim over the runs that measured it, in the claim's own words."""
    return claim.over_runs([cell.found for _, cell in measured])


def where_cell(claim: Claim, measured):
    """Where a claim was measured: the grid sizes its values come from and the runs' short names."""
    sizes = sorted({npix for _, cell in measured for npix in claim.grid_sizes(cell.found)})
    grid = (f"npix {sizes[0]}" + (f"-{sizes[-1]}" if len(sizes) > 1 else "") + "; ") if sizes else ""
    if len(measured) == 1:
        return grid + short_name(measured[0][0]).split(",")[0]
    return grid.removesuffix("; ") or f"{len(measured)} runs"


def verdict_cell(measured):
    """How many runs gave each verdict, '4 reproduced, 1 partly' (the bars are in the legend under the table)."""
    counts = {}
    for _, cell in measured:
        counts[cell.verdict] = counts.get(cell.verdict, 0) + 1
    return ", ".join(f"{count} {verdict}" for verdict, count in counts.items())


def caveat_cell(claim: Claim, measured, sections):
    """The main caveat of a claim, from what its runs are (one run only, a run made with other code or judged by
    the old rule), then what limits its values and its own caveats."""
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
    notes += claim.limits([cell.found for _, cell in measured])
    notes += claim.caveats_on([(short_name(run), run, cell.found) for run, cell in measured])
    return "; ".join(notes) or "—"


def your_column(table, judged_runs):
    """Your first run's own cells, claim by claim ({name, cells: {claim id: Cell}}), for the first screen's column
    of its own; None without a run of yours the claims judge."""
    index = next((place for place, run in enumerate(judged_runs) if run.own), None)
    if index is None:
        return None
    cells = {row["id"]: row["cells"][index] for row in table["rows"] if row["claim"].paper}
    return {"name": short_name(judged_runs[index]), "cells": cells}


def first_screen(table, judged_runs, sections):
    """The first screen's table (one row per paper claim, from the claims table of one objective) and the facts its
    sentences state: per claim the paper's words, our values over the runs judged by today's rule (time to target),
    where, the verdicts, the caveat. Runs judged by time to the optimiser's stop are never pooled with them: a claim
    only they measured reads "not measured with today's rule", their value beside it as indicative (history)."""
    by_folder = {section["folder_name"]: section for section in sections}
    current = [not by_folder[run.folder.name]["old_rule"] for run in judged_runs]
    rows = []
    for row in table["rows"]:
        claim = row["claim"]
        if not claim.paper:
            continue
        cells = list(zip(judged_runs, row["cells"], current, strict=True))
        measured = [(run, cell) for run, cell, today in cells if today and cell.verdict != judging.NOT_MEASURED]
        older = [(run, cell) for run, cell, today in cells if not today and cell.verdict != judging.NOT_MEASURED]
        if not measured:
            rows.append({"id": claim.id, "paper": claim.paper,
                         "ours": "not measured with today's rule" if older else "not measured", "where": "—",
                         "verdict": "—" if older else "not measured",
                         "caveat": indicative_caveat(claim, older, by_folder) if older else None})
            continue
        rows.append({"id": claim.id, "paper": claim.paper, "ours": ours_cell(claim, measured),
                     "where": where_cell(claim, measured), "verdict": verdict_cell(measured),
                     "caveat": caveat_cell(claim, measured, by_folder)})
    today = [run for run, now in zip(judged_runs, current, strict=True) if now]
    stale = [short_name(run) for run in today if by_folder[run.folder.name]["code"]["stale"]]
    unknown = [short_name(run) for run in today if by_folder[run.folder.name]["code"]["stale"] is None]
    old = [short_name(run) for run, now in zip(judged_runs, current, strict=True) if not now]
    loaded = [short_name(run) for run in today if by_folder[run.folder.name]["load"].loaded]
    caveats = [f"**{row['id']}**: {row['caveat']}." for row in rows if row["caveat"] not in (None, "—")]
    if stale:
        caveats.append(f"Made with older model code (the same model; its code has changed since, the modules "
                       f"named in [the runs](DETAILS.md#runs)): {'; '.join(stale)}.")
    if unknown:
        caveats.append(f"Model code unknown (no commit or code recorded that this copy can read): "
                       f"{'; '.join(unknown)}.")
    if loaded:
        caveats.append(f"Measured on a loaded machine (other processes kept >= {LOADED_CORES} cores busy at some "
                       f"points; their times are slower than a quiet machine's, torch's most): {'; '.join(loaded)}.")
    if old:
        caveats.append(f"Not pooled: {len(old)} run(s) judged by the time to the optimiser's stop (recorded before "
                       f"times to target), their values in [the history](DETAILS.md#runs-judged-by-the-older-rule): "
                       f"{'; '.join(old)}.")
    unmeasured = [row["id"] for row in rows if row["ours"] == "not measured"]
    if unmeasured:
        caveats.append(f"Not measured by any run: {', '.join(unmeasured)}.")
    return {"rows": {row["id"]: row for row in rows}, "caveats": caveats, "runs": len(today),
            "yours": your_column(table, judged_runs),
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


def indicative_caveat(claim: Claim, older, sections):
    """What runs judged by the older rule found of a claim no run of today's rule measured: their value, never
    pooled or judged, with its limits in words."""
    limits = ["time to stop"]
    if any(sections[run.folder.name]["code"]["stale"] for run, _ in older):
        limits.insert(0, "older code")
    limits += claim.limits([cell.found for _, cell in older])
    shared = sorted({part.strip() for _, cell in older for part in cell.text.split(";")
                     if " of " in part and "cores" in part})
    runs_named = "; ".join(short_name(run) for run, _ in older)
    return f"indicative only, not judged: {ours_cell(claim, older)} ({runs_named}; {', '.join(limits + shared)})"


def history_rows(table, judged_runs, current):
    """The runs judged by the older rule, each with its cells of the paper's claims as that rule found them."""
    rows = []
    for index, (run, now) in enumerate(zip(judged_runs, current, strict=True)):
        if now:
            continue
        cells = {row["id"]: row["cells"][index] for row in table["rows"] if row["claim"].paper}
        rows.append({"run": short_name(run), "title": run.title, "appendix": f"runs/{run.appendix_name}.md",
                     "cells": {key: "—" if cell.verdict == judging.NOT_MEASURED else
                               f"{cell.text}: {cell.verdict}" for key, cell in cells.items()}})
    return rows


def first_screen_legend():
    """The words under the first screen's table: each claim's bar, what a slope and a bound are."""
    bars = "; ".join(f"{claim.id} {claim.threshold}" for claim in claims.CLAIMS if claim.paper)
    return (f"Reproduced if: {bars}; partly if at the lower bar its rule gives "
            "([rules](DETAILS.md#how-the-verdicts-are-computed)). "
            "A slope is that of log(speed-up) against log(P): 0 where the speed-up does not depend on P, 1 where it "
            "grows as P (a finite-difference gradient costs P + 1 evaluations). '>=' marks a bound: a fit that "
            "never reached the solution counts at its total time. Ranges in brackets: over every pair of repeats.")


def answer(table, all_runs):
    """The first screen's sentences, from the verdicts of one table: per claim, its verdict on each run that
    measured it (once where every run has the same cell); the claims no run measured in one line."""
    lines, unmeasured = [], []
    for row in table["rows"]:
        measured = [(run, cell) for run, cell in zip(all_runs, row["cells"], strict=True)
                    if cell.verdict != judging.NOT_MEASURED]
        if not measured:
            unmeasured.append(row["id"])
            continue
        if len(measured) == len(all_runs) and len({(c.verdict, c.text) for _, c in measured}) == 1:
            text = f"{measured[0][1].verdict} ({measured[0][1].text}) on every run"
        else:
            groups = {}
            for run, cell in measured:
                groups.setdefault(cell.verdict, []).append(f"{run.short_title} ({cell.text})")
            text = "; ".join(f"{verdict} on {', '.join(names)}" for verdict, names in groups.items())
            if len(measured) < len(all_runs):
                text += f"; not measured on {len(all_runs) - len(measured)} of {len(all_runs)} runs"
        lines.append({"id": row["id"], "short": row["short"], "text": text})
    if unmeasured:
        lines.append({"id": ", ".join(unmeasured), "short": "", "text": "not measured on any run (the notes under "
                                                                       "the table say why)"})
    return lines

"""The report's first screen: the claims table over every run judged by today's rule (what the paper says, ours,
where, the verdict, the caveats), the mechanism sentence and the answer above it."""

from replication import claims
from replication.core import judging
from replication.core.format import times, value_range
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


def mechanism(decomposed, run):
    """The first screen's sentence on where the CPU speed-up comes from, from the decomposition of the run that
    timed the gradient variants (decomposed: its section): each factor (the algorithm, the library, autograd) and
    the paper's own whole over the grid sizes measured, and what the Gauss-Newton start, beyond the paper, adds;
    None without it."""
    if not decomposed or not decomposed.decomposition or not sweep_read.timed_to_targets(run.series):
        return None  # a run judged by time to stop is never on the first screen
    rows = decomposed.decomposition.rows

    def over_sizes(name):
        found = [row.ratios[name] for row in rows.values() if row.ratios.get(name) is not None]
        return found and value_range(found, lambda v: times(v, False))

    algorithm, library, autograd, paper, start = map(over_sizes, ("algorithm", "library", "autograd", "paper",
                                                                  "start"))
    if not library or not algorithm:
        return None
    sizes = f"npix {min(rows)}-{max(rows)}" if len(rows) > 1 else f"npix {min(rows)}"
    text = (f"Where it comes from ({sizes}, {run.short_title}; [decomposition](#where-the-speed-up-comes-from)): "
            f"the exact gradient replacing finite differences, which cost P + 1 evaluations each, gives {algorithm} "
            f"in NumPy alone (the algorithm); with the same exact gradient on both sides torch is {library} as fast "
            "as NumPy (the library)")
    if autograd and paper:
        text += (f", and torch's autograd {autograd} as fast as our hand-written gradient: the paper's own NumPy "
                 f"differences -> torch autograd, {paper}")
    return text + (f". Starting BFGS from the Gauss-Newton matrix, beyond the paper, adds {start}." if start else ".")


def history_rows(table, judged_runs, sections):
    """The runs judged by the older rule, each with its cells of the paper's claims as that rule found them."""
    by_folder = {section.folder_name: section for section in sections}
    current = [not by_folder[run.folder.name].old_rule for run in judged_runs]
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
    return (f"Reproduced if: {bars}; partly where a value reaches only its rule's lower bar "
            "([rules](METHODS.md#how-the-verdicts-are-computed)). "
            "A slope is that of log(speed-up) against log(P): 0 where the speed-up does not depend on P, 1 where it "
            "grows as P (a finite-difference gradient costs P + 1 evaluations). '>=' marks a bound: a fit that "
            "never reached the solution counts at its total time.")

"""The report: REPORT.md rendered with jinja2 from the recorded runs only.

Without runs of your own it renders the committed reference runs into paper/REPORT.md; with them, your runs
appear beside the references in a report written into your run's folder.
"""

import os
import pathlib

import jinja2
import numpy as np

from replication import analysis, paths, runs
from replication.bench import ADJOINT_STEPS, AUTOGRAD_PARTS, own_floor
from replication.data import STOPPED_AT_OPTIMUM, covariance_scale
from replication.mirror import mirror_table, side_by_side_html
from replication.paths import FIGURES, PAPER, ROOT, TEMPLATES
from replication.results import write_text_if_changed
from replication.sweep import PROFILES

CLAIMS = {
    "C1": "Up to ~100x faster time-to-solution with PyTorch on a GPU than with the NumPy implementation.",
    "C2": "The GPU PyTorch run is ~10x faster than the CPU-only PyTorch run for grid sizes N >= 256.",
    "C3": "CPU-only PyTorch is about an order of magnitude faster than NumPy for intermediate and large grids.",
    "C4": "The improvement is largely independent of the number of model parameters (Zernike order up to 8).",
    "C5": "All implementations converge to the same solution within the algorithm's tolerances.",
    "C6": "The PyTorch code stays as readable as the NumPy code (small, local changes; same structure).",
}
"""The paper's claims, in our words (paper/MODEL.md gives the paper's setup)."""
RULES = {
    "C1": "largest measured NumPy / torch-cuda ratio of the run (both timed on its host): >= 50 reproduced, "
          ">= 10 partly, else not reproduced",
    "C2": "torch-cpu / torch-cuda ratio of the run, median over Zernike orders at each npix >= 256, "
          "smallest of those medians (the claim must hold at every such size): >= 5 reproduced, >= 2 partly",
    "C3": "NumPy / torch-cpu ratio of the run, median over Zernike orders at each npix >= 128, smallest of "
          "those medians: >= 5 reproduced, >= 2 partly",
    "C4": "spread (max / min) of the NumPy / torch-cpu speed-up across Zernike orders at the largest grid "
          f"(npix >= {analysis.C4_MIN_NPIX}) with at least {analysis.C4_MIN_ORDERS} measured orders: "
          "<= 2 reproduced, <= 4 partly",
    "C5": "every fit check of the run: each cross-check and sweep fit within "
          f"{analysis.SAME_SOLUTION_STDERR} exact standard error of the NumPy fit, and each fit ended at the optimum "
          f"(exact Newton step left <= {STOPPED_AT_OPTIMUM} standard error); all reproduced, >= 90% partly. Runs "
          "recorded before the exact account compare positions only, in BFGS standard errors",
    "C6": "share of non-blank lines identical between the trees once numpy/torch names are folded: "
          ">= 0.8 reproduced, >= 0.6 partly",
}
"""How each verdict is computed from the results (the functions of replication.analysis)."""


def number(value, digits=3):
    """A number with `digits` significant figures, or an em dash for nothing."""
    if value is None:
        return "—"
    return f"{value:.{digits}g}"


def times(value):
    return "—" if value is None else f"{value:.3g}x"


def sci(value):
    """A small number in scientific notation, two significant figures."""
    return "—" if value is None else f"{value:.1e}"


def seconds_cell(record):
    """Median seconds of a point; estimated values carry a tilde and are never mixed silently."""
    if record is None:
        return ""
    value = analysis.seconds(record)
    return f"~{value:.3g} (est.)" if record["estimated"] else f"{value:.3g}"


def timing_rows(series):
    """Rows of the timing table: per (npix, nzern) each series' seconds and the speed-ups."""
    keys = sorted({key for points in series.values() for key in points})
    names = analysis.series_order(series)
    rows = []
    for key in keys:
        cells = [seconds_cell(series[name].get(key)) for name in names]
        ratios = [analysis.speedups(series, slow, fast).get(key) for slow, fast in RATIO_COLUMNS]
        rows.append({"npix": key[0], "nzern": key[1], "cells": cells, "ratios": [times(r) for r in ratios]})
    return names, rows


RATIO_COLUMNS = (("numpy", "torch-cpu"), ("numpy", "torch-cuda"), ("torch-cpu", "torch-cuda"))


def by_size(result):
    """'npix 256: 2.5x, npix 512: 10x' from a per-size verdict, or a dash."""
    return ", ".join(f"npix {npix}: {times(value)}" for npix, value in result["by_npix"].items()) or "—"


def reason_not_measured(claim, series, objective="cauchy"):
    """Why a claim could not be judged on a run's sweep, in a few words."""
    names = set(series)
    if not series:
        return "no sweep in this run" if objective == "cauchy" else "no least-squares sweep in this run"
    if claim in ("C1", "C2") and "torch-cuda" not in names:
        return "no GPU series in this run"
    if claim in ("C1", "C2", "C3", "C4") and not {"numpy", "torch-cpu"} <= names:
        return "NumPy and torch-cpu were not both timed"
    if claim == "C3":
        return "no measured pair at npix >= 128"
    if claim == "C4":
        return f"fewer than {analysis.C4_MIN_ORDERS} measured orders at any npix >= {analysis.C4_MIN_NPIX}"
    return "no fit comparison recorded"


OBJECTIVE_TITLES = {"cauchy": "the Cauchy likelihood (our default)",
                    "least-squares": "least squares (the objective of the author's timing code)"}


def run_claims(run, mirror_total, objective="cauchy"):
    """{claim: (measured text, verdict)} of one run under one objective, every value computed from its records."""
    series = run.judged(objective)[1]
    c1 = analysis.verdict_c1(analysis.speedups(series, "numpy", "torch-cuda"))
    c2 = analysis.verdict_c2(analysis.speedups(series, "torch-cpu", "torch-cuda"))
    c3 = analysis.verdict_c3(analysis.speedups(series, "numpy", "torch-cpu"))
    c4 = analysis.verdict_c4(analysis.speedups(series, "numpy", "torch-cpu"))
    checks = [c for c in (run.crosscheck["checks"] if run.crosscheck else [])
              if (c.get("objective") or "cauchy") == objective]
    differences = analysis.fit_differences(series)
    c5 = analysis.verdict_c5(checks, differences, analysis.endings(series))
    c6 = analysis.verdict_c6(mirror_total)
    measured = {
        "C1": f"largest NumPy / torch-cuda ratio {times(c1['value'])}",
        "C2": "torch-cpu / torch-cuda: " + by_size(c2),
        "C3": "NumPy / torch-cpu: " + by_size(c3),
        "C4": (f"at npix {c4['npix']}: " + ", ".join(f"n={n}: {times(v)}" for n, v in c4["by_nzern"].items())
               + f"; spread {times(c4['value'])}") if c4["npix"] else "",
        "C5": f"{c5['passed']} of {c5['total']} fit checks pass"
              + (f" ({c5['ended']} of {c5['endings']} fits ended at the optimum)" if c5["endings"] else
                 " (positions only: no exact account of the fits' endings in this run)")
              + ("; BFGS standard errors" if any(row["basis"] == "BFGS" for row in differences) else ""),
        "C6": f"{mirror_total['same']} of {mirror_total['total']} lines alike ({mirror_total['share']:.0%}), "
              "this checkout's code",
    }
    verdicts = {"C1": c1, "C2": c2, "C3": c3, "C4": c4, "C5": c5, "C6": c6}
    return {key: (measured[key] if verdicts[key]["verdict"] != analysis.NOT_MEASURED
                  else reason_not_measured(key, series, objective), verdicts[key]["verdict"]) for key in CLAIMS}


def claims(all_runs, mirror_total, objective="cauchy"):
    """The claims table of one objective: per claim the paper's statement and, per run, value and verdict."""
    per_run = [run_claims(run, mirror_total, objective) for run in all_runs]
    return [{"id": key, "claim": CLAIMS[key], "rule": RULES[key],
             "cells": [{"measured": result[key][0], "verdict": result[key][1]} for result in per_run]}
            for key in CLAIMS]


TARGET_POINT = (2, 5)
"""(threads, nzern) of the bench's performance targets, reported at every npix, judged at npix 512."""
TARGETS = (("numpy_analytic_value_and_grad", "NumPy value + exact (adjoint) gradient", 2.5),
           ("torch_analytic_value_and_grad", "torch value + exact (adjoint) gradient", 2.5),
           ("torch_value_and_grad", "torch value + autograd gradient", 5.0))
"""(step, what, limit): each step's multiple of its own library's 3-FFT floor must be <= limit."""


def bench_targets(bench):
    """The performance targets: per npix at 2 threads and nzern 5, each step's multiple of its own library's
    FFT floor (NumPy: scipy.fft; torch: torch.fft) and of torch's, judged at npix 512."""
    if not bench:
        return []
    targets = []
    for row in bench["rows"]:
        if (row["threads"], row["nzern"]) != TARGET_POINT or "numpy_analytic_value_and_grad" not in row["ms"]:
            continue
        for step, what, limit in TARGETS:
            value = row["ms"][step] / row["ms"][own_floor(step)]
            targets.append({"target": f"{what}, npix {row['npix']}: <= {limit:g}x its library's floor",
                            "value": times(value), "torch_floor": times(row["x_floor"][step]),
                            "met": (value <= limit) if row["npix"] == 512 else None})
    for row in bench["rows"]:
        if row["threads"] == 1:
            value = row["numpy_over_torch_nll"]
            targets.append({"target": f"NumPy likelihood <= 1.5x torch likelihood, 1 thread, npix {row['npix']}, "
                                      f"nzern {row['nzern']}", "value": times(value), "torch_floor": "",
                            "met": value <= 1.5})
    return targets


def bench_profiles(bench):
    """Rows of the step profiles (nzern 5, or the bench's first order): where a value-and-gradient goes."""
    rows = [row for row in (bench or {}).get("rows", []) if "profile_ms" in row]
    orders = sorted({row["nzern"] for row in rows})
    keep = 5 if 5 in orders else (orders[0] if orders else None)
    order = {step: place for place, step in enumerate(ADJOINT_STEPS + AUTOGRAD_PARTS)}
    return [{"threads": row["threads"], "npix": row["npix"], "nzern": row["nzern"], "walk": walk,
             "steps": dict(sorted(steps.items(), key=lambda item: order.get(item[0], len(order)))),
             "total": sum(steps.values()),
             "floor": row["ms"][own_floor(walk)]}
            for row in rows if row["nzern"] == keep for walk, steps in row["profile_ms"].items()]


ALLOCATOR_STEPS = ("numpy_nll", "torch_nll", "torch_value_and_grad", "numpy_analytic_value_and_grad",
                   "torch_analytic_value_and_grad")


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
                         "steps": {name: (other["ms"][name], row["ms"][name]) for name in
                                   ALLOCATOR_STEPS if name in row["ms"] and name in other["ms"]}})
    return rows


def fit_row(fit):
    """A cross-check fit as the convergence table shows it."""
    account = fit["convergence"]
    scale = covariance_scale(fit["fun"], 3 * fit["npix"] ** 2, len(fit["x"]), fit["objective"])
    ratio = np.sqrt(scale) * np.array(fit["stderr_bfgs"]) / np.array(account["stderr"])
    return {"impl": fit["impl"], "npix": fit["npix"], "nzern": fit["nzern"], "objective": fit["objective"],
            "nit": fit["nit"], "nfev": fit["nfev"], "success": fit["success"], "message": fit["message"],
            "grad_norm": account["grad_norm"], "newton": account["newton_stderr"],
            "decrease": account["expected_decrease"], "rounding": account["rounding"],
            "at_optimum": account["newton_stderr"] <= STOPPED_AT_OPTIMUM,
            "bfgs_ratio": (float(np.nanmin(ratio)), float(np.nanmax(ratio)))}


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


def run_sections(run):
    """What the template shows of one run: its sweeps' tables, checks, comparisons and benches."""
    sweeps = []
    for name, (series, records) in run.sweeps.items():
        if series:
            names, rows = timing_rows(series)
            sweeps.append({"profile": name.removeprefix("sweep-").removesuffix("-least-squares"),
                           "objective": analysis.sweep_objective(name),
                           "folder": shown(run.folder / (name if (run.folder / name).is_dir() else "shards")),
                           "names": names, "rows": rows, "runs": records,
                           "convergence": analysis.convergence_rows(series)})
    return {"title": run.title, "folder": shown(run.folder), "own": run.own, "note": run.info.get("note"),
            "nodes": run.nodes,
            "decomposition": analysis.decomposition(run.series), "peers": analysis.peers(run.series),
            "peers_check": run.peers_check, "bench_peers": run.bench_peers,
            "machine": run.machine, "environment": environment_of(run), "profile": run.profile,
            "sweeps": sweeps, "crosscheck": run.crosscheck, "differences": analysis.fit_differences(run.series),
            "bench": run.bench, "bench_targets": bench_targets(run.bench),
            "bench_profiles": bench_profiles(run.bench),
            "allocator": allocator_effect(run.bench, run.bench_default),
            "compiled": [row for row in (run.bench_compile or {"rows": []})["rows"]
                         if "torch_compiled_value_and_grad" in row["ms"]]}


def load_runs(own_runs, reference=None):
    """Your runs (in the order given), then every reference run (in name order)."""
    own = [analysis.load_run(folder, own=True) for folder in own_runs]
    return own + [analysis.load_run(folder, own=False) for folder in runs.reference_runs(reference)]


def context(own_runs=(), reference=None, output=PAPER, figures=FIGURES):
    """Everything the template shows, read from the run folders."""
    all_runs = load_runs(own_runs, reference)
    mirror_rows, mirror_total = mirror_table()
    return {
        "claims": claims(all_runs, mirror_total),
        "claim_tables": [{"objective": objective, "title": OBJECTIVE_TITLES[objective],
                          "rows": claims(all_runs, mirror_total, objective)} for objective in OBJECTIVE_TITLES],
        "runs": [run_sections(run) for run in all_runs],
        "crosscheck_fits": [fit_row(fit) for run in all_runs if run.crosscheck
                            for fit in run.crosscheck.get("fits", []) if fit.get("convergence")],
        "mirror_rows": mirror_rows, "mirror_total": mirror_total,
        "profiles": PROFILES, "ratio_columns": [f"{a} / {b}" for a, b in RATIO_COLUMNS],
        "figures": [relative(path, output) for path in sorted(pathlib.Path(figures).glob("*.png"))],
        "same_solution": analysis.SAME_SOLUTION_STDERR, "stopped_at_optimum": STOPPED_AT_OPTIMUM,
        "model": relative(PAPER / "MODEL.md", output),
        "reference_folder": shown(reference or paths.REFERENCE), "own": any(run.own for run in all_runs),
    }


def render(own_runs=(), reference=None, output=PAPER, figures=FIGURES):
    """The report's Markdown text for your runs (none: the committed report) beside the reference runs."""
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                                     keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    environment.filters.update(number=number, times=times, sci=sci)
    return environment.get_template("REPORT.md.j2").render(**context(own_runs, reference, output, figures))


def render_command(own_runs, reference, output, figures, check=False):
    """Write (or with check, compare) REPORT.md and the side-by-side diff; prints the claims table."""
    text = render(own_runs, reference, output, figures)
    target = output / "REPORT.md"
    if check:
        same = target.exists() and target.read_text() == text
        print(f"{target}: {'matches' if same else 'DIFFERS FROM'} a fresh rendering of the results")
        return 0 if same else 1
    output.mkdir(parents=True, exist_ok=True)
    write_text_if_changed(target, text)
    side_by_side_html(output / "mirror_diff.html")
    print(claims_summary(text))
    print(f"wrote {target} and {output / 'mirror_diff.html'}")
    return 0


def claims_summary(text):
    """The claims tables of a rendered report (one per objective), for the terminal."""
    lines = text.splitlines()
    tables = []
    for start, line in enumerate(lines):
        if line.startswith("| Claim | Paper"):
            end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
            title = next((lines[i] for i in range(start - 1, -1, -1) if lines[i].startswith("#")), "")
            tables.append("\n".join([title.lstrip("# "), *lines[start:end]]))
    return "\n\n".join(tables)



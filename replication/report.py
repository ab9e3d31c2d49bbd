"""The report: paper/REPORT.md rendered with jinja2 from the recorded results only."""

import jinja2

from replication import analysis
from replication.mirror import mirror_table, side_by_side_html
from replication.paths import FIGURES, GPU_RESULTS, RESULTS, ROOT, TEMPLATES
from replication.sweep import PROFILES

CLAIMS = {
    "C1": "Up to ~100x faster time-to-solution with PyTorch on a GPU than with the NumPy implementation.",
    "C2": "The GPU PyTorch run is ~10x faster than the CPU-only PyTorch run for grid sizes N >= 256.",
    "C3": "CPU-only PyTorch is about an order of magnitude faster than NumPy for intermediate and large grids.",
    "C4": "The improvement is largely independent of the number of model parameters (Zernike order up to 8).",
    "C5": "All implementations converge to the same solution within the algorithm's tolerances.",
    "C6": "The PyTorch code stays as readable as the NumPy code (small, local changes; same structure).",
}
"""The paper's claims, as ../shared/PAPER.md words them."""
RULES = {
    "C1": "largest measured NumPy / torch-cuda ratio on the GPU host (both run there): >= 50 reproduced, "
          ">= 10 partly, else not reproduced",
    "C2": "torch-cpu / torch-cuda ratio on the GPU host, median over Zernike orders at each npix >= 256, "
          "smallest of those medians (the claim must hold at every such size): >= 5 reproduced, >= 2 partly",
    "C3": "NumPy / torch-cpu ratio on this machine, median over Zernike orders at each npix >= 128, smallest of "
          "those medians: >= 5 reproduced, >= 2 partly",
    "C4": "spread (max / min) of the NumPy / torch-cpu speed-up across Zernike orders at the largest grid "
          "measured for two or more orders: <= 2 reproduced, <= 4 partly",
    "C5": "every fit comparison (cross-check fits and every measured sweep point against the NumPy fit) "
          f"within {analysis.SAME_SOLUTION_STDERR} standard error: all reproduced, >= 90% partly",
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


def seconds_cell(record):
    """Median seconds of a point; estimated values carry a tilde and are never mixed silently."""
    if record is None:
        return ""
    value = analysis.seconds(record)
    return f"~{value:.3g} (est.)" if record["estimated"] else f"{value:.3g}"


def timing_rows(series):
    """Rows of the timing table: per (npix, nzern) each series' seconds and the speed-ups."""
    keys = sorted({key for points in series.values() for key in points})
    names = series_order(series)
    rows = []
    for key in keys:
        cells = [seconds_cell(series[name].get(key)) for name in names]
        ratios = [analysis.speedups(series, slow, fast).get(key) for slow, fast in RATIO_COLUMNS]
        rows.append({"npix": key[0], "nzern": key[1], "cells": cells, "ratios": [times(r) for r in ratios]})
    return names, rows


SERIES_ORDER = ("numpy", "torch-cpu", "torch-cpu (float32)", "torch-cuda", "torch-cuda (float32)")
RATIO_COLUMNS = (("numpy", "torch-cpu"), ("numpy", "torch-cuda"), ("torch-cpu", "torch-cuda"))


def series_order(series):
    """The series present, the NumPy reference first, then torch on CPU and GPU."""
    return [name for name in SERIES_ORDER if name in series] + sorted(set(series) - set(SERIES_ORDER))


def by_size(result):
    """'npix 256: 2.5x, npix 512: 10x' from a per-size verdict, or a dash."""
    return ", ".join(f"npix {npix}: {times(value)}" for npix, value in result["by_npix"].items()) or "—"


def claims(cpu, gpu, crosscheck_checks, mirror_total):
    """The claims table: statement, measured value, verdict and rule, all computed here."""
    c1 = analysis.verdict_c1(analysis.speedups(gpu, "numpy", "torch-cuda"))
    c2 = analysis.verdict_c2(analysis.speedups(gpu, "torch-cpu", "torch-cuda"))
    c3 = analysis.verdict_c3(analysis.speedups(cpu, "numpy", "torch-cpu"))
    c4 = analysis.verdict_c4(analysis.speedups(cpu, "numpy", "torch-cpu"))
    differences = analysis.fit_differences(cpu) + analysis.fit_differences(gpu)
    c5 = analysis.verdict_c5(crosscheck_checks, differences)
    c6 = analysis.verdict_c6(mirror_total)
    measured = {
        "C1": f"largest NumPy / torch-cuda ratio {times(c1['value'])}",
        "C2": "torch-cpu / torch-cuda: " + by_size(c2),
        "C3": "NumPy / torch-cpu: " + by_size(c3),
        "C4": (f"at npix {c4['npix']}: speed-up " + ", ".join(f"n={n}: {times(v)}" for n, v in c4["by_nzern"].items())
               + f"; spread {times(c4['value'])}") if c4["npix"] else "—",
        "C5": f"{c5['passed']} of {c5['total']} fit comparisons within {analysis.SAME_SOLUTION_STDERR} standard error",
        "C6": f"{mirror_total['same']} of {mirror_total['total']} lines alike ({mirror_total['share']:.0%})",
    }
    verdicts = {"C1": c1, "C2": c2, "C3": c3, "C4": c4, "C5": c5, "C6": c6}
    return [{"id": key, "claim": CLAIMS[key], "measured": measured[key], "verdict": verdicts[key]["verdict"],
             "rule": RULES[key]} for key in CLAIMS], differences


def bench_targets(bench):
    """The performance targets of the bench, each with its measured value and whether it is met."""
    if not bench:
        return []
    targets = []
    for row in bench["rows"]:
        if (row["threads"], row["npix"], row["nzern"]) == (2, 512, 5):
            value = row["x_floor"]["torch_value_and_grad"]
            targets.append({"target": "torch float64 value + autograd gradient, npix 512, nzern 5, 2 threads: "
                                      "<= 4x the 3-FFT floor", "value": times(value), "met": value <= 4})
        if row["threads"] == 1:
            value = row["numpy_over_torch_nll"]
            targets.append({"target": f"NumPy likelihood <= 1.5x torch likelihood, 1 thread, npix {row['npix']}, "
                                      f"nzern {row['nzern']}", "value": times(value), "met": value <= 1.5})
    return targets


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
                                   ("numpy_nll", "torch_nll", "torch_value_and_grad")}})
    return rows


def context(results, gpu_results=GPU_RESULTS, crosscheck_folder=RESULTS / "crosscheck", bench_folder=RESULTS / "bench"):
    """Everything the template shows, read from the results folders."""
    cpu, cpu_runs = analysis.load_sweep(results)
    gpu, gpu_runs = analysis.load_sweep(gpu_results) if gpu_results.exists() else ({}, [])
    crosscheck = analysis.load_json(crosscheck_folder / "crosscheck.json")
    gpu_crosscheck = analysis.load_json(gpu_results / "crosscheck.json")
    bench = analysis.load_json(bench_folder / "bench.json")
    default_bench = analysis.load_json(bench_folder.parent / "bench-default-allocator" / "bench.json")
    compile_bench = analysis.load_json(bench_folder.parent / "bench-compile" / "bench.json")
    checks = (crosscheck["checks"] if crosscheck else []) + (gpu_crosscheck["checks"] if gpu_crosscheck else [])
    mirror_rows, mirror_total = mirror_table()
    claim_rows, differences = claims(cpu, gpu, checks, mirror_total)
    sweeps = []
    for name, series, runs, folder in (("This machine (CPU)", cpu, cpu_runs, results),
                                       ("GPU host (lent machine)", gpu, gpu_runs, gpu_results)):
        if series:
            names, rows = timing_rows(series)
            sweeps.append({"title": name, "folder": folder.relative_to(ROOT).as_posix() if folder.is_relative_to(ROOT)
                           else str(folder), "names": names, "rows": rows, "runs": runs})
    return {
        "claims": claim_rows, "sweeps": sweeps, "crosscheck": crosscheck, "gpu_crosscheck": gpu_crosscheck,
        "bench": bench, "bench_targets": bench_targets(bench),
        "allocator": allocator_effect(bench, default_bench),
        "compiled": [row for row in (compile_bench or {"rows": []})["rows"]
                     if "torch_compiled_value_and_grad" in row["ms"]],
        "mirror_rows": mirror_rows,
        "mirror_total": mirror_total, "differences": differences,
        "profiles": PROFILES, "ratio_columns": [f"{a} / {b}" for a, b in RATIO_COLUMNS],
        "figures": sorted(p.name for p in FIGURES.glob("*.png")),
        "same_solution": analysis.SAME_SOLUTION_STDERR,
    }


def render(results, **folders):
    """The report's Markdown text."""
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                                     keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    environment.filters.update(number=number, times=times)
    return environment.get_template("REPORT.md.j2").render(**context(results, **folders))


def render_command(results, output, check=False, **folders):
    """Write (or with check, compare) REPORT.md and the side-by-side diff; prints the claims table."""
    text = render(results, **folders)
    target = output / "REPORT.md"
    if check:
        same = target.exists() and target.read_text() == text
        print(f"{target}: {'matches' if same else 'DIFFERS FROM'} a fresh rendering of the results")
        return 0 if same else 1
    output.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    side_by_side_html(output / "mirror_diff.html")
    print(claims_summary(text))
    print(f"wrote {target} and {output / 'mirror_diff.html'}")
    return 0


def claims_summary(text):
    """The claims table of a rendered report, for the terminal."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| Claim"))
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
    return "\n".join(lines[start:end])



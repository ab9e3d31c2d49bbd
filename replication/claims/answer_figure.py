"""The answer figure under the claims table: the answering run's CPU speed-up against grid size with what the paper
says beside it, and against the number of parameters with one gradient on both sides."""

import dataclasses

import matplotlib
import matplotlib.figure
import matplotlib.ticker

from replication.claims import C4_ORDERS, design, parameter_count
from replication.claims.mechanism import decomposition, decomposition_run
from replication.core.judging import per_size_medians
from replication.core.plotting import Figure, draw_ratio, save, subplots
from replication.core.point_times import speedups
from replication.core.series import (
    NUMPY,
    NUMPY_ADJOINT,
    TORCH_ADJOINT,
    TORCH_CPU,
    TORCH_DIFFERENCES,
)
from replication.studies.sweep.figures import figure_run
from replication.studies.sweep.read import TIME_TO_SOLUTION, time_measure

RATIO_COLOUR = "tab:orange"
"""Panel (a)'s colour for NumPy / torch-cpu."""


def answer_run(all_runs):
    """The run the answer's figure draws: the one the design names to answer the claims (yours first), else the
    decomposition's run (it has the same-gradient series), else the figures' run."""
    return design.answering(all_runs) or decomposition_run(all_runs) or figure_run(all_runs)


@dataclasses.dataclass
class AnswerPlan:
    """What the answer's figure draws, without drawing (the report's caption reads it too): cpu, the run drawn;
    npix, panel (b)'s grid; a, [(label, sizes, median Ratios, colour, linestyle: dashed for a run timed to the
    optimiser's stop, the run)]; b, [(label, P, Ratios, colour)] at C4's orders; guide, (P, ratios of a slope-1
    line) or None."""

    cpu: object = None
    npix: int | None = None
    a: list = dataclasses.field(default_factory=list)
    b: list = dataclasses.field(default_factory=list)
    guide: tuple | None = None


def answer_plan(all_runs) -> AnswerPlan:
    """What the answer's figure draws (AnswerPlan). Only the answering run's evidence is drawn: the GPU history has
    a figure of its own."""
    cpu_run = answer_run(all_runs)
    plan = AnswerPlan(cpu=cpu_run)
    if cpu_run is None:
        return plan
    by_npix = per_size_medians(speedups(cpu_run.series, NUMPY, TORCH_CPU), 0)
    if by_npix:
        plan.a.append((f"{NUMPY} / {TORCH_CPU}", list(by_npix), list(by_npix.values()), RATIO_COLOUR,
                       line_of(cpu_run), cpu_run))
    c4 = decomposition(cpu_run.series).c4
    npix = next((found.npix for found in c4.values() if found.npix), None)
    plan.npix = npix = npix or max((k[0] for k in speedups(cpu_run.series, NUMPY, TORCH_CPU)), default=None)
    for (slow, fast), colour, text in (((NUMPY, TORCH_CPU), "tab:orange", "paper's: NumPy differences / autograd"),
                                       ((NUMPY_ADJOINT, TORCH_ADJOINT), "tab:blue", "exact gradient both sides"),
                                       ((NUMPY, TORCH_DIFFERENCES), "tab:red", "differences both sides")):
        ratios = {k[1]: v for k, v in speedups(cpu_run.series, slow, fast).items() if k[0] == npix
                  and k[1] in C4_ORDERS}
        if len(ratios) >= 2:
            orders = sorted(ratios)
            plan.b.append((text, [parameter_count(n) for n in orders], [ratios[n] for n in orders], colour))
    if plan.b:
        _, counts, ratios, _ = plan.b[0]
        plan.guide = (counts, [float(ratios[0]) * count / counts[0] for count in counts])
    return plan


def line_of(run):
    """A run's line style in panel (a): solid for times to solution, dashed for times to the optimiser's stop."""
    return "-" if time_measure(run.series) == TIME_TO_SOLUTION else "--"


ANSWER = Figure("fig0_answer", lambda all_runs: answer_caption(answer_plan(all_runs)))
"""The answer figure; its caption None where no run has a speed-up to draw."""


def answer_figure(all_runs, folder):
    """The answer's figure (answer_plan): (a) the paper's three speed-ups against grid size (median over orders,
    with the range over repeats), with the paper's 10x and 100x; (b) NumPy / torch against the parameter count P at
    one grid size, log-log, with a slope-1 guide and the same ratio with one gradient on both sides."""
    plan = answer_plan(all_runs)
    figure, (left, right) = subplots(1, 2, figsize=(11, 4.3))
    for label, sizes, medians, colour, linestyle, run in plan.a:
        draw_ratio(left, sizes, medians, colour, f"{label}: {run.short_title}, {time_measure(run.series)}",
                   linestyle=linestyle)
    for value, text in ((10, "paper: ~10x (CPU)"),):
        left.axhline(value, color="grey", linestyle="--", linewidth=1)
        left.text(0.02, value * 1.08, text, color="grey", fontsize=8, transform=left.get_yaxis_transform())
    left.axhline(1, color="black", linewidth=0.8)
    left.set(xscale="log", yscale="log", xlabel="grid size npix (pixels)", ylabel="speed-up (ratio of times)",
             title="(a) speed-up against grid size, median over orders")
    sizes = sorted({npix for _, found, *_ in plan.a for npix in found})  # ticks after the scale is set
    if sizes:
        left.set_xticks(sizes)
    left.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    left.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    if plan.a:
        left.legend(fontsize=7, loc="upper left", bbox_to_anchor=(0.0, -0.16))
    for label, counts, ratios, colour in plan.b:
        draw_ratio(right, counts, ratios, colour, label)
    if plan.guide:
        right.plot(*plan.guide, color="grey", linestyle=":", label="slope 1 (speed-up proportional to P)")
    right.set(xscale="log", yscale="log", xlabel="parameters P", ylabel="speed-up (ratio of times)",
              title=f"(b) speed-up against P at npix {plan.npix}")
    if plan.guide:
        right.set_xticks(plan.guide[0])
    right.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    right.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    if plan.b:
        right.legend(fontsize=7, loc="upper left")
    return save(figure, folder, ANSWER.stem)


def answer_caption(plan):
    """The answer figure's caption, naming only what it draws and from which runs."""
    parts = []
    if plan.a:
        groups = {}
        for label, *_, run in plan.a:
            groups.setdefault(run.folder, (run, []))[1].append(label)
        parts.append("(a) " + "; ".join(
            f"{' and '.join(labels)}: {run.short_title}, {time_measure(run.series)}"
            f"{'' if line_of(run) == '-' else ' (dashed)'}" for run, labels in groups.values()))
    if plan.b:
        counts = ", ".join(str(parameter_count(n)) for n in C4_ORDERS)
        parts.append(f"(b) npix {plan.npix}, P = {counts} (n = {', '.join(map(str, C4_ORDERS))}, C4's orders): "
                     f"{', '.join(label for label, *_ in plan.b)}, and a slope-1 guide; {plan.cpu.short_title}, "
                     f"{time_measure(plan.cpu.series)}")
    return ("The answer in one figure. " + ". ".join(parts) + ". Error bars: range over repeats; open triangles: "
            "bounds") if parts else None

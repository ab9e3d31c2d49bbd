"""Where the speed-up comes from: the whole split into measured factors (algorithm, library, autograd,
device, start) whose ratios multiply to it."""

import dataclasses
import math

import matplotlib
import matplotlib.figure
import matplotlib.patches
import matplotlib.ticker
import numpy as np

from replication.claims import design
from replication.claims.speed import verdict_c4
from replication.core.judging import UNDETERMINED, aggregate, geometric_mean
from replication.core.plotting import Figure, save, shown_run, subplots
from replication.core.point_times import speedups
from replication.core.series import (
    CUDA_SEEDED,
    NUMPY,
    NUMPY_ADJOINT,
    TORCH_ADJOINT,
    TORCH_CPU,
    TORCH_CUDA,
    TORCH_DIFFERENCES,
    TORCH_SEEDED,
)
from replication.studies.sweep.read import complete_sizes

FACTORS = (
    ("algorithm", NUMPY, NUMPY_ADJOINT, "finite differences -> exact gradient, both NumPy"),
    ("library", NUMPY_ADJOINT, TORCH_ADJOINT, "NumPy -> torch, both the exact gradient on the CPU"),
    ("autograd", TORCH_ADJOINT, TORCH_CPU, "hand-written adjoint -> autograd, both torch on the CPU"),
    ("device", TORCH_CPU, TORCH_CUDA, "CPU -> GPU, both torch autograd"),
    ("start", TORCH_CUDA, CUDA_SEEDED, "BFGS from the identity -> from the Gauss-Newton matrix, both torch autograd "
                                      "on the GPU"),
    ("start", TORCH_CPU, TORCH_SEEDED, "BFGS from the identity -> from the Gauss-Newton matrix, both torch autograd "
                                      "on the CPU"),
)
"""The speed-up from NumPy with finite differences to torch with autograd, split into measured ratios of
times to solution: (name, slower series, faster series, what changes), a chain: each factor starts where the one
before it ended (chain_of). At each point their product is the whole."""


def chain_of(series):
    """The factors whose series were measured, in FACTORS' order, each starting from the last one's faster series
    (from NumPy): the GPU's "start" follows the device where the GPU was measured, the CPU's follows autograd
    where it was not."""
    chain, last = [], NUMPY
    for factor in FACTORS:
        if factor[1] == last and factor[2] in series:
            chain.append(factor)
            last = factor[2]
    return chain


WHOLE, PAPER, FIXED_DIFFERENCES = "whole", "paper", "library at finite differences"
"""The ratios a decomposition gives beside its factors: the whole (NumPy over the chain's last series), the paper's
own whole (NumPy differences -> torch autograd) and the library factor at fixed finite differences."""


@dataclasses.dataclass(frozen=True)
class DecompositionRow:
    """One grid size of a decomposition: each factor's and each whole's ratio by name (ratios; None where not
    measured at every order), the orders pooled, the factors' product (None where one is a bound) and whether it
    equals the whole. row[name] is a ratio by name (the report's table reads it so)."""

    ratios: dict
    orders: list[int]
    product: object
    product_is_whole: bool

    def __getitem__(self, name: str):
        return self.ratios[name]

    @property
    def whole(self):
        return self.ratios.get(WHOLE)

    @property
    def paper(self):
        return self.ratios.get(PAPER)


@dataclasses.dataclass(frozen=True)
class Decomposition:
    """The speed-up split into factors (decomposition): the chain's factors [(name, slower, faster, what)], its last
    series, {npix: DecompositionRow}, C4 judged per gradient; empty (false) without gradient variants."""

    factors: list = dataclasses.field(default_factory=list)
    last: object = None
    rows: dict = dataclasses.field(default_factory=dict)
    c4: dict = dataclasses.field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.factors)


def decomposition(series) -> Decomposition:
    """Per npix, the geometric mean over Zernike orders of each factor's ratio (a Ratio: its range from the repeats'
    ranges, a bound where a censored fit leaves it open), at the points where every series of the chain and the
    whole were measured; plus the whole (NumPy over the last series of the chain) and the library factor at fixed
    finite differences. At each point the factors' ratios multiply to the whole exactly (the times telescope), and
    so do their geometric means where every one is a value. Empty without gradient variants."""
    chain = chain_of(series)
    if not chain or chain[0][0] != "algorithm":
        return Decomposition()
    last = chain[-1][2]
    ratios = {name: speedups(series, slow, fast) for name, slow, fast, _ in chain}
    ratios |= {WHOLE: speedups(series, NUMPY, last), PAPER: speedups(series, NUMPY, TORCH_CPU),
               FIXED_DIFFERENCES: speedups(series, NUMPY, TORCH_DIFFERENCES)}
    common = set.intersection(*(set(ratios[name]) for name, *_ in chain)) & set(ratios[WHOLE])
    rows = {}
    for npix in sorted({key[0] for key in common}):
        keys = [key for key in common if key[0] == npix]
        found = {name: aggregate(geometric_mean, [values[key] for key in keys])
                 if all(key in values for key in keys) else None for name, values in ratios.items()}
        factors = [found[name] for name, *_ in chain]
        exact = not any(r.is_bound for r in [*factors, found[WHOLE]])
        product = math.prod(factors) if exact else None
        rows[npix] = DecompositionRow(found, sorted(key[1] for key in keys), product,
                                      exact and math.isclose(product, found[WHOLE], rel_tol=1e-9))
    return Decomposition(
        [(name, slow, fast, what) for name, slow, fast, what in chain], last, rows,
        {gradient: verdict_c4(complete_sizes(series, slow, fast)) for gradient, slow, fast in (
            ("finite differences", NUMPY, TORCH_DIFFERENCES),
            ("exact (adjoint)", NUMPY_ADJOINT, TORCH_ADJOINT),
            ("paper's (NumPy differences, torch autograd)", NUMPY, TORCH_CPU))})


FACTOR_COLOURS = {"algorithm": "tab:blue", "library": "tab:orange", "autograd": "tab:red", "device": "tab:green",
                  "start": "deeppink", "whole": "black"}


DECOMPOSITION = Figure("fig6_speedup_decomposition", lambda run: "where the speed-up comes from (geometric mean over "
                       f"orders; bars: range over repeats; hatched: a bound); {run.title}")


def speedup_decomposition(run, folder):
    """Figure 6: the NumPy -> torch speed-up split into measured factors per grid size (one run), log scale."""
    result = decomposition(run.series)
    names = [name for name, *_ in result.factors] + [WHOLE]
    sizes = list(result.rows)
    figure, axis = subplots(figsize=(6.5, 3.8))
    width = 0.8 / len(names)
    for offset, name in enumerate(names):
        found = [result.rows[npix][name] for npix in sizes]
        values = [float(r) if r is not None and r.kind != UNDETERMINED else np.nan for r in found]
        positions = np.arange(len(sizes)) + (offset - (len(names) - 1) / 2) * width
        bars = axis.bar(positions, np.array(values) - 1, width, bottom=1, color=FACTOR_COLOURS[name], label=name)
        for bar, ratio in zip(bars, found, strict=True):
            if ratio is not None and ratio.is_bound:  # a bound, not a value: hatched
                bar.set_hatch("//")
                bar.set_alpha(0.5)
        spread = [(float(r) - r.low, r.high - float(r)) if r is not None and not r.is_bound else (np.nan, np.nan)
                  for r in found]  # the range over repeats (geometric means of each point's lows and highs)
        axis.errorbar(positions, values, yerr=np.array(spread).T, fmt="none", ecolor="black", elinewidth=0.8,
                      capsize=2)
    axis.axhline(1, color="black", linewidth=0.8)
    axis.set_yscale("log")
    axis.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}x"))
    axis.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axis.set_xticks(np.arange(len(sizes)), [str(npix) for npix in sizes])
    axis.set(xlabel="grid size npix (pixels)", ylabel="speed-up factor (ratio of times to solution)",
             title=f"Where the NumPy -> torch speed-up comes from (geometric mean over orders)\n{run.title}")
    handles, labels = axis.get_legend_handles_labels()
    handles.append(matplotlib.patches.Patch(facecolor="white", edgecolor="grey", hatch="//"))
    labels.append("hatched: a bound")
    axis.legend(handles, labels, fontsize=7, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    return save(figure, folder, DECOMPOSITION.stem)


def decomposition_run(all_runs):
    """The run whose speed-up decomposition figure 6 and the main report show: the run the design names to answer
    the claims (yours first) where it has one, else your first run that has one, else the reference run whose
    decomposition judges C4 for the most gradients (the newest, by its start, among equals)."""
    answering = design.answering(all_runs)
    if answering is not None and decomposition(answering.series):
        return answering
    return shown_run([run for run in all_runs if decomposition(run.series)], lambda run: sum(
        verdict.npix is not None for verdict in decomposition(run.series).c4.values()))

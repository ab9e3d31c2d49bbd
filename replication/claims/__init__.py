"""The claims the report judges, each in one place: the paper's statement in our words, its few words for tables,
the first screen's words with the paper's hardware (None for our own checks), the threshold for *reproduced* in a
few words, the rule that grades it (what is measured and the two bars; verdicts.RULES is made from these), and, for a
claim judged on times to solution, the speed-up it judges (verdicts.judge_timed)."""

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable

from replication.core.judging import Rule
from replication.core.optimum import TARGET
from replication.core.plotting import Figure
from replication.core.series import NUMPY, TORCH_CPU, TORCH_CUDA, Series
from replication.core.simulation import STOPPED_AT_OPTIMUM

SAME_SOLUTION_STDERR = 0.1
"""Largest parameter difference, in standard errors, for two fits to count as the same solution."""
C4_MIN_NPIX, C4_ORDERS = 128, (2, 4, 6, 8)
"""The evidence C4 needs: every order of a fixed set, the same in every profile, at one grid size of npix >= 128
(the paper's claim reaches order 8; P runs 8, 17, 30, 47)."""
C3_ORDERS = C4_ORDERS
"""The orders C3's speed-up is read over at each grid size: C4's fixed set, timed by every profile and objective, so
that a run's own order set (the quick profile's n = 2, 3, 4, 6, 8, the paper's 2-9) does not move its C3."""


def parameter_count(nzern):
    """P: the Zernike terms of orders 1..nzern (piston left out) and the three illumination parameters."""
    return (nzern + 1) * (nzern + 2) // 2 - 1 + 3


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim: id (C1 ...), statement (in our words), short (a few words), paper (the first screen's words and
    hardware; None for a check of ours), threshold (for *reproduced*, in a few words); its rule: measure (what is
    measured), reproduced and partly (the bars; the measure must reach them, or stay at or below them where
    upper); ratio: for a claim judged on times to solution, the speed-up it judges, (slower, faster) series."""

    id: str
    statement: str
    short: str
    paper: str | None
    threshold: str
    measure: str
    reproduced: float
    partly: float
    upper: bool = False
    ratio: tuple[Series, Series] | None = None
    evaluate: Callable | None = None
    reason: str = "not measured in this run"
    figure: Figure | None = None
    draw: Callable | None = None
    shows: Callable | None = None

    @property
    def rule(self) -> Rule:
        """The rule that grades it (what is measured and its two bars)."""
        return Rule(self.measure, self.reproduced, self.partly, self.upper)

    @property
    def timed(self):
        """Whether the claim is judged on times to solution."""
        return self.ratio is not None


ADDED = "replication.claims.added"
"""The package of the claims added one file each: a module there holding a Claim named CLAIM, with its own evaluate
(run, objective, a core.objectives.Objective -> {"value", "verdict", "text"}: the verdict by its own rule,
CLAIM.rule), reason (why not
measured), and optionally its figure (a core.plotting.Figure), draw (all runs, folder -> paths written) and shows
(all runs -> the arguments of the figure's caption, or None where it is not drawn). The report shows such a claim in
the claims tables, the first screen (where it has the paper's words), DETAILS.md and the figure list, with no other
file touched."""


def added_claims() -> tuple[Claim, ...]:
    """The claims of the modules in ADDED, in module name order (their modules imported here, once)."""
    package = importlib.import_module(ADDED)
    found = []
    for module in sorted(info.name for info in pkgutil.iter_modules(package.__path__)):
        claim = getattr(importlib.import_module(f"{ADDED}.{module}"), "CLAIM", None)
        if isinstance(claim, Claim):
            found.append(claim)
    return tuple(found)


CLAIMS = (
    Claim("C1", "Up to ~100x faster time-to-solution with PyTorch on a GPU than with the NumPy implementation.",
          "~100x on a GPU", "~100x, GPU torch / NumPy (K20c)", ">= 50x",
          "NumPy / torch-cuda ratio of the run (both timed on its host, the threads shown), median over Zernike "
          "orders at the largest grid size measured (the largest single ratio shown beside it)", 50, 10,
          ratio=(NUMPY, TORCH_CUDA)),
    Claim("C2", "The GPU PyTorch run is ~10x faster than the CPU-only PyTorch run for grid sizes N >= 256.",
          "GPU ~10x CPU torch", "~10x, GPU / CPU torch, npix >= 256", ">= 5x, each npix",
          "torch-cpu / torch-cuda ratio of the run, median over Zernike orders at each npix >= 256, smallest of "
          "those medians (the claim must hold at every such size; sizes where a fit of a measured pair is not "
          "a solution are left out, here and in C3, C4)", 5, 2, ratio=(TORCH_CPU, TORCH_CUDA)),
    Claim("C3", "CPU-only PyTorch is about an order of magnitude faster than NumPy for intermediate and large grids.",
          "CPU torch ~10x NumPy", "~10x, CPU torch / NumPy", ">= 5x, each npix",
          "NumPy / torch-cpu ratio of the run, median over the fixed orders n = " + ", ".join(map(str, C3_ORDERS))
          + " (those measured) at each npix >= 128, smallest of those medians", 5, 2, ratio=(NUMPY, TORCH_CPU)),
    Claim("C4", "The improvement is largely independent of the number of model parameters (Zernike order up to 8).",
          "independent of the order", "independent of P (n <= 8)", "abs(slope) <= 0.3",
          "absolute slope of log(NumPy / torch-cpu speed-up) against log(parameters P), over the fixed orders n = "
          + ", ".join(map(str, C4_ORDERS)) + " only (P = " + ", ".join(str(parameter_count(n)) for n in C4_ORDERS)
          + f"), at the largest grid of npix >= {C4_MIN_NPIX} that has them all (1: a speed-up proportional to "
          "P; the spread max / min shown beside it)", 0.3, 0.6, upper=True, ratio=(NUMPY, TORCH_CPU)),
    Claim("C5a", "All implementations converge to the same solution within the algorithm's tolerances.",
          "same solution", "same solution", "all within 0.1 SE",
          f"share of the pairs of the paper's float64 fits of the same data (NumPy finite differences, torch "
          f"autograd on CPU and GPU; scipy BFGS), cross-check and sweep, within {SAME_SOLUTION_STDERR} standard "
          "error of each other: every pair, as the Mahalanobis distance under the point's optimum (runs before "
          "2026-12-02: largest parameter difference against NumPy in its fit's standard errors, pairs of "
          "solutions only); the worst pair shown; other series reported, not judged. Over several runs (the first "
          "screen) each comparison counts once: the same two series fitted to the same data at the same point in "
          "another run is a refit, not more evidence, and passes only where it passes in every run", 1.0, 0.9),
    Claim("C5b", "(Ours, not the paper's.) Every fit ended at the optimum, so its time is a time to solution.",
          "our check: fits at the optimum", None, "all at the optimum",
          "share of the fits with an exact account that ended at the optimum on the time to target's yardstick: "
          f"their end within {TARGET} standard error of the point's optimum (Mahalanobis, sandwich covariance), so "
          "that no fit counted there has a censored time (runs before times to target: the Newton step left <= "
          f"{STOPPED_AT_OPTIMUM} standard error, sandwich where recorded)", 1.0, 0.9),
    Claim("C6", "The PyTorch code stays as readable as the NumPy code (small, local changes; same structure).",
          "our check: lines alike between the trees, not readability itself", None, ">= 80% of lines alike",
          "share of non-blank lines identical between the trees once numpy/torch names are folded, over the "
          "modules that differ (byte-identical modules counted apart)", 0.8, 0.6),
)
"""Every claim of the paper and ours, in the report's order; C5b is our account of C5a's premise, C6 measures lines
alike."""
CLAIMS = CLAIMS + added_claims()
BY_ID = {claim.id: claim for claim in CLAIMS}
if len(BY_ID) != len(CLAIMS):
    raise ImportError(f"two claims share an id among {', '.join(claim.id for claim in CLAIMS)}")

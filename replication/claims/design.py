"""The experiment, declared once: which reference runs make up the evidence, each with its protocol (what it ran and
how), and which claims each answers. The report reads the design: a claim's value on the first screen comes from the
one run the design names for it, and the other runs of the design stand beside it as robustness checks, each judged
alone, never pooled into one range with it. Runs kept as the only evidence of their kind (the GPU, a second CPU
model) are history, shown apart. A run of yours is judged by the same design: as the protocol it ran."""

import dataclasses

from replication.claims.agreement import C5A, C5B, C6
from replication.claims.claim import Claim
from replication.claims.speed import C1, C2, C3, C4
from replication.core.objectives import CAUCHY, GAUSSIAN, Objective


@dataclasses.dataclass(frozen=True)
class Protocol:
    """How a reference run is made: name (a few words), words (what it runs, for people), profile (the sweep's,
    None for a run without one), threads (None: the machine's default, as `nox -s replicate` chooses them; 1: one
    thread), objectives (the sweeps' objectives, the one the paper most likely timed first), quiet (a timing
    reference, made on a quiet machine: recorded quiet at every point, or carrying an A/B check), answers (the
    claims whose first-screen value it gives), checks (the claims it judges again beside them)."""

    name: str
    words: str
    profile: str | None = None
    threads: int | None = None
    objectives: tuple[Objective, ...] = ()
    quiet: bool = True
    answers: tuple[Claim, ...] = ()
    checks: tuple[Claim, ...] = ()


@dataclasses.dataclass(frozen=True)
class Reference:
    """One reference run of the design: its protocol and its folder under results/reference; history: kept as the
    only evidence of its kind, made with older code and judged by the older rule, shown apart."""

    protocol: Protocol
    folder: str
    history: bool = False


QUICK = Protocol(
    "the quick profile", "npix 32-512, n = 2, 3, 4, 6, 8, 3 repeats; least squares in noise units and the Cauchy "
    "likelihood; the cross-check; the gradient variants that split the speed-up", profile="quick",
    objectives=(GAUSSIAN, CAUCHY), answers=(C3, C4, C5A, C5B, C6))
ONE_THREAD = Protocol(
    "the quick profile on one thread", "the quick profile with NumPy and torch on one thread each, and the "
    "cold-start retrievals", profile="quick", threads=1, objectives=(GAUSSIAN, CAUCHY), checks=(C3, C4))
PAPER_GRID = Protocol(
    "the paper's grid", "npix 32-2048, n = 2-9, in one run", profile="paper", threads=1, objectives=(CAUCHY,),
    checks=(C3, C4))
BENCH = Protocol(
    "the bench with the JAX peer", "one evaluation against the FFT floor, torch's fastest path and JAX side by side",
    threads=1)
REAL_MAPS = Protocol("the real maps", "the SRT's maps and a GRASP simulation reduced by both trees, and pyoof on them")
CLOSURE = Protocol(
    "the closure test", "simulated maps with a known surface at a stated noise, the Fisher bound, pyoof on some seeds",
    threads=1)
CLOSURE_BEYOND = Protocol(
    "the closure beyond the fitted orders", "the closure test's maps with a known surface beyond the fitted orders "
    "(panel pistons; Zernike terms to n = 7, to n = 8): the order rule, and whether the stated uncertainty covers "
    "the error", threads=1)
GPU = Protocol("a GPU run", "the quick profile on a GPU host (npix 32-512, n = 2, 4)", profile="quick",
               objectives=(CAUCHY,), checks=(C1, C2))
SECOND_CPU = Protocol("a second CPU model", "the quick profile on another CPU model", profile="quick",
                      objectives=(CAUCHY,), checks=(C3, C4))

DESIGN = (
    Reference(QUICK, "2026-12-05_vm_amd-epyc-2c-3"),
    Reference(ONE_THREAD, "2026-12-05_vm_amd-epyc-2c-4"),
    Reference(PAPER_GRID, "2026-12-05_vm_amd-epyc-2c-1thread_paper-profile"),
    Reference(BENCH, "2026-12-05_vm_amd-epyc-2c-5"),
    Reference(REAL_MAPS, "2026-12-06_vm_amd-epyc-2c_real-maps"),
    Reference(CLOSURE, "2026-12-05_vm_amd-epyc-2c-1thread_closure"),
    Reference(CLOSURE, "2026-12-05_vm_amd-epyc-2c-1thread_closure-half-noise"),
    Reference(CLOSURE, "2026-12-05_vm_amd-epyc-2c-1thread_closure-quarter-noise"),
    Reference(CLOSURE_BEYOND, "2026-12-06_vm_amd-epyc-2c-1thread_closure-panels"),
    Reference(CLOSURE_BEYOND, "2026-12-06_vm_amd-epyc-2c-1thread_closure-truth-n7"),
    Reference(CLOSURE_BEYOND, "2026-12-06_vm_amd-epyc-2c-1thread_closure-truth-n8"),
    Reference(GPU, "2026-11-29_vm_xeon-16c_nvidia-h200", history=True),
    Reference(SECOND_CPU, "2026-12-01_vm_xeon-2c", history=True),
)
"""Every reference run of the evidence, the one that answers the claims first."""

BY_FOLDER = {reference.folder: reference for reference in DESIGN}


def reference_of(run) -> Reference | None:
    """A run's place in the design: a reference run's by its folder; a run of yours as the protocol of its judged
    sweep's profile (the quick profile, as `nox -s replicate` runs it, when it has none); None for a reference run
    the design does not name."""
    if run.own:
        profile = run.profile or QUICK.profile
        protocol = next((p for p in (QUICK, PAPER_GRID) if p.profile == profile),
                        dataclasses.replace(QUICK, name=f"the {profile} profile", profile=profile))
        return Reference(protocol, run.folder.name)
    return BY_FOLDER.get(run.folder.name)


def answering(all_runs):
    """The run whose values the first screen gives: your first run, else the reference run of the protocol that
    answers the claims; None without one."""
    own = [run for run in all_runs if run.own]  # yours always, as in the claims tables
    if own:
        return own[0]
    return next((run for run in all_runs if (ref := reference_of(run)) and ref.protocol is QUICK and not run.own),
                None)


def beside(all_runs, shown):
    """The other runs of the design that judge claims again, each alone (robustness), and the history runs:
    ([(run, reference)], [(run, reference)])."""
    placed = [(run, reference_of(run)) for run in all_runs if run is not shown]
    checks = [(run, ref) for run, ref in placed if ref and not ref.history and ref.protocol.checks and not run.own]
    history = [(run, ref) for run, ref in placed if ref and ref.history]
    return checks, history

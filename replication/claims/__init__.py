"""The claims the report judges, each one value (claims.claim.Claim) in one place: the paper's judged on times to
solution (claims.speed: C1-C4), on where the fits ended and on the code (claims.agreement: C5a, C5b, C6), and those
added one file each (claims.ADDED). The report reads every claim through the same methods."""

import importlib
import pkgutil

from replication.claims.agreement import C5A, C5B, C6
from replication.claims.claim import (
    C3_ORDERS,
    C4_MIN_NPIX,
    C4_ORDERS,
    SAME_SOLUTION_STDERR,
    Alternative,
    Claim,
    parameter_count,
)
from replication.claims.speed import C1, C2, C3, C4

__all__ = ["BY_ID", "C1", "C2", "C3", "C3_ORDERS", "C4", "C4_MIN_NPIX", "C4_ORDERS", "C5A", "C5B", "C6", "CLAIMS",
           "SAME_SOLUTION_STDERR", "Alternative", "Claim", "added_claims", "parameter_count"]

ADDED = "replication.claims.added"
"""The package of the claims added one file each: a module there holding a Claim named CLAIM (claims.claim.Claim
says what it carries), with its own evaluate (run, objective, a core.objectives.Objective -> a core.judging.Verdict:
value, verdict by its own rule CLAIM.rule, text), reason (why not measured), and optionally its notes, words over
several runs, caveats, sensitivity rows (alternatives), figure (a core.plotting.Figure), draw (all runs, folder ->
paths written) and shows (all runs -> the arguments of the figure's caption, or None where it is not drawn), as the
paper's claims do. The report shows such a claim in
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


CLAIMS = (C1, C2, C3, C4, C5A, C5B, C6, *added_claims())
"""Every claim of the paper and ours, in the report's order; C5b is our account of C5a's premise, C6 measures lines
alike; then the claims added one file each."""
BY_ID = {claim.id: claim for claim in CLAIMS}
if len(BY_ID) != len(CLAIMS):
    raise ImportError(f"two claims share an id among {', '.join(claim.id for claim in CLAIMS)}")

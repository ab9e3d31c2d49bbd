"""The claims the report judges, each in one place: the paper's statement in our words, its few words for tables,
the first screen's words with the paper's hardware (None for our own checks), the threshold for *reproduced* in a
few words, and whether it is judged on times to solution. Each claim's rule is analysis.RULES[id]."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim: id (C1 ...), statement (in our words), short (a few words), paper (the first screen's words and
    hardware; None for a check of ours), threshold (for *reproduced*, in a few words), timed (judged on times)."""

    id: str
    statement: str
    short: str
    paper: str | None
    threshold: str
    timed: bool = False

    @property
    def rule(self):
        """The claim's rule (analysis.RULES), which its verdict functions grade with."""
        from replication.analysis import RULES

        return RULES[self.id]


CLAIMS = (
    Claim("C1", "Up to ~100x faster time-to-solution with PyTorch on a GPU than with the NumPy implementation.",
          "~100x on a GPU", "~100x, GPU torch / NumPy (K20c)", ">= 50x", timed=True),
    Claim("C2", "The GPU PyTorch run is ~10x faster than the CPU-only PyTorch run for grid sizes N >= 256.",
          "GPU ~10x CPU torch", "~10x, GPU / CPU torch, npix >= 256", ">= 5x, each npix", timed=True),
    Claim("C3", "CPU-only PyTorch is about an order of magnitude faster than NumPy for intermediate and large grids.",
          "CPU torch ~10x NumPy", "~10x, CPU torch / NumPy", ">= 5x, each npix", timed=True),
    Claim("C4", "The improvement is largely independent of the number of model parameters (Zernike order up to 8).",
          "independent of the order", "independent of P (orders n <= 8)", "abs(slope) <= 0.3", timed=True),
    Claim("C5a", "All implementations converge to the same solution within the algorithm's tolerances.",
          "same solution", "same solution", "all within 0.1 SE"),
    Claim("C5b", "(Ours, not the paper's.) Every fit ended at the optimum, so its time is a time to solution.",
          "our check: fits at the optimum", None, "all at the optimum"),
    Claim("C6", "The PyTorch code stays as readable as the NumPy code (small, local changes; same structure).",
          "our check: lines alike between the trees, not readability itself", None, ">= 80% of lines alike"),
)
"""Every claim, in the report's order; C5b is our account of C5a's premise, C6 measures lines alike."""
BY_ID = {claim.id: claim for claim in CLAIMS}

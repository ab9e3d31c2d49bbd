"""Reading the cross-check's record: its checks, each once, and its fits' distances to the NumPy fit."""

import numpy as np

from replication.core.objectives import DEFAULT
from replication.core.optimum import mahalanobis
from replication.core.registry import GRADIENTS
from replication.core.series import (
    NUMPY,
    Series,
)
from replication.core.simulation import (
    ended_at_optimum,
    judging_stderr,
)
from replication.studies.crosscheck.records import crosscheck_fits, fit_series


def crosscheck_differences(crosscheck, objective):
    """The cross-check's fit comparisons of one objective as fit_differences rows, each fit against the NumPy fit of
    its point, once. Cross-checks since 2026-12-02 (the NumPy fit holds the point's polished optimum): the
    Mahalanobis distance under the optimum's covariance, every fit compared; older ones: the largest parameter
    difference in the NumPy fit's exact standard errors, comparable where both fits ended at the optimum."""
    fits = [fit for fit in crosscheck_fits(crosscheck) if fit.get("objective", DEFAULT) == objective.name]
    rows = []
    for fit in fits:
        reference = next((f for f in fits if fit_series(f) == NUMPY and (f["npix"], f["nzern"]) ==
                          (fit["npix"], fit["nzern"])), None)
        if fit_series(fit) == NUMPY or reference is None or not reference.get("convergence"):
            continue
        found = reference.get("optimum")
        if found and found["polished"]:
            rows.append({"series": fit_series(fit), "against": NUMPY, "npix": fit["npix"], "nzern": fit["nzern"],
                         "max_stderr": mahalanobis(fit["x"], reference["x"], found["covariance"]),
                         "basis": "Mahalanobis", "comparable": True, "source": "cross-check"})
            continue
        stderr = judging_stderr(reference["convergence"])
        shift = float(np.max(np.abs(np.array(fit["x"]) - np.array(reference["x"])) / stderr))
        comparable = all(f.get("convergence") and ended_at_optimum(f) for f in (fit, reference))
        rows.append({"series": fit_series(fit), "against": NUMPY, "npix": fit["npix"], "nzern": fit["nzern"],
                     "max_stderr": shift, "basis": "exact", "comparable": bool(comparable), "source": "cross-check"})
    return rows


def compared_series(check):
    """The series a cross-check's comparison names first (its label, then the gradient's name or " vs ...")."""
    first = check["compare"].split(" vs ")[0]
    for gradient in GRADIENTS:
        first = first.removesuffix(f" {gradient}")
    return Series.parse(first)


def crosscheck_checks(crosscheck):
    """The cross-check's checks, each once: files before schema 2 repeated torch-cpu's model checks and fit
    checks under the on-device label (the same computation), left out here."""
    if not crosscheck:
        return []
    checks = crosscheck["checks"]
    if crosscheck.get("schema", 1) >= 2:
        return checks
    return [c for c in checks if c["compare"].startswith("numpy ") or compared_series(c).minimizer == "scipy"]

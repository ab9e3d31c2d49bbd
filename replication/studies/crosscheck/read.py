"""Reading the cross-check's record: its fits' distances to the NumPy fit."""

import numpy as np

from replication.core.optimum import mahalanobis
from replication.core.series import NUMPY
from replication.studies.crosscheck.records import CrosscheckRead


def crosscheck_differences(crosscheck: CrosscheckRead | None, objective):
    """The cross-check's fit comparisons of one objective as fit_differences rows, each fit against the NumPy fit of
    its point, once. Cross-checks since 2026-12-02 (the NumPy fit holds the point's polished optimum): the
    Mahalanobis distance under the optimum's covariance, every fit compared; older ones: the largest parameter
    difference in the NumPy fit's exact standard errors, comparable where both fits ended at the optimum."""
    fits = [fit for fit in (crosscheck.fits if crosscheck else []) if fit.objective == objective.name]
    rows = []
    for fit in fits:
        reference = next((f for f in fits if f.series == NUMPY and f.grid_point == fit.grid_point), None)
        if fit.series == NUMPY or reference is None or not reference.convergence:
            continue
        found = reference.optimum
        if found and found.polished:
            rows.append({"series": fit.series, "against": NUMPY, "npix": fit.npix, "nzern": fit.nzern,
                         "max_stderr": mahalanobis(fit.x, reference.x, found.covariance),
                         "basis": "Mahalanobis", "comparable": True, "source": "cross-check"})
            continue
        stderr = reference.convergence.judging_stderr
        shift = float(np.max(np.abs(np.array(fit.x) - np.array(reference.x)) / stderr))
        comparable = all(f.convergence and f.convergence.at_optimum for f in (fit, reference))
        rows.append({"series": fit.series, "against": NUMPY, "npix": fit.npix, "nzern": fit.nzern,
                     "max_stderr": shift, "basis": "exact", "comparable": bool(comparable), "source": "cross-check"})
    return rows

"""Reading the cross-check's record: its fits' distances to the NumPy fit."""

import numpy as np

from replication.core.judging import Pair
from replication.core.optimum import mahalanobis
from replication.core.series import NUMPY
from replication.studies.crosscheck.records import CrosscheckRead


def crosscheck_differences(crosscheck: CrosscheckRead | None, objective) -> list[Pair]:
    """The cross-check's fit comparisons of one objective, each fit against the NumPy fit of
    its point, once. Cross-checks whose NumPy fit holds the point's polished optimum: the
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
            rows.append(Pair(fit.series, NUMPY, fit.npix, fit.nzern, mahalanobis(fit.x, reference.x, found.covariance),
                             "Mahalanobis", True, "cross-check"))
            continue
        stderr = reference.convergence.judging_stderr
        shift = float(np.max(np.abs(np.array(fit.x) - np.array(reference.x)) / stderr))
        comparable = all(f.convergence and f.convergence.at_optimum for f in (fit, reference))
        rows.append(Pair(fit.series, NUMPY, fit.npix, fit.nzern, shift, "exact", bool(comparable), "cross-check"))
    return rows

"""What moves a source's surface beside its noise: the one systematic measured here rather than by another part of
the reduction, the noise weighting (each map in units of its own noise, or one scale for all three: the fit refitted
the other way from its optimum). The budget's other parts are the statistical uncertainty (surface.py), the order
truncation (truncation.py), the loss and the per-map terms (measure.py); findings.budget_line says them together."""

from __future__ import annotations

import numpy as np

from oof_common.limits import TOL
from replication.core import series
from replication.core.implementations import of
from replication.core.reduction.sources import Observation, rms, setup_for, surface_error


def other_weighting(observation: Observation, x, order: int, npix: int, tol: float = TOL) -> dict:
    """The fit at the last order refitted (torch's exact adjoint, untimed) from x under the other noise weighting,
    and how far its surface lies from x's: {per_map_noise (the refit's), surface_difference_rms_um, message (how
    the refit ended, scipy's words)}."""
    toggled = observation.with_per_map_noise(not observation.per_map_noise)
    impl = of(series.TORCH_ADJOINT)
    setup = setup_for(impl, toggled, order, npix)
    fitted = impl.package.fit(setup, toggled.prepared(impl.package, setup), np.asarray(x, dtype=np.float64), tol=tol,
                              gamma=toggled.gamma, objective=toggled.objective, gradient=impl.gradient_name)
    plain = setup_for(of(series.NUMPY), observation, order, npix)
    difference = surface_error(np.asarray(fitted.x) - np.asarray(x, dtype=np.float64), plain,
                               observation.source.wavelength)
    return {"per_map_noise": toggled.per_map_noise, "surface_difference_rms_um": rms(difference),
            "message": str(fitted.message)}

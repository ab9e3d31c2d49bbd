"""The real maps' estimate where their noise is that of scans (correlated along one axis of the maps): least
squares of the excess whitened along the scans, the efficient estimator under such noise. A whitened fit from afar
can stop in a minimum of its own (it weighs the beams' slow structure little), so the timed ladder fits without
whitening and the last order is refitted whitened from its optimum, untimed, and polished; the source's surface,
its uncertainty and its error budget are then the whitened fit's."""

from __future__ import annotations

from typing import Annotated

import msgspec
import numpy as np

from oof_common.limits import TOL
from replication.core import optimum, series
from replication.core.implementations import of
from replication.core.optimum import finite_or_none
from replication.core.records import MaybeNumber, Record, Vector
from replication.core.reduction.sources import Observation, rms, setup_for, surface_error


class Found(Record):
    """A minimum found: its parameters and the objective there."""

    x: Vector
    fun: MaybeNumber


class Whitening(Record):
    """The whitened refit a source's surface is (whitened.whitened_optimum): the scans' axis and correlation, the
    border band's along both axes, how the refit ended, its surface's move from the unwhitened one (um rms)."""

    axis: Annotated[int, msgspec.Meta(ge=0, le=1)]
    correlation: Annotated[float, msgspec.Meta(gt=-1, lt=1)]
    noise_correlation: Vector
    message: str
    success: bool
    moved_um: MaybeNumber


def whitened_optimum(observation: Observation, found, order: int, npix: int, tol: float = TOL):
    """The last order refitted whitened (observation.scan; torch's exact adjoint) from the ladder's optimum found
    (a Found, or a stage's optimum) and polished: (the whitened optimum as a Found, the source record's whitening:
    the scans' axis and correlation, the refit's end, its surface's move from the unwhitened optimum in micrometres
    rms)."""
    impl = of(series.TORCH_ADJOINT)
    setup = setup_for(impl, observation, order, npix)
    data = observation.prepared(impl.package, setup)
    start = np.asarray(found.x, dtype=np.float64)
    result = impl.package.fit(setup, data, start, tol=tol, gamma=observation.gamma,
                              objective=observation.objective, gradient=impl.gradient_name)
    best = optimum.polish(impl.package, result.x, setup, data, observation.gamma, observation.objective)
    plain = setup_for(of(series.NUMPY), observation, order, npix)
    moved = surface_error(np.asarray(best.x) - start, plain, observation.source.wavelength)
    record = {"axis": observation.scan.axis, "correlation": observation.scan.correlation,
              "noise_correlation": list(observation.noise_correlation), "message": str(result.message),
              "success": bool(result.success), "moved_um": finite_or_none(rms(moved))}
    return Found(x=[float(v) for v in best.x], fun=float(best.fun)), record

"""What the harness watches while a fit runs: every evaluation's point and time (the trajectory a time to target is
read from) and a time limit, handed to the models' fit as its callback, so that the models hold no bookkeeping of
the harness's."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable

import numpy as np

from oof_common.bfgs import FitStatus

TIMED_OUT = FitStatus.STOPPED
"""The status of a fit its time limit stopped: the models' status for a stop their callback asked."""


@dataclasses.dataclass
class FitWatch:
    """A fit's callback: counts evaluations, keeps (seconds since the watch started, evaluations so far, a copy of
    the point) of each as the minimizer asks for it where `trajectory`, and asks the fit to stop at the first
    evaluation asked for after `time_limit` seconds (None: no limit), or, where `target` is given (a test of a
    float64 NumPy point), at the first evaluation at a point within it; the fit stops at the end of that
    iteration. Start it just before the fit is called."""

    trajectory: bool = False
    time_limit: float | None = None
    target: Callable[[np.ndarray], bool] | None = None
    evaluations: int = 0
    kept: list = dataclasses.field(default_factory=list)
    reached_target: bool = False
    start: float = dataclasses.field(default_factory=time.perf_counter)

    def __call__(self, params) -> bool:
        """Watch one evaluation at params (a NumPy array, or a torch array on its device: copied there); True once
        past the time limit or within the target."""
        seconds = time.perf_counter() - self.start
        self.evaluations += 1
        if self.trajectory:
            copied = params.clone() if hasattr(params, "clone") else np.array(params, dtype=np.float64)
            self.kept.append((seconds, self.evaluations, copied))
        if self.target is not None and not self.reached_target:
            self.reached_target = bool(self.target(host_copy(params)))
        return self.reached_target or (self.time_limit is not None and seconds > self.time_limit)

    def arrays(self, nparams: int) -> dict[str, np.ndarray]:
        """The kept trajectory as arrays: seconds since the watch started (n,), evaluations so far (n,), parameters
        (n, P), one row per objective evaluation in the order made (device points moved to the host here, once)."""
        return trajectory_arrays([(seconds, count, host_copy(params)) for seconds, count, params in self.kept],
                                 nparams)

    def finish(self, result, nparams: int):
        """The fit's result with what the watch saw: the trajectory where kept, whether the watch stopped it at its
        target (result.stopped_at_target), and, where the target or the time limit stopped it, a message that says
        so."""
        if self.trajectory:
            result.trajectory = self.arrays(nparams)
        result.stopped_at_target = result.status == TIMED_OUT and self.reached_target
        if result.stopped_at_target:
            result.message = ("Stopped at the target: an evaluation came within it, and the watch asked the fit to "
                              "stop there; x is the last iterate")
        elif result.status == TIMED_OUT and self.time_limit is not None:
            result.message = (f"Stopped: the time limit ({self.time_limit:g} s) passed before the minimizer's "
                              "stopping rule was met; x is the last iterate")
        return result


def host_copy(params) -> np.ndarray:
    """A float64 NumPy array of a point, from a NumPy array or a torch tensor on any device."""
    if hasattr(params, "detach"):
        params = params.detach().cpu().numpy()
    return np.asarray(params, dtype=np.float64)


def trajectory_arrays(steps, nparams: int) -> dict[str, np.ndarray]:
    """(seconds, evaluations, params) steps as arrays: seconds (n,), evaluations (n,), params (n, P)."""
    seconds, evaluations, params = zip(*steps, strict=True) if steps else ((), (), ())
    return {"seconds": np.array(seconds, dtype=np.float64), "evaluations": np.array(evaluations, dtype=np.int64),
            "params": np.array(params, dtype=np.float64).reshape(len(steps), nparams)}


def check_time_limit(time_limit):
    """time_limit as a float: a finite positive number of seconds, or None; else a ValueError naming it."""
    if time_limit is None:
        return None
    try:
        seconds = float(time_limit) if isinstance(time_limit, int | float) and not isinstance(time_limit, bool) \
            else math.nan
    except OverflowError:
        seconds = math.inf
    if not 0 < seconds < math.inf:
        raise ValueError(f"time_limit must be a finite positive number of seconds, got {time_limit!r}")
    return seconds


def watch_for(trajectory: bool, time_limit: float | None, target: Callable[[np.ndarray], bool] | None = None
              ) -> FitWatch | None:
    """A watch for a fit that keeps its trajectory, has a time limit or stops at a target; None where it needs none
    of them (the fit then runs as a plain script calls it, without a callback)."""
    time_limit = check_time_limit(time_limit)
    needed = trajectory or time_limit is not None or target is not None
    return FitWatch(trajectory=trajectory, time_limit=time_limit, target=target) if needed else None


def watched_fit(fit, setup, data, p0, *, trajectory: bool = False, time_limit: float | None = None, **options):
    """fit(setup, data, p0, **options) watched (watch_for); the result as FitWatch.finish leaves it."""
    watch = watch_for(trajectory, time_limit)
    if watch is None:
        return fit(setup, data, p0, **options)
    return watch.finish(fit(setup, data, p0, callback=watch, **options), setup.nparams)

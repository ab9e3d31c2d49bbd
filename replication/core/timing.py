"""Time-to-solution of one point: building the setup and the BFGS fit, timed separately, repeated."""

import statistics
import time

import numpy as np

from replication.core.optimum import Optimum, time_to_target
from replication.core.problem import Problem
from replication.core.simulation import bfgs_standard_errors, convergence
from replication.core.watch import TIMED_OUT, watch_for


def time_evaluation(impl, problem: Problem, p0, repeats=3):
    """Median seconds of one objective evaluation (no gradient) at p0, after one warm-up call."""
    setup, data, gamma, objective = problem.setup_for(impl), problem.data, problem.gamma, problem.objective
    impl.package.negative_log_likelihood(p0, setup, data, gamma, objective)
    times = []
    for _ in range(repeats):
        impl.synchronize()
        start = time.perf_counter()
        impl.package.negative_log_likelihood(p0, setup, data, gamma, objective)
        impl.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timed_fit(impl, problem: Problem, p0, tol, trajectory=False, time_limit=None, target=None):
    """One fit as a user makes it, timed: (seconds to build the setup, seconds to fit, scipy's result, with its
    trajectory where asked; stopped at the end of its first iteration past time_limit seconds where given, or at the
    end of the iteration of its first evaluation within target where given, a test of a point: watch.FitWatch). The
    one place a fit is timed (the sweep, retrieval); device work is waited for before each clock reading. The setup
    is built on the clock, as a user's script builds it (the problem's own setups are for untimed work)."""
    gamma, objective = problem.gamma, problem.objective
    options = impl.fit_keywords(problem, p0)  # a start matrix per grid: before the clock
    impl.synchronize()
    start = time.perf_counter()
    setup = impl.make_setup(problem.npix, problem.nzern)
    impl.synchronize()
    built = time.perf_counter()
    watch = watch_for(trajectory, time_limit, target)
    result = impl.package.fit(setup, problem.data, p0, tol=tol, gamma=gamma, objective=objective,
                              gradient=impl.gradient_name, **options, **({"callback": watch} if watch else {}))
    impl.synchronize()
    fitted = time.perf_counter()
    return built - start, fitted - built, watch.finish(result, setup.nparams) if watch else result


def warm_up(impl, problem: Problem, p0):
    """One value-and-gradient call of what a fit calls (CUDA context, FFT plans, JAX's compilation), untimed."""
    impl.package.value_and_grad(p0, problem.setup_for(impl), problem.data, problem.gamma,
                                objective=problem.objective, gradient=impl.gradient_name)


def time_fit(impl, problem: Problem, p0, repeats, tol, trajectory=False, time_limit=None, budget_s=None,
             best: Optimum | None = None):
    """Run up to `repeats` timed fits (setup + fit) after a warm-up call: (setup seconds, fit seconds, results), one
    each per repeat; each fit stopped past time_limit seconds where given (timed_fit), and none after a fit stopped
    there. Where budget_s is given, after the first fit another is started only where another_repeat_fits.

    best: the point's optimum, where known (trajectories then kept). The first repeat runs to the minimizer's own
    stop: its end is the point's (how the fit ended, how far from the optimum). Where it came within the target of
    best, every later repeat is stopped at the end of the iteration that gets there (result.stopped_at_target): a
    later repeat measures the time to the target, which is all it adds, and its time to stop is not its own (not
    where the fit's points stay on a GPU: stops_on_host)."""
    warm_up(impl, problem, p0)
    setup_s, fit_s, results = [], [], []
    target = None
    while len(results) < repeats:
        if results and results[-1].status == TIMED_OUT and not results[-1].stopped_at_target:
            break
        if results and budget_s is not None and not another_repeat_fits(
                [a + b for a, b in zip(setup_s, fit_s, strict=True)], budget_s):
            break
        built_s, fitted_s, result = timed_fit(impl, problem, p0, tol, trajectory or best is not None, time_limit,
                                              target)
        setup_s.append(built_s)
        fit_s.append(fitted_s)
        results.append(result)
        if (best is not None and len(results) == 1 and stops_on_host(impl)
                and time_to_target(0.0, result.trajectory, best) is not None):
            target = best.within_target
    return setup_s, fit_s, results


def stops_on_host(impl) -> bool:
    """Whether testing each evaluation against the target costs the fit nothing it would not pay anyway: its
    points are on the host already (scipy's BFGS hands NumPy arrays) or on the CPU. The on-device BFGS on a GPU is
    left to run to its stop: reading its point back at every evaluation would wait on the device each time."""
    return impl.minimizer == "scipy" or impl.device == "cpu"


def another_repeat_fits(seconds, budget_s):
    """Whether the repeats so far (seconds each) and one more as long as the longest of them fit within budget_s:
    a point's repeats measured, never predicted."""
    return sum(seconds) + max(seconds) <= budget_s


def summary(seconds):
    """Median, min and max of a list of timings, plus the list itself."""
    return {"median": statistics.median(seconds), "min": min(seconds), "max": max(seconds), "all": seconds}


def fit_outcome(result, problem: Problem):
    """The JSON-ready outcome of a fit: counts, how it ended, objective, parameters, and the exact account of
    where it ended (gradient, Newton step and standard errors from the exact Hessian; not timed)."""
    return {
        "nit": int(result.nit),
        "nfev": int(result.nfev),
        "njev": int(getattr(result, "njev", 0)),
        "success": bool(result.success),
        "message": str(result.message),
        "fun": float(result.fun),
        "grad_norm": float(np.linalg.norm(result.jac)),
        "x": [float(v) for v in result.x],
        "stderr": [float(v) for v in bfgs_standard_errors(result)],
        "convergence": convergence(result.x, problem) if np.isfinite(result.fun) else None,
    }

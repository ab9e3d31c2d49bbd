"""Cross-checks: the implementations compute the same model, the same gradient and the same fit."""

import functools
import time

import numpy as np

import reference_numpy
from oof_common.constants import N_ILLUMINATION
from oof_common.limits import TOL
from replication.core import optimum, registry
from replication.core.environment import environment_record, thread_limits
from replication.core.implementations import Implementation, every
from replication.core.objectives import CAUCHY, LEAST_SQUARES, Objective
from replication.core.optimum import mahalanobis
from replication.core.problem import Problem
from replication.core.results import atomic_stream, write_json
from replication.core.series import Series
from replication.core.simulation import (
    aberrated_params,
    bfgs_standard_errors,
    convergence,
    simulate_observation,
    true_params,
)
from replication.core.watch import FitWatch
from replication.studies.crosscheck.records import CROSSCHECK_SCHEMA, read_crosscheck_record

POINTS = {"smoke": ((32, 3),), "default": ((32, 3), (64, 4), (128, 6))}
"""(npix, nzern) pairs checked: a tiny one for tests, three for the report."""
TOLERANCES = {"beams": 1e-12, "nll": 1e-12, "beams_float32": 1e-4, "nll_float32": 1e-5, "gradient": 1e-5,
              "adjoint": 1e-10, "hessian": 1e-6, "fit_stderr": 0.1, "fit_nll": 0.05}
"""Relative tolerances, except fit_stderr (the largest parameter difference in exact standard errors) and
fit_nll (the difference of the fits' objectives in log-likelihood units, where 0.5 is one standard error): a
0.1-standard-error shift changes the objective by up to ~0.05 for fits that stop up to half a standard error
short of the optimum, as least-squares fits at tol = 1e-8 do (seen: 1.6e-3 at npix 128, n = 6).
How each fit ended (the Newton step left, in exact standard errors) is recorded with the fit, not checked
here: it is a property of the objective and the tolerance, not a disagreement between implementations.

hessian: the NumPy Hessian is central differences of the exact gradient, good to about 1e-8.

beams_float32: the defocus screens reach 2 pi dz / wavelength = 286 rad, which float32 holds to about
1.7e-5 rad; beam errors of a few 1e-5 are that rounding, not a fault (seen: 1.1e-5 at npix 16)."""
SCHEMA = CROSSCHECK_SCHEMA
"""Version of crosscheck.json (crosscheck.records.CROSSCHECK_SCHEMA): since 2 each model is checked once and each
implementation fitted with its own minimizer and gradient."""
CENTRAL_DIFFERENCE_STEP = 1e-6
"""Step of the central differences the autograd gradient is checked against (parameter units)."""


def relative(a, b):
    """||a - b|| / ||b|| of two NumPy arrays."""
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


def to_numpy(values):
    """A float64 NumPy array of either package's output."""
    return np.asarray(values.cpu() if hasattr(values, "cpu") else values, dtype=np.float64)


def random_params(rng, nparams):
    """Aberrations of a few tenths of a radian and an offset illumination."""
    params = 0.3 * rng.standard_normal(nparams)
    params[-N_ILLUMINATION:] = [0.05, -0.05, 1.1]
    return params


def check(name, npix, nzern, compare, value, tolerance_key, objective: Objective | None = None):
    tolerance = TOLERANCES[tolerance_key]
    return {"check": name, "npix": npix, "nzern": nzern, "compare": compare, "value": value,
            "objective": objective and objective.name,
            "tolerance": tolerance, "passed": bool(np.isfinite(value) and value <= tolerance)}


def central_differences(function, params):
    """The gradient of a scalar function of params by central differences of step CENTRAL_DIFFERENCE_STEP."""
    return np.array([(function(params + e) - function(params - e)) / (2 * CENTRAL_DIFFERENCE_STEP)
                     for e in CENTRAL_DIFFERENCE_STEP * np.eye(params.size)])


def model_variants(impls):
    """One implementation per (package, device, dtype) other than the NumPy reference: the model does not depend
    on the gradient or the minimizer a fit uses, so each model is checked once, under its plain label."""
    seen, chosen = set(), []
    for impl in impls:
        key = (impl.name, impl.dtype)
        if not impl.registration.reference and key not in seen:
            seen.add(key)
            chosen.append(Implementation(impl.name, impl.dtype))
    return chosen


def exact_gradient(impl):
    """The exact gradient an implementation is checked with against the reference's adjoint: its own where exact
    (autograd in torch and JAX), else its adjoint where it has one, else None (not checked)."""
    if impl.registration.exact_gradient:
        return impl.registration.own_gradient
    return registry.ADJOINT if registry.ADJOINT in impl.registration.gradients else None


def model_checks(impls, problem: Problem, rng, objectives):
    """Beams, objective, gradients and Hessian of every implementation against the NumPy reference (the Hessian
    of those whose registration declares one), at random parameters, on the problem's maps."""
    reference = Implementation(registry.reference().name)
    npix, nzern, data = problem.npix, problem.nzern, problem.data
    setup_np = problem.reference
    params = random_params(rng, setup_np.nparams)
    beams_np = reference.package.beam_maps(params, setup_np)
    checks = []
    for objective in objectives:
        nll_np, adjoint = reference.package.value_and_grad(params, setup_np, data, objective=objective,
                                                           gradient="adjoint")
        numeric = central_differences(functools.partial(reference.package.negative_log_likelihood, setup=setup_np,
                                                        data=data, objective=objective), params)
        error = float(np.max(np.abs(adjoint - numeric)) / np.max(np.abs(numeric)))
        checks.append(check("gradient", npix, nzern, f"{reference.label} adjoint vs central differences", error,
                            "gradient", objective))
        for impl in model_variants(impls):
            setup = problem.setup_for(impl)
            suffix = "" if impl.dtype == "float64" else "_float32"
            nll = impl.package.negative_log_likelihood(params, setup, data, objective=objective)
            compare = f"{impl.label} vs {reference.label}"
            checks.append(check("objective", npix, nzern, compare, abs(nll - nll_np) / abs(nll_np), "nll" + suffix,
                                objective))
            exact = exact_gradient(impl)
            if impl.dtype == "float64" and exact is not None:
                _, grad = impl.package.value_and_grad(params, setup, data, objective=objective, gradient=exact)
                checks.append(check("gradient", npix, nzern, f"{impl.label} {exact} vs {reference.label} adjoint",
                                    relative(grad, adjoint), "adjoint", objective))
                if impl.registration.hessian:
                    hessian = impl.package.hessian(params, setup, data, objective=objective)
                    hessian_np = reference.package.hessian(params, setup_np, data, objective=objective)
                    checks.append(check("hessian", npix, nzern, f"{impl.label} {exact} vs {reference.label} "
                                        "differences of adjoint", relative(hessian_np, hessian), "hessian", objective))
    for impl in model_variants(impls):
        suffix = "" if impl.dtype == "float64" else "_float32"
        beams = to_numpy(impl.package.beam_maps(params, problem.setup_for(impl)))
        checks.append(check("beams", npix, nzern, f"{impl.label} vs {reference.label}", relative(beams, beams_np),
                            "beams" + suffix))
    return checks


FIT_TOL = TOL
"""BFGS tolerance of the cross-check's fits, in log-likelihood units (see fit_tolerance)."""


def fit_tolerance(problem: Problem):
    """The gradient tolerance that stops a fit at the optimum: FIT_TOL for the Cauchy likelihood; for least
    squares FIT_TOL x 2 S / (pixels - parameters) at the truth, i.e. FIT_TOL on the gradient of the Gaussian
    likelihood with the residual variance. The sweep's tol of 1e-8 on the unscaled sum of squares (S ~ 1e-6)
    stops BFGS 0.1-0.6 standard errors short of it, and two minimizers then stop at different places."""
    objective, truth = problem.objective, problem.truth
    if objective.likelihood:  # Cauchy, or least squares in noise units
        return FIT_TOL
    value = reference_numpy.negative_log_likelihood(truth, problem.reference, problem.data, objective=objective)
    return FIT_TOL * objective.covariance_scale(value, problem.data.size, len(truth))


def point_optimum(problem: Problem, x):
    """The optimum the point's fits are compared at (untimed): the NumPy fit's end polished by exact Newton steps,
    with its sandwich covariance (optimum.polish)."""
    observed = reference_numpy.prepare_data(problem.data, problem.reference)
    return optimum.polish(reference_numpy, x, problem.reference, observed, problem.gamma, problem.objective)


def fit_checks(impls, simulated: Problem, objectives):
    """Fit with every float64 implementation from the truth, each with its own gradient and minimizer, and
    record each fit once under the label of what ran, with its distance from the point's optimum (the NumPy fit
    polished, untimed; standard errors, Mahalanobis) and its time to within optimum.TARGET of it from its trajectory;
    compare each with the NumPy fit by the Mahalanobis distance under the optimum's covariance, and record how
    each fit ended."""
    fits, checks = [], []
    npix, nzern, truth, data = simulated.npix, simulated.nzern, simulated.truth, simulated.data
    for objective in objectives:
        problem = simulated.under(objective)
        tolerance = fit_tolerance(problem)
        fitted = [(impl, *timed_fit(impl, problem, tolerance)) for impl in impls if impl.dtype == "float64"]
        reference = next(result for impl, result, _ in fitted if impl.series == Series(registry.reference().name))
        scale = objective.covariance_scale(float(reference.fun), data.size, len(truth))
        best = point_optimum(problem, reference.x)
        for impl, result, seconds in fitted:
            fits.append({"impl": impl.name, "dtype": impl.dtype, "variant": impl.gradient,
                         "minimizer": impl.minimizer, "gradient": impl.gradient_name,
                         "npix": npix, "nzern": nzern, "objective": objective.name, "tol": tolerance,
                         "x": result.x.tolist(), "stderr_bfgs": bfgs_standard_errors(result).tolist(),
                         "fun": float(result.fun), "nit": int(result.nit), "nfev": int(result.nfev),
                         "success": bool(result.success), "message": str(result.message), "fit_s": seconds,
                         "convergence": convergence(result.x, problem)}
                        | ({"optimum": best.record()} if result is reference else {})
                        | {"distance": optimum.finite_or_none(best.distances(np.array(result.x))[0]),
                           "target_s": optimum.time_to_target(0.0, result.trajectory, best)})
            if result is not reference:
                labels = f"{impl.series.label} vs {Series(registry.reference().name).label}"
                checks.append(check("fit parameters", npix, nzern, f"{labels} (Mahalanobis, standard errors of the "
                                    "point's optimum)", mahalanobis(result.x, reference.x, best.covariance),
                                    "fit_stderr", objective))
                checks.append(check("fit objective", npix, nzern, f"{labels} (log-likelihood units)",
                                    abs(float(result.fun) - float(reference.fun)) / scale, "fit_nll", objective))
    return checks, fits


def timed_fit(impl, problem: Problem, tolerance):
    """One implementation's fit of the problem from its truth, timed (the fit alone: its setup made before), with
    its trajectory: (result, seconds)."""
    setup, gamma, objective = problem.setup_for(impl), problem.gamma, problem.objective
    options = impl.fit_keywords(problem, problem.truth)
    watch = FitWatch(trajectory=True)
    start = time.perf_counter()
    result = impl.package.fit(setup, problem.data, problem.truth, tol=tolerance, gamma=gamma, objective=objective,
                              gradient=impl.gradient_name, **options, callback=watch)
    impl.synchronize()
    seconds = time.perf_counter() - start
    return watch.finish(result, setup.nparams), seconds


EXAMPLE_POINT, EXAMPLE_RADIANS, EXAMPLE_SEED = (128, 4), 0.5, 3
"""The fit the report shows: half a radian of coma and astigmatism, retrieved from zero aberration."""


def example_fit(results_dir, npix=EXAMPLE_POINT[0], nzern=EXAMPLE_POINT[1]):
    """Fit an aberrated observation from zero with torch; save data, model beams and parameters (npz)."""
    reference, impl = Implementation(registry.reference().name), Implementation(registry.TORCH_CPU.name)
    setup_np = reference.make_setup(npix, nzern)
    truth = aberrated_params(setup_np, EXAMPLE_RADIANS)
    data = simulate_observation(setup_np, truth, EXAMPLE_SEED)
    result = impl.package.fit(impl.make_setup(npix, nzern), data, true_params(setup_np.nparams))
    model = reference.package.beam_maps(result.x, setup_np)
    with atomic_stream(results_dir / "example.npz") as stream:
        np.savez_compressed(stream, data=data, model=model, truth=truth, fitted=result.x,
                            stderr=bfgs_standard_errors(result), npix=npix, nzern=nzern, nit=result.nit)


def run_crosscheck(results_dir, points="default", threads=2, seed=7, objectives=(CAUCHY, LEAST_SQUARES)):
    """Run every check at every point, writing crosscheck.json (atomically) after each point; return its content.

    An unfinished crosscheck.json of the same --points is resumed: its finished points are kept, not redone.
    Each point draws its random parameters from its own seeded generator, so a resumed run checks the same ones.
    """
    impls = [impl for impl in every() if impl.available()]
    path = results_dir / "crosscheck.json"
    previous = read_crosscheck_record(path)
    with thread_limits(threads):
        names = [objective.name for objective in objectives]
        resumable = previous and (previous.get("points"), previous.get("schema"), previous.get("objectives")) == (
            points, SCHEMA, names)
        content = previous if resumable else {
            "environment": environment_record(threads), "schema": SCHEMA, "points": points,
            "objectives": names, "tolerances": TOLERANCES,
            "fd_step": CENTRAL_DIFFERENCE_STEP, "checks": [], "fits": [], "done": [], "complete": False,
            "unavailable": [r.name for r in registry.registrations() if not r.peer and not r.available()]}
        for npix, nzern in POINTS[points]:
            if [npix, nzern] in content["done"]:
                continue
            problem = Problem.simulated(npix, nzern, objectives[0])
            rng = np.random.default_rng([seed, npix, nzern])
            content["checks"] += model_checks(impls, problem, rng, objectives)
            more_checks, more_fits = fit_checks(impls, problem, objectives)
            content["checks"] += more_checks
            content["fits"] += more_fits
            content["done"].append([npix, nzern])
            write_json(path, content)
        example_fit(results_dir, *(POINTS[points][-1] if points == "smoke" else EXAMPLE_POINT))
    content["complete"] = True
    write_json(path, content)
    return content

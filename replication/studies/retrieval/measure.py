"""Retrieval from a cold start: truths with random aberrations of a given rms phase over the dish, fitted from zero
aberration by each implementation, each judged against a fit of the same data started at the truth
(replication.studies.retrieval.read). Resumable truth by truth; deterministic from the seeds."""

import dataclasses

import numpy as np

import reference_numpy
from oof_common.constants import GAMMA, N_ILLUMINATION
from oof_common.limits import TOL
from replication.core import measurement, optimum, registry, timing
from replication.core.environment import environment_record, thread_limits
from replication.core.implementations import of as implementation
from replication.core.objectives import CAUCHY
from replication.core.problem import Problem
from replication.core.records import as_written
from replication.core.results import append_record
from replication.core.simulation import simulate_observation, true_params
from replication.core.timing import fit_outcome
from replication.studies.retrieval.profiles import JUDGE, METHODS, RETRIEVAL_PROFILES
from replication.studies.retrieval.records import (
    FROM_TRUTH,
    STAGED,
    check_retrieval_record,
    read_retrieval,
)

IDENTITY = ("profile", "tol", "threads", "hostname", "cpu", *registry.version_keys())
"""What a retrieval folder's fits are measured under: its settings, the host and the trees' versions."""
STAMPED = ("profile", "tol", "threads")
"""The settings every fit's record carries: a folder whose settings.json and runs.jsonl were lost
still refuses to resume under others."""
FIRST_STAGE = 2
"""The Zernike order a staged fit starts from (defocus and astigmatism, the largest terms of a real dish)."""

OBJECTIVE = CAUCHY
"""What retrieval fits: the Cauchy likelihood, whose gamma is the constant GAMMA (the paper's)."""


def aberrated_truth(setup, rms, seed):
    """A truth with random Zernike coefficients (numpy default_rng(seed), standard normal) scaled to `rms` radians
    rms phase over the dish pixels; illumination as the paper's truth (centred, amplitude 1)."""
    params = true_params(setup.nparams)
    coeffs = np.random.default_rng(seed).standard_normal(setup.basis.shape[0])
    params[:-N_ILLUMINATION] = coeffs * rms / np.sqrt(np.mean((coeffs @ setup.basis) ** 2))
    return params


def phase_error_rms(x, truth, basis):
    """Radians rms over the dish pixels of the fitted phase minus the true one."""
    error = (np.asarray(x[:-N_ILLUMINATION]) - truth[:-N_ILLUMINATION]) @ basis
    return float(np.sqrt(np.mean(error**2))) if np.all(np.isfinite(error)) else None


def phase_stderr_rms(x, setup, data):
    """Radians rms over the dish pixels of the phase's standard error at x: the sandwich covariance C of the
    parameters (H^-1 J H^-1, exact Hessian and per-pixel scores), each pixel's variance b^T C b over its Zernike
    terms b."""
    hessian = reference_numpy.hessian(x, setup, data)
    inverse = np.linalg.inv(hessian)
    covariance = inverse @ reference_numpy.score_covariance(x, setup, data) @ inverse
    zernike = covariance[:-N_ILLUMINATION, :-N_ILLUMINATION] * OBJECTIVE.covariance_scale(0.0, data.size, len(x))
    return float(np.sqrt(np.mean(np.einsum("ip,ij,jp->p", setup.basis, zernike, setup.basis))))


def staged_start(previous, nparams):
    """The start of the next order's fit from the last one's parameters: its coefficients, zeros for the new
    terms, its illumination."""
    start = np.zeros(nparams)
    start[:len(previous) - N_ILLUMINATION] = previous[:-N_ILLUMINATION]
    start[-N_ILLUMINATION:] = previous[-N_ILLUMINATION:]
    return start


def timed_fit(impl, problem: Problem, p0, tol):
    """(seconds for setup + fit, seconds before the fit's first evaluation, scipy result with its trajectory) of one
    fit (timing.timed_fit)."""
    setup_s, fit_s, result = timing.timed_fit(impl, problem, p0, tol, trajectory=True)
    return setup_s + fit_s, setup_s, result


def staged_fit(impl, problem: Problem, tol):
    """Fit orders FIRST_STAGE, ..., nzern in turn from zero aberration, each from the last one's result: (total
    seconds, seconds before the last stage's fit began, the last result with iterations and evaluations summed over
    the stages; its trajectory the last stage's, the only one with every parameter)."""
    total, nit, nfev, params, before_last = 0.0, 0, 0, None, 0.0
    for order in range(min(FIRST_STAGE, problem.nzern), problem.nzern + 1):
        stage = problem.at_order(order)
        nparams = stage.reference.nparams
        p0 = true_params(nparams) if params is None else staged_start(params, nparams)
        seconds, setup_s, result = timed_fit(impl, stage, p0, tol)
        before_last = total + setup_s
        total, nit, nfev, params = total + seconds, nit + int(result.nit), nfev + int(result.nfev), result.x
    result.nit, result.nfev = nit, nfev
    return total, before_last, result


def folded(params, amp_index):
    """Parameters with amp's sign folded to positive: amp -> -amp leaves every beam unchanged (MODEL.md), so a fit
    at amp ~ -1 is the same solution as one at amp ~ 1. params: (P,) or (n, P)."""
    params = np.array(params, dtype=np.float64)
    params[..., amp_index] = np.abs(params[..., amp_index])
    return params


def judge_optimum(problem: Problem, x):
    """The optimum a truth's cold starts are judged against (untimed): the truth-started fit's end polished by exact
    Newton steps, with its sandwich covariance (optimum.polish, NumPy's exact adjoint and Hessian)."""
    observed = reference_numpy.prepare_data(problem.data, problem.reference)
    return optimum.polish(reference_numpy, x, problem.reference, observed, GAMMA, OBJECTIVE)


def against_judge(record, before_s, result, best, amp_index):
    """A cold start's record with its distance (standard errors, Mahalanobis, amp folded) from the judge's optimum
    at its end, and its time to solution: the time of its first evaluation within optimum.TARGET of it (None where
    it never came that close: censored at its total time)."""
    if not best.polished:
        return record | {"distance": None, "target_s": None}
    trajectory = dict(result.trajectory) | {"params": folded(result.trajectory["params"], amp_index)}
    return record | {"distance": optimum.finite_or_none(best.distances(folded(result.x, amp_index))[0]),
                     "target_s": optimum.time_to_target(before_s, trajectory, best)}


def retrieval_record(series, start, truth_point, problem: Problem, seconds, result):
    """The JSON-ready record of one fit of a truth."""
    npix, nzern, rms, seed = truth_point
    return {"impl": series.impl, "dtype": series.dtype, "gradient": series.gradient, "minimizer": series.minimizer,
            "npix": npix, "nzern": nzern, "rms": rms, "seed": seed, "start": start,
            "truth": [float(v) for v in problem.truth], "data_sha256": problem.fingerprint, "total_s": seconds,
            "outcome": fit_outcome(result, problem),
            "phase_error_rms": phase_error_rms(result.x, problem.truth, problem.reference.basis)}


def fit_truth(truth_point, todo, tol, warmed, judge=None):
    """Every fit of one truth still to make, the judge (from the truth) first: yields each record as it ends. The
    judge's record holds the optimum (polished, untimed) the cold starts are judged against; judge: the judge's
    record where it was fitted before (a resumed run; its optimum polished again where it holds none)."""
    npix, nzern, rms, seed = truth_point
    setup = reference_numpy.make_setup(npix, nzern)
    truth = aberrated_truth(setup, rms, seed)
    problem = Problem.on(setup, OBJECTIVE, truth, simulate_observation(setup, truth, seed))
    best = None
    if judge is not None:
        best = (optimum.Optimum.of(judge.optimum) if judge.optimum else judge_optimum(problem, judge.outcome.x))
    for series, start in todo:
        impl = implementation(series)
        if (impl, npix, nzern) not in warmed:  # FFT plans, first touch of memory: not a cost of retrieval
            timing.warm_up(impl, problem, truth)
            warmed.add((impl, npix, nzern))
        if start == STAGED:
            seconds, before_s, result = staged_fit(impl, problem, tol)
        else:
            p0 = truth if start == FROM_TRUTH else true_params(setup.nparams)
            seconds, before_s, result = timed_fit(impl, problem, p0, tol)
        record = retrieval_record(series, start, truth_point, problem, seconds, result)
        if start == FROM_TRUTH:
            best = judge_optimum(problem, result.x)
            record |= {"phase_stderr_rms": phase_stderr_rms(result.x, setup, problem.data), "optimum": best.record()}
        else:
            record = against_judge(record, before_s, result, best, setup.amp_index)
        yield record


def run_retrieval(results_dir, profile="quick", threads=2, tol=TOL, quiet=False):
    """Run (or resume) the retrieval profile into results_dir/points.jsonl; returns the number of fits made now."""
    points_path = results_dir / "points.jsonl"
    with thread_limits(threads):
        environment = environment_record(threads) | {
            "kind": "retrieval", "profile": profile, "tol": tol,
            "profile_settings": dataclasses.asdict(RETRIEVAL_PROFILES[profile])}
    identity = {key: environment[key] for key in IDENTITY}
    measurement.check_identity(results_dir, identity, records=(points_path.name,))
    records = read_retrieval(points_path, repair=True)
    done = {record.key for record in records}
    judges = {record.truth_point: record for record in records if record.start == FROM_TRUTH}
    methods = [JUDGE, *METHODS]
    todo = {point: [m for m in methods if (*point, *m) not in done]
            for point in RETRIEVAL_PROFILES[profile].truths()}
    todo = {point: fits for point, fits in todo.items() if fits}
    count = sum(len(fits) for fits in todo.values())
    if not count:
        print(f"{points_path}: all fits of the {profile} retrieval profile are done; nothing to run")
        return 0
    measurement.record_identity(results_dir, identity)
    warmed = set()
    with measurement.measuring(results_dir, environment, threads, count, f"retrieval {profile}", "fit",
                               quiet) as (run_id, bar):
        for point, fits in todo.items():
            bar.set_postfix_str(f"npix={point[0]} nzern={point[1]} rms={point[2]:g} seed={point[3]}")
            for record in fit_truth(point, fits, tol, warmed, judges.get(point)):
                stamp = {"run_id": run_id} | {key: identity[key] for key in STAMPED}
                append_record(points_path, as_written(points_path, 0, record | stamp, check_retrieval_record))
                bar.update()
    return count


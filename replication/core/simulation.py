"""Simulated observations of the paper's scenario, made once with NumPy and fitted by every implementation."""

import functools

import numpy as np

import reference_numpy
from oof_common.validation import NotIdentifiable

MULTIPLICATIVE_NOISE = 0.01
"""Standard deviation of the multiplicative noise, a fraction of each pixel's beam power."""
ADDITIVE_NOISE = 0.024
"""Standard deviation of the additive noise, a fraction of the peak beam power."""


@functools.cache
def rank_deficiency(npix, nzern):
    """None where the (npix, nzern) problem is identifiable; else the NotIdentifiable error make_setup raises
    (its rank and parameter count): such a point is never timed, and records of it count for no verdict."""
    try:
        reference_numpy.make_setup(npix, nzern)
    except NotIdentifiable as error:
        return error
    return None


def identifiable(npix, nzern):
    """Whether make_setup accepts (npix, nzern) as identifiable (see rank_deficiency)."""
    return rank_deficiency(npix, nzern) is None


def true_params(nparams):
    """The paper's truth: no aberration, centred illumination, amplitude 1."""
    params = np.zeros(nparams)
    params[-1] = 1.0
    return params


def aberrated_params(setup, radians=0.3):
    """A truth with `radians` of both astigmatisms and both comas (needs nzern >= 3)."""
    params = true_params(setup.nparams)
    params[[2, 4, 6, 7]] = radians  # (n, l) = (2, -2), (2, 2), (3, -1), (3, 1): index j - 1 without the piston
    return params


def simulate_observation(setup, params, seed):
    """Beam maps of params with the paper's noise (multiplicative draw first), from numpy's default_rng(seed)."""
    beams = reference_numpy.beam_maps(params, setup)
    rng = np.random.default_rng(seed)
    multiplicative = rng.standard_normal(beams.shape)
    additive = rng.standard_normal(beams.shape)
    return beams * (1 + MULTIPLICATIVE_NOISE * multiplicative) + ADDITIVE_NOISE * beams.max() * additive


def bfgs_standard_errors(result):
    """Parameter standard errors from BFGS's inverse-Hessian estimate: a quasi-Newton approximation built from
    the fit's few steps, kept only to show how far it is from the exact ones."""
    return np.sqrt(np.clip(np.diag(result.hess_inv), 0, None))


STOPPED_AT_OPTIMUM = 0.1
"""Largest Newton step to the optimum, in standard errors (sandwich where recorded), for a fit to count as ended
at the optimum: what is left is then a tenth of the statistical error, the tolerance under which two fits count
as the same solution (claims.SAME_SOLUTION_STDERR). Finite-difference fits stop 0.01-0.06 sandwich standard
errors short at npix >= 256 (their gradient's accuracy); least-squares fits at tol = 1e-8, 0.1-0.6."""


SCORES_MAX_BYTES = 3 * 2**30
"""Most memory the per-pixel scores of a sandwich may take at once (bytes; score_covariance's max_bytes), in the
exact account of a fit's end and in a point's optimum (optimum.covariance_at): above it (npix 2048) their spread is
summed by blocks of parameters. Accounts recorded by older code may hold no sandwich errors above npix 1024."""


def convergence(x, problem):
    """Where a fit of problem (problem.Problem) ended, judged with the exact gradient and Hessian (the NumPy adjoint,
    float64, on the problem's reference setup).

    stderr: the inverse Hessian's standard errors (the likelihood's own: right only for its own noise);
    stderr_sandwich: the sandwich errors sqrt(diag(H^-1 J H^-1)) from the per-pixel scores, right whatever the
    noise; newton_stderr, newton_sandwich: the largest component of the Newton
    step to the optimum in each; expected_decrease: the objective's decrease that step promises, against
    rounding (eps |objective|), the smallest change a line search can see.
    """
    setup, data, gamma, objective = problem.reference, problem.data, problem.gamma, problem.objective
    value, grad = reference_numpy.value_and_grad(x, setup, data, gamma, objective=objective, gradient="adjoint")
    hessian = reference_numpy.hessian(x, setup, data, gamma, objective=objective)
    stderr = reference_numpy.standard_errors(hessian, objective.covariance_scale(value, data.size, len(x)))
    step = np.linalg.solve(hessian, grad)
    account = {"grad_norm": float(np.linalg.norm(grad)), "newton_stderr": float(np.max(np.abs(step) / stderr)),
               "expected_decrease": float(grad @ step / 2), "rounding": float(np.finfo(float).eps * abs(value)),
               "stderr": [float(v) for v in stderr]}
    scores = reference_numpy.score_covariance(x, setup, data, gamma, objective=objective, max_bytes=SCORES_MAX_BYTES)
    sandwich = reference_numpy.standard_errors(hessian, scores=scores)
    return account | {"stderr_sandwich": [float(v) for v in sandwich],
                      "newton_sandwich": float(np.max(np.abs(step) / sandwich))}

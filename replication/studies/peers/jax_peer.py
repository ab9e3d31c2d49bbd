"""The JAX peer: the same model and objectives in jax.numpy, differentiated by jax.value_and_grad under jax.jit.

A peer, not a third implementation tree: it answers "would JAX have done better?". It takes the geometry
(dish pixels, Zernike basis, defocus screens) from the NumPy reference's make_setup and re-implements only
what an evaluation computes, step for step as reference_numpy does, in float64; the loss is reference_numpy's own
object, its value written in jax.numpy (Loss.on). Its fit hands scipy's BFGS
the jitted value and gradient (jac=True), as torch_impl.fit does with autograd. Installed only by the nox
sessions that measure it (`nox -s peers`); `check_against_numpy` is its gate before any timing.

Importing it switches jax to float64 for the whole process (`jax_enable_x64`): its one side effect, needed before
any jax array is made.
"""

import dataclasses
import functools
import math

import jax
import numpy as np
import scipy.optimize

import reference_numpy
from oof_common.bfgs import FitProgress, FitStatus, start_inverse_hessian, stopped_by_callback
from oof_common.constants import GAMMA, N_ILLUMINATION
from oof_common.limits import TOL
from oof_common.validation import check_choice, check_data, check_matrix, check_params, check_positive
from reference_numpy.backend import from_fft_order, to_fft_order
from reference_numpy.losses import loss_of
from replication.core.objectives import DEFAULT

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402  (after float64 is enabled)

OBJECTIVE_TOLERANCE = 1e-12
"""Largest relative difference from NumPy's objective the peer may show before it is timed."""
GRADIENT_TOLERANCE = 1e-10
"""Largest difference from NumPy's exact gradient, relative to its largest component."""


@dataclasses.dataclass(frozen=True, eq=False)
class Setup:
    """The NumPy reference's setup with its arrays on JAX's default device (the CPU here)."""

    npix: int
    nzern: int
    box: tuple
    arrays: dict
    sigma: float
    rho: float
    diff: float

    @property
    def basis(self):
        """The Zernike basis (terms, dish pixels), as the trees' setups hold it."""
        return self.arrays["basis"]

    @property
    def nparams(self):
        return self.basis.shape[0] + N_ILLUMINATION


def make_setup(npix, nzern):
    """The geometry of an npix x npix problem of Zernike order nzern, from reference_numpy.make_setup."""
    reference = reference_numpy.make_setup(npix, nzern)
    arrays = {name: jnp.asarray(getattr(reference, name)) for name in ("x", "y", "index", "basis", "screens")}
    return Setup(npix=npix, nzern=nzern, box=reference.box, arrays=arrays, sigma=reference.sigma,
                 rho=reference.rho, diff=reference.diff)


def illumination(x, y, x0, y0, amp, sigma, rho, diff):
    """Gaussian illumination amplitude centred on (x0, y0), width sigma (dish radii)."""
    dx = x - x0
    dy = y - y0
    return amp * jnp.exp(-(dx**2 + dy**2 + rho * dx * dy + diff * (dx**2 - dy**2)) / (2 * sigma**2))


def model_power(params, arrays, npix, box, sigma, rho, diff):
    """The three model beams (beam-power units) in FFT order: reference_numpy.beams.model_power in jax."""
    coeffs, x0, y0, amp = params[:-N_ILLUMINATION], params[-3], params[-2], params[-1]
    amplitude = illumination(arrays["x"], arrays["y"], x0, y0, amp, sigma, rho, diff)
    field = amplitude * jnp.exp(1j * (coeffs @ arrays["basis"] + arrays["screens"]))
    grid = jnp.zeros((3, box[0] * box[1]), dtype=field.dtype).at[:, arrays["index"]].set(field).reshape(3, *box)
    beam = jnp.fft.ifft(jnp.fft.ifft(grid, n=npix, axis=-2), n=npix, axis=-1)
    return beam.real**2 + beam.imag**2


def objective_value(params, arrays, data, gamma, npix, box, sigma, rho, diff, objective):
    """The loss named objective (reference_numpy's, in jax.numpy) of params against data in FFT order, its constant
    included."""
    power = model_power(params, arrays, npix, box, sigma, rho, diff)
    loss = loss_of(objective).on(jnp)
    return loss.value(power - data, gamma) + loss.constant(math.prod(data.shape), gamma)


STATIC = ("gamma", "npix", "box", "sigma", "rho", "diff", "objective")
jitted_value = jax.jit(objective_value, static_argnames=STATIC)
jitted_value_and_grad = jax.jit(jax.value_and_grad(objective_value), static_argnames=STATIC)


def bound(function, setup, data, gamma, objective):
    """function of the parameters alone (a NumPy float64 vector), the rest of its arguments fixed."""
    return functools.partial(function, arrays=setup.arrays, data=data, gamma=gamma, npix=setup.npix, box=setup.box,
                             sigma=setup.sigma, rho=setup.rho, diff=setup.diff, objective=objective)


def prepared(setup, data, gamma, objective):
    """Checked inputs: data in FFT order as a jax array, gamma and objective validated."""
    if not isinstance(setup, Setup):
        raise ValueError(f"setup must be made by {__name__}.make_setup, got {type(setup).__qualname__}")
    maps, weights = check_data(data, setup.npix)
    if weights is not None:
        raise ValueError("data: the JAX peer compares every pixel of full (3, npix, npix) maps; it takes no mask and "
                         "no smaller maps")
    data = jnp.asarray(to_fft_order(maps))
    return data, check_positive("gamma", gamma), loss_of(objective).name


def beam_maps(params, setup):
    """The (3, npix, npix) model beams, centred (natural order), as a float64 NumPy array."""
    if not isinstance(setup, Setup):
        raise ValueError(f"setup must be made by {__name__}.make_setup, got {type(setup).__qualname__}")
    params = jnp.asarray(check_params(params, setup.nparams))
    power = model_power(params, setup.arrays, setup.npix, setup.box, setup.sigma, setup.rho, setup.diff)
    return from_fft_order(np.asarray(power, dtype=np.float64))


def negative_log_likelihood(params, setup, data, gamma=GAMMA, objective=DEFAULT):
    """The objective of the observed (3, npix, npix) maps, a float."""
    data, gamma, objective = prepared(setup, data, gamma, objective)
    params = jnp.asarray(check_params(params, setup.nparams))
    return float(bound(jitted_value, setup, data, gamma, objective)(params))


def autograd_objective(params, value_and_grad):
    """The objective and its JAX gradient as scipy wants them (a float and a float64 NumPy array)."""
    value, grad = value_and_grad(jnp.asarray(params))
    return float(value), np.asarray(grad, dtype=np.float64)


GRADIENTS = {"autograd": (autograd_objective, True)}
"""The peer's one gradient: jax.value_and_grad (reverse mode), as torch's autograd."""
DEFAULT_GRADIENT = "autograd"


def value_and_grad(params, setup, data, gamma=GAMMA, objective=DEFAULT, gradient=DEFAULT_GRADIENT):
    """The objective (a float) and its gradient (a float64 NumPy array)."""
    data, gamma, objective = prepared(setup, data, gamma, objective)
    check_choice("gradient", gradient, tuple(GRADIENTS))
    params = check_params(params, setup.nparams)
    return autograd_objective(params, bound(jitted_value_and_grad, setup, data, gamma, objective))


def gauss_newton_matrix(params, setup, data, gamma=GAMMA, objective=DEFAULT):
    """The (P, P) Gauss-Newton matrix at params: the NumPy reference's (reference_numpy.gauss_newton_matrix, on
    the same grid), so that a JAX fit can start from the matrix a tree's fit starts from (fit's start_hessian)."""
    if not isinstance(setup, Setup):
        raise ValueError(f"setup must be made by {__name__}.make_setup, got {type(setup).__qualname__}")
    return reference_numpy.gauss_newton_matrix(params, reference_numpy.make_setup(setup.npix, setup.nzern), data,
                                               gamma, objective)


def fit(setup, data, p0, *, tol=TOL, gamma=GAMMA, objective=DEFAULT, gradient=DEFAULT_GRADIENT, minimizer="scipy",
        callback=None, start_hessian=None):
    """scipy's BFGS from p0 with the jitted JAX value and gradient (jac=True); scipy's OptimizeResult. As in the
    trees, the minimizer sees the objective without its constant, and result.fun keeps it; callback(params) after
    every evaluation, a true return stopping the fit at the end of that iteration (status STOPPED), as the trees.
    start_hessian: None (scipy's identity) or a (P, P) curvature matrix BFGS starts from (its inverse), as the
    trees' fit takes one made once for many fits."""

    data, gamma, objective = prepared(setup, data, gamma, objective)
    check_choice("gradient", gradient, tuple(GRADIENTS))
    check_choice("minimizer", minimizer, ("scipy",))
    p0, tol = check_params(p0, setup.nparams, "p0"), check_positive("tol", tol)
    options = {} if start_hessian is None else {
        "hess_inv0": start_inverse_hessian(check_matrix("start_hessian", start_hessian, setup.nparams))}
    function = bound(jitted_value_and_grad, setup, data, gamma, objective)
    shift = loss_of(objective).constant(math.prod(data.shape), gamma)
    progress = FitProgress(callback=callback)

    def unshifted(params):
        progress.evaluated(params)
        value, grad = autograd_objective(params, function)
        return value - shift, grad

    result = scipy.optimize.minimize(unshifted, p0, method="BFGS", jac=True, tol=tol, callback=progress.iteration,
                                     options=options)
    result.fun = float(result.fun) + shift
    return stopped_by_callback(result) if result.status == FitStatus.SCIPY_STOPPED else result


def check_against_numpy(npix, nzern, objective=DEFAULT, seed=3):
    """The peer's gate: its objective and gradient against NumPy's (the exact adjoint) at a random point.
    Returns (relative objective difference, gradient difference relative to its largest component); raises
    AssertionError when either exceeds its tolerance."""
    rng = np.random.default_rng(seed)
    reference = reference_numpy.make_setup(npix, nzern)
    params = np.concatenate([rng.normal(0, 0.3, reference.nparams - N_ILLUMINATION), [0.05, -0.05, 1.1]])
    data = reference_numpy.beam_maps(params + rng.normal(0, 0.02, params.size), reference)
    value, grad = reference_numpy.value_and_grad(params, reference, data, objective=objective, gradient="adjoint")
    peer_value, peer_grad = value_and_grad(params, make_setup(npix, nzern), data, objective=objective)
    value_error = abs(peer_value - value) / abs(value)
    grad_error = float(np.max(np.abs(peer_grad - grad)) / np.max(np.abs(grad)))
    if value_error > OBJECTIVE_TOLERANCE or grad_error > GRADIENT_TOLERANCE:
        raise AssertionError(f"JAX peer disagrees with NumPy at npix {npix}, nzern {nzern}, {objective}: objective "
                             f"{value_error:.2e} (limit {OBJECTIVE_TOLERANCE:g}), gradient {grad_error:.2e} "
                             f"(limit {GRADIENT_TOLERANCE:g})")
    return value_error, grad_error

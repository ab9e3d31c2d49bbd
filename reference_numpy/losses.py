"""The objectives' arithmetic in NumPy: per loss, rho summed over the compared pixels, its derivative W = dL/dP for
the adjoint and its Gauss-Newton curvature, on the excess power e = P - data (beam-power units; pixels left out of
the comparison hold e = 0). The rule of each (name, scale, constant) is oof_common.losses'. A new loss is a class
here and in torch_impl/losses.py, each registered (register)."""

from __future__ import annotations

import copy

import numpy as np

from oof_common import losses as rules


class Loss(rules.Loss):
    """A loss's arithmetic. library: the array module its value is written in (NumPy here; the JAX peer hands
    jax.numpy through `on`, and so evaluates the same loss)."""

    library = np

    def on(self, library) -> Loss:
        """The same loss, its value written in another NumPy-like array module."""
        moved = copy.copy(self)
        moved.library = library
        return moved

    def value(self, excess, gamma, axis=None):
        """sum of rho(e) over `axis` (all pixels: None), in float64, without the constant."""
        raise NotImplementedError

    def value_and_weights(self, excess, gamma):
        """(sum of rho(e), w, factor), dL/dP = factor w per pixel, computed over `excess`, which it may overwrite
        (every full-grid pass then writes into memory already in use)."""
        raise NotImplementedError

    def curvature(self, excess, gamma):
        """c(e) = the Gauss-Newton weight of a pixel: rho'(e) / e (gauss_newton.py's docstring)."""
        raise NotImplementedError


LOG_GROUP = 8
"""How many factors 1 + s^2 log_sum multiplies before taking one logarithm."""


@np.errstate(over="ignore")
def log_sum(factors):
    """sum(log(q)) over every element of q >= 1 (float64), as the log of products of LOG_GROUP factors at a time:
    one logarithm per 8 pixels, where one per pixel costs more than the rest of the objective's arithmetic (torch:
    1.4 ms of 2.4 at npix 512 on one thread; the products, 0.3 ms). Each product is rounded at most 7 times (a
    relative 8e-16, an absolute 8e-16 in its logarithm), as small as the sum's own rounding; a product that
    overflows (a factor above 1e38, 1 + s^2 with s > 1e19) makes the sum infinite, and the sum is then taken term
    by term."""
    flat = factors.reshape(-1)
    grouped = flat.shape[0] // LOG_GROUP * LOG_GROUP
    rows = flat[:grouped].reshape(LOG_GROUP, -1)
    product = rows[0] * rows[1]
    for row in rows[2:]:
        product *= row
    total = np.log(product).sum() + np.log(flat[grouped:]).sum()
    return total if np.isfinite(total) else np.log(factors).sum()


def squares_sum(excess):
    """sum(e^2) (float64) in one pass: a dot product of e with itself, no array of squares made."""
    flat = excess.reshape(-1)
    return np.dot(flat, flat)


class Cauchy(Loss, rules.Cauchy):
    """rho = log1p((e / gamma)^2); W = 2 e / (gamma^2 + e^2), written with s = e / gamma as (2 / gamma) s / (1 + s^2);
    c = 2 / (gamma^2 + e^2), the weight of iteratively-reweighted least squares (positive where rho'' is not).
    value_and_weights (the exact adjoint's) sums the logarithms of 1 + s^2 by log_sum: rounding 1 + x costs each
    term at most half a unit in the last place of 1, no more than the float64 sum's own rounding; value, which the
    paper's finite differences evaluate, is the plain sum of log1p."""

    def value(self, excess, gamma, axis=None):
        return self.library.log1p((excess / gamma) ** 2).sum(axis=axis, dtype=np.float64)

    def value_and_weights(self, excess, gamma):
        excess /= gamma
        factors = excess * excess
        factors += 1
        value = log_sum(factors)
        excess /= factors
        return value, excess, 2 / gamma

    def curvature(self, excess, gamma):
        return 2 / (gamma**2 + excess * excess)


class LeastSquares(Loss, rules.LeastSquares):
    """rho = e^2; W = 2 e; c = 2."""

    def value(self, excess, gamma, axis=None):
        return (excess * excess).sum(axis=axis, dtype=np.float64)

    def value_and_weights(self, excess, gamma):
        return squares_sum(excess), excess, 2.0

    def curvature(self, excess, gamma):
        return np.full_like(excess, 2.0)


class Gaussian(Loss, rules.Gaussian):
    """rho = e^2 / (2 gamma^2); W = e / gamma^2; c = 1 / gamma^2."""

    def value(self, excess, gamma, axis=None):
        return (excess * excess).sum(axis=axis, dtype=np.float64) / (2 * gamma**2)

    def value_and_weights(self, excess, gamma):
        return squares_sum(excess) / (2 * gamma**2), excess, 1 / gamma**2

    def curvature(self, excess, gamma):
        return np.full_like(excess, 1 / gamma**2)


LOSSES: dict[str, Loss] = {}
"""The losses a fit can minimise, by name: the Cauchy negative log-likelihood (the default), the plain sum of
squared residuals the author's timing code fitted, least squares in units of the noise, and any registered since."""


def register(loss: Loss) -> Loss:
    """Make a loss available to every function of this tree under its name (objective=its name or the loss)."""
    if not isinstance(loss, Loss):
        raise ValueError(f"loss must be an instance of reference_numpy.losses.Loss, got {loss!r}")
    return rules.register(LOSSES, loss)


def loss_of(objective) -> Loss:
    """This tree's loss for an objective (a name, or any object with a registered name); ValueError otherwise."""
    return rules.loss_of(objective, LOSSES)


register(Cauchy())
register(LeastSquares())
register(Gaussian())

"""Each objective's rule, apart from its arithmetic: a fit minimises L = sum over the compared pixels of rho(e),
e = P - data the excess power (beam-power units), plus a constant that depends on no parameter.

A loss is one class per tree (its losses.py: rho summed, dL/dP for the adjoint, the Gauss-Newton curvature, in that
tree's array library) on top of a rule here (its name, title, scale rule and constant), registered in each tree
(register). rho(0) = 0 and rho'(0) = 0: a pixel left out of the comparison (its excess set to 0) adds nothing.
"""

from __future__ import annotations

import math
from typing import ClassVar

from .validation import check_choice


class Loss:
    """The rule of one objective. name: how options and records spell it; title: for people; gamma_from_noise (its
    scale rule): True where gamma is the noise's standard deviation estimated from the maps, False where it is a
    fixed width (constants.GAMMA) or unused; likelihood: True where L is a negative log-likelihood, so that its
    inverse Hessian is the covariance (else the covariance takes the residual variance's factor)."""

    name: ClassVar[str]
    title: ClassVar[str]
    gamma_from_noise: ClassVar[bool] = False
    likelihood: ClassVar[bool] = True

    def constant(self, pixels: float, gamma: float) -> float:
        """The part of L that depends on no parameter, for `pixels` compared pixels (none unless a loss says)."""
        return 0.0

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Cauchy(Loss):
    """The Cauchy negative log-likelihood of width gamma: rho(e) = log(1 + (e / gamma)^2), and the constant
    log(pi gamma) per compared pixel."""

    name = "cauchy"
    title = "the Cauchy likelihood (our default)"

    def constant(self, pixels: float, gamma: float) -> float:
        return pixels * math.log(math.pi * gamma)


class LeastSquares(Loss):
    """The author's timing code's objective: rho(e) = e^2 (beam-power units squared), gamma unused; not a
    likelihood."""

    name = "least-squares"
    title = "least squares as published (the author's unscaled sum)"
    likelihood = False


class Gaussian(Loss):
    """Least squares in units of the noise: rho(e) = e^2 / (2 gamma^2), gamma the noise's standard deviation; the
    Gaussian negative log-likelihood without its constant."""

    name = "gaussian"
    title = "least squares in noise units"
    gamma_from_noise = True


def register(losses: dict, loss: Loss) -> Loss:
    """Add a tree's loss to its registry (losses: {name: loss}) under its rule's name; a name taken by another
    class is refused."""
    if not isinstance(loss, Loss) or not getattr(type(loss), "name", ""):
        raise ValueError(f"loss must be an instance of a Loss with a name, got {loss!r}")
    held = losses.get(loss.name)
    if held is not None and type(held) is not type(loss):
        raise ValueError(f"loss name {loss.name!r} is taken by {type(held).__qualname__}")
    losses[loss.name] = loss
    return loss


def loss_of(objective, losses: dict) -> Loss:
    """The registered loss an objective names (its name, or any object with a registered .name: a loss of either
    tree, the harness's Objective); a ValueError naming the choices otherwise."""
    name = getattr(objective, "name", objective)
    return losses[check_choice("objective", name, tuple(losses))]

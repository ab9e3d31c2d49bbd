"""The objectives a fit minimises, each a value: its name as the trees spell it (and records store), its title for
people, how its gamma is chosen, whether it is a likelihood, and the sweep folder that holds its fits. Each is made
from a loss the trees register (reference_numpy.losses; its rule in oof_common.losses), so a loss registered there
is an objective here too. Code compares these values; a record's string becomes one through objective_of."""

import dataclasses

import numpy as np

from oof_common.constants import GAMMA
from reference_numpy import losses

BORDER = 8
"""The band along each map's edges (a grid's eighth, at least this many pixels) whose spread gives the noise of
the least squares in noise units."""
MAD_TO_SIGMA = 1.482602218505602
"""The median absolute deviation of Gaussian noise times this is its standard deviation."""


def border_band(shape, width):
    """True on the pixels within `width` of a (rows, cols) map's edge."""
    band = np.ones(shape, dtype=bool)
    band[width:-width, width:-width] = False
    return band


def robust_sigma(values) -> float:
    """The standard deviation of Gaussian values from their median absolute deviation."""
    return MAD_TO_SIGMA * float(np.median(np.abs(values - np.median(values))))


def noise_sigma(data) -> float:
    """The noise's standard deviation (beam-power units) estimated from the maps themselves: 1.4826 times the median
    absolute deviation of the pixels within max(8, npix / 8) of the edges, where the simulated beams have fallen to
    the additive noise, the median over the three maps."""
    maps = np.asarray(data)
    band = border_band(maps.shape[-2:], max(BORDER, maps.shape[-1] // 8))
    return float(np.median([robust_sigma(m[band]) for m in maps]))


@dataclasses.dataclass(frozen=True)
class Objective:
    """One objective: name (the trees' `objective=`), title (the report's), gamma_from_noise (its gamma is the maps'
    noise, else constants.GAMMA), likelihood (its inverse Hessian is the covariance; else the plain least squares,
    scaled by the residual variance), folder_suffix (of its sweep folders). Made from a loss (of_loss)."""

    name: str
    title: str
    gamma_from_noise: bool = False
    likelihood: bool = True
    folder_suffix: str = ""

    @classmethod
    def of_loss(cls, loss) -> "Objective":
        """The objective of a registered loss: its rule's name, title, scale rule and likelihood; its sweep folders
        end in -<name>, the default loss's in nothing."""
        suffix = "" if loss.name == DEFAULT else f"-{loss.name}"
        return cls(loss.name, loss.title, loss.gamma_from_noise, loss.likelihood, suffix)

    def __str__(self) -> str:
        return self.name

    def gamma(self, data) -> float:
        """The gamma a fit of this objective takes on data: the Cauchy width (constants.GAMMA), or for least squares
        in noise units the noise's standard deviation estimated from the maps (noise_sigma); unused by the plain
        least squares."""
        return noise_sigma(data) if self.gamma_from_noise else GAMMA

    def covariance_scale(self, value: float, pixels: int, nparams: int) -> float:
        """The factor of the inverse Hessian that gives the covariance: 1 for a likelihood; for the plain least
        squares, 2 S / (pixels - parameters) (a Gaussian likelihood with the residual variance)."""
        return 1.0 if self.likelihood else 2 * value / (pixels - nparams)

    def sweep_folder(self, profile: str) -> str:
        """sweep-<profile>, with -<objective> for an objective other than the Cauchy likelihood."""
        return f"sweep-{profile}{self.folder_suffix}"


DEFAULT = "cauchy"
"""The trees' default loss: the Cauchy likelihood."""
CAUCHY, GAUSSIAN, LEAST_SQUARES = (Objective.of_loss(losses.loss_of(name))
                                   for name in ("cauchy", "gaussian", "least-squares"))
BY_NAME = {objective.name: objective for objective in (CAUCHY, GAUSSIAN, LEAST_SQUARES)}
"""The built-in objectives, in the report's order, by name."""


def objective_names() -> tuple[str, ...]:
    """Every objective's name, in the trees' registry's order (the command line's choices, a cross-check's
    default): the built-in ones and any loss registered since."""
    return tuple(losses.LOSSES)


def objectives() -> tuple[Objective, ...]:
    """Every objective, in objective_names' order: the command line's choices."""
    return tuple(objective_of(name) for name in objective_names())


def objective_of(name: "str | Objective") -> Objective:
    """The Objective a record's (or an option's) name stands for; a ValueError naming it where it is none."""
    if isinstance(name, Objective):
        return name
    if name in BY_NAME:
        return BY_NAME[name]
    if name not in losses.LOSSES:
        raise ValueError(f"objective: {name!r} is not one of {', '.join(objective_names())}")
    return Objective.of_loss(losses.LOSSES[name])


def of_sweep_folder(folder_name: str) -> Objective:
    """The objective of a sweep folder's name (sweep_folder's inverse)."""
    return next((o for o in BY_NAME.values() if o.folder_suffix and folder_name.endswith(o.folder_suffix)), CAUCHY)

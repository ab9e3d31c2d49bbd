"""The objectives a fit minimises, each a value: its name as the trees spell it (and records store), its title for
people, how its gamma is chosen, whether it is a likelihood, and the sweep folder that holds its fits. Code compares
these values; a record's string becomes one through objective_of."""

import dataclasses

import numpy as np

from reference_numpy.constants import GAMMA, OBJECTIVES

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
    scaled by the residual variance), folder_suffix (of its sweep folders)."""

    name: str
    title: str
    gamma_from_noise: bool = False
    likelihood: bool = True
    folder_suffix: str = ""

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


CAUCHY = Objective("cauchy", "the Cauchy likelihood (our default)")
GAUSSIAN = Objective("gaussian", "least squares in noise units", gamma_from_noise=True, folder_suffix="-gaussian")
LEAST_SQUARES = Objective("least-squares", "least squares as published (the author's unscaled sum)", likelihood=False,
                          folder_suffix="-least-squares")
BY_NAME = {objective.name: objective for objective in (CAUCHY, GAUSSIAN, LEAST_SQUARES)}
"""Every objective, in the report's order, by its name."""
assert set(BY_NAME) == set(OBJECTIVES), "an objective of the trees has no Objective here"


def objective_of(name: "str | Objective") -> Objective:
    """The Objective a record's (or an option's) name stands for; a ValueError naming it where it is none."""
    if isinstance(name, Objective):
        return name
    if name not in BY_NAME:
        raise ValueError(f"objective: {name!r} is not one of {', '.join(BY_NAME)}")
    return BY_NAME[name]


def of_sweep_folder(folder_name: str) -> Objective:
    """The objective of a sweep folder's name (sweep_folder's inverse)."""
    return next((o for o in BY_NAME.values() if o.folder_suffix and folder_name.endswith(o.folder_suffix)), CAUCHY)

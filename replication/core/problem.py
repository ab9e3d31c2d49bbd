"""One problem a fit solves: the grid, the Zernike order, the objective and the maps fitted (with the truth they
were simulated from), made once at a point and handed to everything that measures it there."""

import dataclasses
import functools
import hashlib

import numpy as np

import reference_numpy
from replication.core.objectives import Objective
from replication.core.simulation import simulate_observation, true_params

SEED = 1
"""Seed of the simulated observation shared by every implementation at a point."""


def fingerprint(data) -> str:
    """A short hash of the data's bytes: every implementation at a point must show the same one."""
    return hashlib.sha256(np.ascontiguousarray(data).tobytes()).hexdigest()[:16]


@dataclasses.dataclass(frozen=True, eq=False)
class Problem:
    """npix x npix model grid, Zernike order nzern, the objective, the maps (data: 3 x npix x npix beam powers) and
    the truth they were simulated from. Setups made for untimed work (an implementation's warm-up, its evaluation
    time, the exact account of a fit's end) are made once and shared by the problems derived from this one (of
    another order or objective); a timed fit builds its own, on its clock, as a user's script does."""

    npix: int
    nzern: int
    objective: Objective
    truth: np.ndarray
    data: np.ndarray
    setups: dict = dataclasses.field(default_factory=dict, repr=False)

    @classmethod
    def simulated(cls, npix: int, nzern: int, objective: Objective, seed: int = SEED) -> "Problem":
        """The paper's scenario at (npix, nzern): no aberration, its noisy maps made with NumPy from seed."""
        setup = reference_numpy.make_setup(npix, nzern)
        truth = true_params(setup.nparams)
        return cls.on(setup, objective, truth, simulate_observation(setup, truth, seed))

    @classmethod
    def on(cls, setup, objective: Objective, truth, data) -> "Problem":
        """The problem of maps made on setup (reference_numpy's, which the problem keeps as its reference)."""
        problem = cls(setup.npix, setup.nzern, objective, truth, data)
        problem.setups[("reference", setup.nzern)] = setup
        return problem

    @property
    def reference(self):
        """The NumPy reference's setup of the grid and order (float64, untimed work)."""
        return self.setup_of(("reference", self.nzern), lambda: reference_numpy.make_setup(self.npix, self.nzern))

    def setup_for(self, impl):
        """impl's setup of the grid and order (implementations.Implementation), made on first use, off any clock."""
        key = (impl.name, impl.dtype, impl.device, self.nzern)
        return self.setup_of(key, lambda: impl.make_setup(self.npix, self.nzern))

    def setup_of(self, key, make):
        """The setup kept under key, made by make() on first use."""
        if key not in self.setups:
            self.setups[key] = make()
        return self.setups[key]

    @functools.cached_property
    def gamma(self) -> float:
        """The objective's scale for these maps (Objective.gamma)."""
        return self.objective.gamma(self.data)

    @functools.cached_property
    def fingerprint(self) -> str:
        return fingerprint(self.data)

    def at_order(self, nzern: int) -> "Problem":
        """The same maps fitted at another Zernike order (the truth as it is: the maps' own)."""
        return dataclasses.replace(self, nzern=nzern)

    def under(self, objective: Objective) -> "Problem":
        """The same maps fitted under another objective."""
        return dataclasses.replace(self, objective=objective)

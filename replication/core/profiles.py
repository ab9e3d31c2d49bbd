"""What a sweep and the bench measure, without the measuring stack (no torch): the profiles, their grids and
budgets, the sweep's settings and folder names."""

import dataclasses

from oof_common.limits import TOL
from replication.core.objectives import CAUCHY, GAUSSIAN, LEAST_SQUARES, Objective
from replication.core.simulation import identifiable


@dataclasses.dataclass(frozen=True)
class Profile:
    """A sweep's grid: sizes, Zernike orders, repeats, the per-point budget (seconds: a repeat is started only
    while the point's fits so far, and one more as long as the longest of them, fit within it) and the time limit of
    each fit (seconds, the budget where not set: a fit still running then is stopped, its time a bound);
    least_squares_nzern, where set, the orders the author's unscaled least squares is timed at; variants_npix and
    variants_nzern, where set, the points of the gradient variants (and the orders of least squares in noise units:
    C4's)."""

    npix: tuple
    nzern: tuple
    repeats: int
    budget_s: float
    time_limit_s: float = None
    least_squares_nzern: tuple = None
    variants_npix: tuple = None
    variants_nzern: tuple = None

    @property
    def fit_limit_s(self):
        """Seconds after which a fit of the sweep is stopped."""
        return self.budget_s if self.time_limit_s is None else self.time_limit_s

    def orders(self, objective: Objective):
        """The Zernike orders timed for an objective."""
        if objective is GAUSSIAN and self.variants_nzern:
            return self.variants_nzern  # least squares in noise units at the orders C4 is judged at
        return self.least_squares_nzern if objective is LEAST_SQUARES and self.least_squares_nzern else self.nzern

    def points(self, impl, objective):
        """The (npix, nzern) points timed for an implementation: a gradient other than its own (a variant
        for the speed-up decomposition) only on the variants' subset, where the profile sets one."""
        sizes, orders = self.npix, self.orders(objective)
        if impl.gradient and self.variants_npix:
            sizes = [npix for npix in sizes if npix in self.variants_npix]
            orders = [nzern for nzern in orders if nzern in self.variants_nzern]
        return [(npix, nzern) for npix in sizes for nzern in orders if identifiable(npix, nzern)]

    def unidentifiable(self):
        """The (npix, nzern) of the grid that make_setup refuses as not identifiable, never timed."""
        return [(npix, nzern) for npix in self.npix for nzern in sorted(set(self.nzern) | set(self.orders(
            LEAST_SQUARES))) if not identifiable(npix, nzern)]


PROFILES = {
    "smoke": Profile(npix=(16, 32), nzern=(2, 3), repeats=1, budget_s=10.0),
    "quick": Profile(npix=(32, 64, 128, 256, 512), nzern=(2, 3, 4, 6, 8), repeats=3, budget_s=45.0,
                     time_limit_s=150.0, least_squares_nzern=(2, 3, 4), variants_npix=(128, 256, 512),
                     variants_nzern=(2, 4, 6, 8)),
    "paper": Profile(npix=(32, 64, 128, 256, 512, 1024, 2048), nzern=tuple(range(2, 10)), repeats=5,
                     budget_s=300.0),
}


@dataclasses.dataclass(frozen=True)
class SweepSettings:
    """What a sweep measures and how, one object from the command line to every shard and to run_sweep.
    impls and gradients are implementation and gradient names (None: every available implementation, each with
    its own gradient); IDENTITY names the fields a resumed sweep must share with its records."""

    profile: str = "quick"
    objective: Objective = CAUCHY
    impls: tuple = None
    gradients: tuple = None
    threads: int = 2
    tol: float = TOL

    IDENTITY = ("profile", "objective", "tol", "threads")
    """What a sweep folder's series are measured under; implementations and gradients may be added to it."""

    @property
    def folder_name(self):
        return sweep_folder_name(self.profile, self.objective)

    @property
    def grid(self):
        """The profile (grid, repeats, budget) of the sweep."""
        return PROFILES[self.profile]


BENCH_NPIX, BENCH_NZERN = (128, 256, 512, 1024), (3, 5, 8)
"""The bench's default grid sizes and Zernike orders (one evaluation each, against the FFT floor)."""


def sweep_folder_name(profile: str, objective: Objective) -> str:
    """sweep-<profile> for the Cauchy likelihood, sweep-<profile>-<objective> for another objective."""
    return objective.sweep_folder(profile)


def describe_profiles():
    """One line per profile for --help."""
    return "; ".join(f"{name}: npix {p.npix}, nzern {p.nzern[0]}-{p.nzern[-1]}, up to {p.repeats} repeat(s) "
                     f"within {p.budget_s:g} s a point, each fit stopped at {p.fit_limit_s:g} s"
                     for name, p in PROFILES.items())



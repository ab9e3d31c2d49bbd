"""What a sweep measures and how its records read back, without the measuring stack (no torch): the profiles,
the folder names, and the validated point records."""

import dataclasses

from reference_numpy.constants import TOL
from replication.data import identifiable
from replication.results import NUMBER, check_record, read_records
from replication.series import Series


@dataclasses.dataclass(frozen=True)
class Profile:
    """A sweep's grid: sizes, Zernike orders, repeats, and the per-point budget (seconds) above which a
    point is estimated instead of run; least_squares_nzern, where set, the orders least squares is timed at
    (it takes several times more BFGS iterations than the Cauchy likelihood)."""

    npix: tuple
    nzern: tuple
    repeats: int
    budget_s: float
    least_squares_nzern: tuple = None
    variants_npix: tuple = None
    variants_nzern: tuple = None

    def orders(self, objective):
        """The Zernike orders timed for an objective."""
        return self.least_squares_nzern if objective == "least-squares" and self.least_squares_nzern else self.nzern

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
            "least-squares"))) if not identifiable(npix, nzern)]


PROFILES = {
    "smoke": Profile(npix=(16, 32), nzern=(2, 3), repeats=1, budget_s=10.0),
    "quick": Profile(npix=(32, 64, 128, 256, 512), nzern=(2, 3, 4, 6, 8), repeats=3, budget_s=150.0,
                     least_squares_nzern=(2, 3, 4), variants_npix=(128, 256, 512), variants_nzern=(2, 4, 6, 8)),
    "paper": Profile(npix=(32, 64, 128, 256, 512, 1024, 2048), nzern=tuple(range(2, 10)), repeats=5,
                     budget_s=300.0),
}


@dataclasses.dataclass(frozen=True)
class SweepSettings:
    """What a sweep measures and how, one object from the command line to every shard and to run_sweep.
    impls and gradients are implementation and gradient names (None: every available implementation, each with
    its own gradient); IDENTITY names the fields a resumed sweep must share with its records."""

    profile: str = "quick"
    objective: str = "cauchy"
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


def sweep_folder_name(profile, objective):
    """sweep-<profile> for the Cauchy likelihood, sweep-<profile>-least-squares for least squares."""
    return f"sweep-{profile}" + ("" if objective == "cauchy" else f"-{objective}")


POINT = {"impl": str, "dtype": str, "npix": int, "nzern": int, "nparams": int, "estimated": bool,
         "fit_s": {"median": NUMBER}}
"""What every point record holds; a measured one also holds MEASURED."""
MEASURED = {"setup_s": {"median": NUMBER}, "total_s": {"median": NUMBER},
            "outcome": {"nit": int, "nfev": int, "success": bool, "message": str, "fun": NUMBER, "x": list,
                        "stderr": list}}


ACCOUNT = {"newton_stderr": NUMBER, "expected_decrease": NUMBER, "rounding": NUMBER, "grad_norm": NUMBER,
           "stderr": list}
"""What an exact account of how a fit ended holds (where the outcome has one)."""


def check_point(path, number, record):
    """Validate a point record as read, to what the report uses: an error names the file, the line and the key."""
    check_record(path, number, record, POINT)
    try:
        Series.of(record)
    except ValueError:
        raise ValueError(f"{path}: line {number}: keys impl/dtype/gradient/minimizer name no known series "
                         f"({record.get('impl')!r}, {record.get('dtype')!r}, {record.get('gradient')!r}, "
                         f"{record.get('minimizer')!r})") from None
    times = ["fit_s"]
    if not record["estimated"]:
        check_record(path, number, record, MEASURED)
        times.append("total_s")
        if record["outcome"].get("convergence") is not None:
            check_record(path, number, record["outcome"]["convergence"], ACCOUNT)
    for key in times:
        if not record[key]["median"] > 0:
            raise ValueError(f"{path}: line {number}, key '{key}.median': a time must be positive, got "
                             f"{record[key]['median']}")


def read_points(path, repair=False):
    """The validated point records of a sweep's points.jsonl."""
    return read_records(path, repair=repair, check=check_point)


def point_key(record):
    """What identifies a point: implementation, precision, gradient variant, minimizer (its Series, older names
    read as today's), grid size and order."""
    series = Series.of(record)
    return series.impl, series.dtype, series.gradient, series.minimizer, record["npix"], record["nzern"]


def describe_profiles():
    """One line per profile for --help."""
    return "; ".join(f"{name}: npix {p.npix}, nzern {p.nzern[0]}-{p.nzern[-1]}, {p.repeats} repeat(s), "
                     f"points over {p.budget_s:g} s estimated" for name, p in PROFILES.items())



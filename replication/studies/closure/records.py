"""The closure test's records (studies.closure: measure, bound and pyoof_peer): one typed model
per kind, each checked as it is read and before it is written, and the read side's thresholds (10 um, 99%)."""

from __future__ import annotations

import pathlib
from typing import Annotated, Literal

import msgspec

from replication.core.records import (
    Count,
    GridSize,
    MaybeNumber,
    Number,
    Order,
    Orders,
    Record,
    Seconds,
    Seed,
    Vector,
    as_typed,
    check_vectors,
    read_typed,
)
from replication.core.reduction.scan_noise import WHITEN_MODES
from replication.core.results import RunError, read_records

Noise = Annotated[float, msgspec.Meta(gt=0)]
"""The maps' noise: a fraction of the in-focus peak."""

PYOOF_CLOSURE_FILE = "pyoof-closure.jsonl"
"""pyoof's fits of the closure test's maps: one line per seed as it ends (pyoof_peer --closure-seeds)."""


class PyoofClosureFit(Record, kw_only=True):
    """pyoof's reduction of one closure seed's maps (closure.maps.simulated_maps at npix), orders 1..max_order each
    from the last: its time to stop and evaluations over the orders, the orders stopped by its evaluation limit
    (status 0), whether every order succeeded, and the last order's parameters (its phase beside it, .npz)."""

    seed: Seed
    npix: GridSize
    max_order: Order
    seconds: Seconds
    nfev: Count
    limited: list[int]
    success: bool
    params: Vector
    pyoof: str
    noise: Noise


def check_pyoof_closure(path: pathlib.Path, number: int, record: dict) -> PyoofClosureFit:
    """A pyoof closure record as read, typed and validated."""
    fit = as_typed(path, number, record, PyoofClosureFit)
    check_vectors(path, number, {"params": fit.params}, len(fit.params))
    return fit


def read_pyoof_closure(path: pathlib.Path, repair: bool = False, strict: bool = False) -> list[PyoofClosureFit]:
    """pyoof's reductions of the closure seeds, typed, one per seed and grid (another grid makes other maps)."""
    return read_typed(path, check_pyoof_closure, lambda r: (r.seed, r.npix), "seed and grid", repair, strict)


WITHIN_UM = 10.0
"""A closure seed recovers the surface where the found surface lies within this rms (micrometres) of the known one."""
GOAL_SHARE = 0.99
"""The share of closure seeds that should recover the surface within WITHIN_UM: the reduction's goal."""
COVERAGE_GOAL = 0.9
"""Where a closure's truth goes beyond the fitted orders: the share of the dish over which the surface's error should
lie within 2 sigma of the stated total uncertainty (statistical and systematics)."""
TAPER_MATCH = 0.02
"""A closure seed's taper is found where the fitted one lies within this of the maps' (dish radii)."""
CLOSURE_FILE = "closure.jsonl"
"""A closure folder's records: one line per seed as it ends."""


Share = Annotated[float, msgspec.Meta(ge=0, le=1)]
"""A share of the dish or of the seeds, in [0, 1]."""


class Closure(Record, kw_only=True):
    """One seed of the closure test: the surface found against the known one (micrometres rms), the time the
    reduction took, the taper chosen against the one the maps were made with; the optimum a start at the truth
    reaches: the reduction's distance from it, how much lower its objective is, its own surface error, and the error
    the fit's covariance predicts (closure.certified); where the truth went beyond the fitted orders (truth_order),
    the order the rule chose, the truncation systematic and the share of the dish where the error is within 2 sigma
    of the statistical and of the total uncertainty (closure.covered)."""

    seed: Seed
    npix: GridSize
    orders: Orders
    sigma: Number
    true_sigma: Number
    seconds: Seconds
    success: bool
    surface_error_um: MaybeNumber
    truth_surface_um: Number
    x: Annotated[list[float], msgspec.Meta(min_length=1)]  # the writer writes numbers only: never a null here
    truth: Annotated[list[float], msgspec.Meta(min_length=1)]
    optimum_distance_se: MaybeNumber
    optimum_lower_by: MaybeNumber
    truth_start_error_um: MaybeNumber
    predicted_error_um: MaybeNumber
    truth_order: Order | None = None
    chosen_order: Order | None = None
    truncation_um: MaybeNumber = None
    misfit_um: MaybeNumber = None
    """The model's misfit as a surface (misfit.misfit), where coverage was measured."""
    covered_statistical: Share | None = None
    covered_total: Share | None = None
    noise: Noise
    panels_um: Annotated[float, msgspec.Meta(gt=0)] | None = None
    """The panel pistons' rms added to the known surface (micrometres), where the seed had them."""
    whiten: Literal[WHITEN_MODES]
    """Whether the seed's fits whiten the excess along the scans: yes, no or auto (where the border band's noise is
    that of scans, scan_noise.scans_whitened)."""
    noise_correlation: Vector
    """The border band's correlation of neighbouring noise samples along the maps' axis 0 and 1, as estimated."""
    whitened_along: Annotated[int, msgspec.Meta(ge=0, le=1)] | None
    """The maps' axis the fits whitened along, None where they did not."""


BOUND_FILE = "bound.jsonl"
"""A closure folder's Fisher predictions (studies.closure.bound): one line per seed as it ends."""


class ClosureBound(Record):
    """One closure seed's surface error as the Fisher information at its truth predicts it (bound.seed_bound): the
    rms (micrometres) and the share of draws within WITHIN_UM for least squares with white weights under the scan
    noise (ls) and for least squares prewhitened along the scans (bound: the Cramer-Rao bound)."""

    seed: Seed
    npix: GridSize
    noise: Annotated[float, msgspec.Meta(gt=0)]
    order: Order
    parameters: Annotated[int, msgspec.Meta(ge=1)]
    ls_rms_um: Annotated[float, msgspec.Meta(ge=0)]
    ls_share: Share
    bound_rms_um: Annotated[float, msgspec.Meta(ge=0)]
    bound_share: Share
    git_commit: str | None = None


def check_bound(path, number, record) -> ClosureBound:
    """One bound record as read, typed and validated."""
    return as_typed(path, number, record, ClosureBound)


def read_bound(path: pathlib.Path, repair: bool = False, strict: bool = False) -> list[ClosureBound]:
    """The Fisher predictions of a closure folder, typed, one per seed."""
    return read_typed(path, check_bound, lambda r: r.seed, "seed", repair, strict)


def read_closure(path: pathlib.Path, repair: bool = False) -> list[Closure]:
    """A closure folder's seeds (closure.jsonl), validated and typed."""
    found = []
    read_records(path, repair=repair, check=lambda *line: found.append(check_closure(*line)))
    return found


def check_closure(path, number, record) -> Closure:
    """One closure record as read, typed and validated: an error names the file, the line and the key."""
    seed = as_typed(path, number, record, Closure)
    beyond = seed.truth_order is not None and seed.truth_order > seed.orders[-1]
    if beyond and len(seed.truth) <= len(seed.x):
        raise RunError(f"{path}: line {number}, key 'truth': a truth of order {seed.truth_order} beyond the "
                       f"fitted {seed.orders[-1]} has more parameters than the fit's {len(seed.x)}")
    check_vectors(path, number, {"x": seed.x}, len(seed.x) if beyond else len(seed.truth))
    return seed

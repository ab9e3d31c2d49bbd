"""The real maps' records (real-maps/: stages, sources, tapers; pyoof's fits) and their readers."""

from __future__ import annotations

import json
import pathlib
from typing import Annotated, Literal

import msgspec

from replication.core.records import (
    Count,
    FitEnd,
    MaybeNumber,
    Number,
    Record,
    Seconds,
    Vector,
    check_typed,
    check_vectors,
    read_keyed,
)
from replication.core.results import RunError
from replication.studies.real_maps.closure_maps import NOISE
from replication.studies.sweep.records import series_of


class RealFit(Record):
    """One timed fit of a real-maps stage: target_s null where it never came within the target of the optimum (its
    time to solution is then a bound, total_s)."""

    impl: str
    dtype: str
    gradient: str
    minimizer: str
    repeat: Count
    prep_s: Annotated[float, msgspec.Meta(ge=0)]
    total_s: Seconds
    target_s: Seconds | None
    end_distance: MaybeNumber
    outcome: FitEnd


class StageOptimum(Record):
    x: Vector
    fun: MaybeNumber
    stderr: Vector
    newton_steps: Count
    last_step: MaybeNumber
    polished: bool


class RealMinimum(Record):
    impl: str
    dtype: str
    gradient: str
    minimizer: str
    fun: MaybeNumber
    polished: bool
    distance: MaybeNumber


class SeriesName(Record):
    """A series by its fields (core.series.Series)."""

    impl: str
    dtype: str
    gradient: str
    minimizer: str


class RealPair(Record):
    """Two series' fits of one stage (their first repeats), the Mahalanobis distance between their ends (standard
    errors, under the stage optimum's sandwich covariance)."""

    a: SeriesName
    b: SeriesName
    distance: MaybeNumber


class RealStage(Record):
    """One stage (source, Zernike order) of the real-maps fits: its start, its fits, each series' own minimum and
    the stage's optimum."""

    source: str
    order: Annotated[int, msgspec.Meta(ge=1)]
    start: Vector
    fits: list[RealFit]
    minima: list[RealMinimum]
    pairs: list[RealPair]
    optimum: StageOptimum


class Lag(Record):
    u: Number
    v: Number


class TermsEffect(Record):
    """What a source's per-map terms did (measure.terms_effect): which were fitted, their parameter count, how much
    lower the objective ends with them, how far the surface moves, and their fitted values by name."""

    terms: list[str]
    parameters: Count
    lower_by: MaybeNumber
    surface_difference_rms_um: Number
    values: dict[str, Vector]


class RealSource(Record):
    """What the report says of one source of real maps beside its fits (surface_displacement: "normal" where the
    surface is the primary's displacement along its normal, None for records before, taken at normal incidence)."""

    source: str
    title: str
    order: Annotated[int, msgspec.Meta(ge=1)]
    npix: int
    sigma: Number
    shape: list[int]
    step: Number
    wavelength: Number
    noise: Vector
    gamma: Number
    residual_rms: Vector
    residual_lag1: Lag
    surface_rms_um: Number
    surface_rms_without_focus_um: Number
    x: Vector
    surface_fits: str | None = None
    uncertainty_reach: Count | None = None
    uncertainty_median_um: MaybeNumber = None
    uncertainty_inflation: MaybeNumber = None
    multistart: MultiStart | None = None
    terms_effect: TermsEffect | None = None
    surface_displacement: Literal["normal"] | None = None


class Basin(Record):
    """One distinct minimum the random starts ended in: its objective, how many ended there, its surface's distance
    from the best one's (micrometres rms)."""

    fun: Number
    count: Count
    from_best_um: Number


class MultiStart(Record):
    """What a source's random starts found at its last order (multistart.basins): the best minimum, how many
    starts reached it, the distinct minima, the ladder's optimum against it, and disjoint groups of starts taken as
    independent multi-starts (each reaching the best where one of its starts did; its seconds the sum of its
    starts')."""

    starts: Count
    scale: Number
    same_um: Number
    best_fun: Number
    best_x: Vector
    reached_best: Count
    basins: list[Basin]
    ladder_fun: MaybeNumber
    ladder_from_best_um: MaybeNumber
    group: Count
    groups: Count
    groups_reaching: Count
    group_seconds: list[Number]
    threads: Count


class Stamp(Record):
    """The settings each real-maps record carries beside its maps' SHA-256 (key maps_sha256_<source>), since
    2026-12-03: what a resume compares where settings.json and runs.jsonl are lost."""

    npix: int
    orders: list[int]
    objective: str
    repeats: Count
    tol: Number
    tapers: list[Number]
    target: Number


def check_stamp(path, number, record):
    """A record's stamp (Stamp and its source's maps hash), where it carries one (records since 2026-12-03)."""
    key = "maps_sha256_" + str(record.get("source"))
    if key in record:
        check_typed(path, number, record, Stamp)
        if not isinstance(record[key], str):
            raise RunError(f"{path}: line {number}, key '{key}': expected str, got {json.dumps(record[key])[:80]}")


def check_real_stage(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a real-maps stage record as read: an error names the file, the line and the key."""
    check_typed(path, number, record, RealStage)
    check_stamp(path, number, record)
    size = len(record["optimum"]["x"])
    check_vectors(path, number, {"start": record["start"], "optimum.x": record["optimum"]["x"],
                                 "optimum.stderr": record["optimum"]["stderr"]}, size)
    for place, fit in enumerate(record["fits"]):
        series_of(path, number, fit)
        check_vectors(path, number, {f"fits[{place}].outcome.x": fit["outcome"]["x"]}, size)
        if fit["target_s"] is not None and not fit["target_s"] <= fit["total_s"]:
            raise RunError(f"{path}: line {number}, key 'fits[{place}].target_s': the time to the target must lie in "
                           f"(0, total_s = {fit['total_s']}], got {fit['target_s']}")
    for minimum in record["minima"]:
        series_of(path, number, minimum)
    for pair in record["pairs"]:
        series_of(path, number, pair["a"])
        series_of(path, number, pair["b"])


def check_real_source(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a real-maps source record as read."""
    check_typed(path, number, record, RealSource)
    check_stamp(path, number, record)
    check_vectors(path, number, {"noise": record["noise"], "residual_rms": record["residual_rms"]}, 3)


class RealTaper(Record):
    """The illumination taper chosen for one source of real maps, and the profile it was chosen from ([sigma,
    objective] pairs)."""

    source: str
    sigma: Number
    profile: list[tuple[Number, MaybeNumber]]


def check_real_taper(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a real-maps taper record as read."""
    check_typed(path, number, record, RealTaper)
    check_stamp(path, number, record)


def read_real_maps(folder: pathlib.Path, repair: bool = False, strict: bool = False) -> tuple[list, list, list]:
    """(stage records, source records, taper records) of a real-maps folder, validated, one of each stage, source
    and taper."""
    stages = read_keyed(folder / "stages.jsonl", check_real_stage, lambda r: (r["source"], r["order"]),
                        "source and order", repair, strict)
    sources = read_keyed(folder / "sources.jsonl", check_real_source, lambda r: (r["source"],), "source", repair,
                         strict)
    tapers = read_keyed(folder / "tapers.jsonl", check_real_taper, lambda r: (r["source"],), "source's taper", repair,
                        strict)
    return stages, sources, tapers


STARTS_FILE = "starts.jsonl"
"""A real-maps folder's random starts (multistart.run_starts): one line per start of a source's last order, as it
ends."""


class RealStart(FitEnd):
    """One random start of a source's last order, fitted alone (setup, prepared maps, fit, timed): where it began,
    how long it took, and how it ended (FitEnd's fields, flat in the record)."""

    source: str
    order: Annotated[int, msgspec.Meta(ge=1)]
    index: Count
    scale: Number
    start: Vector
    seconds: Seconds


def check_real_start(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a random start's record as read."""
    check_typed(path, number, record, RealStart)
    check_stamp(path, number, record)
    check_vectors(path, number, {"start": record["start"], "x": record["x"]}, len(record["start"]))


def read_real_starts(folder: pathlib.Path, repair: bool = False, strict: bool = False) -> list[dict]:
    """The random starts of a real-maps folder, validated, one per source and index."""
    return read_keyed(folder / STARTS_FILE, check_real_start, lambda r: (r["source"], r["index"]),
                      "source and start", repair, strict)


class PyoofFit(Record):
    """One order of pyoof's fits of one source of real maps (replication.studies.real_maps.pyoof_peer)."""

    source: str
    order: Annotated[int, msgspec.Meta(ge=1)]
    seconds: Seconds
    nfev: Count
    status: int
    success: bool
    message: str
    cost: Number
    params: Vector
    pyoof: str


def check_pyoof_fit(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a pyoof fit record as read."""
    check_typed(path, number, record, PyoofFit)
    check_vectors(path, number, {"params": record["params"]}, len(record["params"]))


def read_pyoof(path: pathlib.Path, repair: bool = False, strict: bool = False) -> list[dict]:
    """pyoof's fits of the real maps, one per source and order."""
    return read_keyed(path, check_pyoof_fit, lambda r: (r["source"], r["order"]), "source and order", repair, strict)


PYOOF_CLOSURE_FILE = "pyoof-closure.jsonl"
"""pyoof's fits of the closure test's maps: one line per seed as it ends (pyoof_peer --closure-seeds)."""


class PyoofClosureFit(Record):
    """pyoof's reduction of one closure seed's maps (closure_maps.simulated_maps at npix), orders 1..max_order each
    from the last: its time to stop and evaluations over the orders, the orders stopped by its evaluation limit
    (status 0), whether every order succeeded, and the last order's parameters (its phase beside it, .npz)."""

    seed: Annotated[int, msgspec.Meta(ge=0)]
    npix: Annotated[int, msgspec.Meta(ge=1)]
    max_order: Annotated[int, msgspec.Meta(ge=1)]
    seconds: Seconds
    nfev: Count
    limited: list[int]
    success: bool
    params: Vector
    pyoof: str
    noise: Annotated[float, msgspec.Meta(gt=0)] = NOISE
    """The maps' noise (a fraction of the in-focus peak); records before 2026-12-04 were all made at NOISE."""


def maps_noise(record) -> float:
    """The noise a closure record's maps were made at (a fraction of the in-focus peak): NOISE before it was recorded
    (pyoof's closure records before 2026-12-04)."""
    return record.get("noise", NOISE)


def check_pyoof_closure(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a pyoof closure record as read."""
    check_typed(path, number, record, PyoofClosureFit)
    check_vectors(path, number, {"params": record["params"]}, len(record["params"]))


def read_pyoof_closure(path: pathlib.Path, repair: bool = False, strict: bool = False) -> list[dict]:
    """pyoof's reductions of the closure seeds, one per seed and grid (another grid makes other maps)."""
    return read_keyed(path, check_pyoof_closure, lambda r: (r["seed"], r["npix"]), "seed and grid", repair, strict)


WITHIN_UM = 10.0
"""A closure seed recovers the surface where the found surface lies within this rms (micrometres) of the known one."""
GOAL_SHARE = 0.99
"""The share of closure seeds that should recover the surface within WITHIN_UM: the reduction's goal."""
TAPER_MATCH = 0.02
"""A closure seed's taper is found where the fitted one lies within this of the maps' (dish radii)."""
CLOSURE_FILE = "closure.jsonl"
"""A closure folder's records: one line per seed as it ends."""


class Closure(Record):
    """One seed of the closure test: the surface found against the known one (micrometres rms), the time the
    reduction took, the taper chosen against the one the maps were made with; since 2026-12-03 (later), the optimum a
    start at the truth reaches: the reduction's distance from it, how much lower its objective is, its own surface
    error, and the error the fit's covariance predicts (closure.certified)."""

    seed: int
    npix: int
    orders: list[int]
    sigma: Number
    true_sigma: Number
    seconds: Seconds
    success: bool
    surface_error_um: MaybeNumber
    truth_surface_um: Number
    x: Vector
    truth: Vector
    optimum_distance_se: MaybeNumber = None
    optimum_lower_by: MaybeNumber = None
    truth_start_error_um: MaybeNumber = None
    predicted_error_um: MaybeNumber = None


BOUND_FILE = "bound.jsonl"
"""A closure folder's Fisher predictions (studies.real_maps.bound): one line per seed as it ends."""


class ClosureBound(Record):
    """One closure seed's surface error as the Fisher information at its truth predicts it (bound.seed_bound): the
    rms (micrometres) and the share of draws within WITHIN_UM for least squares with white weights under the scan
    noise (ls) and for least squares prewhitened along the scans (bound: the Cramer-Rao bound)."""

    seed: Annotated[int, msgspec.Meta(ge=0)]
    npix: Annotated[int, msgspec.Meta(ge=1)]
    noise: Annotated[float, msgspec.Meta(gt=0)]
    order: Annotated[int, msgspec.Meta(ge=1)]
    parameters: Annotated[int, msgspec.Meta(ge=1)]
    ls_rms_um: Annotated[float, msgspec.Meta(ge=0)]
    ls_share: Annotated[float, msgspec.Meta(ge=0, le=1)]
    bound_rms_um: Annotated[float, msgspec.Meta(ge=0)]
    bound_share: Annotated[float, msgspec.Meta(ge=0, le=1)]
    git_commit: str | None = None


def check_bound(path, number, record):
    """Validate one bound record as read."""
    check_typed(path, number, record, ClosureBound)


def read_bound(path: pathlib.Path, repair: bool = False, strict: bool = False) -> list[dict]:
    """The Fisher predictions of a closure folder, one per seed."""
    return read_keyed(path, check_bound, lambda r: r["seed"], "seed", repair, strict)


def check_closure(path, number, record):
    """Validate one closure record as read: an error names the file, the line and the key."""
    check_typed(path, number, record, Closure)
    check_vectors(path, number, {"x": record["x"]}, len(record["truth"]))

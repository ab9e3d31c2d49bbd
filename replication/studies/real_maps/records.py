"""The real maps' records (real-maps/: stages, sources, tapers; pyoof's fits) and their readers."""

from __future__ import annotations

import json
import pathlib
from typing import Annotated, Literal

import msgspec

import reference_numpy
from oof_common.constants import N_ILLUMINATION, N_MAPS
from reference_numpy.zernike import zernike_indices
from replication.core.fit_records import NamedSeries, PolishedOptimum, series_of
from replication.core.records import (
    Count,
    FitEnd,
    GridSize,
    MaybeNumber,
    Number,
    Order,
    Orders,
    Record,
    Seconds,
    Vector,
    as_typed,
    check_typed,
    check_vectors,
    read_typed,
)
from replication.core.reduction.configs import SPEED_OF_LIGHT
from replication.core.reduction.optics import Optics
from replication.core.results import RunError
from replication.studies.real_maps.budget_records import (
    Additions,
    HigherOrders,
    Misfit,
    OtherObjective,
    OtherWeighting,
    TermsEffect,
)
from replication.studies.real_maps.whitened import Whitening


class SeriesName(NamedSeries):
    """A series by its fields (core.series.Series)."""


class RealFit(SeriesName, kw_only=True):
    """One timed fit of a real-maps stage: target_s null where it never came within the target of the optimum (its
    time to solution is then a bound, total_s)."""

    repeat: Count
    prep_s: Annotated[float, msgspec.Meta(ge=0)]
    total_s: Seconds
    target_s: Seconds | None
    end_distance: MaybeNumber
    outcome: FitEnd

    @property
    def reached(self) -> bool:
        """Whether it came within the target of its stage's optimum (its time to solution is then a value)."""
        return self.target_s is not None


class StageOptimum(PolishedOptimum):
    """A real-maps stage's optimum, polished (no covariance kept)."""


class RealMinimum(SeriesName, kw_only=True):
    fun: MaybeNumber
    polished: bool
    distance: MaybeNumber


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
    order: Order
    start: Vector
    fits: list[RealFit]
    minima: list[RealMinimum]
    pairs: list[RealPair]
    optimum: StageOptimum
    per_map_noise: bool = False
    whiten: str = "no"


class Lag(Record):
    u: Number
    v: Number


class RealSource(Record):
    """What the report says of one source of real maps beside its fits (surface_displacement: "normal", the surface
    being the primary's displacement along its normal; orientation: how its surface files lie,
    surface.ORIENTATIONS)."""

    source: str
    title: str
    order: Order
    npix: GridSize
    sigma: Number
    shape: list[int]
    step: Annotated[float, msgspec.Meta(gt=0)]
    wavelength: Annotated[float, msgspec.Meta(gt=0)]
    noise: Vector
    gamma: Number
    residual_rms: Vector
    residual_lag1: Lag
    surface_rms_um: Number
    surface_rms_without_focus_um: Number
    x: Vector
    short: str
    config: SourceConfig
    surface_displacement: Literal["normal"]
    surface_fits: str | None = None
    uncertainty_reach: Count | None = None
    uncertainty_median_um: MaybeNumber = None
    uncertainty_inflation: MaybeNumber = None
    multistart: MultiStart | None = None
    terms_effect: TermsEffect | None = None
    higher_orders: HigherOrders | None = None
    optics: Optics | None = None
    other_weighting: OtherWeighting | None = None
    additions: Additions | None = None
    misfit: Misfit | None = None
    objective: str | None = None
    noise_along: Vector | None = None
    other_objective: OtherObjective | None = None
    dropped: Count = 0
    scale: Number | None = None
    per_map_noise: bool = False
    whiten: str = "no"
    whitening: Whitening | None = None
    orientation: Literal["ours", "pyoof"] = "ours"

    @property
    def telescope(self) -> reference_numpy.Telescope:
        """The telescope it was fitted with, as its configuration was recorded."""
        return reference_numpy.Telescope(**self.config.dish, wavelength=SPEED_OF_LIGHT / self.config.frequency,
                                         dz=self.config.dz)

    @property
    def short_name(self) -> str:
        """Its short name, as its configuration gave it."""
        return self.short


class SourceConfig(Record):
    """The configuration a source's fits were made with (measure.config_record): the dish (telescope.Telescope's
    fields), the frequency (Hz) and the feed's offset dz (metres); the rest of the record (the telescope's name, the
    files, the per-map terms, the observation's date) is kept and not read here."""

    dish: dict
    frequency: Number
    dz: Number


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
    """The settings each real-maps record carries beside its maps' SHA-256 (key maps_sha256_<source>) and its
    configuration (config_<source>): what a resume compares where settings.json and runs.jsonl are lost."""

    npix: GridSize
    orders: Orders
    objective: str
    repeats: Count
    tol: Number
    tapers: list[Number]
    target: Number
    per_map_noise: bool = False
    whiten: str = "no"
    orientation: Literal["ours", "pyoof"] = "ours"


def check_stamp(path, number, record):
    """A record's stamp (Stamp, its source's maps hash and configuration); a record without them was written by
    older code, which fitted the SRT with another blockage and took the surface at normal incidence: refused, naming
    what to do."""
    source = str(record.get("source"))
    for key in (f"maps_sha256_{source}", f"config_{source}"):
        if key not in record:
            raise RunError(f"{path}: line {number}: written by older code (no key '{key}'); its fits are of another "
                           "model of the telescope: make the run again (real-maps --new-run)")
    check_typed(path, number, record, Stamp)
    key = f"maps_sha256_{source}"
    if not isinstance(record[key], str):
        raise RunError(f"{path}: line {number}, key '{key}': expected str, got {json.dumps(record[key])[:80]}")


def check_real_stage(path: pathlib.Path, number: int, record: dict) -> RealStage:
    """A real-maps stage record as read, typed and validated: an error names the file, the line and the key."""
    check_stamp(path, number, record)
    stage = as_typed(path, number, record, RealStage)
    size = len(stage.optimum.x)
    check_vectors(path, number, {"start": stage.start, "optimum.x": stage.optimum.x,
                                 "optimum.stderr": stage.optimum.stderr}, size)
    for place, fit in enumerate(stage.fits):
        series_of(path, number, fit)
        check_vectors(path, number, {f"fits[{place}].outcome.x": fit.outcome.x}, size)
        if fit.target_s is not None and not fit.target_s <= fit.total_s:
            raise RunError(f"{path}: line {number}, key 'fits[{place}].target_s': the time to the target must lie in "
                           f"(0, total_s = {fit.total_s}], got {fit.target_s}")
    for named in (*stage.minima, *(side for pair in stage.pairs for side in (pair.a, pair.b))):
        series_of(path, number, named)
    return stage


def check_real_source(path: pathlib.Path, number: int, record: dict) -> RealSource:
    """A real-maps source record as read, typed and validated."""
    check_stamp(path, number, record)
    source = as_typed(path, number, record, RealSource)
    least = len(zernike_indices(source.order)) - 1 + N_ILLUMINATION + N_MAPS
    if len(source.x) < least or None in source.x:
        raise RunError(f"{path}: line {number}, key 'x': expected at least {least} numbers (order {source.order}'s "
                       f"Zernike terms, the illumination, the three maps' offsets), got {len(source.x)} values"
                       + (" with nulls" if None in source.x else ""))
    check_vectors(path, number, {"noise": source.noise, "residual_rms": source.residual_rms}, 3)
    higher = source.higher_orders
    if higher:
        for key in ("parameters", "lower_by", "p_value", "moved_um"):
            if len(getattr(higher, key)) != len(higher.orders):
                raise RunError(f"{path}: line {number}, key 'higher_orders.{key}': expected one value per order "
                               f"({len(higher.orders)}), got {len(getattr(higher, key))}")
        if len(higher.tapers) != len(higher.orders) + 1:
            raise RunError(f"{path}: line {number}, key 'higher_orders.tapers': expected one taper per order and the "
                           f"last order's ({len(higher.orders) + 1}), got {len(higher.tapers)}")
        if higher.chosen not in (source.order, *higher.orders):
            raise RunError(f"{path}: line {number}, key 'higher_orders.chosen': expected one of the orders fitted, got "
                           f"{higher.chosen}")
    return source


class RealTaper(Record):
    """The illumination taper chosen for one source of real maps, and the profile it was chosen from ([sigma,
    objective] pairs)."""

    source: str
    sigma: Number
    profile: list[tuple[Number, MaybeNumber]]


def check_real_taper(path: pathlib.Path, number: int, record: dict) -> RealTaper:
    """A real-maps taper record as read, typed and validated."""
    check_stamp(path, number, record)
    return as_typed(path, number, record, RealTaper)


def source_and_order(record) -> tuple[str, int]:
    """The key of a record of one order of one source."""
    return record.source, record.order


def read_real_maps(folder: pathlib.Path, repair: bool = False, strict: bool = False) -> tuple[
        list[RealStage], list[RealSource], list[RealTaper]]:
    """(stages, sources, tapers) of a real-maps folder, validated and typed, one of each stage, source and taper:
    what the report reads and the writer resumes from."""
    stages = read_typed(folder / "stages.jsonl", check_real_stage, source_and_order, "source and order", repair,
                        strict)
    sources = read_typed(folder / "sources.jsonl", check_real_source, lambda r: (r.source,), "source", repair,
                         strict)
    tapers = read_typed(folder / "tapers.jsonl", check_real_taper, lambda r: (r.source,), "source's taper", repair,
                        strict)
    return stages, sources, tapers


STARTS_FILE = "starts.jsonl"
"""A real-maps folder's random starts (multistart.run_starts): one line per start of a source's last order, as it
ends."""


class RealStart(FitEnd):
    """One random start of a source's last order, fitted alone (setup, prepared maps, fit, timed): where it began,
    how long it took, and how it ended (FitEnd's fields, flat in the record)."""

    source: str
    order: Order
    index: Count
    scale: Number
    start: Vector
    seconds: Seconds


def check_real_start(path: pathlib.Path, number: int, record: dict) -> RealStart:
    """A random start's record as read, typed and validated."""
    start = as_typed(path, number, record, RealStart)
    check_stamp(path, number, record)
    check_vectors(path, number, {"start": start.start, "x": start.x}, len(start.start))
    return start


def read_real_starts(folder: pathlib.Path, repair: bool = False, strict: bool = False) -> list[RealStart]:
    """The random starts of a real-maps folder, validated and typed, one per source and index."""
    return read_typed(folder / STARTS_FILE, check_real_start, lambda r: (r.source, r.index), "source and start",
                      repair, strict)

"""What the studies' records share about a fit: the exact account of where it ended, the record of a point's
optimum (found once, untimed), the series a record names, and the machine's load while it was measured."""

from __future__ import annotations

import math
import pathlib
from typing import Annotated

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from replication.core.objectives import DEFAULT, Objective, objective_of
from replication.core.records import (
    Count,
    GridSize,
    MaybeNumber,
    Number,
    Order,
    Record,
    Vector,
    as_typed,
    check_vectors,
)
from replication.core.results import RunError
from replication.core.series import Series
from replication.core.simulation import STOPPED_AT_OPTIMUM


class Account(Record):
    """An exact account of how a fit ended (simulation.convergence_account)."""

    newton_stderr: MaybeNumber
    expected_decrease: MaybeNumber
    rounding: Number
    grad_norm: Number
    stderr: Vector
    stderr_sandwich: Vector | None = None
    newton_sandwich: MaybeNumber = None

    @property
    def judging_stderr(self) -> np.ndarray:
        """The standard errors every 'in standard errors' rule uses: the sandwich's where recorded, else the inverse
        Hessian's (accounts recorded before the sandwich); NaN where recorded as null (not finite)."""
        return np.array(self.stderr_sandwich or self.stderr, dtype=float)

    @property
    def judging_newton(self) -> float:
        """The Newton step left, in the standard errors judging_stderr gives (NaN: not at a minimum)."""
        newton = self.newton_stderr if self.newton_sandwich is None else self.newton_sandwich
        return math.nan if newton is None else newton

    @property
    def at_optimum(self) -> bool:
        """Whether the fit ended at the optimum: the exact Newton step left is below STOPPED_AT_OPTIMUM standard
        errors (sandwich where recorded), whatever scipy's flag says."""
        return bool(self.judging_newton <= STOPPED_AT_OPTIMUM)


class NamedSeries(Record):
    """A record that names its series by its fields (core.series.Series; the paper's gradient and scipy's BFGS
    where it names none)."""

    impl: str
    dtype: str
    gradient: str = ""
    minimizer: str = "scipy"

    @property
    def series(self) -> Series:
        return Series(self.impl, self.dtype, self.gradient, self.minimizer)


class Load(Record):
    """The machine's load while a point was measured (core.load.watching_load)."""

    load_1min: MaybeNumber
    others_busy_cores: Annotated[float, msgspec.Meta(ge=0)] | None
    seconds: Annotated[float, msgspec.Meta(ge=0)] | UnsetType = UNSET


def series_of(path, number, record):
    """The series a point or retrieval record names, or a RunError naming the file and the line."""
    try:
        return record.series if isinstance(record, NamedSeries) else Series.of(record)
    except (ValueError, TypeError, KeyError, AttributeError):
        fields = ("impl", "dtype", "gradient", "minimizer")
        named = ", ".join(repr(record.get(key)) for key in fields) if isinstance(record, dict) else \
            ", ".join(repr(getattr(record, key)) for key in fields) if isinstance(record, NamedSeries) else repr(record)
        raise RunError(f"{path}: line {number}: keys impl/dtype/gradient/minimizer name no known series ({named})"
                       ) from None


def record_objective(record) -> Objective:
    """The Objective a record names (its "objective"; a record without one, from before objectives were recorded,
    fitted the default): where a record's name becomes the value code compares."""
    return objective_of(record.objective if isinstance(record, Record) else record.get("objective", DEFAULT))


class PolishedOptimum(Record):
    """An optimum as optimum.polish leaves it: the parameters, the objective there, their standard errors, the Newton
    steps taken and the last one's size (standard errors), whether the polish ended at a minimum."""

    x: Vector
    fun: MaybeNumber
    stderr: Vector
    newton_steps: Count
    last_step: MaybeNumber
    polished: bool


class HeldOptimum(PolishedOptimum):
    """An optimum as optimum.Optimum.record writes it (the retrieval's and the cross-check's fits hold one): the
    covariance its distances are measured under (sandwich: whether it is the sandwich covariance)."""

    sandwich: bool
    covariance: list[Vector]


class OptimumRecord(HeldOptimum):
    """A point's optimum in a sweep's optima.jsonl: found once, untimed, before its timed fits."""

    npix: GridSize
    nzern: Order
    objective: str
    data_sha256: str


def check_optimum(path: pathlib.Path, number: int, record: dict) -> OptimumRecord:
    """An optimum record, typed: its vectors one number per parameter, its covariance P rows of P numbers."""
    optimum = as_typed(path, number, record, OptimumRecord)
    check_held(path, number, optimum)
    return optimum


def check_held(path: pathlib.Path, number: int, optimum: HeldOptimum, key: str = "") -> None:
    """An optimum's vectors one number per parameter, its covariance P rows of P numbers (key: where it lies in its
    record, "optimum." say)."""
    size = len(optimum.x)
    check_vectors(path, number, {f"{key}x": optimum.x, f"{key}stderr": optimum.stderr}, size)
    for row, values in enumerate(optimum.covariance):
        check_vectors(path, number, {f"{key}covariance[{row}]": values}, size)
    if len(optimum.covariance) != size:
        raise RunError(f"{path}: line {number}, key '{key}covariance': expected {size} rows (one per parameter), got "
                       f"{len(optimum.covariance)}")

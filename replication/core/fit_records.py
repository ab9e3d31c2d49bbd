"""What the studies' records share about a fit: the exact account of where it ended, the record of a point's
optimum (found once, untimed), the series a record names, and the machine's load while it was measured."""

from __future__ import annotations

import pathlib
from typing import Annotated

import msgspec
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
    check_typed,
    check_vectors,
)
from replication.core.results import RunError
from replication.core.series import Series


class Account(Record):
    """An exact account of how a fit ended (simulation.convergence_account)."""

    newton_stderr: MaybeNumber
    expected_decrease: MaybeNumber
    rounding: Number
    grad_norm: Number
    stderr: Vector
    stderr_sandwich: Vector | None = None


class Load(Record):
    """The machine's load while a point was measured (core.load.watching_load)."""

    load_1min: MaybeNumber
    others_busy_cores: Annotated[float, msgspec.Meta(ge=0)] | None
    seconds: Annotated[float, msgspec.Meta(ge=0)] | UnsetType = UNSET


def series_of(path, number, record):
    """The series a point or retrieval record names, or a RunError naming the file and the line."""
    try:
        return Series.of(record)
    except (ValueError, TypeError, KeyError, AttributeError):
        named = ", ".join(repr(record.get(key)) for key in ("impl", "dtype", "gradient", "minimizer")) \
            if isinstance(record, dict) else repr(record)
        raise RunError(f"{path}: line {number}: keys impl/dtype/gradient/minimizer name no known series ({named})"
                       ) from None


def record_objective(record: dict) -> Objective:
    """The Objective a record names (its "objective"; a record without one, from before objectives were recorded,
    fitted the default): where a record's name becomes the value code compares."""
    return objective_of(record.get("objective", DEFAULT))


class PolishedOptimum(Record):
    """An optimum as optimum.polish leaves it: the parameters, the objective there, their standard errors, the Newton
    steps taken and the last one's size (standard errors), whether the polish ended at a minimum."""

    x: Vector
    fun: MaybeNumber
    stderr: Vector
    newton_steps: Count
    last_step: MaybeNumber
    polished: bool


class OptimumRecord(PolishedOptimum):
    """A point's optimum (optimum.Optimum.record: a sweep's optima.jsonl; the retrieval's and the cross-check's
    fits hold one): found once, untimed, before its timed fits; the covariance its distances are measured under
    (sandwich: whether it is the sandwich covariance)."""

    npix: GridSize
    nzern: Order
    objective: str
    data_sha256: str
    sandwich: bool
    covariance: list[Vector]


def check_optimum(path: pathlib.Path, number: int, record: dict) -> None:
    """An optimum record: its vectors one number per parameter, its covariance P rows of P numbers."""
    check_typed(path, number, record, OptimumRecord)
    size = len(record["x"])
    check_vectors(path, number, {"x": record["x"], "stderr": record["stderr"]}, size)
    for row, values in enumerate(record["covariance"]):
        check_vectors(path, number, {f"covariance[{row}]": values}, size)
    if len(record["covariance"]) != size:
        raise RunError(f"{path}: line {number}, key 'covariance': expected {size} rows (one per parameter), got "
                       f"{len(record['covariance'])}")

"""The bench's record (bench.json): its rows, older step names, and its reader."""

from __future__ import annotations

import json
import math
import pathlib
from typing import Annotated

import msgspec

from replication.core.fit_records import Load
from replication.core.records import (
    Environment,
    GridSize,
    Number,
    Order,
    Record,
    as_typed,
    check_environment,
    check_typed,
    load_json,
)
from replication.core.results import RunError

BENCH_RENAMED = {"numpy_analytic_value_and_grad": "numpy_adjoint_value_and_grad",
                 "torch_analytic_value_and_grad": "torch_adjoint_value_and_grad"}
"""Bench steps named otherwise before 2026-12-02 (the adjoint was called "analytic")."""


BENCH_ROW_TABLES = ("ms", "x_floor", "x_own_floor", "repeats", "warm_up_s")
"""The keys of a bench row that map step names to numbers."""


Measure = Annotated[float, msgspec.Meta(ge=0)]
"""A step's milliseconds, or its multiple of a floor: a number, not negative."""


class BenchRow(Record):
    """One grid of the bench: each step's milliseconds and its multiple of the floors (the steps of every row the
    same), each walk's milliseconds by step where profiled, the load while it was measured (since 2026-12-03), the
    calls per timed sample (burst: back to back, since 2026-12-05; one before)."""

    npix: GridSize
    nzern: Order
    threads: Annotated[int, msgspec.Meta(ge=1)]
    ms: dict[str, Measure]
    x_floor: dict[str, Measure]
    x_own_floor: dict[str, Measure] | None = None
    profile_ms: dict[str, dict[str, Number]] | None = None
    load: Load | None = None
    numpy_over_torch_nll: Number | None = None
    batch_starts: int | None = None
    warm_up_s: dict[str, Number] | None = None
    burst: Annotated[int, msgspec.Meta(ge=1)] = 1


class Bench(Record):
    """bench.json: its rows and the sessions that measured them."""

    environments: Annotated[list[dict], msgspec.Meta(min_length=1)]  # each session writes its own: at least one
    floor: str  # what the FFT floor is, in words
    rows: list[dict] = msgspec.field(default_factory=list)


class BenchRead(Record):
    """A bench.json as the read side holds it: its rows (steps under today's names), the sessions that measured them,
    what its floor is."""

    environments: list[Environment]
    floor: str
    rows: list[BenchRow] = msgspec.field(default_factory=list)


def read_bench(path: pathlib.Path) -> BenchRead | None:
    """A bench.json for the read side (or None where the bench was not run): read_bench_record's, typed."""
    content = read_bench_record(path)
    return None if content is None else as_typed(path, 1, content, BenchRead, "record")


def read_bench_record(path: pathlib.Path) -> dict | None:
    """A bench.json as written (or None where the bench was not run), validated, its steps under today's names: the
    one conversion of older bench records (BENCH_RENAMED). The writer resumes from it."""
    content = load_json(path)
    if content is None:
        return None
    check_typed(path, 1, content, Bench, "record")
    for number, environment in enumerate(content.get("environments", []), 1):
        check_environment(path, number, environment, "environments item")
    steps = None
    for number, row in enumerate(content.get("rows", []), 1):
        check_typed(path, number, row, BenchRow, "rows item")
        steps = set(row["ms"]) if steps is None else steps
        for table in ("ms", "x_floor", *(["x_own_floor"] if row.get("x_own_floor") is not None else [])):
            if set(row[table]) != steps or "floor_torch" not in steps:
                raise RunError(f"{path}: rows item {number}, key {table!r}: expected the steps of the first row "
                               f"(floor_torch among them), got {', '.join(sorted(row[table]))[:80]}")
            for step, value in row[table].items():
                if not math.isfinite(value):
                    raise RunError(f"{path}: rows item {number}, key '{table}.{step}': expected a finite time or "
                                   f"ratio, got {json.dumps(value)[:80]}")
    for row in content.get("rows", []):
        for table in BENCH_ROW_TABLES:
            if isinstance(row.get(table), dict):
                row[table] = {BENCH_RENAMED.get(step, step): value for step, value in row[table].items()}
    return content


AUTOGRAD_PARTS = ("forward (records the graph)", "backward()")
"""The two parts of a torch autograd value-and-gradient, as the bench's profile names them."""

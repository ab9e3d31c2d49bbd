"""The bench's record (bench.json): its rows, older step names, and its reader."""

from __future__ import annotations

import json
import math
import pathlib
from typing import Annotated

import msgspec

from replication.core.fit_records import Load
from replication.core.records import (
    MIGRATE,
    OLDER_GRADIENTS,
    Environment,
    GridSize,
    Number,
    Order,
    Record,
    as_typed,
    check_environment,
    load_json,
)
from replication.core.results import RunError

BENCH_RENAMED = {"numpy_analytic_value_and_grad": "numpy_adjoint_value_and_grad",
                 "torch_analytic_value_and_grad": "torch_adjoint_value_and_grad"}
"""Bench steps older bench records name otherwise (the adjoint was called "analytic"): migrated_bench renames them."""


BENCH_ROW_TABLES = ("ms", "x_floor", "x_own_floor", "repeats", "warm_up_s")
"""The keys of a bench row that map step names to numbers."""


Measure = Annotated[float, msgspec.Meta(ge=0)]
"""A step's milliseconds, or its multiple of a floor: a number, not negative."""


class BenchRow(Record):
    """One grid of the bench: each step's milliseconds and its multiple of the floors (the steps of every row the
    same), each walk's milliseconds by step where profiled, the load while it was measured (None where not
    recorded), the calls per timed sample (burst: back to back; 1 in benches that timed one call)."""

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


def renamed_row(row: dict) -> dict:
    """A bench row with its steps (BENCH_RENAMED) and its profiled walks' words (OLDER_GRADIENTS) under today's
    names."""
    tables = {table: {BENCH_RENAMED.get(step, step): value for step, value in row[table].items()}
              for table in BENCH_ROW_TABLES if isinstance(row.get(table), dict)}
    walks = row.get("profile_ms")
    if isinstance(walks, dict):
        tables["profile_ms"] = {" ".join(OLDER_GRADIENTS.get(word, word) for word in walk.split()): steps
                                for walk, steps in walks.items()}
    return row | tables


def migrated_bench(content: dict) -> dict:
    """A bench.json whose steps or profiled walks bear older names under today's (renamed_row); one of today's as it
    is."""
    rows = [row for row in content.get("rows", []) if isinstance(row, dict)]
    renamed = [renamed_row(row) for row in rows]
    return content if renamed == rows else content | {"rows": renamed}


def read_bench_record(path: pathlib.Path) -> dict | None:
    """A bench.json as written (or None where the bench was not run), validated; one whose steps bear older names is
    refused, naming the migration (migrated_bench). The writer resumes from it."""
    content = load_json(path)
    if content is None:
        return None
    bench = as_typed(path, 1, content, Bench, "record")
    for number, environment in enumerate(bench.environments, 1):
        check_environment(path, number, environment, "environments item")
    steps = None
    for number, raw in enumerate(bench.rows, 1):
        row = as_typed(path, number, raw, BenchRow, "rows item")
        steps = set(row.ms) if steps is None else steps
        for table in ("ms", "x_floor", *(("x_own_floor",) if row.x_own_floor is not None else ())):
            values = getattr(row, table)
            if set(values) != steps or "floor_torch" not in steps:
                raise RunError(f"{path}: rows item {number}, key {table!r}: expected the steps of the first row "
                               f"(floor_torch among them), got {', '.join(sorted(values))[:80]}")
            for step, value in values.items():
                if not math.isfinite(value):
                    raise RunError(f"{path}: rows item {number}, key '{table}.{step}': expected a finite time or "
                                   f"ratio, got {json.dumps(value)[:80]}")
    if migrated_bench(content) is not content:
        raise RunError(f"{path}: written by older code (its steps' names changed since); bring it up to date with "
                       f"`{MIGRATE}`")
    return content


AUTOGRAD_PARTS = ("forward (records the graph)", "backward()")
"""The two parts of a torch autograd value-and-gradient, as the bench's profile names them."""

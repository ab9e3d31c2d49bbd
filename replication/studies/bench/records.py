"""The bench's record (bench.json): its rows, older step names, and its reader."""

from __future__ import annotations

import json
import math
import pathlib

from replication.core.records import load_json
from replication.core.results import NUMBER, RunError, check_record, is_a

BENCH_RENAMED = {"numpy_analytic_value_and_grad": "numpy_adjoint_value_and_grad",
                 "torch_analytic_value_and_grad": "torch_adjoint_value_and_grad"}
"""Bench steps named otherwise before 2026-12-02 (the adjoint was called "analytic")."""


BENCH_ROW_TABLES = ("ms", "x_floor", "x_own_floor", "repeats", "warm_up_s")
"""The keys of a bench row that map step names to numbers."""


BENCH_ROW = {"npix": int, "nzern": int, "threads": int, "ms": dict, "x_floor": dict}
"""What every bench row holds (each step's milliseconds, and its multiple of the floors)."""


def read_bench(path: pathlib.Path) -> dict | None:
    """A bench.json (or None where the bench was not run), validated, its steps under today's names: the one
    conversion of older bench records (BENCH_RENAMED)."""
    content = load_json(path, ("rows", "environments"))
    if content is None:
        return None
    steps = None
    for number, row in enumerate(content.get("rows", []), 1):
        check_record(path, number, row, BENCH_ROW, "rows item")
        steps = set(row["ms"]) if steps is None else steps
        for table in ("ms", "x_floor", *(["x_own_floor"] if "x_own_floor" in row else [])):
            if not isinstance(row[table], dict) or set(row[table]) != steps or "floor_torch" not in steps:
                raise RunError(f"{path}: rows item {number}, key {table!r}: expected the steps of the first row "
                               f"(floor_torch among them), got {', '.join(sorted(row[table]))[:80]}")
        for table in ("ms", "x_floor", *(["x_own_floor"] if "x_own_floor" in row else [])):
            for step, value in row[table].items():
                if not is_a(value, NUMBER) or not math.isfinite(value) or value < 0:
                    raise RunError(f"{path}: rows item {number}, key '{table}.{step}': expected a finite time or "
                                   f"ratio, got {json.dumps(value)[:80]}")
        profile = row.get("profile_ms", {})
        if not isinstance(profile, dict) or not all(
                isinstance(steps, dict) and all(is_a(value, NUMBER) for value in steps.values())
                for steps in profile.values()):
            raise RunError(f"{path}: rows item {number}, key 'profile_ms': expected each walk's milliseconds by "
                           f"step, got {json.dumps(profile)[:80]}")
    for row in content.get("rows", []):
        for table in BENCH_ROW_TABLES:
            if isinstance(row.get(table), dict):
                row[table] = {BENCH_RENAMED.get(step, step): value for step, value in row[table].items()}
    return content


AUTOGRAD_PARTS = ("forward (records the graph)", "backward()")
"""The two parts of a torch autograd value-and-gradient, as the bench's profile names them."""

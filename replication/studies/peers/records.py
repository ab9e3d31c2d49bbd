"""The peers' check (peers/check.json) and its reader."""

from __future__ import annotations

import pathlib
from typing import Annotated

import msgspec

from replication.core.records import GridSize, MaybeNumber, Order, Record, as_typed, check_typed, load_json


class PeersRow(Record):
    """One point of the peers' gate: whether the JAX peer's objective and gradient match the NumPy tree's there."""

    npix: GridSize
    nzern: Order
    objective: str
    passed: bool
    objective_error: MaybeNumber
    gradient_error: MaybeNumber


class PeersCheck(Record):
    """The peers' gate (peers/check.json): passed, and its rows."""

    passed: bool
    rows: list[dict]
    jax: str
    objective_tolerance: Annotated[float, msgspec.Meta(gt=0)]
    gradient_tolerance: Annotated[float, msgspec.Meta(gt=0)]


class PeersCheckRead(PeersCheck, kw_only=True):
    """The peers' gate as the read side holds it: its rows typed."""

    rows: list[PeersRow]


def read_peers_check(path: pathlib.Path) -> PeersCheckRead | None:
    """The peers' gate (peers/check.json), validated, or None where it was not run."""
    content = load_json(path)
    if content is None:
        return None
    check_typed(path, 1, content, PeersCheck, "record")
    for number, row in enumerate(content["rows"], 1):
        check_typed(path, number, row, PeersRow, "rows item")
    return as_typed(path, 1, content, PeersCheckRead, "record")

"""The cross-check's record (crosscheck/crosscheck.json): its checks and fits, and their reader."""

from __future__ import annotations

import pathlib

import msgspec
from msgspec import UNSET, UnsetType

from replication.core.fit_records import Account, HeldOptimum, check_optimum
from replication.core.objectives import DEFAULT
from replication.core.records import (
    Environment,
    FitEnd,
    GridSize,
    MaybeNumber,
    Number,
    Order,
    Record,
    Vector,
    as_typed,
    check_environment,
    check_typed,
    check_vectors,
    load_json,
)
from replication.core.registry import GRADIENTS
from replication.core.results import RunError
from replication.core.series import Series

CROSSCHECK_SCHEMA = 3
"""Version of crosscheck.json: 3 names each fit's series by its fields (impl: the implementation's name, dtype,
variant: "" or the gradient of a variant, minimizer; gradient: the gradient it ran with); 2 named it by its display
label under "impl"; 1 (no "schema") also fitted every float64 series with scipy's BFGS under its label."""


def fit_series(fit: dict) -> Series:
    """The series of a cross-check fit record as written (schema 3)."""
    return Series(fit["impl"], fit["dtype"], fit["variant"], fit["minimizer"])


def as_schema_3(fits: list[dict], schema: int) -> list[dict]:
    """A cross-check's fits that ran as recorded, in schema 3: the one conversion of older files. Schemas 1-2 named
    a fit's series by its label, parsed back here into the fields; schema 1 fitted every float64 series with scipy's
    BFGS, so its fits labelled with another minimizer are repeats of the scipy fit, left out. A fit that names no
    objective (before objectives were recorded) fitted the default."""
    converted = []
    for fit in fits:
        fit = fit | {"objective": fit.get("objective", DEFAULT)}
        if schema >= CROSSCHECK_SCHEMA:
            converted.append(fit)
            continue
        series = Series.parse(fit["impl"])
        if schema >= 2 or series.minimizer == "scipy":
            converted.append(fit | {"impl": series.impl, "dtype": series.dtype, "variant": series.gradient,
                                    "minimizer": series.minimizer})
    return converted


class Check(Record):
    """One check of a cross-check: what was compared at which point, the value against its tolerance."""

    check: str
    npix: GridSize
    nzern: Order
    compare: str
    value: MaybeNumber
    tolerance: Number
    passed: bool
    objective: str | None = None


class CrosscheckFit(FitEnd):
    """One fit of a cross-check (schema 3 adds its series' fields, FitSeries); since the exact account, its
    objective, BFGS's errors and the account; since 2026-12-02 its distance from the point's optimum and time to it."""

    impl: str
    npix: GridSize
    nzern: Order
    stderr: Vector | None = None
    stderr_bfgs: Vector | None = None
    objective: str | None = None
    convergence: Account | None = None
    distance: MaybeNumber = None
    target_s: MaybeNumber | UnsetType = UNSET
    optimum: dict | None = None


class FitSeries(Record):
    dtype: str
    variant: str
    minimizer: str


class Fit(CrosscheckFit, kw_only=True):
    """A cross-check fit as read (schema 3): its series' fields, its optimum typed."""

    dtype: str
    variant: str
    minimizer: str
    optimum: HeldOptimum | None = None

    @property
    def series(self) -> Series:
        return Series(self.impl, self.dtype, self.variant, self.minimizer)

    @property
    def grid_point(self) -> tuple[int, int]:
        return self.npix, self.nzern


class AccountedFit(Record):
    """What a fit with an exact account holds besides it."""

    objective: str
    stderr_bfgs: Vector


class Crosscheck(Record):
    """crosscheck.json: its checks, its fits, the environment it ran in, its schema version (1 where absent)."""

    checks: list[dict]
    environment: dict
    fits: list[dict] = msgspec.field(default_factory=list)
    schema: int = 1


class CrosscheckRead(Record):
    """A crosscheck.json as the read side holds it: its checks (each once: files before schema 2 repeated torch-cpu's
    model and fit checks under the on-device label, the same computation, left out), how many were left out so,
    its fits in schema 3 (as_schema_3), its environment and schema."""

    checks: list[Check]
    repeated: int
    fits: list[Fit]
    environment: Environment
    schema: int


def read_crosscheck(path: pathlib.Path) -> CrosscheckRead | None:
    """A crosscheck.json for the read side (or None where the cross-check was not run): read_crosscheck_record's,
    typed, its older schemas read as today's."""
    content = read_crosscheck_record(path)
    if content is None:
        return None
    schema = content.get("schema", 1)
    checks = content["checks"] if schema >= 2 else [c for c in content["checks"] if c["compare"].startswith(
        "numpy ") or compared_series(c).minimizer == "scipy"]
    return as_typed(path, 1, {"checks": checks, "repeated": len(content["checks"]) - len(checks), "schema": schema,
                              "fits": as_schema_3(content.get("fits", []), schema),
                              "environment": content["environment"]}, CrosscheckRead, "record")


def compared_series(check: dict) -> Series:
    """The series a cross-check's comparison names first (its label, then the gradient's name or " vs ...")."""
    first = check["compare"].split(" vs ")[0]
    for gradient in GRADIENTS:
        first = first.removesuffix(f" {gradient}")
    return Series.parse(first)


def read_crosscheck_record(path: pathlib.Path) -> dict | None:
    """A crosscheck.json as written (or None where the cross-check was not run), validated: its checks and fits each
    hold what the report reads, each fit names a known series; an error names the file, the item and the key. The
    writer resumes from it."""
    content = load_json(path)
    if content is None:
        return None
    check_typed(path, 1, content, Crosscheck, "record")
    check_environment(path, 1, content["environment"], "environment of record")
    for number, check in enumerate(content["checks"], 1):
        check_typed(path, number, check, Check, "checks item")
    schema = content.get("schema", 1)
    for number, fit in enumerate(content.get("fits", []), 1):
        check_typed(path, number, fit, CrosscheckFit, "fits item")
        if schema >= CROSSCHECK_SCHEMA:
            check_typed(path, number, fit, FitSeries, "fits item")
        vectors = {"x": fit["x"], "stderr_bfgs": fit.get("stderr_bfgs"), "stderr": fit.get("stderr")}
        if fit.get("convergence") is not None:
            check_typed(path, number, fit, AccountedFit, "fits item")
            vectors |= {f"convergence.{key}": fit["convergence"].get(key) for key in ("stderr", "stderr_sandwich")}
        check_vectors(path, number, vectors, len(fit["x"]), "fits item")
        if "distance" in fit and "target_s" not in fit:  # cross-checks since 2026-12-02: both, or neither
            raise RunError(f"{path}: fits item {number} has no key 'target_s'")
        if fit.get("optimum") is not None:  # held by the NumPy fit of each point and objective
            check_optimum(path, number, fit["optimum"] | {key: fit.get(key) for key in ("npix", "nzern", "objective")}
                          | {"data_sha256": ""})
        try:
            fit_series(fit) if schema >= CROSSCHECK_SCHEMA else Series.parse(fit["impl"])
        except ValueError:
            raise RunError(f"{path}: fits item {number}: names no known series ({fit['impl']!r})") from None
    return content

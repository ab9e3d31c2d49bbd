"""The cross-check's record (crosscheck/crosscheck.json): its checks and fits, and their reader."""

from __future__ import annotations

import dataclasses
import pathlib

import msgspec
import numpy as np
from msgspec import UNSET, UnsetType

from replication.core.fit_records import Account, HeldOptimum, check_held
from replication.core.objectives import DEFAULT
from replication.core.records import (
    Count,
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
    check_schema,
    check_typed,
    check_vectors,
    load_arrays,
    load_json,
)
from replication.core.registry import GRADIENTS
from replication.core.results import RunError
from replication.core.series import Series

CROSSCHECK_SCHEMA = 3
"""Version of crosscheck.json: 3 names each fit's series by its fields (impl: the implementation's name, dtype,
variant: "" or the gradient of a variant, minimizer; gradient: the gradient it ran with); 2 named it by its display
label under "impl"; 1 (no "schema") also fitted every float64 series with scipy's BFGS under its label."""


def migrated_crosscheck(content: dict) -> dict:
    """A crosscheck.json of schema 1 or 2 in today's (CROSSCHECK_SCHEMA); one of today's as it is. Schemas 1-2 named
    a fit's series by its label, parsed here into its fields; schema 1 fitted every float64 series with scipy's BFGS,
    so its fits labelled with another minimizer, and their checks, repeat the scipy fit's: left out, how many checks
    so said under "migrated"; a fit that names no objective (before objectives were recorded) fitted the default."""
    schema = content.get("schema", 1)
    if schema not in (1, 2) or isinstance(schema, bool):  # today's, or a damaged one its reader refuses
        return content
    fits = []
    for fit in content.get("fits", []):
        series = Series.parse(fit.get("impl"))
        if schema >= 2 or series.minimizer == "scipy":
            fits.append(fit | {"impl": series.impl, "dtype": series.dtype, "variant": series.gradient,
                               "minimizer": series.minimizer, "objective": fit.get("objective", DEFAULT)})
    every = content.get("checks", [])
    checks = every if schema >= 2 else [check for check in every if check.get("compare", "").startswith("numpy ")
                                        or compared_series(check).minimizer == "scipy"]
    return content | {"schema": CROSSCHECK_SCHEMA, "fits": fits, "checks": checks,
                      "migrated": {"from_schema": schema, "repeated_checks": len(every) - len(checks)}}


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
    """One fit of a cross-check (Fit adds its series' fields); since the exact account, its
    objective, BFGS's errors and the account; where the cross-check times to a target, its distance from the point's
    optimum and time to it."""

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
    """crosscheck.json as written: its checks, its fits, the environment it ran in, its schema version (1 where
    absent: migrated_crosscheck brings it up to date)."""

    checks: list[dict]
    environment: dict
    fits: list[dict] = msgspec.field(default_factory=list)
    schema: int = 1


class Migrated(Record):
    """What a migration did to a crosscheck.json (migrated_crosscheck): the schema it came from, the repeated checks
    it left out."""

    from_schema: int
    repeated_checks: Count


class CrosscheckRead(Record):
    """A crosscheck.json as the read side holds it: its checks, its fits, its environment and schema, and where it
    was migrated from an older schema, what that did."""

    checks: list[Check]
    fits: list[Fit]
    environment: Environment
    schema: int
    migrated: Migrated | None = None

    @property
    def repeated(self) -> int:
        """The checks of the older file a migration left out as repeats (schema 1 fitted every float64 series with
        scipy's BFGS)."""
        return self.migrated.repeated_checks if self.migrated else 0


def read_crosscheck(path: pathlib.Path) -> CrosscheckRead | None:
    """A crosscheck.json for the read side (or None where the cross-check was not run): read_crosscheck_record's,
    typed."""
    content = read_crosscheck_record(path)
    if content is None:
        return None
    read = as_typed(path, 1, content, CrosscheckRead, "record")
    for number, fit in enumerate(read.fits, 1):
        if fit.optimum:  # its vectors' nulls (not finite) read as NaN, as every other vector's
            check_held(path, number, fit.optimum, "optimum.")
    return read


def compared_series(check: dict) -> Series:
    """The series a cross-check's comparison names first (its label, then the gradient's name or " vs ...")."""
    first = check.get("compare", "").split(" vs ")[0]
    for gradient in GRADIENTS:
        first = first.removesuffix(f" {gradient}")
    return Series.parse(first)


def read_crosscheck_record(path: pathlib.Path) -> dict | None:
    """A crosscheck.json as written (or None where the cross-check was not run), validated: its checks and fits each
    hold what the report reads, each fit names a known series; an error names the file, the item and the key. The
    writer resumes from it. A file of an older schema is refused, naming the migration (migrated_crosscheck)."""
    content = load_json(path)
    if content is None:
        return None
    crosscheck = as_typed(path, 1, content, Crosscheck, "record")
    check_environment(path, 1, crosscheck.environment, "environment of record")
    for number, check in enumerate(crosscheck.checks, 1):
        check_typed(path, number, check, Check, "checks item")
    fits = content.get("fits", [])
    for number, raw in enumerate(fits, 1):  # what a fit holds in every schema
        check_typed(path, number, raw, CrosscheckFit, "fits item")
    check_schema(path, 1, crosscheck.schema, CROSSCHECK_SCHEMA, "record")
    for number, raw in enumerate(fits, 1):  # the file's own fits: their nulls read as NaN
        check_crosscheck_fit(path, number, raw)
    return content


def check_crosscheck_fit(path: pathlib.Path, number: int, raw: dict) -> Series:
    """One fit of a crosscheck.json as written: its fields, its vectors one number per parameter (nulls read as NaN
    in place), a distance with its time to the target, its optimum, a known series (returned)."""
    fit = as_typed(path, number, raw, Fit, "fits item")
    vectors = {"x": raw.get("x"), "stderr_bfgs": raw.get("stderr_bfgs"), "stderr": raw.get("stderr")}
    if fit.convergence is not None:
        check_typed(path, number, raw, AccountedFit, "fits item")
        vectors |= {f"convergence.{key}": raw.get("convergence", {}).get(key) for key in ("stderr", "stderr_sandwich")}
    check_vectors(path, number, vectors, len(fit.x), "fits item")
    if "distance" in raw and "target_s" not in raw:  # both, or neither (cross-checks that predate them)
        raise RunError(f"{path}: fits item {number} has no key 'target_s'")
    if fit.optimum is not None:  # held by the NumPy fit of each point and objective
        check_held(path, number, fit.optimum, "optimum.")
    try:
        return fit.series
    except ValueError:
        raise RunError(f"{path}: fits item {number}: names no known series ({fit.impl!r})") from None


@dataclasses.dataclass(frozen=True)
class Example:
    """The example fit the report draws (crosscheck/example.npz, measure.example_fit): its grid size and order, the
    observed and model beams (3 maps each), the true and fitted parameters, BFGS's iterations."""

    npix: int
    nzern: int
    data: np.ndarray
    model: np.ndarray
    truth: np.ndarray
    fitted: np.ndarray
    nit: int


def read_example(path: pathlib.Path) -> Example:
    """The example fit, or a RunError naming the file and the array it lacks."""
    arrays = load_arrays(path)
    fields = [field.name for field in dataclasses.fields(Example)]
    missing = [name for name in fields if name not in arrays]
    if missing:
        raise RunError(f"{path}: no array {missing[0]!r}")
    found = {name: arrays[name] for name in fields}
    return Example(**found | {name: int(found[name]) for name in ("npix", "nzern", "nit")})

"""The cross-check's record (crosscheck/crosscheck.json): its checks and fits, and their reader."""

from __future__ import annotations

import json
import pathlib

from replication.core.records import MAYBE_NUMBER, check_vectors, load_json
from replication.core.results import NUMBER, RunError, check_record, is_a
from replication.core.series import Series
from replication.studies.sweep.records import ACCOUNT, check_optimum

CROSSCHECK_SCHEMA = 3
"""Version of crosscheck.json: 3 names each fit's series by its fields (impl: the implementation's name, dtype,
variant: "" or the gradient of a variant, minimizer; gradient: the gradient it ran with); 2 named it by its display
label under "impl"; 1 (no "schema") also fitted every float64 series with scipy's BFGS under its label."""


def fit_series(fit: dict) -> Series:
    """The series of a cross-check fit (as crosscheck_fits returns it: read as schema 3)."""
    return Series(fit["impl"], fit["dtype"], fit["variant"], fit["minimizer"])


def crosscheck_fits(crosscheck: dict | None) -> list[dict]:
    """The cross-check's fits that ran as recorded, read as schema 3: the one conversion of older files. Schemas
    1-2 named a fit's series by its label, parsed back here into the fields; schema 1 fitted every float64 series
    with scipy's BFGS, so its fits labelled with another minimizer are repeats of the scipy fit, left out."""
    if not crosscheck:
        return []
    fits, schema = crosscheck.get("fits", []), crosscheck.get("schema", 1)
    if schema >= CROSSCHECK_SCHEMA:
        return fits
    converted = []
    for fit in fits:
        series = Series.parse(fit["impl"])
        if schema >= 2 or series.minimizer == "scipy":
            converted.append(fit | {"impl": series.impl, "dtype": series.dtype, "variant": series.gradient,
                                    "minimizer": series.minimizer})
    return converted


CHECK = {"check": str, "npix": int, "nzern": int, "compare": str, "value": MAYBE_NUMBER, "tolerance": NUMBER,
         "passed": bool}
"""What every check of a cross-check holds."""


CROSSCHECK_FIT = {"impl": str, "npix": int, "nzern": int, "x": list, "fun": MAYBE_NUMBER, "nit": int, "nfev": int,
                  "success": bool, "message": str}
"""What every fit of a cross-check holds (schema 3 adds its series' fields, CROSSCHECK_SERIES)."""


CROSSCHECK_SERIES = {"dtype": str, "variant": str, "minimizer": str}


def read_crosscheck(path: pathlib.Path) -> dict | None:
    """A crosscheck.json (or None where the cross-check was not run), validated: its checks and fits each hold
    what the report reads, each fit names a known series; an error names the file, the item and the key."""
    content = load_json(path, ("checks", "fits"))
    if content is None:
        return None
    for key, kind in (("checks", list), ("environment", dict)):
        if not isinstance(content.get(key), kind):
            raise RunError(f"{path}: key {key!r} must be {'a list of checks' if kind is list else 'a record'}")
    for number, check in enumerate(content["checks"], 1):
        check_record(path, number, check, CHECK, "checks item")
    schema = content.get("schema", 1)
    if not is_a(schema, int):
        raise RunError(f"{path}: key 'schema' must be an integer, got {json.dumps(schema)[:80]}")
    for number, fit in enumerate(content.get("fits", []), 1):
        check_record(path, number, fit, CROSSCHECK_FIT | (CROSSCHECK_SERIES if schema >= CROSSCHECK_SCHEMA else {}),
                     "fits item")
        vectors = {"x": fit["x"], "stderr_bfgs": fit.get("stderr_bfgs"), "stderr": fit.get("stderr")}
        if fit.get("convergence") is not None:
            check_record(path, number, fit, {"objective": str, "stderr_bfgs": list, "convergence": ACCOUNT},
                         "fits item")
            vectors |= {f"convergence.{key}": fit["convergence"].get(key) for key in ("stderr", "stderr_sandwich")}
        check_vectors(path, number, vectors, len(fit["x"]), "fits item")
        if "distance" in fit:  # cross-checks since 2026-12-02: distance from the point's optimum, time to it
            check_record(path, number, fit, {"distance": MAYBE_NUMBER, "target_s": MAYBE_NUMBER}, "fits item")
        if "optimum" in fit:  # held by the NumPy fit of each point and objective
            check_optimum(path, number, fit["optimum"] | {key: fit[key] for key in ("npix", "nzern", "objective")}
                          | {"data_sha256": ""})
        try:
            fit_series(fit) if schema >= CROSSCHECK_SCHEMA else Series.parse(fit["impl"])
        except ValueError:
            raise RunError(f"{path}: fits item {number}: names no known series ({fit['impl']!r})") from None
    return content

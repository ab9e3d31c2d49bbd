"""The sweep's records: a point (points.jsonl, with its target and trajectories entries) and a point's
optimum (optima.jsonl), their schemas, keys and readers."""

from __future__ import annotations

import json
import pathlib

from replication.core.records import MAYBE_NUMBER, check_vectors, latest_of_each, read_keyed
from replication.core.results import NUMBER, RunError, check_record, is_a
from replication.core.series import Series

POINT = {"impl": str, "dtype": str, "npix": int, "nzern": int, "nparams": int, "estimated": bool,
         "fit_s": {"median": NUMBER}}
"""What every point record holds; a measured one also holds MEASURED."""


MEASURED = {"setup_s": {"median": NUMBER}, "total_s": {"median": NUMBER}, "tol": NUMBER,
            "outcome": {"nit": int, "nfev": int, "success": bool, "message": str, "fun": MAYBE_NUMBER, "x": list,
                        "stderr": list}}


ACCOUNT = {"newton_stderr": MAYBE_NUMBER, "expected_decrease": MAYBE_NUMBER, "rounding": NUMBER, "grad_norm": NUMBER,
           "stderr": list}
"""What an exact account of how a fit ended holds (where the outcome has one)."""


def series_of(path, number, record):
    """The series a point or retrieval record names, or a RunError naming the file and the line."""
    try:
        return Series.of(record)
    except (ValueError, TypeError):
        raise RunError(f"{path}: line {number}: keys impl/dtype/gradient/minimizer name no known series "
                       f"({record.get('impl')!r}, {record.get('dtype')!r}, {record.get('gradient')!r}, "
                       f"{record.get('minimizer')!r})") from None


def check_point(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a point record as read, to what the report uses: an error names the file, the line and the key."""
    check_record(path, number, record, POINT)
    series_of(path, number, record)
    times = ["fit_s"]
    if not record["estimated"]:
        check_record(path, number, record, MEASURED)
        times.append("total_s")
        outcome = record["outcome"]
        vectors = {"outcome.x": outcome["x"], "outcome.stderr": outcome["stderr"]}
        if outcome.get("convergence") is not None:
            check_record(path, number, outcome["convergence"], ACCOUNT)
            vectors |= {f"outcome.convergence.{key}": outcome["convergence"].get(key)
                        for key in ("stderr", "stderr_sandwich")}
        check_vectors(path, number, vectors, record["nparams"])
        if "target" in record:  # points measured since 2026-12-02
            check_target_record(path, number, record)
        if "trajectories" in record:  # points measured since 2026-12-03
            check_trajectories_entry(path, number, record)
        if "load" in record:  # the load of other processes while it was measured (since 2026-12-03)
            check_record(path, number, record["load"], LOAD)
        if "time_limit_s" in record:  # its fits run to a time limit (since 2026-12-02)
            check_record(path, number, record, TIME_LIMITED)
            if not record["time_limit_s"] > 0:
                raise RunError(f"{path}: line {number}, key 'time_limit_s': a time limit must be positive, got "
                               f"{record['time_limit_s']}")
    for key in times:
        if not record[key]["median"] > 0:
            raise RunError(f"{path}: line {number}, key '{key}.median': a time must be positive, got "
                           f"{record[key]['median']}")


LOAD = {"load_1min": MAYBE_NUMBER, "others_busy_cores": MAYBE_NUMBER}
"""The machine's load while a point was measured (core.load.watching_load)."""


TIME_LIMITED = {"time_limit_s": NUMBER, "stopped_at_limit": bool}
"""What a point run to a time limit also holds: the limit (seconds) and whether its fit was stopped there."""


TARGET = {"se": NUMBER, "times": list, "reached": int, "end_distance": MAYBE_NUMBER}
"""A measured point's times to the point's optimum, one per repeat (null: never within `se` standard errors)."""


def check_target_record(path, number, record):
    """A point's target record: one time or null per repeat, each positive and at most that repeat's total time."""
    check_record(path, number, record["target"], TARGET)
    times, totals = record["target"]["times"], record["total_s"].get("all") or []
    if len(times) != len(totals) or record["target"]["reached"] != sum(t is not None for t in times):
        raise RunError(f"{path}: line {number}, key 'target.times': one time or null per repeat ({len(totals)}), "
                       f"reached = the times given; got {json.dumps(record['target'])[:80]}")
    for time, total in zip(times, totals, strict=True):
        if time is not None and not (is_a(time, NUMBER) and 0 < time <= total * (1 + 1e-9)):
            raise RunError(f"{path}: line {number}, key 'target.times': a time to the optimum lies in (0, that "
                           f"repeat's total {total}], got {time}")


TRAJECTORIES = {"file": str, "sha256": str, "repeats": int}
"""Where a point's fits' trajectories are kept (trajectories.write_trajectories), one per repeat."""


def check_trajectories_entry(path, number, record):
    """A point's trajectories entry: a file, its SHA-256, one trajectory per repeat timed."""
    check_record(path, number, record["trajectories"], TRAJECTORIES)
    repeats, totals = record["trajectories"]["repeats"], record["total_s"].get("all") or []
    if repeats != len(totals):
        raise RunError(f"{path}: line {number}, key 'trajectories.repeats': one trajectory per repeat "
                       f"({len(totals)}), got {repeats}")


def read_points(path: pathlib.Path, repair: bool = False, strict: bool = False) -> list[dict]:
    """The validated point records of a sweep's points.jsonl; two different records of one point and series are
    refused (identical ones too where strict: a contributed run), except an estimate followed by the point's
    measurement, which replaces it (sweeps before 2026-12-02 estimated the points over their budget; a resumed sweep
    measures them, to a time limit)."""
    records = read_keyed(path, check_point, point_key, "point and series", repair, strict, replaces=measures_estimate)
    return latest_of_each(records, point_key)


def measured_keys(records: list[dict]) -> set:
    """The point keys of the measured records (an older sweep's estimate is not finished: a resumed sweep measures
    it)."""
    return {point_key(record) for record in records if not record["estimated"]}


def measures_estimate(earlier: dict, record: dict) -> bool:
    """Whether record may replace an earlier record of its point and series: a measurement of an estimated point."""
    return earlier["estimated"] and not record["estimated"]


def point_key(record: dict) -> tuple:
    """What identifies a point: implementation, precision, gradient variant, minimizer (its Series, older names
    read as today's), grid size and order."""
    series = Series.of(record)
    return series.impl, series.dtype, series.gradient, series.minimizer, record["npix"], record["nzern"]


OPTIMUM = {"npix": int, "nzern": int, "objective": str, "data_sha256": str, "x": list, "fun": MAYBE_NUMBER,
           "stderr": list, "newton_steps": int, "polished": bool, "sandwich": bool, "covariance": list}
"""A point's optimum in a sweep's optima.jsonl (optimum.Optimum.record): found once, untimed, before its timed fits."""


def check_optimum(path: pathlib.Path, number: int, record: dict) -> None:
    """An optimum record: its vectors one number per parameter, its covariance P rows of P numbers."""
    check_record(path, number, record, OPTIMUM)
    size = len(record["x"])
    check_vectors(path, number, {"x": record["x"], "stderr": record["stderr"]}, size)
    for row, values in enumerate(record["covariance"]):
        check_vectors(path, number, {f"covariance[{row}]": values}, size)
    if len(record["covariance"]) != size:
        raise RunError(f"{path}: line {number}, key 'covariance': expected {size} rows (one per parameter), got "
                       f"{len(record['covariance'])}")


def optimum_key(record: dict) -> tuple:
    """What identifies an optimum: the point, the objective and the data."""
    return record["npix"], record["nzern"], record["objective"], record["data_sha256"]


def read_optima(path: pathlib.Path, repair: bool = False, strict: bool = False) -> dict:
    """{optimum_key: record} of a sweep's optima.jsonl, validated ({} where absent)."""
    return {optimum_key(r): r for r in read_keyed(path, check_optimum, optimum_key, "optimum", repair, strict)}

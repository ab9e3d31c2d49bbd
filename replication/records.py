"""The records the harness writes and reads, validated as read: sweep points, retrieval fits, and the JSON files
of the cross-check, the bench and the peers' gate. Writers and readers share these definitions; nothing here
measures (no torch, no model package)."""

from __future__ import annotations

import json
import math
import pathlib

from replication import registry
from replication.results import NUMBER, RunError, check_record, dumps, is_a, read_records
from replication.series import Series

RECORD_SCHEMA = 2
"""Version of the point and retrieval records written now (key "schema"; records without it are version 1, whose
gradient names and labels series.Series.of and crosscheck_fits convert)."""
MAYBE_NUMBER = (int, float, type(None))
"""A number the writer may have recorded as null because it was not finite (results.strict): a standard error or
Newton step of an indefinite Hessian, the objective of a fit that diverged. Read back as null and judged as such
(data.judging_newton reads it as NaN: not at a minimum)."""

POINT = {"impl": str, "dtype": str, "npix": int, "nzern": int, "nparams": int, "estimated": bool,
         "fit_s": {"median": NUMBER}}
"""What every point record holds; a measured one also holds MEASURED."""
MEASURED = {"setup_s": {"median": NUMBER}, "total_s": {"median": NUMBER},
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
        if "time_limit_s" in record:  # its fits run to a time limit (since 2026-12-02)
            check_record(path, number, record, TIME_LIMITED)
            if not record["time_limit_s"] > 0:
                raise RunError(f"{path}: line {number}, key 'time_limit_s': a time limit must be positive, got "
                               f"{record['time_limit_s']}")
    for key in times:
        if not record[key]["median"] > 0:
            raise RunError(f"{path}: line {number}, key '{key}.median': a time must be positive, got "
                           f"{record[key]['median']}")


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


def once_each(key_of, what, identical_too=False, replaces=None):
    """A read_records check that refuses a second record of the same key (a point and series, a fit), naming both
    lines: a different one always (which would the report use?), an identical one where identical_too (a reference
    run holds each record once); except where replaces(earlier, record) says the later one replaces the earlier."""
    seen = {}

    def check(path, number, record):
        key = key_of(record)
        if key not in seen or (replaces is not None and replaces(seen[key][1], record)):
            seen[key] = (number, record)
            return
        first, earlier = seen[key]
        if identical_too or earlier != record:
            same = "the same record twice" if earlier == record else "two different records"
            raise RunError(f"{path}: lines {first} and {number} hold {same} of one {what} ({describe_key(key)}); "
                           "a run holds one record of each: keep the right one")

    return check


def describe_key(key):
    """A record's key in words: its parts joined, empty ones left out."""
    return ", ".join(str(part) for part in key if part not in ("", None))


def check_vectors(path, number, vectors, size, place="line"):
    """Each of vectors ({key: list or None}) a list of size numbers (null for a number that was not finite, read
    back as NaN in place)."""
    for key, vector in vectors.items():
        if vector is None:
            continue
        if not isinstance(vector, list) or len(vector) != size or not all(is_a(v, MAYBE_NUMBER) for v in vector):
            raise RunError(f"{path}: {place} {number}, key {key!r}: expected {size} numbers (one per parameter), "
                           f"got {json.dumps(vector)[:80]}")
        vector[:] = [math.nan if value is None else value for value in vector]  # recorded null: not finite


def as_written(path, number, record, validate):
    """record stamped with RECORD_SCHEMA, checked as a reader will read it back (its strict JSON, validate), before
    it is written: a record its own reader would refuse is a fault of the writer, raised here, not found later."""
    record = record | {"schema": RECORD_SCHEMA}
    validate(path, number, json.loads(dumps(record)))
    return record


def read_keyed(path, validate, key_of, what, repair, strict, replaces=None):
    """The records of a JSON-lines file, each validated, at most one per key (once_each; the caller drops the records
    replaced, where replaces allows any)."""
    unique = once_each(key_of, what, identical_too=strict, replaces=replaces)

    def check(path, number, record):
        validate(path, number, record)
        unique(path, number, record)

    return read_records(path, repair=repair, check=check)


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


def latest_of_each(records: list[dict], key_of) -> list[dict]:
    """records, keeping of each key only its last record, in the order read."""
    last = {key_of(record): number for number, record in enumerate(records)}
    return [record for number, record in enumerate(records) if last[key_of(record)] == number]


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


RUN_RECORD = {"run_id": str, "date": str, "hostname": str, "cpu": str, "cpu_count": int, "gpu": (str, type(None)),
              "threads": int, "torch_threads": int, "python": str, "git_commit": (str, type(None)),
              **dict.fromkeys(registry.version_keys(), str)}
"""What every session's record in a runs.jsonl holds (environment.environment_record and the run id): what the
appendices print of each session."""


def read_run_records(path: pathlib.Path, repair: bool = False) -> list[dict]:
    """The validated session records of a sweep's or a retrieval's runs.jsonl."""
    return read_records(path, repair=repair, schema=RUN_RECORD)


FROM_TRUTH, PLAIN, STAGED = "from the truth", "cold start", "cold start, orders raised"
"""How a fit starts: at the truth (the judge of the others), at zero aberration, or at zero aberration fitting the
Zernike orders 2, 3, ... up to the point's in turn, each from the last one's result (as OOF software does)."""
STARTS = (FROM_TRUTH, PLAIN, STAGED)


RETRIEVAL_RECORD = {"impl": str, "dtype": str, "npix": int, "nzern": int, "rms": NUMBER, "seed": int, "start": str,
          "total_s": NUMBER, "outcome": {"nit": int, "nfev": int, "success": bool, "message": str,
                                          "fun": MAYBE_NUMBER, "x": list}, "phase_error_rms": MAYBE_NUMBER}
"""What every retrieval record holds; the truth-started one also holds phase_stderr_rms."""


def check_retrieval_record(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a retrieval record as read: an error names the file, the line and the key."""
    check_record(path, number, record, RETRIEVAL_RECORD)
    if record["start"] not in STARTS:
        raise RunError(f"{path}: line {number}, key 'start': one of {', '.join(STARTS)}, got {record['start']!r}")
    series_of(path, number, record)
    outcome = record["outcome"]
    vectors = {"truth": record.get("truth"), "outcome.x": outcome["x"], "outcome.stderr": outcome.get("stderr")}
    if outcome.get("convergence") is not None:
        check_record(path, number, outcome["convergence"], ACCOUNT)
        vectors |= {f"outcome.convergence.{key}": outcome["convergence"].get(key)
                    for key in ("stderr", "stderr_sandwich")}
    check_vectors(path, number, vectors, len(outcome["x"]))
    if not record["total_s"] > 0:
        raise RunError(f"{path}: line {number}, key 'total_s': a time must be positive, got {record['total_s']}")
    if record["start"] == FROM_TRUTH:
        check_record(path, number, record, {"phase_stderr_rms": NUMBER})
        if "optimum" in record:  # fits since 2026-12-02: the optimum the truth's cold starts are judged against
            check_optimum(path, number, record["optimum"] | {key: record[key] for key in ("npix", "nzern")}
                          | {"objective": "cauchy", "data_sha256": record["data_sha256"]})
    elif "distance" in record:  # cold starts since 2026-12-02: distance from the judge's optimum, time to it
        check_record(path, number, record, {"distance": MAYBE_NUMBER, "target_s": MAYBE_NUMBER})
        if record["target_s"] is not None and not 0 < record["target_s"] <= record["total_s"]:
            raise RunError(f"{path}: line {number}, key 'target_s': the time to the target must lie in (0, total_s = "
                           f"{record['total_s']}], got {record['target_s']}")


def read_retrieval(path: pathlib.Path, repair: bool = False, strict: bool = False) -> list[dict]:
    """The validated records of a retrieval run's points.jsonl; two different fits of one truth, series and start
    are refused (identical ones too where strict)."""
    return read_keyed(path, check_retrieval_record, record_key, "truth, series and start", repair, strict)


def truth_key(record: dict) -> tuple:
    """The truth a record fitted: (npix, nzern, rms, seed)."""
    return record["npix"], record["nzern"], record["rms"], record["seed"]


def record_key(record: dict) -> tuple:
    """What identifies a record: its truth, series and start."""
    return (*truth_key(record), Series.of(record), record["start"])


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


PEERS_CHECK = {"passed": bool, "rows": list}
PEERS_ROW = {"npix": int, "nzern": int, "objective": str, "passed": bool, "objective_error": MAYBE_NUMBER,
             "gradient_error": MAYBE_NUMBER}
"""What the peers' gate (peers/check.json) holds, and each of its rows."""


def read_peers_check(path: pathlib.Path) -> dict | None:
    """The peers' gate (peers/check.json), validated, or None where it was not run."""
    content = load_json(path, ("rows",))
    if content is None:
        return None
    check_record(path, 1, content, PEERS_CHECK, "record")
    for number, row in enumerate(content["rows"], 1):
        check_record(path, number, row, PEERS_ROW, "rows item")
    return content


def load_json(path: pathlib.Path, lists: tuple[str, ...] = ()) -> dict | None:
    """A JSON results file (a record whose keys in lists hold lists of records), or None where it was not
    produced; a damaged one is an error naming the file and what is wrong."""
    if not path.exists():
        return None
    try:
        content = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise RunError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(content, dict):
        raise RunError(f"{path}: not a record (got {type(content).__name__})")
    for key in lists:
        if not isinstance(content.get(key, []), list) or not all(isinstance(item, dict) for item in content.get(
                key, [])):
            raise RunError(f"{path}: key {key!r} must be a list of records")
    return content


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


REAL_FIT = {"impl": str, "dtype": str, "gradient": str, "minimizer": str, "repeat": int, "prep_s": NUMBER,
            "total_s": NUMBER, "target_s": MAYBE_NUMBER, "end_distance": MAYBE_NUMBER,
            "outcome": {"nit": int, "nfev": int, "success": bool, "message": str, "fun": MAYBE_NUMBER, "x": list}}
"""One timed fit of a real-maps stage: target_s null where it never came within the target of the optimum (its time
to solution is then a bound, total_s)."""
REAL_STAGE = {"source": str, "order": int, "start": list, "fits": list, "minima": list, "pairs": list,
              "optimum": {"x": list, "fun": MAYBE_NUMBER, "stderr": list, "newton_steps": int,
                          "last_step": MAYBE_NUMBER, "polished": bool}}
"""One stage (source, Zernike order) of the real-maps fits: its start, its fits, each series' own minimum and the
stage's optimum."""
REAL_MINIMUM = {"impl": str, "dtype": str, "gradient": str, "minimizer": str, "fun": MAYBE_NUMBER, "polished": bool,
                "distance": MAYBE_NUMBER}
REAL_PAIR = {"a": dict, "b": dict, "distance": MAYBE_NUMBER}
"""Two series' fits of one stage (their first repeats), the Mahalanobis distance between their ends (standard
errors, under the stage optimum's sandwich covariance)."""
REAL_SOURCE = {"source": str, "title": str, "order": int, "npix": int, "sigma": NUMBER, "shape": list, "step": NUMBER,
               "wavelength": NUMBER, "noise": list, "gamma": NUMBER, "residual_rms": list,
               "residual_lag1": {"u": NUMBER, "v": NUMBER}, "surface_rms_um": NUMBER,
               "surface_rms_without_focus_um": NUMBER, "x": list}
"""What the report says of one source of real maps beside its fits."""


def check_real_stage(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a real-maps stage record as read: an error names the file, the line and the key."""
    check_record(path, number, record, REAL_STAGE)
    size = len(record["optimum"]["x"])
    check_vectors(path, number, {"start": record["start"], "optimum.x": record["optimum"]["x"],
                                 "optimum.stderr": record["optimum"]["stderr"]}, size)
    for place, fit in enumerate(record["fits"]):
        check_record(path, number, fit, REAL_FIT)
        series_of(path, number, fit)
        check_vectors(path, number, {f"fits[{place}].outcome.x": fit["outcome"]["x"]}, size)
        if not (fit["total_s"] > 0 and fit["prep_s"] >= 0):
            raise RunError(f"{path}: line {number}, key 'fits[{place}].total_s': a time must be positive, got "
                           f"{fit['total_s']}")
        if fit["target_s"] is not None and not 0 < fit["target_s"] <= fit["total_s"]:
            raise RunError(f"{path}: line {number}, key 'fits[{place}].target_s': the time to the target must lie in "
                           f"(0, total_s = {fit['total_s']}], got {fit['target_s']}")
    for minimum in record["minima"]:
        check_record(path, number, minimum, REAL_MINIMUM)
        series_of(path, number, minimum)
    for pair in record["pairs"]:
        check_record(path, number, pair, REAL_PAIR)
        series_of(path, number, pair["a"])
        series_of(path, number, pair["b"])


def check_real_source(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a real-maps source record as read."""
    check_record(path, number, record, REAL_SOURCE)
    check_vectors(path, number, {"noise": record["noise"], "residual_rms": record["residual_rms"]}, 3)


REAL_TAPER = {"source": str, "sigma": NUMBER, "profile": list}
"""The illumination taper chosen for one source of real maps, and the profile it was chosen from."""


def check_real_taper(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a real-maps taper record as read."""
    check_record(path, number, record, REAL_TAPER)
    if not all(isinstance(p, list) and len(p) == 2 and is_a(p[0], NUMBER) and is_a(p[1], MAYBE_NUMBER)
               for p in record["profile"]):
        raise RunError(f"{path}: line {number}, key 'profile': expected [sigma, objective] pairs")


def read_real_maps(folder: pathlib.Path, repair: bool = False, strict: bool = False) -> tuple[list, list, list]:
    """(stage records, source records, taper records) of a real-maps folder, validated, one of each stage, source
    and taper."""
    stages = read_keyed(folder / "stages.jsonl", check_real_stage, lambda r: (r["source"], r["order"]),
                        "source and order", repair, strict)
    sources = read_keyed(folder / "sources.jsonl", check_real_source, lambda r: (r["source"],), "source", repair,
                         strict)
    tapers = read_keyed(folder / "tapers.jsonl", check_real_taper, lambda r: (r["source"],), "source's taper", repair,
                        strict)
    return stages, sources, tapers


PYOOF_FIT = {"source": str, "order": int, "seconds": NUMBER, "nfev": int, "status": int, "success": bool,
             "message": str, "cost": NUMBER, "params": list, "pyoof": str}
"""One order of pyoof's fits of one source of real maps (replication.pyoof_peer)."""


def check_pyoof_fit(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a pyoof fit record as read."""
    check_record(path, number, record, PYOOF_FIT)
    check_vectors(path, number, {"params": record["params"]}, len(record["params"]))


def read_pyoof(path: pathlib.Path, repair: bool = False, strict: bool = False) -> list[dict]:
    """pyoof's fits of the real maps, one per source and order."""
    return read_keyed(path, check_pyoof_fit, lambda r: (r["source"], r["order"]), "source and order", repair, strict)


AUTOGRAD_PARTS = ("forward (records the graph)", "backward()")
"""The two parts of a torch autograd value-and-gradient, as the bench's profile names them."""

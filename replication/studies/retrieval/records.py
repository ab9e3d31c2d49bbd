"""The cold-start retrieval's records (retrieval-<profile>/points.jsonl): schema, keys and reader."""

from __future__ import annotations

import pathlib

from replication.core.records import MAYBE_NUMBER, check_vectors, read_keyed
from replication.core.results import NUMBER, RunError, check_record
from replication.core.series import Series
from replication.studies.sweep.records import ACCOUNT, check_optimum, series_of

FROM_TRUTH, PLAIN, STAGED = "from the truth", "cold start", "cold start, orders raised"
"""How a fit starts: at the truth (the judge of the others), at zero aberration, or at zero aberration fitting the
Zernike orders 2, 3, ... up to the point's in turn, each from the last one's result (as OOF software does)."""


STARTS = (FROM_TRUTH, PLAIN, STAGED)


RETRIEVAL_RECORD = {"impl": str, "dtype": str, "npix": int, "nzern": int, "rms": NUMBER, "seed": int, "start": str,
          "total_s": NUMBER, "outcome": {"nit": int, "nfev": int, "success": bool, "message": str,
                                          "fun": MAYBE_NUMBER, "x": list}, "phase_error_rms": MAYBE_NUMBER}
"""What every retrieval record holds; the truth-started one also holds phase_stderr_rms."""
STAMP = {"profile": str, "tol": NUMBER, "threads": int}
"""The settings a record carries since 2026-12-03 (checked where it has them: the run's settings, kept with every
fit)."""


def check_retrieval_record(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a retrieval record as read: an error names the file, the line and the key."""
    check_record(path, number, record, RETRIEVAL_RECORD)
    if "profile" in record:
        check_record(path, number, record, STAMP)
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

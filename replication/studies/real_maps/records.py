"""The real maps' records (real-maps/: stages, sources, tapers; pyoof's fits) and their readers."""

from __future__ import annotations

import pathlib

from replication.core.records import MAYBE_NUMBER, check_vectors, read_keyed
from replication.core.results import NUMBER, RunError, check_record, is_a
from replication.studies.sweep.records import series_of

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


STAMP = {"npix": int, "orders": list, "objective": str, "repeats": int, "tol": NUMBER, "tapers": list,
         "target": NUMBER}
"""The settings each real-maps record carries beside its maps' SHA-256 (key maps_sha256_<source>), since 2026-12-03:
what a resume compares where settings.json and runs.jsonl are lost."""


def check_stamp(path, number, record):
    """A record's stamp (STAMP and its source's maps hash), where it carries one (records since 2026-12-03)."""
    if "maps_sha256_" + str(record.get("source")) in record:
        check_record(path, number, record, STAMP | {"maps_sha256_" + record["source"]: str})


def check_real_stage(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a real-maps stage record as read: an error names the file, the line and the key."""
    check_record(path, number, record, REAL_STAGE)
    check_stamp(path, number, record)
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
    check_stamp(path, number, record)
    check_vectors(path, number, {"noise": record["noise"], "residual_rms": record["residual_rms"]}, 3)


REAL_TAPER = {"source": str, "sigma": NUMBER, "profile": list}
"""The illumination taper chosen for one source of real maps, and the profile it was chosen from."""


def check_real_taper(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a real-maps taper record as read."""
    check_record(path, number, record, REAL_TAPER)
    check_stamp(path, number, record)
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
"""One order of pyoof's fits of one source of real maps (replication.studies.real_maps.pyoof_peer)."""


def check_pyoof_fit(path: pathlib.Path, number: int, record: dict) -> None:
    """Validate a pyoof fit record as read."""
    check_record(path, number, record, PYOOF_FIT)
    check_vectors(path, number, {"params": record["params"]}, len(record["params"]))


def read_pyoof(path: pathlib.Path, repair: bool = False, strict: bool = False) -> list[dict]:
    """pyoof's fits of the real maps, one per source and order."""
    return read_keyed(path, check_pyoof_fit, lambda r: (r["source"], r["order"]), "source and order", repair, strict)


WITHIN_UM = 10.0
"""A closure seed recovers the surface where the found surface lies within this rms (micrometres) of the known one."""
CLOSURE_FILE = "closure.jsonl"
"""A closure folder's records: one line per seed as it ends."""
CLOSURE = {"seed": int, "npix": int, "orders": list, "sigma": NUMBER, "true_sigma": NUMBER, "seconds": NUMBER,
           "success": bool, "surface_error_um": MAYBE_NUMBER, "truth_surface_um": NUMBER, "x": list, "truth": list}
"""One seed of the closure test: the surface found against the known one (micrometres rms), the time the reduction
took, the taper chosen against the one the maps were made with."""


def check_closure(path, number, record):
    """Validate one closure record as read: an error names the file, the line and the key."""
    check_record(path, number, record, CLOSURE)
    check_vectors(path, number, {"x": record["x"]}, len(record["truth"]))
    if not record["seconds"] > 0:
        raise RunError(f"{path}: line {number}, key 'seconds': a time must be positive, got {record['seconds']}")

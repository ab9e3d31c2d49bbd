"""Cross-checks: the implementations compute the same model, the same gradient and the same fit."""

import json
import time

import numpy as np

from replication.data import aberrated_params, simulate_observation, standard_errors, true_params
from replication.environment import environment_record, thread_limits
from replication.implementations import ALL, Implementation
from replication.results import write_json
from replication.timing import data_for

POINTS = {"smoke": ((16, 3),), "default": ((32, 3), (64, 4), (128, 6))}
"""(npix, nzern) pairs checked: a tiny one for tests, three for the report."""
TOLERANCES = {"beams": 1e-12, "nll": 1e-12, "beams_float32": 1e-4, "nll_float32": 1e-5, "gradient": 1e-5,
              "fit_stderr": 0.1, "fit_nll": 1e-10}
"""Relative tolerances, except fit_stderr: the largest parameter difference in standard errors.

beams_float32: the defocus screens reach 2 pi dz / wavelength = 286 rad, which float32 holds to about
1.7e-5 rad; beam errors of a few 1e-5 are that rounding, not a fault (seen: 1.1e-5 at npix 16)."""
FD_STEP = 1e-6
"""Step of the central differences the autograd gradient is checked against (parameter units)."""


def relative(a, b):
    """||a - b|| / ||b|| of two NumPy arrays."""
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


def to_numpy(values):
    """A float64 NumPy array of either package's output."""
    return np.asarray(values.cpu() if hasattr(values, "cpu") else values, dtype=np.float64)


def random_params(rng, nparams):
    """Aberrations of a few tenths of a radian and an offset illumination."""
    params = 0.3 * rng.standard_normal(nparams)
    params[-3:] = [0.05, -0.05, 1.1]
    return params


def check(name, npix, nzern, compare, value, tolerance_key):
    tolerance = TOLERANCES[tolerance_key]
    return {"check": name, "npix": npix, "nzern": nzern, "compare": compare, "value": value,
            "tolerance": tolerance, "passed": bool(np.isfinite(value) and value <= tolerance)}


def model_checks(impls, npix, nzern, data, rng):
    """Beams, likelihood and gradient of every implementation against the NumPy reference."""
    reference = Implementation("numpy")
    setup_np = reference.make_setup(npix, nzern)
    params = random_params(rng, setup_np.nparams)
    beams_np = reference.package.beam_maps(params, setup_np)
    nll_np = reference.package.negative_log_likelihood(params, setup_np, data)
    checks = []
    for impl in impls:
        if impl.name == "numpy":
            continue
        setup = impl.make_setup(npix, nzern)
        suffix = "" if impl.dtype == "float64" else "_float32"
        beams = to_numpy(impl.package.beam_maps(params, setup))
        nll = impl.package.negative_log_likelihood(params, setup, data)
        compare = f"{impl.label} vs numpy"
        checks.append(check("beams", npix, nzern, compare, relative(beams, beams_np), "beams" + suffix))
        checks.append(check("likelihood", npix, nzern, compare, abs(nll - nll_np) / abs(nll_np),
                            "nll" + suffix))
        if impl.dtype == "float64":
            _, grad = impl.package.value_and_grad(params, setup, data)
            nll_at = lambda p: reference.package.negative_log_likelihood(p, setup_np, data)  # noqa: E731
            numeric = np.array([(nll_at(params + e) - nll_at(params - e)) / (2 * FD_STEP)
                                for e in FD_STEP * np.eye(params.size)])
            error = float(np.max(np.abs(grad - numeric)) / np.max(np.abs(numeric)))
            checks.append(check("gradient", npix, nzern, f"{impl.label} autograd vs central differences", error,
                                "gradient"))
    return checks


def fit_checks(impls, npix, nzern, truth, data):
    """Fit with every float64 implementation from the truth; compare with the NumPy fit in standard errors."""
    fits = []
    for impl in impls:
        if impl.dtype != "float64":
            continue
        setup = impl.make_setup(npix, nzern)
        start = time.perf_counter()
        result = impl.package.fit(setup, data, truth)
        impl.synchronize()
        fits.append({"impl": impl.name, "npix": npix, "nzern": nzern, "x": result.x.tolist(),
                     "stderr": standard_errors(result).tolist(), "fun": float(result.fun), "nit": int(result.nit),
                     "nfev": int(result.nfev), "success": bool(result.success), "message": str(result.message),
                     "fit_s": time.perf_counter() - start})
    reference = next(f for f in fits if f["impl"] == "numpy")
    checks = []
    for other in fits:
        if other is reference:
            continue
        stderr = np.array(other["stderr"])
        shift = float(np.max(np.abs(np.array(other["x"]) - np.array(reference["x"])) / stderr))
        checks.append(check("fit parameters", npix, nzern, f"{other['impl']} vs numpy (in standard errors)", shift,
                            "fit_stderr"))
        checks.append(check("fit likelihood", npix, nzern, f"{other['impl']} vs numpy",
                            abs(other["fun"] - reference["fun"]) / abs(reference["fun"]), "fit_nll"))
    return checks, fits


EXAMPLE = {"npix": 128, "nzern": 4, "radians": 0.5, "seed": 3}
"""The fit the report shows: half a radian of coma and astigmatism, retrieved from zero aberration."""


def example_fit(results_dir, npix=EXAMPLE["npix"], nzern=EXAMPLE["nzern"]):
    """Fit an aberrated observation from zero with torch; save data, model beams and parameters (npz)."""
    reference, impl = Implementation("numpy"), Implementation("torch-cpu")
    setup_np = reference.make_setup(npix, nzern)
    truth = aberrated_params(setup_np, EXAMPLE["radians"])
    data = simulate_observation(setup_np, truth, EXAMPLE["seed"])
    result = impl.package.fit(impl.make_setup(npix, nzern), data, true_params(setup_np.nparams))
    model = reference.package.beam_maps(result.x, setup_np)
    np.savez_compressed(results_dir / "example.npz", data=data, model=model, truth=truth, fitted=result.x,
                        stderr=standard_errors(result), npix=npix, nzern=nzern, nit=result.nit)


def run_crosscheck(results_dir, points="default", threads=2, seed=7):
    """Run every check at every point, writing crosscheck.json (atomically) after each point; return its content.

    An unfinished crosscheck.json of the same --points is resumed: its finished points are kept, not redone.
    Each point draws its random parameters from its own seeded generator, so a resumed run checks the same ones.
    """
    impls = [impl for impl in ALL if impl.available()]
    path = results_dir / "crosscheck.json"
    previous = json.loads(path.read_text()) if path.is_file() else None
    with thread_limits(threads):
        content = previous if previous and previous.get("points") == points else {
            "environment": environment_record(threads), "points": points, "tolerances": TOLERANCES,
            "fd_step": FD_STEP, "checks": [], "fits": [], "done": [], "complete": False,
            "unavailable": [] if Implementation("torch-cuda").available() else ["torch-cuda"]}
        for npix, nzern in POINTS[points]:
            if [npix, nzern] in content["done"]:
                continue
            truth, data = data_for(npix, nzern)
            content["checks"] += model_checks(impls, npix, nzern, data, np.random.default_rng([seed, npix, nzern]))
            more_checks, more_fits = fit_checks(impls, npix, nzern, truth, data)
            content["checks"] += more_checks
            content["fits"] += more_fits
            content["done"].append([npix, nzern])
            write_json(path, content)
        example_fit(results_dir, *(POINTS[points][-1] if points == "smoke" else (EXAMPLE["npix"], EXAMPLE["nzern"])))
    content["complete"] = True
    write_json(path, content)
    return content

"""pyoof (the OOF holography package, PyPI 0.2.3) as a peer on the real maps: the same maps, its own model and fit
(nonlinear least squares, scipy's TRF with a finite-difference Jacobian, orders 1..n each from the last), timed, and
its retrieved phase set beside ours. With --closure-seeds, on the closure test's maps instead (closure_maps: the same
seeds, the same maps as `closure` reduces), each seed written as it ends, so that a killed run resumes.

Run by `nox -s pyoof` in an environment of its own (pyoof needs astropy 5.3.4 and numpy 1.26.4); the harness is
installed there without its dependencies, for the readers. pyoof 0.2.3 needs three things done from outside to run
here: yaml.load without a Loader (PyYAML 6 refuses it), a float phase resolution (numpy's linspace refuses it), and
its plots switched off (its style asks for LaTeX).
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time

import numpy as np

from replication.core.records import as_written
from replication.core.results import RunError, append_record, atomic_stream
from replication.studies.real_maps import closure_maps
from replication.studies.real_maps import sources as real_sources
from replication.studies.real_maps.closure_records import (
    PYOOF_CLOSURE_FILE,
    check_pyoof_closure,
    maps_noise,
    read_pyoof_closure,
)
from replication.studies.real_maps.records import check_pyoof_fit

PYOOF_ILLUMINATION = "illum_pedestal"
"""pyoof's parabolic-taper illumination (its default), the taper fitted as the maps' configuration asks
(pyoof_opt_vars.yaml: amplitude and offsets fixed)."""
RESOLUTION, BOX_FACTOR = 2**8, 5
"""pyoof's FFT grid and its extent in primary radii, as pyoof-srt fitted these maps."""
PHASE_PIXELS = 64
"""Pixels across the dish of the phase maps compared."""


def pyoof_fits_file(observation: real_sources.Observation, path: pathlib.Path):
    """The three maps as pyoof's FITS input: baselines subtracted, dropped samples left out, in pyoof's order
    (minus, zero, plus)."""
    from astropy.io import fits

    rows, cols = observation.maps.shape[1:]
    step = observation.step
    u = (np.arange(cols) - (cols - 1) / 2) * step
    v = (np.arange(rows) - (rows - 1) / 2) * step
    uu, vv = np.meshgrid(u, v)  # rows along v, columns along u, as the maps
    header = fits.Header()
    header["FREQ"], header["WAVEL"] = observation.source.frequency, observation.source.wavelength
    header["MEANEL"], header["OBJECT"], header["DATE_OBS"] = 0.0, observation.source.name, observation.source.name
    tables = [fits.PrimaryHDU(header=header)]
    for index, name, sign in ((1, "MINUS OOF", -1), (0, "ZERO OOF", 0), (2, "PLUS OOF", 1)):
        keep = ~observation.dropped[index]
        beam = (observation.maps[index] - observation.baselines[index]) * observation.scale
        table = fits.BinTableHDU.from_columns([fits.Column(name="U", format="E", array=uu[keep]),
                                               fits.Column(name="V", format="E", array=vv[keep]),
                                               fits.Column(name="BEAM", format="E", array=beam[keep])])
        table.name = name
        table.header["DZ"] = sign * observation.source.dz
        tables.append(table)
    fits.HDUList(tables).writeto(path, overwrite=True)


class TimedLeastSquares:
    """scipy.optimize as pyoof's fit_beam sees it, with least_squares timed and counted call by call (one per
    order)."""

    def __init__(self, optimize):
        self.optimize, self.calls = optimize, []

    def __getattr__(self, name):
        return getattr(self.optimize, name)

    def least_squares(self, *args, **kwargs):
        start = time.perf_counter()
        result = self.optimize.least_squares(*args, **kwargs)
        self.calls.append({"seconds": time.perf_counter() - start, "nfev": int(result.nfev),
                           "status": int(result.status), "success": bool(result.success),
                           "message": str(result.message), "cost": float(result.cost)})
        return result


def patched_pyoof():
    """pyoof's fit_beam module with the three fixes applied from outside, and the timed least squares."""
    import matplotlib

    matplotlib.use("Agg")
    import importlib

    import yaml
    from pyoof import aperture

    module = importlib.import_module("pyoof.fit_beam")  # the module, which pyoof's namespace shadows by its function

    class SafeYaml:
        def __getattr__(self, name):
            return getattr(yaml, name)

        @staticmethod
        def load(stream, Loader=yaml.SafeLoader):
            return yaml.load(stream, Loader=Loader)

    module.yaml = SafeYaml()
    module.phase = lambda K_coeff, notilt, pr, resolution=1000: aperture.phase(K_coeff, notilt, pr, int(resolution))
    matplotlib.rcParams["text.usetex"] = False
    module.optimize = TimedLeastSquares(module.optimize)
    return module


def pyoof_phase(coefficients, radius):
    """pyoof's phase (radians, tilts removed) on a PHASE_PIXELS grid across the dish (rows along v, columns along
    u), NaN off the dish."""
    from pyoof import aperture

    x, y, phi = aperture.phase(np.asarray(coefficients), True, radius, PHASE_PIXELS)
    xx, yy = np.meshgrid(x, y)
    return np.where(np.hypot(xx, yy) <= radius, phi, np.nan)


def fit_with_pyoof(observation: real_sources.Observation, max_order: int, work: pathlib.Path,
                   config: pathlib.Path | None):
    """pyoof's fits of one source, orders 1..max_order: per order its time, evaluations, how it ended and its
    phase map; config: the pyoof_opt_vars.yaml saying what it fits (None: pyoof's defaults)."""
    from astropy.io import ascii
    from pyoof import aperture, extract_data_pyoof, telgeometry

    module = patched_pyoof()
    path = work / f"{observation.source.name}.fits"
    pyoof_fits_file(observation, path)
    data_info, data_obs = extract_data_pyoof(str(path))
    dish = observation.source.dish
    telescope = [telgeometry.block_manual(pr=dish["radius"], sr=dish["blockage"], a=0.0, L=0.0),
                 telgeometry.opd_manual(Fp=dish["focal_length"], F=dish["effective_focal_length"]),
                 float(dish["radius"]), "SRT"]
    module.fit_beam(data_info=data_info, data_obs=data_obs, method="trf", order_max=max_order,
                    illum_func=getattr(aperture, PYOOF_ILLUMINATION), telescope=telescope, resolution=RESOLUTION,
                    box_factor=BOX_FACTOR, fit_previous=True,
                    config_params_file=None if config is None else str(config), make_plots=False, verbose=0)
    output = sorted((work / "pyoof_out").glob(f"{observation.source.name}-*"))[-1]
    records = []
    for order, call in zip(range(1, max_order + 1), module.optimize.calls, strict=True):
        table = ascii.read(str(output / f"fitpar_n{order}.csv"))
        params = np.array(table["parfit"], dtype=float)
        records.append({"source": observation.source.name, "order": order, **call,
                        "params": [float(v) for v in params], "phase": pyoof_phase(params[4:], dish["radius"])})
    return records


def options_file(maps: pathlib.Path) -> pathlib.Path | None:
    """The maps folder's pyoof_opt_vars.yaml (what pyoof fits, as pyoof-srt fitted these maps), None where absent."""
    path = maps / "pyoof_opt_vars.yaml"
    return path if path.is_file() else None


def run(maps, folder: pathlib.Path, max_order: int):
    """Fit every source with pyoof and write pyoof.jsonl (times and parameters) and pyoof-phase-<source>.npz into
    folder."""
    import pyoof

    maps = real_sources.maps_folder(maps)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for source in real_sources.SOURCES:
            observation = real_sources.read_observation(source, maps)
            records = fit_with_pyoof(observation, max_order, pathlib.Path(scratch), options_file(maps))
            phases = np.stack([record.pop("phase") for record in records])
            with atomic_stream(folder / f"pyoof-phase-{source.name}.npz") as stream:
                np.savez_compressed(stream, phase=phases.astype(np.float32))
            for record in records:
                path = folder / "pyoof.jsonl"
                append_record(path, as_written(path, 0, record | {"pyoof": pyoof.__version__}, check_pyoof_fit))
            print(f"{source.name}: pyoof fitted n = 1..{max_order} in "
                  f"{sum(r['seconds'] for r in records):.1f} s", flush=True)


def closure_record(seed, npix, records, version, noise=closure_maps.NOISE):
    """One closure seed's record from pyoof's per-order records (fit_with_pyoof's), its maps made at that noise."""
    return {"seed": seed, "npix": npix, "max_order": records[-1]["order"], "noise": noise,
            "seconds": sum(r["seconds"] for r in records), "nfev": sum(r["nfev"] for r in records),
            "limited": [r["order"] for r in records if r["status"] == 0],
            "success": all(r["success"] for r in records), "params": records[-1]["params"], "pyoof": version}


def closure_records_like(path: pathlib.Path, npix: int, max_order: int,
                         noise: float = closure_maps.NOISE) -> list[dict]:
    """The closure records already in path (none where it does not exist), all made under these settings: a resume
    under another grid, highest order or noise is refused, naming the file, rather than mixing two kinds of fits."""
    records = read_pyoof_closure(path, repair=True) if path.is_file() else []
    other = [r for r in records if (r["npix"], r["max_order"], maps_noise(r)) != (npix, max_order, noise)]
    if other:
        first = other[0]
        raise RunError(f"{path}: holds seeds fitted at npix {first['npix']}, n = 1..{first['max_order']}, noise "
                       f"{maps_noise(first):g}; this run asks npix {npix}, n = 1..{max_order}, noise {noise:g}: "
                       "resume with those settings or choose another folder")
    return records


def run_closure(maps, folder: pathlib.Path, seeds: int, max_order: int, npix: int = real_sources.NPIX,
                noise: float = closure_maps.NOISE):
    """Fit the closure test's seeds 0..seeds-1 not yet in folder with pyoof, each written as it ends: its phase
    (pyoof-phase-closure-<seed>.npz), then its record (pyoof-closure.jsonl). The maps are closure's at the same
    grid, highest order and noise. The maps' pyoof_opt_vars.yaml, where the --maps folder holds one, sets what pyoof
    fits, as on the real maps."""
    noise = closure_maps.check_noise(noise)
    path = folder / PYOOF_CLOSURE_FILE
    done = {r["seed"] for r in closure_records_like(path, npix, max_order, noise)}  # refused before pyoof is looked for
    config = options_file(real_sources.maps_folder(maps)) if maps is not None else None
    import pyoof

    folder.mkdir(parents=True, exist_ok=True)
    for seed in (seed for seed in range(closure_maps.check_seeds(seeds)) if seed not in done):
        power, _, _ = closure_maps.simulated_maps(seed, npix, max_order, noise)
        observation = real_sources.observation_of(real_sources.SOURCES[0], power, closure_maps.STEP)
        with tempfile.TemporaryDirectory() as scratch:
            records = fit_with_pyoof(observation, max_order, pathlib.Path(scratch), config)
        with atomic_stream(folder / f"pyoof-phase-closure-{seed}.npz") as stream:
            np.savez_compressed(stream, phase=records[-1]["phase"].astype(np.float32))
        record = closure_record(seed, npix, records, pyoof.__version__, noise)
        append_record(path, as_written(path, 0, record, check_pyoof_closure))
        print(f"closure seed {seed}: pyoof fitted n = 1..{max_order} in {record['seconds']:.1f} s", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m replication.studies.real_maps.pyoof_peer",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--maps", type=pathlib.Path, default=None, help="the maps' folder (as real-maps --maps)")
    parser.add_argument("--results", type=pathlib.Path, required=True, help="the folder to write into")
    parser.add_argument("--max-order", type=int, default=real_sources.ORDERS[-1])
    parser.add_argument("--closure-seeds", type=int, default=None, metavar="N",
                        help="fit the closure test's seeds 0..N-1 instead of the real maps (resumes where stopped)")
    parser.add_argument("--npix", type=int, default=None,
                        help=f"with --closure-seeds: the closure maps' model grid (as closure --npix; default "
                             f"{real_sources.NPIX})")
    parser.add_argument("--noise", type=float, default=None,
                        help="with --closure-seeds: the closure maps' noise, a fraction of the in-focus peak (as "
                             f"closure --noise; default {closure_maps.NOISE:g})")
    args = parser.parse_args(argv)
    try:
        if args.closure_seeds is not None:
            if args.closure_seeds < 1:
                raise RunError(f"--closure-seeds {args.closure_seeds}: give a positive number of seeds")
            noise = closure_maps.NOISE if args.noise is None else args.noise
            run_closure(args.maps, args.results, args.closure_seeds, args.max_order, args.npix or real_sources.NPIX,
                        noise)
            return 0
        for name in ("npix", "noise"):
            if getattr(args, name) is not None:
                raise RunError(f"--{name} {getattr(args, name):g}: applies to --closure-seeds only (pyoof fits the "
                               "real maps as read)")
        if (args.results / "pyoof.jsonl").exists():
            raise RunError(f"--results {args.results}: holds pyoof.jsonl already; choose another folder")
        run(args.maps, args.results, args.max_order)
    except (RunError, ValueError, OSError) as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

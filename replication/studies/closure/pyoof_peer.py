"""pyoof (the OOF holography package, PyPI 0.2.3) as a peer on the closure test's maps (closure.maps: the same seeds,
the same maps as `closure` reduces), fitted as on the real maps (core.reduction.pyoof_fit), each seed written as it
ends, so that a killed run resumes. Run by `nox -s pyoof -- --closure-seeds N` in pyoof's environment.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

import numpy as np

from replication.core.records import as_written
from replication.core.reduction import sources as real_sources
from replication.core.reduction.pyoof_fit import exit_status, fit_with_pyoof, options_file, peer_parser
from replication.core.results import RunError, append_record, atomic_stream
from replication.studies.closure import maps as closure_maps
from replication.studies.closure.records import (
    PYOOF_CLOSURE_FILE,
    PyoofClosureFit,
    check_pyoof_closure,
    read_pyoof_closure,
)


def closure_record(seed, npix, records, version, noise=closure_maps.NOISE):
    """One closure seed's record from pyoof's per-order records (fit_with_pyoof's), its maps made at that noise."""
    return {"seed": seed, "npix": npix, "max_order": records[-1].order, "noise": noise,
            "seconds": sum(r.seconds for r in records), "nfev": sum(r.nfev for r in records),
            "limited": [r.order for r in records if r.status == 0],
            "success": all(r.success for r in records), "params": records[-1].params, "pyoof": version}


def closure_records_like(path: pathlib.Path, npix: int, max_order: int,
                         noise: float = closure_maps.NOISE) -> list[PyoofClosureFit]:
    """The closure records already in path (none where it does not exist), all made under these settings: a resume
    under another grid, highest order or noise is refused, naming the file, rather than mixing two kinds of fits."""
    records = read_pyoof_closure(path, repair=True) if path.is_file() else []
    other = [r for r in records if (r.npix, r.max_order, r.noise) != (npix, max_order, noise)]
    if other:
        first = other[0]
        raise RunError(f"{path}: holds seeds fitted at npix {first.npix}, n = 1..{first.max_order}, noise "
                       f"{first.noise:g}; this run asks npix {npix}, n = 1..{max_order}, noise {noise:g}: "
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
    done = {r.seed for r in closure_records_like(path, npix, max_order, noise)}  # refused before pyoof is looked for
    config = options_file(real_sources.maps_folder(maps)) if maps is not None else None
    import pyoof

    folder.mkdir(parents=True, exist_ok=True)
    for seed in (seed for seed in range(closure_maps.check_seeds(seeds)) if seed not in done):
        power, _, _ = closure_maps.simulated_maps(seed, npix, max_order, noise)
        observation = real_sources.observation_of(closure_maps.SOURCE, power, closure_maps.STEP)
        with tempfile.TemporaryDirectory() as scratch:
            records = fit_with_pyoof(observation, max_order, pathlib.Path(scratch), config)
        with atomic_stream(folder / f"pyoof-phase-closure-{seed}.npz") as stream:
            np.savez_compressed(stream, phase=records[-1].phase.astype(np.float32))
        record = closure_record(seed, npix, records, pyoof.__version__, noise)
        append_record(path, as_written(path, 0, record, check_pyoof_closure))
        print(f"closure seed {seed}: pyoof fitted n = 1..{max_order} in {sum(r.seconds for r in records):.1f} s",
              flush=True)


def main(argv=None):
    parser = peer_parser("python -m replication.studies.closure.pyoof_peer", __doc__.split("\n")[0])
    parser.add_argument("--closure-seeds", type=int, required=True, metavar="N",
                        help="fit the closure test's seeds 0..N-1 (resumes where stopped)")
    parser.add_argument("--npix", type=int, default=None,
                        help=f"the closure maps' model grid (as closure --npix; default {real_sources.NPIX})")
    parser.add_argument("--noise", type=float, default=None,
                        help="the closure maps' noise, a fraction of the in-focus peak (as closure --noise; default "
                             f"{closure_maps.NOISE:g})")
    args = parser.parse_args(argv)

    def fitting():
        if args.closure_seeds < 1:
            raise RunError(f"--closure-seeds {args.closure_seeds}: give a positive number of seeds")
        noise = closure_maps.NOISE if args.noise is None else args.noise
        run_closure(args.maps, args.results, args.closure_seeds, args.max_order, args.npix or real_sources.NPIX, noise)

    return exit_status(parser, fitting)


if __name__ == "__main__":
    sys.exit(main())

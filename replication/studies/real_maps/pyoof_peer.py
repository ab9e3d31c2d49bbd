"""pyoof (the OOF holography package, PyPI 0.2.3) as a peer on the real maps: the same maps, its own model and fit
(core.reduction.pyoof_fit), timed, and its retrieved phase set beside ours. Run by `nox -s pyoof` in an environment of
its own; the harness is installed there without its dependencies, for the readers. The closure test's seeds have
their own peer (studies.closure.pyoof_peer).
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

import numpy as np

from replication.core.records import as_written
from replication.core.reduction import sources as real_sources
from replication.core.reduction.pyoof_fit import check_pyoof_fit, exit_status, fit_with_pyoof, options_file, peer_parser
from replication.core.results import RunError, append_record, atomic_stream


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
            phases = np.stack([record.phase for record in records])
            with atomic_stream(folder / f"pyoof-phase-{source.name}.npz") as stream:
                np.savez_compressed(stream, phase=phases.astype(np.float32))
            for record in records:
                path = folder / "pyoof.jsonl"
                append_record(path, as_written(path, 0, record.record() | {"pyoof": pyoof.__version__},
                                               check_pyoof_fit))
            print(f"{source.name}: pyoof fitted n = 1..{max_order} in "
                  f"{sum(r.seconds for r in records):.1f} s", flush=True)


def main(argv=None):
    parser = peer_parser("python -m replication.studies.real_maps.pyoof_peer", __doc__.split("\n")[0])
    args = parser.parse_args(argv)

    def fitting():
        if (args.results / "pyoof.jsonl").exists():
            raise RunError(f"--results {args.results}: holds pyoof.jsonl already; choose another folder")
        run(args.maps, args.results, args.max_order)

    return exit_status(parser, fitting)


if __name__ == "__main__":
    sys.exit(main())

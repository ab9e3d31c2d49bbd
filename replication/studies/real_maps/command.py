"""The real-maps command: the SRT's maps and a GRASP simulation fitted in both trees."""

import pathlib

from reference_numpy.constants import MAX_NZERN
from replication.core import runs
from replication.core.options import (
    RUN_HELP,
    add_measuring_options,
    add_run_options,
    grid_size,
    integer_in,
    positive_int,
)
from replication.core.writers import writer_folder
from replication.studies.real_maps import measure as real_maps
from replication.studies.real_maps import sources as real_sources


def add_real_maps_command(fits):
    """Fits of real maps made by others (the SRT's observed maps and a GRASP simulation), in both trees."""
    fits.description = RUN_HELP + f" The maps are not part of the repository: {real_sources.WHENCE}."
    fits.add_argument("--maps", type=pathlib.Path, default=None,
                      help="the folder holding observed/ and grasp-simulated/ (default: "
                           f"${real_sources.DATA_FOLDER_VARIABLE}, else {real_sources.DEFAULT_FOLDER} from the "
                           "repository "
                           "root)")
    fits.add_argument("--source", choices=[s.name for s in real_sources.SOURCES], action="append", default=None,
                      help="the maps to fit, repeatable (default: all)")
    fits.add_argument("--max-order", type=integer_in(1, MAX_NZERN, "Zernike order"), default=real_sources.ORDERS[-1],
                      help=f"fit orders 1..this, each from the last (default {real_sources.ORDERS[-1]})")
    fits.add_argument("--npix", type=grid_size, default=real_sources.NPIX,
                      help=f"the model's grid, at least the maps' size (default {real_sources.NPIX})")
    fits.add_argument("--repeats", type=positive_int, default=real_maps.REPEATS,
                      help=f"timed fits of each stage by each series (default {real_maps.REPEATS})")
    add_run_options(fits, "real-maps")
    add_measuring_options(fits)
    fits.set_defaults(func=run_real_maps_command)


def run_real_maps_command(args):
    sources = [real_sources.source_named(name) for name in args.source] if args.source else real_sources.SOURCES
    observations = real_sources.read_observations(sources, args.maps, args.npix)  # before any folder is made
    results, lock = writer_folder(args, "real-maps")
    with runs.exclusive(lock):
        count = real_maps.run_real_maps(results, observations, args.max_order, args.npix, args.repeats, args.threads,
                                        quiet=args.quiet)
    print(f"{results / real_sources.STAGES_FILE}: {count} fit(s) made in this run")
    return 0


ARGUMENTS = {"real-maps": add_real_maps_command}
"""The arguments of each command this module runs (cli.COMMANDS names it)."""

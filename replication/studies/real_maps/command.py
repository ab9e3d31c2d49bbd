"""The real-maps command: the SRT's maps and a GRASP simulation fitted in both trees."""

import argparse
import pathlib

from oof_common.limits import MAX_NZERN
from replication.core import measurement, runs
from replication.core.options import (
    RUN_HELP,
    add_measuring_options,
    add_run_options,
    grid_size,
    integer_in,
    objective_option,
    positive_int,
)
from replication.core.reduction import configs as real_configs
from replication.core.reduction import sources as real_sources
from replication.core.reduction.scan_noise import WHITEN_DEFAULT, WHITEN_FROM, WHITEN_MODES, whitens
from replication.core.reduction.surface import ORIENTATIONS
from replication.core.writers import writer_folder
from replication.studies.real_maps import measure as real_maps
from replication.studies.real_maps import multistart


def add_real_maps_command(fits):
    """Fits of real maps made by others (the SRT's observed maps and a GRASP simulation), in both trees."""
    fits.description = RUN_HELP + f" The maps are not part of the repository: {real_sources.WHENCE}."
    fits.add_argument("--maps", type=pathlib.Path, default=None,
                      help="the folder holding observed/ and grasp-simulated/ (default: "
                           f"${real_sources.DATA_FOLDER_VARIABLE}, else {real_sources.DEFAULT_FOLDER} from the "
                           "repository "
                           "root)")
    fits.add_argument("--source", choices=[s.name for s in real_sources.SOURCES], action="append", default=None,
                      help="a shipped source's maps to fit, repeatable (default: all shipped, unless --config)")
    fits.add_argument("--config", type=pathlib.Path, action="append", default=None,
                      help="a TOML file describing a telescope and its three maps (copy one of "
                           f"{', '.join(str(p) for p in real_configs.shipped_configs())} and edit it), repeatable; "
                           "its folder and files are looked for in --maps")
    fits.add_argument("--objective", type=objective_option(real_sources.OBJECTIVES),
                      default=real_sources.OBJECTIVES[0],
                      help="what the fits minimise: gaussian, least squares in units of the noise (default), or "
                           "cauchy, the Cauchy likelihood at the noise's scale (the paper's)")
    fits.add_argument("--per-map-noise", action=argparse.BooleanOptionalAction, default=True,
                      help="compare each map in units of its own noise (the default: the objective's scale is the "
                           "maps' median noise, each map's excess weighted by that over its own; the SRT's +dz map is "
                           "37%% noisier than its -dz map); --no-per-map-noise: one scale for all three")
    fits.add_argument("--whiten", choices=WHITEN_MODES, default=WHITEN_DEFAULT,
                      help="refit the last order with each map's excess whitened along the scans (least squares of "
                           "it is the efficient estimator where the noise is correlated along the scans): auto where "
                           "the border band's noise correlates along one axis of the maps only (at least "
                           f"{WHITEN_FROM:g}; the default), yes, or no; the surface is then the whitened fit's")
    fits.add_argument("--orientation", choices=tuple(ORIENTATIONS), default="ours",
                      help="how the surface files lie: ours (default; rows along the maps' v, columns along u, both "
                           "increasing) or pyoof's (pyoof 0.2.3's phase maps of the same maps: ours rotated by 180 "
                           "degrees); the FITS header says which (ORIENT)")
    fits.add_argument("--max-order", type=integer_in(1, MAX_NZERN, "Zernike order"), default=real_sources.ORDERS[-1],
                      help=f"fit orders 1..this, each from the last (default {real_sources.ORDERS[-1]})")
    fits.add_argument("--npix", type=grid_size, default=real_sources.NPIX,
                      help=f"the model's grid, at least the maps' size (default {real_sources.NPIX})")
    fits.add_argument("--repeats", type=positive_int, default=real_maps.REPEATS,
                      help=f"timed fits of each stage by each series (default {real_maps.REPEATS})")
    fits.add_argument("--starts", type=integer_in(0, 10_000, "random starts"), default=multistart.STARTS,
                      help="random starts of the last order, each fitted alone, that look for its global optimum "
                           f"(default {multistart.STARTS}; 0: none)")
    add_run_options(fits, "real-maps")
    add_measuring_options(fits)
    fits.set_defaults(func=run_real_maps_command)


def not_shadowing(source, path):
    """A --config source, refused where it takes a shipped source's name with other content (its records and the
    report would show it under the shipped source's title)."""
    shipped = next((known for known in real_sources.SOURCES if known.name == source.name), None)
    if shipped is not None and vars(shipped) != vars(source):
        raise runs.RunError(f"--config {path}: key 'observation.name': {source.name!r} is a shipped source's name and "
                            "this configuration differs from it; give it a name of its own")
    return source


def run_real_maps_command(args):
    sources = [real_sources.source_named(name) for name in args.source or ()]
    sources += [not_shadowing(real_configs.read_config(path), path) for path in args.config or ()]
    sources = sources or list(real_sources.SOURCES)
    names = [source.name for source in sources]
    if len(set(names)) != len(names):
        raise runs.RunError(f"--source/--config: {sorted({n for n in names if names.count(n) > 1})[0]} named twice; "
                            "each source once")
    observations = [observation.with_objective(args.objective).with_per_map_noise(args.per_map_noise)
                    for observation in real_sources.read_observations(sources, args.maps, args.npix)]  # before any
    # folder is made
    observations = [o.whitened(whitens(args.whiten, o.noise_correlation)) for o in observations]
    results, lock = writer_folder(args, "real-maps")
    with runs.exclusive(lock):
        threads = measurement.chosen_threads(args.threads, results)
        count = real_maps.run_real_maps(results, observations, args.max_order, args.npix, args.repeats, threads,
                                        quiet=args.quiet, starts=args.starts, whiten=args.whiten,
                                        orientation=args.orientation)
    print(f"{results / real_sources.STAGES_FILE}: {count} fit(s) made in this run")
    return 0


ARGUMENTS = {"real-maps": add_real_maps_command}
"""The arguments of each command this module runs (cli.COMMANDS names it)."""

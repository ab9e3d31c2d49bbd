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
from replication.core.writers import writer_folder
from replication.studies.real_maps import bound, closure, closure_maps, closure_read, multistart
from replication.studies.real_maps import configs as real_configs
from replication.studies.real_maps import measure as real_maps
from replication.studies.real_maps import sources as real_sources
from replication.studies.real_maps.closure_records import BOUND_FILE, CLOSURE_FILE, WITHIN_UM


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
    fits.add_argument("--per-map-noise", action="store_true",
                      help="compare each map in units of its own noise (the objective's scale is the maps' median "
                           "noise; each map's excess weighted by that over its own); default: one scale for all three")
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
    results, lock = writer_folder(args, "real-maps")
    with runs.exclusive(lock):
        threads = measurement.chosen_threads(args.threads, results)
        count = real_maps.run_real_maps(results, observations, args.max_order, args.npix, args.repeats, threads,
                                        quiet=args.quiet, starts=args.starts)
    print(f"{results / real_sources.STAGES_FILE}: {count} fit(s) made in this run")
    return 0


def add_closure_command(closure):
    """The closure test: simulated SRT-like maps with a known surface, reduced as the real maps are."""
    closure.description = RUN_HELP + (" Each seed draws a known surface (1 rad rms of Zernike terms n = 2..5), "
                                       "baselines and scan-correlated noise on maps like the SRT's, and reduces them "
                                       "from a cold start; the report gives how many seeds recover the surface within "
                                       f"{WITHIN_UM:g} um rms.")
    closure.add_argument("--seeds", type=integer_in(1, closure_maps.MAX_SEEDS, "seeds"), default=CLOSURE_SEEDS,
                         help=f"seeds 0..N-1 reduced (default {CLOSURE_SEEDS}; done ones are kept)")
    closure.add_argument("--npix", type=closure_grid, default=real_sources.NPIX,
                         help=f"the model's grid (default {real_sources.NPIX}; at least the maps' "
                              f"{max(closure_maps.SHAPE)})")
    closure.add_argument("--max-order", type=integer_in(2, MAX_NZERN, "Zernike order"),
                         default=real_sources.ORDERS[-1],
                         help=f"the known surface's and the ladder's highest order (default {real_sources.ORDERS[-1]})")
    closure.add_argument("--noise", type=noise_level, default=closure_maps.NOISE,
                         help="the noise's standard deviation, a fraction of the in-focus peak (default "
                              f"{closure_maps.NOISE:g}, the SRT maps'); the seeds' draws do not depend on it, so a "
                              "lower level makes the same maps with the noise scaled")
    closure.add_argument("--map-noise", type=noise_ratio, nargs=3, default=list(closure_maps.EQUAL_NOISE),
                         metavar=("IN_FOCUS", "MINUS_DZ", "PLUS_DZ"),
                         help="each map's noise as a multiple of --noise (default 1 1 1; the SRT's maps: about 1 1 "
                              "1.37)")
    closure.add_argument("--per-map-noise", action="store_true",
                         help="reduce each map in units of its own noise (as real-maps --per-map-noise)")
    closure.add_argument("--truth-order", type=integer_in(2, MAX_NZERN, "Zernike order"), default=None,
                         help="draw the known surface up to this order, beyond the ladder's --max-order (default: "
                              "the same): the seeds then say what the order rule chose, the truncation systematic "
                              "and the share of the dish where the error lies within 2 sigma of the stated "
                              "uncertainty, statistical alone and with the systematic")
    closure.add_argument("--bound", action="store_true",
                         help="instead of reducing, write for the same seeds the surface error the Fisher information "
                              "at each truth predicts for the reduction's least squares and for the efficient "
                              "estimator (the Cramer-Rao bound; untimed, resumable)")
    add_run_options(closure, "closure")
    add_measuring_options(closure)
    closure.set_defaults(func=run_closure_command)


def closure_grid(text):
    """An argparse type: a grid size that holds the closure's maps (closure_maps.check_grid)."""
    try:
        return closure_maps.check_grid(grid_size(text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("npix: ")) from None


def noise_level(text):
    """An argparse type: a noise level closure_maps.check_noise admits."""
    try:
        value = float(text)
    except ValueError:
        value = text
    try:
        return closure_maps.check_noise(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("noise: ")) from None


def noise_ratio(text):
    """An argparse type: one map's noise as a multiple of the level (closure_maps.check_noise_ratios)."""
    try:
        value = float(text)
    except ValueError:
        value = text
    try:
        return closure_maps.check_noise_ratios((value, 1.0, 1.0))[0]
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("map noise: ")) from None


CLOSURE_SEEDS = 100
"""Seeds of a closure run by default."""


def run_closure_command(args):
    orders = tuple(range(1, args.max_order + 1))
    if args.truth_order is not None and args.truth_order < args.max_order:
        raise runs.RunError(f"--truth-order {args.truth_order}: at least --max-order ({args.max_order})")
    if args.truth_order not in (None, args.max_order) and args.bound:
        raise runs.RunError("--truth-order: the Fisher bound is for truths inside the fitted orders; not with --bound")
    if args.bound and (tuple(args.map_noise) != closure_maps.EQUAL_NOISE or args.per_map_noise):
        raise runs.RunError("--map-noise, --per-map-noise: the Fisher bound is for maps of equal noise, weighted "
                            "alike; not with --bound")
    results, lock = writer_folder(args, "closure")
    with runs.exclusive(lock):
        threads = measurement.chosen_threads(args.threads, results)
        if args.bound:
            identity = closure.closure_identity(args.npix, orders, noise=args.noise)
            count = bound.run_bound(results, args.seeds, identity, threads, args.quiet)
            print(f"{results / BOUND_FILE}: {count} seed(s) bounded in this run")
            return 0
        count = closure.run_closure(results, args.seeds, args.npix, orders, threads, quiet=args.quiet,
                                    noise=args.noise, truth_order=args.truth_order, noise_ratios=args.map_noise,
                                    per_map_noise=args.per_map_noise)
    print(f"{results / CLOSURE_FILE}: {count} seed(s) reduced in this run")
    for line in closure_read.summary_lines(closure_read.closure_summary(results)):
        print(f"  {line}")
    return 0


ARGUMENTS = {"real-maps": add_real_maps_command, "closure": add_closure_command}
"""The arguments of each command this module runs (cli.COMMANDS names it)."""

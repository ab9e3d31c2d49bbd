"""The closure command: simulated SRT-like maps with a known surface, reduced as the real maps are (or, with
--bound, what their Fisher information allows at best)."""

import argparse

from oof_common.limits import MAX_NZERN
from replication.core import measurement, runs
from replication.core.options import RUN_HELP, add_measuring_options, add_run_options, grid_size, integer_in
from replication.core.reduction import sources as real_sources
from replication.core.reduction.scan_noise import WHITEN_DEFAULT, WHITEN_FROM, WHITEN_MODES
from replication.core.writers import writer_folder
from replication.studies.closure import bound
from replication.studies.closure import maps as closure_maps
from replication.studies.closure import measure as closure
from replication.studies.closure import read as closure_read
from replication.studies.closure.records import BOUND_FILE, CLOSURE_FILE, WITHIN_UM


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
    closure.add_argument("--whiten", choices=WHITEN_MODES, default=WHITEN_DEFAULT,
                         help="whiten each map's excess along the scans before the loss (least squares of it is the "
                              "efficient estimator where the noise is correlated along the scans, as the SRT's is): "
                              "auto where the border band's noise correlates along one axis of the maps only "
                              f"(at least {WHITEN_FROM:g}; the default), yes, or no")
    closure.add_argument("--truth-order", type=integer_in(2, MAX_NZERN, "Zernike order"), default=None,
                         help="draw the known surface up to this order, beyond the ladder's --max-order (default: "
                              "the same): the seeds then say what the order rule chose, the truncation systematic "
                              "and the share of the dish where the error lies within 2 sigma of the stated "
                              "uncertainty, statistical alone and with the systematic")
    closure.add_argument("--panels", type=panels_rms, default=0.0, metavar="UM",
                         help="add to the known surface panel pistons of this rms (micrometres; 5 rings of panels "
                              "about 6 m on a side on the SRT, which no Zernike order holds): the seeds then say what "
                              "the order rule "
                              "chose and the share of the dish where the error lies within 2 sigma of the stated "
                              "uncertainty, statistical alone and with the systematic (default 0: none)")
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


def number_checked_by(check, prefix):
    """An argparse type: a number (text that is none is handed on as it is, for check to refuse) that check admits,
    its refusal without the prefix naming its own argument."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            value = text
        try:
            return check(value)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error).removeprefix(prefix)) from None

    return parse


noise_level = number_checked_by(closure_maps.check_noise, "noise: ")
"""An argparse type: a noise level closure_maps.check_noise admits."""
panels_rms = number_checked_by(closure_maps.check_panels, "panels: ")
"""An argparse type: a panel-type truth's rms closure_maps.check_panels admits."""
noise_ratio = number_checked_by(lambda value: closure_maps.check_noise_ratios((value, 1.0, 1.0))[0], "map noise: ")
"""An argparse type: one map's noise as a multiple of the level (closure_maps.check_noise_ratios)."""


CLOSURE_SEEDS = 100
"""Seeds of a closure run by default."""


def run_closure_command(args):
    orders = tuple(range(1, args.max_order + 1))
    if args.truth_order is not None and args.truth_order < args.max_order:
        raise runs.RunError(f"--truth-order {args.truth_order}: at least --max-order ({args.max_order})")
    if args.truth_order not in (None, args.max_order) and args.bound:
        raise runs.RunError("--truth-order: the Fisher bound is for truths inside the fitted orders; not with --bound")
    if args.panels and args.bound:
        raise runs.RunError("--panels: the Fisher bound is for truths inside the fitted orders; not with --bound")
    if args.bound and (tuple(args.map_noise) != closure_maps.EQUAL_NOISE or args.per_map_noise):
        raise runs.RunError("--map-noise, --per-map-noise: the Fisher bound is for maps of equal noise, weighted "
                            "alike; not with --bound")
    results, lock = writer_folder(args, "closure")
    with runs.exclusive(lock):
        threads = measurement.chosen_threads(args.threads, results)
        if args.bound:
            identity = closure.closure_identity(args.npix, orders, noise=args.noise, whiten=args.whiten)
            count = bound.run_bound(results, args.seeds, identity, threads, args.quiet)
            print(f"{results / BOUND_FILE}: {count} seed(s) bounded in this run")
            return 0
        count = closure.run_closure(results, args.seeds, args.npix, orders, threads, quiet=args.quiet,
                                    noise=args.noise, truth_order=args.truth_order, noise_ratios=args.map_noise,
                                    per_map_noise=args.per_map_noise, panels_um=args.panels, whiten=args.whiten)
    print(f"{results / CLOSURE_FILE}: {count} seed(s) reduced in this run")
    for line in closure_read.summary_lines(closure_read.closure_summary(results)):
        print(f"  {line}")
    return 0


ARGUMENTS = {"closure": add_closure_command}
"""The arguments of each command this module runs (cli.COMMANDS names it)."""

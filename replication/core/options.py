"""The command line's shared options and argument types: where a writer writes (a run folder), its threads and
progress bar, which runs figures and the report show; integers checked against their ranges."""

import argparse
import os
import pathlib

from oof_common.limits import MAX_NPIX, MAX_NZERN, MIN_NPIX
from replication.core.objectives import Objective, objective_names, objective_of
from replication.core.paths import REFERENCE, RUNS

RUN_HELP = (f"Results go into a run folder of this machine under {RUNS.relative_to(RUNS.parent.parent)}/ (the newest "
            "one, made if there is none); reference runs are never written.")


def integer_in(low, high, what):
    """An argparse type: an integer in [low, high] (high None: no upper bound), with a message saying so."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer ({what}), got {text!r}") from None
        if value < low or (high is not None and value > high):
            bounds = f"at least {low}" if high is None else f"between {low} and {high}"
            raise argparse.ArgumentTypeError(f"must be {bounds} ({what}), got {value}")
        return value

    parse.__name__ = what
    return parse


def cores():
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0))


positive_int = integer_in(1, None, "a positive integer")


grid_size = integer_in(MIN_NPIX, MAX_NPIX, "pixels per side")


zernike_order = integer_in(0, MAX_NZERN, "Zernike order")


seed = integer_in(0, 2**63 - 1, "a non-negative seed")


threads = integer_in(1, cores(), "threads, at most the cores present")


def objective_option(among: tuple[Objective, ...] | None = None):
    """An argparse type: the Objective an --objective names (the value every measuring command hands down), one of
    among (default: every registered objective), with the choices in its message where it names none."""
    def parse(text: str) -> Objective:
        names = [objective.name for objective in among] if among else list(objective_names())
        if text not in names:
            raise argparse.ArgumentTypeError(f"must be one of {', '.join(names)}, got {text!r}")
        return objective_of(text)

    parse.__name__ = "objective"
    return parse


def default_threads():
    """Two threads, or one on a single-core machine: the paper-era CPUs and CI machines have two."""
    return min(2, cores())


THREADS_HELP = ("threads for torch, BLAS and scipy.fft alike (default: min(2, cores), fewer where other processes "
                "keep cores busy when it starts, as many as they leave free; a resumed run keeps its own)")


def add_run_options(parser, kind):
    """Where a writer puts its results: a run folder of this machine, or exactly the folder given."""
    parser.add_argument("--run", type=pathlib.Path, default=None,
                        help="the run folder to write into (default: this machine's newest run, made if none)")
    parser.add_argument("--new-run", action="store_true", help="start a new run of this machine instead")
    parser.add_argument("--results", type=pathlib.Path, default=None,
                        help=f"write exactly into this folder instead of <run>/{kind}")


def add_measuring_options(parser):
    """The threads a writer measures with, and its progress bar."""
    parser.add_argument("--threads", type=threads, default=None, help=THREADS_HELP)
    parser.add_argument("--quiet", action="store_true", help="no progress bar (for CI logs)")


def add_report_options(parser, what):
    """Which runs figures and report show, and where they go."""
    parser.add_argument("--run", type=pathlib.Path, action="append", default=None,
                        help="your run folder to show beside the references, repeatable (default: this machine's "
                             "newest run, if there is one)")
    parser.add_argument("--reference-only", action="store_true",
                        help=f"show the reference runs only (the committed {what})")
    parser.add_argument("--reference", type=pathlib.Path, default=REFERENCE,
                        help="the folder of the reference runs (default results/reference)")
    parser.add_argument("--output", type=pathlib.Path, default=None,
                        help="the report's folder, its figures under <output>/figures (default: your first run's "
                             "folder, or the committed report's paper/ and figures/ with --reference-only or without "
                             "runs of your own); a file there that no report or figures command wrote (its "
                             "runs/.written lists what it did) is left as it is")


def once(values):
    """Repeated option values once each, in the order given (None stays None): nothing is measured twice."""
    return tuple(dict.fromkeys(values)) if values else None

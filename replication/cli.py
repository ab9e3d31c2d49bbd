"""Command line of the replication: python -m replication <command> --help."""

import argparse
import importlib
import sys

from replication.core import runs

COMMANDS = {
    "simulate": ("replication.studies.sweep.command", "write a simulated observation of the paper's scenario (.npz)"),
    "crosscheck": ("replication.studies.crosscheck.command",
                   "check that the implementations agree; writes crosscheck.json"),
    "sweep": ("replication.studies.sweep.command", "time BFGS fits over grid sizes and Zernike orders (resumable)"),
    "bench": ("replication.studies.bench.command", "time one evaluation of each implementation against the FFT floor"),
    "retrieve": ("replication.studies.retrieval.command",
                 "fit truths with random aberrations from a cold start (zero aberration), each judged against a fit "
                 "started at the truth (resumable)"),
    "real-maps": ("replication.studies.real_maps.command",
                  "fit the Sardinia Radio Telescope's OOF maps and a GRASP simulation of it, orders 1..n in turn, with "
                  "the NumPy tree (finite differences) and torch (autograd, adjoint) (resumable)"),
    "closure": ("replication.studies.closure.command",
                "reduce simulated SRT-like maps with a known surface as the real maps are, and say how well the "
                "surface is recovered (resumable)"),
    "peers-check": ("replication.studies.peers.command",
                    "the JAX peer against NumPy (objective 1e-12, gradient 1e-10) before it is timed; exit status 1 "
                    "where it disagrees"),
    "figures": ("replication.report.command", "draw the figures of your runs beside the reference runs"),
    "report": ("replication.report.command", "render REPORT.md: your runs beside the reference runs"),
    "contribute": ("replication.report.command", "turn one of your runs into a committed reference run"),
    "retire": ("replication.report.command", "take a reference run out of the evidence, its headline kept in "
               "results/retired.jsonl"),
    "migrate": ("replication.report.migrate", "bring a run's records written by older code into today's schema, "
                "once (the readers refuse older records, naming this command)"),
    "audit": ("replication.studies.sweep.command",
              "recompute every time to target and end distance of a run from its kept trajectories and optima; exit 1 "
              "where one differs"),
}
"""Every command: (the module that adds its arguments and runs it, its line in --help). Only the chosen command's
module is loaded, so that figures and report run without torch (the measuring commands' modules load it); the layer
test reads this table as the command line's imports."""


def chosen(argv):
    """The command named on the command line (the first word that is one), or None."""
    return next((word for word in argv if word in COMMANDS), None)


def build_parser(command=None):
    """The command line: one subcommand each, dispatched through its parser's func; the arguments of command only
    (None: of every command)."""
    parser = argparse.ArgumentParser(prog="python -m replication", description=__doc__.split(":")[0] + ".")
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")
    for name, (module, help_text) in COMMANDS.items():
        subparser = commands.add_parser(name, help=help_text)
        if command in (None, name):
            importlib.import_module(module).ARGUMENTS[name](subparser)
    return parser


OWN_PACKAGES = ("replication", "reference_numpy", "torch_impl", "oof_common")


def is_refusal(error):
    """Whether an error is a refusal of bad input (a RunError, an OSError on a path, or a ValueError raised by
    the harness's or the packages' own checks), not a fault inside a library that should show its traceback."""
    if isinstance(error, (runs.RunError, OSError)):
        return True
    frame = error.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    module = frame.tb_frame.f_globals.get("__name__", "") if frame is not None else ""
    return isinstance(error, ValueError) and module.split(".")[0] in OWN_PACKAGES


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(chosen(argv))
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except (ValueError, OSError) as error:
        if not is_refusal(error):
            raise  # a fault, not bad input: its traceback is what a bug report needs
        print(f"{parser.prog} {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{parser.prog} {args.command}: interrupted; finished results are kept, and the same command resumes",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

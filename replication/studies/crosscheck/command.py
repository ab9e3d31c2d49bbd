"""The crosscheck command: the implementations against each other."""

from replication.core import measurement, runs
from replication.core.objectives import objective_names, objectives
from replication.core.options import RUN_HELP, THREADS_HELP, add_run_options, objective_option, once, threads
from replication.core.writers import already_done, writer_folder
from replication.studies.crosscheck.measure import POINTS, run_crosscheck
from replication.studies.crosscheck.records import read_crosscheck, read_crosscheck_record


def add_crosscheck_command(crosscheck):
    """The crosscheck: the implementations against each other."""
    crosscheck.description = RUN_HELP
    crosscheck.add_argument("--points", choices=["default", "smoke"], default="default",
                            help="; ".join(f"{name}: {', '.join(map(str, points))}" for name, points in POINTS.items())
                            + " ((npix, nzern) checked; smoke for tests)")
    add_run_options(crosscheck, "crosscheck")
    crosscheck.add_argument("--objective", type=objective_option(), action="append", default=None,
                            help=f"objective to check, repeatable: {', '.join(objective_names())} (default: each)")
    crosscheck.add_argument("--threads", type=threads, default=None, help=THREADS_HELP)
    crosscheck.set_defaults(func=run_crosscheck_command)


def run_crosscheck_command(args):
    results, lock = writer_folder(args, "crosscheck")
    checked = once(args.objective) or objectives()
    with runs.exclusive(lock):
        previous = read_crosscheck_record(results / "crosscheck.json")
        if previous is not None:
            runs.check_same_settings(results, previous, {"points": args.points,
                                                         "objectives": [objective.name for objective in checked]},
                                     keys=("points", "objectives"))
            if previous.get("complete", True):
                return already_done(results / "crosscheck.json", "the cross-check")
            print(f"{results / 'crosscheck.json'}: resuming after {len(previous.get('done', []))} finished point(s)")
        run_crosscheck(results, points=args.points, threads=measurement.chosen_threads(args.threads),
                       objectives=checked)
    checks = read_crosscheck(results / "crosscheck.json").checks
    failed = [c for c in checks if not c.passed]
    for c in checks:
        print(f"{'pass' if c.passed else 'FAIL'}  {c.check:<15} {c.objective or '':<13} npix={c.npix:<4} "
              f"nzern={c.nzern}  {c.compare}: {c.value:.2e} (tolerance {c.tolerance:g})")
    print(f"wrote {results / 'crosscheck.json'}: {len(checks) - len(failed)}/{len(checks)} passed")
    return 1 if failed else 0


ARGUMENTS = {"crosscheck": add_crosscheck_command}
"""The arguments of each command this module runs (cli.COMMANDS names it)."""

"""The retrieve command: random aberrations fitted from a cold start."""

from replication.core import measurement, runs
from replication.core.options import RUN_HELP, add_measuring_options, add_run_options
from replication.core.writers import writer_folder
from replication.studies.retrieval.measure import run_retrieval
from replication.studies.retrieval.profiles import RETRIEVAL_PROFILES


def add_retrieve_command(retrieve):
    """Retrieval from a cold start: random aberrations fitted from zero by each implementation."""
    retrieve.description = RUN_HELP + " Profiles: " + "; ".join(
        f"{name}: (npix, n) {list(p.points)}, rms {list(p.rms)} rad, seeds {list(p.seeds)}"
        for name, p in RETRIEVAL_PROFILES.items())
    retrieve.add_argument("--profile", choices=sorted(RETRIEVAL_PROFILES), default="quick",
                          help="the truths to fit (default quick)")
    add_run_options(retrieve, "retrieval-<profile>")
    add_measuring_options(retrieve)
    retrieve.set_defaults(func=run_retrieve_command)


def run_retrieve_command(args):
    results, lock = writer_folder(args, f"retrieval-{args.profile}")
    with runs.exclusive(lock):
        count = run_retrieval(results, profile=args.profile, threads=measurement.chosen_threads(args.threads, results),
                              quiet=args.quiet)
    print(f"{results / 'points.jsonl'}: {count} fit(s) made in this run")
    return 0


ARGUMENTS = {"retrieve": add_retrieve_command}
"""The arguments of each command this module runs (cli.COMMANDS names it)."""

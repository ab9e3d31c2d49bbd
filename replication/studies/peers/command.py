"""The peers-check command: the JAX peer against NumPy before it is timed."""

from replication.core import registry, runs
from replication.core.options import RUN_HELP, add_run_options
from replication.core.writers import writer_folder
from replication.studies.peers.measure import run_peers_check


def add_peers_command(peers):
    """The peers-check: gate the JAX peer against NumPy."""
    peers.description = RUN_HELP
    add_run_options(peers, "peers")
    peers.set_defaults(func=run_peers_check_command)


def run_peers_check_command(args):
    registry.require_jax()
    results, lock = writer_folder(args, "peers")
    with runs.exclusive(lock):
        content = run_peers_check(results)
    print(f"wrote {results / 'check.json'}")
    return 0 if content["passed"] else 1


ARGUMENTS = {"peers-check": add_peers_command}
"""The arguments of each command this module runs (cli.COMMANDS names it)."""

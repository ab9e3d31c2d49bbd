"""The bench command: one evaluation of each implementation against the FFT floor."""

import os

from oof_common.constants import OVERSAMP
from oof_common.validation import check_memory
from reference_numpy.backend import MALLOC_VARIABLE
from replication.core import runs
from replication.core.objectives import CAUCHY, objective_names
from replication.core.options import (
    RUN_HELP,
    add_run_options,
    default_threads,
    grid_size,
    objective_option,
    once,
    positive_int,
    threads,
    zernike_order,
)
from replication.core.profiles import BENCH_NPIX, BENCH_NZERN
from replication.core.registry import require_jax
from replication.core.writers import already_done, writer_folder
from replication.studies.bench.measure import cpp_compiler, run_bench
from replication.studies.bench.records import read_bench_record


def add_bench_command(bench):
    """The bench: one evaluation of each implementation against the FFT floor."""
    bench.description = RUN_HELP
    bench.add_argument("--npix", type=grid_size, nargs="+", default=list(BENCH_NPIX), help="grid sizes")
    bench.add_argument("--nzern", type=zernike_order, nargs="+", default=list(BENCH_NZERN), help="Zernike orders")
    bench.add_argument("--threads", type=threads, nargs="+", default=sorted({1, default_threads()}),
                       help="thread counts to run (default 1 and 2, at most the cores present)")
    bench.add_argument("--objective", type=objective_option(), default=CAUCHY,
                       help=f"the objective: {', '.join(objective_names())} (default cauchy)")
    bench.add_argument("--repeats", type=positive_int, default=9, help="timed rounds per step (median reported)")
    add_run_options(bench, "bench")
    bench.add_argument("--compile", action="store_true",
                       help="also time torch.compile of the likelihood with autograd (compiles once per point)")
    bench.add_argument("--peers", action="store_true",
                       help="also time the JAX peer's value and gradient and its own FFT floor, into <run>/bench-peers "
                            "(needs jax: nox -s peers)")
    bench.set_defaults(func=run_bench_command)


def bench_folder_name(compile_torch, peers=False):
    """The bench's folder in a run: bench, or bench-compile (--compile), bench-peers (--peers), or
    bench-default-allocator where OOF_MALLOC=default left glibc's malloc settings alone (the report's allocator
    comparison)."""
    if compile_torch or peers:
        return "bench-compile" if compile_torch else "bench-peers"
    return "bench-default-allocator" if os.environ.get(MALLOC_VARIABLE) == "default" else "bench"


def run_bench_command(args):
    if args.peers:
        require_jax("--peers: ")
    if args.compile and cpp_compiler() is None:
        raise runs.RunError("--compile: torch.compile's CPU backend needs a C++ compiler ($CXX or g++); none found")
    for npix in once(args.npix):  # every point's setup fits in memory, checked before the first is measured
        for nzern in once(args.nzern):
            check_memory(npix, nzern, OVERSAMP)
    results, lock = writer_folder(args, bench_folder_name(args.compile, args.peers))
    with runs.exclusive(lock):
        previous = read_bench_record(results / "bench.json")
        if previous is not None and previous.get("complete", True):
            return already_done(results / "bench.json", "the bench")
        run_bench(results, once(args.npix), once(args.nzern), once(args.threads), args.repeats,
                  compile_torch=args.compile, objective=args.objective, peers=args.peers)
    print(f"wrote {results / 'bench.json'}")
    return 0


ARGUMENTS = {"bench": add_bench_command}
"""The arguments of each command this module runs (cli.COMMANDS names it)."""

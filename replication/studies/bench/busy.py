"""What a busy machine does to torch's fits under each thread choice: the same fit (the paper's data, torch autograd,
as a sweep point times it) on the quiet machine with the threads a measuring command chooses, then beside one
process spinning a core with the threads it chooses then and with 2 threads, interleaved repeat by repeat (a
benchmark, not a test: measuring.chosen_threads is what it checks).

    python -m replication.studies.bench.busy [--npix 256] [--nzern 5] [--repeats 5]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import time

from oof_common.limits import TOL
from replication.core import measurement
from replication.core.environment import thread_limits
from replication.core.implementations import Implementation
from replication.core.objectives import CAUCHY
from replication.core.problem import Problem
from replication.core.registry import TORCH_CPU
from replication.core.timing import timed_fit, warm_up

SPINNER = "while True:\n    pass"
"""Another process keeping one core busy."""


@contextlib.contextmanager
def spinning():
    """One other process keeping a core busy while the block runs."""
    other = subprocess.Popen([sys.executable, "-c", SPINNER])
    time.sleep(0.5)  # its interpreter starts
    try:
        yield
    finally:
        other.kill()
        other.wait()
        time.sleep(0.5)


def fit_seconds(impl, problem: Problem, threads) -> float:
    """Setup plus fit, seconds, of one fit of the problem from its truth with these threads (after one untimed
    call, as a sweep point)."""
    with thread_limits(threads):
        warm_up(impl, problem, problem.truth)
        built, fitted, _ = timed_fit(impl, problem, problem.truth, TOL)
    return built + fitted


def busy_machine(npix: int, nzern: int, repeats: int) -> dict:
    """{case: (seconds of each repeat, threads of each)} for "quiet, chosen", "busy, chosen", "busy, 2 threads"."""
    impl, problem = Implementation(TORCH_CPU.name), Problem.simulated(npix, nzern, CAUCHY)
    found = {case: ([], []) for case in ("quiet, chosen", "busy, chosen", "busy, 2 threads")}

    def measure(case, threads):
        found[case][0].append(fit_seconds(impl, problem, threads))
        found[case][1].append(int(threads))

    for _ in range(repeats):
        measure("quiet, chosen", measurement.chosen_threads(None))
        with spinning():
            measure("busy, chosen", measurement.chosen_threads(None))
            measure("busy, 2 threads", 2)
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m replication.studies.bench.busy",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--npix", type=int, default=256)
    parser.add_argument("--nzern", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    found = busy_machine(args.npix, args.nzern, args.repeats)
    quiet = statistics.median(found["quiet, chosen"][0])
    for case, (seconds, threads) in found.items():
        print(f"{case:16s} threads {sorted(set(threads))}: median {statistics.median(seconds):.3f} s, min "
              f"{min(seconds):.3f} s, {statistics.median(seconds) / quiet:.2f}x the quiet machine's "
              f"(npix {args.npix}, n = {args.nzern}, {args.repeats} interleaved repeats)")


if __name__ == "__main__":
    main()

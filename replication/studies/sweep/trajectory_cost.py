"""What recording a fit's trajectory costs: the same fits timed with and without it, interleaved, per
implementation (a benchmark, not a test; the sweep records trajectories for its times to target).

    python -m replication.studies.sweep.trajectory_cost [--npix 256] [--nzern 4] [--repeats 7] [--threads 2]
"""

import argparse
import statistics

from replication.core.environment import thread_limits
from replication.core.implementations import Implementation
from replication.core.objectives import CAUCHY
from replication.core.problem import Problem
from replication.core.registry import NUMPY, TORCH_CPU
from replication.core.timing import timed_fit, warm_up


def trajectory_cost(npix, nzern, repeats, threads):
    """{implementation: (median fit seconds without, with the trajectory, their ratio)}, the two kinds of fit
    alternating so that the machine's drift falls on both alike."""
    problem = Problem.simulated(npix, nzern, CAUCHY)
    found = {}
    with thread_limits(threads):
        for impl in (Implementation(NUMPY.name), Implementation(TORCH_CPU.name)):
            warm_up(impl, problem, problem.truth)
            times = {False: [], True: []}
            for _ in range(repeats):
                for recorded in (False, True):
                    fit_s = timed_fit(impl, problem, problem.truth, 1e-8, trajectory=recorded)[1]
                    times[recorded].append(fit_s)
            without, with_ = statistics.median(times[False]), statistics.median(times[True])
            found[impl.label] = (without, with_, with_ / without)
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m replication.studies.sweep.trajectory_cost",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--npix", type=int, default=256)
    parser.add_argument("--nzern", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    for label, (without, with_, ratio) in trajectory_cost(args.npix, args.nzern, args.repeats, args.threads).items():
        print(f"{label}: fit {without:.4g} s without the trajectory, {with_:.4g} s with it: {ratio:.3f}x "
              f"(median of {args.repeats}, npix {args.npix}, n = {args.nzern}, {args.threads} thread(s))")


if __name__ == "__main__":
    main()

"""Command line of the replication: python -m replication <command> --help."""

import argparse
import os
import pathlib
import sys

import numpy as np

from replication.paths import FIGURES, GPU_RESULTS, PAPER, RESULTS
from replication.sweep import PROFILES, describe_profiles


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def default_threads():
    """Two threads, or one on a single-core machine: the paper-era CPUs and CI machines have two."""
    return min(2, len(os.sched_getaffinity(0)))


def add_result_folders(parser, output, output_help):
    """The results folders that figures and report read, and the folder they write."""
    parser.add_argument("--results", type=pathlib.Path, default=RESULTS / "quick", help="sweep results folder")
    parser.add_argument("--output", type=pathlib.Path, default=output, help=output_help)
    parser.add_argument("--gpu-results", type=pathlib.Path, default=GPU_RESULTS,
                        help="sweep and cross-check of a GPU host, shown beside this machine's (C1, C2 judged on it)")
    parser.add_argument("--crosscheck", type=pathlib.Path, default=RESULTS / "crosscheck",
                        help="folder of this machine's crosscheck.json and example.npz")


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m replication", description=__doc__.split(":")[0] + ".")
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")

    simulate = commands.add_parser("simulate", help="write a simulated observation of the paper's scenario (.npz)")
    simulate.add_argument("--npix", type=positive_int, default=128, help="grid size in pixels per side (default 128)")
    simulate.add_argument("--nzern", type=int, default=4, help="Zernike order n_max (default 4)")
    simulate.add_argument("--seed", type=int, default=1, help="seed of numpy.random.default_rng (default 1)")
    simulate.add_argument("--output", type=pathlib.Path, required=True, help="the .npz file to write")

    crosscheck = commands.add_parser("crosscheck", help="check that the implementations agree; writes crosscheck.json")
    crosscheck.add_argument("--points", choices=["default", "smoke"], default="default",
                            help="default: (32,3), (64,4), (128,6); smoke: (16,3), for tests")
    crosscheck.add_argument("--results", type=pathlib.Path, default=None,
                            help="folder for crosscheck.json (default replication/results/crosscheck)")
    crosscheck.add_argument("--threads", type=positive_int, default=default_threads(),
                            help="threads for torch, BLAS and scipy.fft alike (default: min(2, cores))")

    sweep = commands.add_parser("sweep", help="time BFGS fits over grid sizes and Zernike orders (resumable)",
                                description="Profiles: " + describe_profiles())
    sweep.add_argument("--profile", choices=sorted(PROFILES), default="quick", help="the grid to sweep (default quick)")
    sweep.add_argument("--impl", action="append", choices=["numpy", "torch-cpu", "torch-cuda"], default=None,
                       help="implementation to time, repeatable (default: all; torch-cuda only where CUDA exists)")
    sweep.add_argument("--results", type=pathlib.Path, default=None,
                       help="results folder (default replication/results/<profile>); a rerun resumes there")
    sweep.add_argument("--threads", type=positive_int, default=default_threads(),
                       help="threads for torch, BLAS and scipy.fft alike (default: min(2, cores))")
    sweep.add_argument("--tol", type=float, default=1e-8, help="BFGS tolerance (default 1e-8, as in the paper)")
    sweep.add_argument("--quiet", action="store_true", help="no progress bar (for CI logs)")

    bench = commands.add_parser("bench", help="time one evaluation of each implementation against the FFT floor")
    bench.add_argument("--npix", type=positive_int, nargs="+", default=[128, 256, 512, 1024], help="grid sizes")
    bench.add_argument("--nzern", type=int, nargs="+", default=[3, 5, 8], help="Zernike orders")
    bench.add_argument("--threads", type=positive_int, nargs="+", default=[1, 2], help="thread counts to run")
    bench.add_argument("--repeats", type=positive_int, default=9, help="timed rounds per step (median reported)")
    bench.add_argument("--results", type=pathlib.Path, default=RESULTS / "bench", help="folder for bench.json")
    bench.add_argument("--compile", action="store_true",
                       help="also time torch.compile of the likelihood with autograd (compiles once per point)")

    figures = commands.add_parser("figures", help="draw the figures from recorded results")
    add_result_folders(figures, FIGURES, "folder for the figures")

    report = commands.add_parser("report", help="render paper/REPORT.md from recorded results")
    add_result_folders(report, PAPER, "folder for REPORT.md")
    report.add_argument("--bench", type=pathlib.Path, default=RESULTS / "bench", help="folder of bench.json")
    report.add_argument("--check", action="store_true", help="compare with the file on disk instead of writing it")
    return parser


def run_simulate(args):
    import reference_numpy
    from replication.data import simulate_observation, true_params

    setup = reference_numpy.make_setup(args.npix, args.nzern)
    truth = true_params(setup.nparams)
    data = simulate_observation(setup, truth, args.seed)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    np.savez(args.output, data=data, truth=truth, npix=args.npix, nzern=args.nzern, seed=args.seed)
    print(f"wrote {args.output}: (3, {args.npix}, {args.npix}) maps, seed {args.seed}")


def run_crosscheck_command(args):
    from replication.crosscheck import run_crosscheck

    results = args.results or RESULTS / "crosscheck"
    content = run_crosscheck(results, points=args.points, threads=args.threads)
    failed = [c for c in content["checks"] if not c["passed"]]
    for c in content["checks"]:
        print(f"{'pass' if c['passed'] else 'FAIL'}  {c['check']:<15} npix={c['npix']:<4} nzern={c['nzern']}  "
              f"{c['compare']}: {c['value']:.2e} (tolerance {c['tolerance']:g})")
    passed = len(content["checks"]) - len(failed)
    print(f"wrote {results / 'crosscheck.json'}: {passed}/{len(content['checks'])} passed")
    return 1 if failed else 0


def run_sweep_command(args):
    from replication.sweep import run_sweep

    if not np.isfinite(args.tol) or args.tol <= 0:
        raise SystemExit(f"error: --tol must be a finite positive number, got {args.tol}")
    results = args.results or RESULTS / args.profile
    count = run_sweep(args.profile, results, args.impl, args.threads, args.tol, args.quiet)
    print(f"{results / 'points.jsonl'}: {count} point(s) done in this run")


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "simulate":
        return run_simulate(args)
    if args.command == "crosscheck":
        return run_crosscheck_command(args)
    if args.command == "sweep":
        return run_sweep_command(args)
    if args.command == "bench":
        from replication.bench import run_bench

        run_bench(args.results, args.npix, args.nzern, args.threads, args.repeats, compile_torch=args.compile)
        print(f"wrote {args.results / 'bench.json'}")
        return 0
    if args.command == "figures":
        from replication.figures import draw_all

        for path in draw_all(args.results, args.output, args.gpu_results, args.crosscheck):
            print(f"wrote {path}")
        return 0
    if args.command == "report":
        from replication.report import render_command

        return render_command(args.results, args.output, check=args.check, gpu_results=args.gpu_results,
                              crosscheck_folder=args.crosscheck, bench_folder=args.bench)
    return 2


if __name__ == "__main__":
    sys.exit(main())

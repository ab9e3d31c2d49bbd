"""Command line of the replication: python -m replication <command> --help."""

import argparse
import importlib.util
import os
import pathlib
import sys

import numpy as np

from reference_numpy.constants import MAX_NPIX, MAX_NZERN, MIN_NPIX, OBJECTIVES, TOL
from replication.core import registry, runs
from replication.core.paths import FIGURES, PAPER, REFERENCE, RUNS
from replication.core.profiles import BENCH_NPIX, BENCH_NZERN, PROFILES, SweepSettings, describe_profiles
from replication.core.registry import GRADIENTS
from replication.core.results import check_target, writing_into
from replication.report import contribute as contributing
from replication.studies.bench.records import read_bench
from replication.studies.crosscheck.records import read_crosscheck
from replication.studies.real_maps import sources as real_sources
from replication.studies.sweep import audit as audit_module

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


def default_threads():
    """Two threads, or one on a single-core machine: the paper-era CPUs and CI machines have two."""
    return min(2, cores())


def add_run_options(parser, kind):
    """Where a writer puts its results: a run folder of this machine, or exactly the folder given."""
    parser.add_argument("--run", type=pathlib.Path, default=None,
                        help="the run folder to write into (default: this machine's newest run, made if none)")
    parser.add_argument("--new-run", action="store_true", help="start a new run of this machine instead")
    parser.add_argument("--results", type=pathlib.Path, default=None,
                        help=f"write exactly into this folder instead of <run>/{kind}")


def add_measuring_options(parser):
    """The threads a writer measures with, and its progress bar."""
    parser.add_argument("--threads", type=threads, default=default_threads(),
                        help="threads for torch, BLAS and scipy.fft alike (default: min(2, cores))")
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
                        help=f"folder to write into (default: your first run's folder, or the committed {what}'s "
                             "folder with --reference-only or without runs of your own)")


def add_simulate_command(commands):
    """The simulate: write one simulated observation."""
    simulate = commands.add_parser("simulate", help="write a simulated observation of the paper's scenario (.npz)")
    simulate.add_argument("--npix", type=grid_size, default=128, help="grid size in pixels per side (default 128)")
    simulate.add_argument("--nzern", type=zernike_order, default=4, help="Zernike order n_max (default 4)")
    simulate.add_argument("--seed", type=seed, default=1, help="seed of numpy.random.default_rng (default 1)")
    simulate.add_argument("--output", type=pathlib.Path, required=True,
                          help="the file to write, exactly as named (NumPy .npz format)")
    simulate.set_defaults(func=run_simulate)


def add_crosscheck_command(commands):
    """The crosscheck: the implementations against each other."""
    crosscheck = commands.add_parser("crosscheck", help="check that the implementations agree; writes crosscheck.json",
                                     description=RUN_HELP)
    crosscheck.add_argument("--points", choices=["default", "smoke"], default="default",
                            help="default: (32,3), (64,4), (128,6); smoke: (16,3), for tests")
    add_run_options(crosscheck, "crosscheck")
    crosscheck.add_argument("--objective", choices=OBJECTIVES, action="append", default=None,
                            help="objective to check, repeatable (default: both)")
    crosscheck.add_argument("--threads", type=threads, default=default_threads(),
                            help="threads for torch, BLAS and scipy.fft alike (default: min(2, cores))")
    crosscheck.set_defaults(func=run_crosscheck_command)


def add_sweep_command(commands):
    """The sweep: time fits over a profile's grid, here or sharded."""
    sweep = commands.add_parser("sweep", help="time BFGS fits over grid sizes and Zernike orders (resumable)",
                                description=RUN_HELP + " Profiles: " + describe_profiles())
    sweep.add_argument("--profile", choices=sorted(PROFILES), default="quick", help="the grid to sweep (default quick)")
    sweep.add_argument("--impl", action="append", choices=list(registry.names()), default=None,
                       help="implementation to time, repeatable (default: all available; torch-cuda only where CUDA "
                            "exists, jax only where jax is installed: nox -s peers)")
    add_run_options(sweep, "sweep-<profile>[-least-squares]")
    sweep.add_argument("--threads", type=threads, default=default_threads(),
                       help="threads for torch, BLAS and scipy.fft alike (default: min(2, cores))")
    sweep.add_argument("--tol", type=float, default=TOL, help=f"BFGS tolerance (default {TOL:g}, as in the paper)")
    sweep.add_argument("--objective", choices=OBJECTIVES, default="cauchy",
                       help="the objective fitted (default cauchy; least-squares as in the author's timing code, "
                            "into <run>/sweep-<profile>-least-squares)")
    sweep.add_argument("--gradient", action="append", choices=GRADIENTS, default=None,
                       help="gradient to time, repeatable (default: each implementation's own, the paper's: finite "
                            "differences in NumPy, autograd in torch); other gradients are float64 variants, timed "
                            "on the profile's variants subset")
    sweep.add_argument("--npix", action="append", type=int, default=None,
                       help="measure only this grid size of the profile, repeatable (default: all of them); the same "
                            "command without it later measures the rest")
    sweep.add_argument("--quiet", action="store_true", help="no progress bar (for CI logs)")
    cluster = sweep.add_argument_group("sharding (a run of its own; docs/gpu-and-cluster.md)")
    cluster.add_argument("--shards", type=positive_int, default=None,
                         help="split the profile's points into this many shards, each run as one job on one node")
    cluster.add_argument("--executor", choices=["local", "slurm"], default="local",
                         help="where shards run: local (here, one after another) or slurm (submitit)")
    cluster.add_argument("--partition", default=None, help="SLURM partition of the shards' jobs")
    cluster.add_argument("--time-min", type=positive_int, default=240, help="time limit of each shard's job (min)")
    cluster.add_argument("--gpus-per-task", type=integer_in(0, 64, "GPUs per shard's job"), default=None,
                         help="GPUs per shard's job (default: 0 on SLURM, every visible GPU with --executor local)")
    cluster.add_argument("--no-wait", action="store_true",
                         help="with slurm: submit and return; the same command later resubmits unfinished shards")
    sweep.set_defaults(func=run_sweep_command)


def add_retrieve_command(commands):
    """Retrieval from a cold start: random aberrations fitted from zero by each implementation."""
    from replication.studies.retrieval.profiles import RETRIEVAL_PROFILES

    retrieve = commands.add_parser(
        "retrieve", help="fit truths with random aberrations from a cold start (zero aberration), each judged "
                         "against a fit started at the truth (resumable)",
        description=RUN_HELP + " Profiles: " + "; ".join(
            f"{name}: (npix, n) {list(p.points)}, rms {list(p.rms)} rad, seeds {list(p.seeds)}"
            for name, p in RETRIEVAL_PROFILES.items()))
    retrieve.add_argument("--profile", choices=sorted(RETRIEVAL_PROFILES), default="quick",
                          help="the truths to fit (default quick)")
    add_run_options(retrieve, "retrieval-<profile>")
    add_measuring_options(retrieve)
    retrieve.set_defaults(func=run_retrieve_command)


def run_retrieve_command(args):
    from replication.studies.retrieval.measure import run_retrieval

    results, lock = writer_folder(args, f"retrieval-{args.profile}")
    with runs.exclusive(lock):
        count = run_retrieval(results, profile=args.profile, threads=args.threads, quiet=args.quiet)
    print(f"{results / 'points.jsonl'}: {count} fit(s) made in this run")
    return 0


def add_real_maps_command(commands):
    """Fits of real maps made by others (the SRT's observed maps and a GRASP simulation), in both trees."""
    from replication.studies.real_maps import measure as real_maps

    fits = commands.add_parser(
        "real-maps", help="fit the Sardinia Radio Telescope's OOF maps and a GRASP simulation of it, orders 1..n in "
                          "turn, with the NumPy tree (finite differences) and torch (autograd, adjoint) (resumable)",
        description=RUN_HELP + f" The maps are not part of the repository: {real_sources.WHENCE}.")
    fits.add_argument("--maps", type=pathlib.Path, default=None,
                      help="the folder holding observed/ and grasp-simulated/ (default: "
                           f"${real_sources.DATA_FOLDER_VARIABLE}, else {real_sources.DEFAULT_FOLDER} from the "
                           "repository "
                           "root)")
    fits.add_argument("--source", choices=[s.name for s in real_sources.SOURCES], action="append", default=None,
                      help="the maps to fit, repeatable (default: all)")
    fits.add_argument("--max-order", type=integer_in(1, MAX_NZERN, "Zernike order"), default=real_sources.ORDERS[-1],
                      help=f"fit orders 1..this, each from the last (default {real_sources.ORDERS[-1]})")
    fits.add_argument("--npix", type=grid_size, default=real_sources.NPIX,
                      help=f"the model's grid, at least the maps' size (default {real_sources.NPIX})")
    fits.add_argument("--repeats", type=positive_int, default=real_maps.REPEATS,
                      help=f"timed fits of each stage by each series (default {real_maps.REPEATS})")
    add_run_options(fits, "real-maps")
    add_measuring_options(fits)
    fits.set_defaults(func=run_real_maps_command)


def run_real_maps_command(args):
    from replication.studies.real_maps import measure as real_maps

    sources = [real_sources.source_named(name) for name in args.source] if args.source else real_sources.SOURCES
    observations = real_sources.read_observations(sources, args.maps, args.npix)  # before any folder is made
    results, lock = writer_folder(args, "real-maps")
    with runs.exclusive(lock):
        count = real_maps.run_real_maps(results, observations, args.max_order, args.npix, args.repeats, args.threads,
                                        quiet=args.quiet)
    print(f"{results / real_sources.STAGES_FILE}: {count} fit(s) made in this run")
    return 0


def add_bench_command(commands):
    """The bench: one evaluation of each implementation against the FFT floor."""
    bench = commands.add_parser("bench", help="time one evaluation of each implementation against the FFT floor",
                                description=RUN_HELP)
    bench.add_argument("--npix", type=grid_size, nargs="+", default=list(BENCH_NPIX), help="grid sizes")
    bench.add_argument("--nzern", type=zernike_order, nargs="+", default=list(BENCH_NZERN), help="Zernike orders")
    bench.add_argument("--threads", type=threads, nargs="+", default=sorted({1, default_threads()}),
                       help="thread counts to run (default 1 and 2, at most the cores present)")
    bench.add_argument("--objective", choices=OBJECTIVES, default="cauchy", help="the objective (default cauchy)")
    bench.add_argument("--repeats", type=positive_int, default=9, help="timed rounds per step (median reported)")
    add_run_options(bench, "bench")
    bench.add_argument("--compile", action="store_true",
                       help="also time torch.compile of the likelihood with autograd (compiles once per point)")
    bench.add_argument("--peers", action="store_true",
                       help="also time the JAX peer's value and gradient and its own FFT floor, into <run>/bench-peers "
                            "(needs jax: nox -s peers)")
    bench.set_defaults(func=run_bench_command)


def add_peers_command(commands):
    """The peers-check: gate the JAX peer against NumPy."""
    peers = commands.add_parser("peers-check", help="the JAX peer against NumPy (objective 1e-12, gradient 1e-10) "
                                                    "before it is timed; exit status 1 where it disagrees",
                                description=RUN_HELP)
    add_run_options(peers, "peers")
    peers.set_defaults(func=run_peers_check_command)


def add_figures_command(commands):
    """The figures: draw the figures of your runs beside the references."""
    figures = commands.add_parser("figures", help="draw the figures of your runs beside the reference runs")
    add_report_options(figures, "figures")
    figures.set_defaults(func=run_figures_command)


def add_report_command(commands):
    """The report: render the report of your runs beside the references."""
    report = commands.add_parser("report", help="render REPORT.md: your runs beside the reference runs")
    add_report_options(report, "report")
    report.add_argument("--check", action="store_true", help="compare with the file on disk instead of writing it")
    report.set_defaults(func=run_report_command)


def add_contribute_command(commands):
    """The contribute: make one of your runs a reference run."""
    contribute = commands.add_parser("contribute", help="turn one of your runs into a committed reference run",
                                     description="Copies the run's records (not its rendered report) into a new "
                                                 "folder under results/reference/; existing reference runs are "
                                                 "never changed. Then re-render the committed report and commit.")
    contribute.add_argument("--run", type=pathlib.Path, default=None,
                            help="the run to contribute (default: this machine's newest run)")
    contribute.add_argument("--note", required=True, help="one sentence shown in the report: the machine, what ran")
    contribute.set_defaults(func=run_contribute_command)


def add_audit_command(commands):
    """The audit: recompute a run's times to target and end distances from its kept trajectories."""
    audit = commands.add_parser("audit", help="recompute every time to target and end distance of a run from its "
                                              "kept trajectories and optima; exit 1 where one differs",
                                description=audit_module.__doc__.split("\n\n")[0])
    audit.add_argument("--run", type=pathlib.Path, required=True, help="the run folder to audit (yours or a "
                                                                       "reference run)")
    audit.set_defaults(func=run_audit_command)


def run_audit_command(args):
    if runs.read_run(args.run) is None:
        raise runs.RunError(f"--run {args.run}: not a run folder (no {runs.RUN_FILE})")
    found = audit_module.audit_run(args.run)
    print(audit_module.summary(args.run, found))
    return 1 if found.differences else 0


def build_parser():
    """The command line: one subcommand each, dispatched through its parser's func."""
    parser = argparse.ArgumentParser(prog="python -m replication", description=__doc__.split(":")[0] + ".")
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")
    for add in (add_simulate_command, add_crosscheck_command, add_sweep_command, add_bench_command,
                add_retrieve_command, add_real_maps_command, add_peers_command, add_figures_command, add_report_command,
                add_contribute_command, add_audit_command):
        add(commands)
    return parser


def run_simulate(args):
    import reference_numpy
    from replication.core.simulation import simulate_observation, true_params

    runs.check_output(args.output, "--output")
    if args.output.is_dir():
        raise runs.RunError(f"--output {args.output}: is a folder; name the file to write")
    setup = reference_numpy.make_setup(args.npix, args.nzern)
    truth = true_params(setup.nparams)
    data = simulate_observation(setup, truth, args.seed)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    check_target(args.output)
    temporary = check_target(args.output.with_name(args.output.name + ".tmp"))
    with temporary.open("wb") as stream:  # a file object: savez then keeps the name as given, with no .npz added
        np.savez(stream, data=data, truth=truth, npix=args.npix, nzern=args.nzern, seed=args.seed)
    os.replace(temporary, args.output)
    print(f"wrote {args.output}: (3, {args.npix}, {args.npix}) maps, seed {args.seed}")


def machine_record():
    """This machine as a writer records it (with its GPU: environment imports torch, which only writers need)."""
    from replication.core.environment import machine_record

    return machine_record()


def writer_folder(args, kind):
    """(folder to write, folder to lock) of a writer, checked before any work: never a reference run."""
    if args.results is not None:
        if args.run is not None or args.new_run:
            raise runs.RunError("--results: give either --results or --run/--new-run, not both")
        folder = runs.check_writable(args.results, "--results")
        return folder, runs.run_of(folder) or folder
    if args.run is not None:
        if args.new_run:
            raise runs.RunError("--run: give either --run or --new-run, not both")
        runs.check_writable(args.run)
    run = runs.current_run(machine_record(), args.run, new=args.new_run)
    return run / kind, run


def already_done(path, what):
    """Finished results are never overwritten: say so and how to measure again."""
    print(f"{path}: {what} is already done in this run; nothing to run (--new-run measures again)")
    return 0


def run_crosscheck_command(args):
    from replication.studies.crosscheck.measure import run_crosscheck

    results, lock = writer_folder(args, "crosscheck")
    with runs.exclusive(lock):
        previous = read_crosscheck(results / "crosscheck.json")
        if previous is not None:
            runs.check_same_settings(results, previous, {"points": args.points,
                                                         "objectives": list(once(args.objective) or OBJECTIVES)},
                                     keys=("points", "objectives"))
            if previous.get("complete", True):
                return already_done(results / "crosscheck.json", "the cross-check")
            print(f"{results / 'crosscheck.json'}: resuming after {len(previous.get('done', []))} finished point(s)")
        content = run_crosscheck(results, points=args.points, threads=args.threads,
                                 objectives=once(args.objective) or OBJECTIVES)
    failed = [c for c in content["checks"] if not c["passed"]]
    for c in content["checks"]:
        print(f"{'pass' if c['passed'] else 'FAIL'}  {c['check']:<15} {c.get('objective') or '':<13} "
              f"npix={c['npix']:<4} nzern={c['nzern']}  "
              f"{c['compare']}: {c['value']:.2e} (tolerance {c['tolerance']:g})")
    passed = len(content["checks"]) - len(failed)
    print(f"wrote {results / 'crosscheck.json'}: {passed}/{len(content['checks'])} passed")
    return 1 if failed else 0


def sharded_run_folder(args):
    """The run of a sharded sweep: the one named, a new one, or this machine's newest run where it is a sharded
    run (resumed); else a new one. Never --results: a sharded sweep is a run of its own."""
    if args.results is not None:
        raise runs.RunError("--results: a sharded sweep is a run folder of its own; use --run or --new-run")
    if args.run is not None:
        if args.new_run:
            raise runs.RunError("--run: give either --run or --new-run, not both")
        return runs.check_writable(args.run)
    machine = machine_record()
    latest = None if args.new_run else runs.latest_run(machine)
    if latest is not None and "sharded" in runs.read_run(latest):
        return latest
    return runs.new_run(machine)


def run_sharded_sweep_command(args):
    import torch

    from replication.studies.sweep.shards import plan_shards, run_sharded_sweep

    if args.executor == "slurm" and importlib.util.find_spec("submitit") is None:
        raise runs.RunError("--executor slurm needs submitit (pinned in constraints.txt): nox -s timing_cluster")
    plan_shards(sweep_settings(args), args.shards)  # refused before any folder is made
    run = sharded_run_folder(args)
    gpus = args.gpus_per_task if args.gpus_per_task is not None else (
        torch.cuda.device_count() if args.executor == "local" else 0)
    with runs.exclusive(run):
        failed = run_sharded_sweep(run, sweep_settings(args), args.shards, args.executor, args.partition,
                                   args.time_min, gpus, wait=not args.no_wait)
    print(f"{run}: sharded sweep; {'all shards finished' if not failed else f'{failed} shard(s) failed'}; "
          f"next: python -m replication report --run {run}")
    return 1 if failed else 0


def once(values):
    """Repeated option values once each, in the order given (None stays None): nothing is measured twice."""
    return tuple(dict.fromkeys(values)) if values else None


def sweep_settings(args):
    """The sweep's settings, one object from here to every shard and to run_sweep."""
    return SweepSettings(profile=args.profile, objective=args.objective, impls=once(args.impl),
                         gradients=once(args.gradient), threads=args.threads, tol=args.tol)


def run_sweep_command(args):
    from replication.studies.sweep.measure import run_sweep

    if not np.isfinite(args.tol) or args.tol <= 0:
        raise runs.RunError(f"--tol must be a finite positive number, got {args.tol}")
    settings = sweep_settings(args)
    points = chosen_points(settings.grid, once(args.npix))
    if args.shards is not None:
        if points is not None:
            raise runs.RunError("--npix: a sharded sweep measures the whole profile; give either --npix or --shards")
        return run_sharded_sweep_command(args)
    results, lock = writer_folder(args, settings.folder_name)
    info = runs.read_run(lock) or {}
    if settings.folder_name in info.get("sharded", {}):
        raise runs.RunError(f"{lock}: this run holds a sharded {settings.folder_name}; resume it with --shards "
                            f"{info['sharded'][settings.folder_name]['shards']}, or start another run (--new-run)")
    with runs.exclusive(lock):
        count = run_sweep(settings, results, quiet=args.quiet, points=points)
    print(f"{results / 'points.jsonl'}: {count} point(s) done in this run")
    return 0


def chosen_points(grid, sizes):
    """The (npix, nzern) points of the profile's grid at the sizes asked (None: every point), or a RunError naming
    a size the profile does not hold; checked before any folder is made."""
    if sizes is None:
        return None
    unknown = [npix for npix in sizes if npix not in grid.npix]
    if unknown:
        raise runs.RunError(f"--npix {unknown[0]}: not a grid size of this profile ({', '.join(map(str, grid.npix))})")
    return {(npix, nzern) for npix in sizes for nzern in range(MAX_NZERN + 1)}


def bench_folder_name(compile_torch, peers=False):
    """The bench's folder in a run: bench, or bench-compile (--compile), bench-peers (--peers), or
    bench-default-allocator where OOF_MALLOC=default left glibc's malloc settings alone (the report's allocator
    comparison)."""
    from reference_numpy.backend import MALLOC_VARIABLE

    if compile_torch or peers:
        return "bench-compile" if compile_torch else "bench-peers"
    return "bench-default-allocator" if os.environ.get(MALLOC_VARIABLE) == "default" else "bench"


def run_bench_command(args):
    from replication.studies.bench.measure import cpp_compiler, run_bench

    if args.peers:
        require_jax("--peers: ")
    if args.compile and cpp_compiler() is None:
        raise runs.RunError("--compile: torch.compile's CPU backend needs a C++ compiler ($CXX or g++); none found")
    results, lock = writer_folder(args, bench_folder_name(args.compile, args.peers))
    with runs.exclusive(lock):
        previous = read_bench(results / "bench.json")
        if previous is not None and previous.get("complete", True):
            return already_done(results / "bench.json", "the bench")
        run_bench(results, once(args.npix), once(args.nzern), once(args.threads), args.repeats,
                  compile_torch=args.compile, objective=args.objective, peers=args.peers)
    print(f"wrote {results / 'bench.json'}")
    return 0


def shown_runs(args):
    """Your runs that figures and report show: those named, else this machine's newest, else none."""
    if not args.reference.is_dir():
        raise runs.RunError(f"--reference {args.reference}: no such folder")
    if args.reference_only:
        if args.run:
            raise runs.RunError("--run: give either --run or --reference-only, not both")
        return []
    for folder in args.run or []:
        if runs.read_run(folder) is None:
            raise runs.RunError(f"--run {folder}: not a run folder (no {runs.RUN_FILE})")
    if args.run:
        return args.run
    latest = runs.latest_run()
    return [latest] if latest is not None else []


def report_folders(args):
    """(your runs, report folder, figures folder): your first run's folder by default, else paper/ and figures/."""
    own = shown_runs(args)
    if args.output is not None:
        output = args.output
    else:
        output = own[0] if own else PAPER
    figures = FIGURES if output.resolve() == PAPER.resolve() else output / "figures"
    for folder, option in ((output, "--output"), (figures, "--output")):
        runs.check_output(folder, option, committed=not own)
    return own, output, figures


def run_figures_command(args):
    from replication.report.figures import draw_all
    from replication.report.render import load_runs

    own, _, figures = report_folders(args)
    target = args.output if args.output is not None else figures
    with writing_into(target, committed=not own):
        drawn = draw_all(load_runs(own, args.reference), target)
        for path in drawn:
            print(f"wrote {path}")
        for stale in sorted(set((target / "runs").glob("*/*")) - set(drawn)):
            if stale.suffix in (".png", ".svg"):
                check_target(stale).unlink()  # a figure of a run no longer shown
                print(f"removed {stale}")
        for folder in (target / "runs").glob("*"):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
    return 0


def run_report_command(args):
    from replication.report.render import render_command

    own, output, figures = report_folders(args)
    return render_command(own, args.reference, output, figures, check=args.check)


def require_jax(prefix=""):
    """jax must be installed for the peer: say how to get it (nox -s peers installs the pinned version)."""
    reason = registry.JAX.why_unavailable()
    if reason is not None:
        raise runs.RunError(f"{prefix}the JAX peer cannot run here ({reason}); `nox -s peers` installs the pinned "
                         "version and runs the peers")


def run_peers_check_command(args):
    from replication.studies.peers.measure import run_peers_check

    require_jax()
    results, lock = writer_folder(args, "peers")
    with runs.exclusive(lock):
        content = run_peers_check(results)
    print(f"wrote {results / 'check.json'}")
    return 0 if content["passed"] else 1


def run_contribute_command(args):
    run = args.run if args.run is not None else runs.latest_run()
    if run is None:
        raise runs.RunError(f"--run: this machine has no run under {RUNS}; `nox -s replicate` makes one")
    target = contributing.contribute(run, args.note)
    print(f"wrote {target}\nnext: python -m replication figures --reference-only && "
          "python -m replication report --reference-only && nox -s tests, then commit results/reference/, figures/ "
          "and paper/")
    return 0


OWN_PACKAGES = ("replication", "reference_numpy", "torch_impl")


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
    parser = build_parser()
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

"""The sweep's commands: simulate (one simulated observation), sweep (here or sharded) and audit."""

import importlib.util
import pathlib

import numpy as np

import reference_numpy
from oof_common.limits import MAX_NZERN, TOL
from replication.core import measurement, registry, runs
from replication.core.objectives import CAUCHY, objective_names
from replication.core.options import (
    RUN_HELP,
    THREADS_HELP,
    add_run_options,
    grid_size,
    integer_in,
    objective_option,
    once,
    positive_int,
    seed,
    threads,
    zernike_order,
)
from replication.core.profiles import PROFILES, SweepSettings, describe_profiles
from replication.core.registry import GRADIENTS
from replication.core.results import atomic_stream
from replication.core.simulation import simulate_observation, true_params
from replication.core.writers import machine_record, writer_folder
from replication.studies.sweep import audit as audit_module
from replication.studies.sweep.measure import run_sweep
from replication.studies.sweep.shards import plan_shards, run_sharded_sweep


def add_simulate_command(simulate):
    """The simulate: write one simulated observation."""
    simulate.add_argument("--npix", type=grid_size, default=128, help="grid size in pixels per side (default 128)")
    simulate.add_argument("--nzern", type=zernike_order, default=4, help="Zernike order n_max (default 4)")
    simulate.add_argument("--seed", type=seed, default=1, help="seed of numpy.random.default_rng (default 1)")
    simulate.add_argument("--output", type=pathlib.Path, required=True,
                          help="the file to write, exactly as named (NumPy .npz format)")
    simulate.set_defaults(func=run_simulate)


def add_sweep_command(sweep):
    """The sweep: time fits over a profile's grid, here or sharded."""
    sweep.description = RUN_HELP + " Profiles: " + describe_profiles()
    sweep.add_argument("--profile", choices=sorted(PROFILES), default="quick", help="the grid to sweep (default quick)")
    sweep.add_argument("--impl", action="append", choices=list(registry.names()), default=None,
                       help="implementation to time, repeatable (default: all available; torch-cuda only where CUDA "
                            "exists, jax only where jax is installed: nox -s peers)")
    add_run_options(sweep, "sweep-<profile>[-least-squares]")
    sweep.add_argument("--threads", type=threads, default=None, help=THREADS_HELP)
    sweep.add_argument("--tol", type=float, default=TOL, help=f"BFGS tolerance (default {TOL:g}, as in the paper)")
    sweep.add_argument("--objective", type=objective_option(), default=CAUCHY,
                       help=f"the objective fitted: {', '.join(objective_names())} (default cauchy; least-squares as "
                            "in the author's timing code, "
                            "into <run>/sweep-<profile>-least-squares)")
    sweep.add_argument("--gradient", action="append", choices=GRADIENTS, default=None,
                       help="gradient to time, repeatable (default: each implementation's own, the paper's: finite "
                            "differences in NumPy, autograd in torch); other gradients are float64 variants, timed "
                            "on the profile's variants subset")
    sweep.add_argument("--npix", action="append", type=int, default=None,
                       help="measure only this grid size of the profile, repeatable (default: all of them); the same "
                            "command without it later measures the rest")
    sweep.add_argument("--nzern", action="append", type=int, default=None,
                       help="measure only this Zernike order of the profile, repeatable (default: all of them); with "
                            "--npix, only those points")
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


def add_audit_command(audit):
    """The audit: recompute a run's times to target and end distances from its kept trajectories."""
    audit.description = audit_module.__doc__.split("\n\n")[0]
    audit.add_argument("--run", type=pathlib.Path, required=True, help="the run folder to audit (yours or a "
                                                                       "reference run)")
    audit.set_defaults(func=run_audit_command)


def run_audit_command(args):
    if runs.read_run(args.run) is None:
        raise runs.RunError(f"--run {args.run}: not a run folder (no {runs.RUN_FILE})")
    found = audit_module.audit_run(args.run)
    print(audit_module.summary(args.run, found))
    return 1 if found.differences else 0


def run_simulate(args):
    runs.check_output(args.output, "--output")
    if args.output.is_dir():
        raise runs.RunError(f"--output {args.output}: is a folder; name the file to write")
    setup = reference_numpy.make_setup(args.npix, args.nzern)
    truth = true_params(setup.nparams)
    data = simulate_observation(setup, truth, args.seed)
    with atomic_stream(args.output) as stream:  # a file object: savez keeps the name as given, with no .npz added
        np.savez(stream, data=data, truth=truth, npix=args.npix, nzern=args.nzern, seed=args.seed)
    print(f"wrote {args.output}: (3, {args.npix}, {args.npix}) maps, seed {args.seed}")


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

    if args.executor == "slurm" and importlib.util.find_spec("submitit") is None:
        raise runs.RunError("--executor slurm needs submitit (pinned in constraints.txt): nox -s timing_cluster")
    settings = sweep_settings(args, measurement.chosen_threads(args.threads))
    plan_shards(settings, args.shards)  # refused before any folder is made
    run = sharded_run_folder(args)
    gpus = args.gpus_per_task if args.gpus_per_task is not None else (
        torch.cuda.device_count() if args.executor == "local" else 0)
    with runs.exclusive(run):
        failed = run_sharded_sweep(run, settings, args.shards, args.executor, args.partition,
                                   args.time_min, gpus, wait=not args.no_wait)
    print(f"{run}: sharded sweep; {'all shards finished' if not failed else f'{failed} shard(s) failed'}; "
          f"next: python -m replication report --run {run}")
    return 1 if failed else 0


def sweep_settings(args, threads=None):
    """The sweep's settings, one object from here to every shard and to run_sweep (threads: as chosen, where the
    command has chosen them; until then the option's)."""
    return SweepSettings(profile=args.profile, objective=args.objective, impls=once(args.impl),
                         gradients=once(args.gradient), threads=threads or args.threads or 1, tol=args.tol)


def none_available(names):
    """Where every implementation named with --impl is one this machine cannot run: say so, each with its reason,
    and return True, before any folder is made (a sweep that would measure nothing leaves nothing behind)."""
    reasons = {name: registry.get(name).why_unavailable() for name in names or ()}
    if not reasons or any(reason is None for reason in reasons.values()):
        return False
    for name, reason in reasons.items():
        print(f"{name}: not available on this machine ({reason}); skipped")
    print(f"nothing to measure: no requested implementation ({', '.join(reasons)}) is available on this machine")
    return True


def run_sweep_command(args):
    if not np.isfinite(args.tol) or args.tol <= 0:
        raise runs.RunError(f"--tol must be a finite positive number, got {args.tol}")
    settings = sweep_settings(args)
    if none_available(settings.impls):
        return 0
    points = chosen_points(settings.grid, once(args.npix), once(args.nzern))
    if args.shards is not None:
        if points is not None:
            raise runs.RunError("--npix, --nzern: a sharded sweep measures the whole profile; give either those or "
                                "--shards")
        return run_sharded_sweep_command(args)
    results, lock = writer_folder(args, settings.folder_name)
    settings = sweep_settings(args, measurement.chosen_threads(args.threads, results))
    info = runs.read_run(lock) or {}
    if settings.folder_name in info.get("sharded", {}):
        raise runs.RunError(f"{lock}: this run holds a sharded {settings.folder_name}; resume it with --shards "
                            f"{info['sharded'][settings.folder_name]['shards']}, or start another run (--new-run)")
    with runs.exclusive(lock):
        count = run_sweep(settings, results, quiet=args.quiet, points=points)
    print(f"{results / 'points.jsonl'}: {count} point(s) done in this run")
    return 0


def chosen_points(grid, sizes, orders=None):
    """The (npix, nzern) points of the profile's grid at the sizes and orders asked (None: every point), or a
    RunError naming a size or an order the profile does not hold; checked before any folder is made."""
    if sizes is None and orders is None:
        return None
    unknown = [npix for npix in sizes or () if npix not in grid.npix]
    if unknown:
        raise runs.RunError(f"--npix {unknown[0]}: not a grid size of this profile ({', '.join(map(str, grid.npix))})")
    held = sorted({*grid.nzern, *(grid.least_squares_nzern or ()), *(grid.variants_nzern or ())})
    unknown = [nzern for nzern in orders or () if nzern not in held]
    if unknown:
        raise runs.RunError(f"--nzern {unknown[0]}: not a Zernike order of this profile ({', '.join(map(str, held))})")
    return {(npix, nzern) for npix in sizes or grid.npix for nzern in orders or range(MAX_NZERN + 1)}


ARGUMENTS = {"simulate": add_simulate_command, "sweep": add_sweep_command, "audit": add_audit_command}
"""The arguments of each command this module runs (cli.COMMANDS names it)."""

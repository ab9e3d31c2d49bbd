"""Sessions of the replication: `nox -l` lists them. Every session installs the project itself (not editable) with
the extras it needs, pinned by constraints.txt; the dependencies are listed once, in pyproject.toml. Sessions run
the installed packages, never the source tree's (PYTHONSAFEPATH keeps the current folder off sys.path), against
this repository's results and templates (OOF_REPLICATION_ROOT).

Routine sessions (lint, tests, end_to_end) run by default; the experiment's sessions are named explicitly.
"""

import argparse
import os
import pathlib

import nox

nox.options.sessions = ["lint", "tests", "end_to_end"]
nox.options.reuse_existing_virtualenvs = True

CONSTRAINTS = ("-c", "constraints.txt")
HARNESS = "harness,cluster"
"""The extras of every experiment session: the torch tree, the harness, and submitit for sharded sweeps."""
THREADS_HELP = ("threads for torch, BLAS and scipy.fft (default: each command's own, min(2, cores) or as many as "
                "other processes leave free)")
GRADIENTS = ("finite-differences", "adjoint", "autograd")
"""Every gradient, timed by replicate for the speed-up decomposition (the variants on the profile's subset)."""
DEFAULT_MALLOC = {"OOF_MALLOC": "default"}
"""Opts out of the packages' own malloc setting (backend.keep_freed_memory): glibc's defaults, for the bench's
allocator comparison. Every other session measures what a plain script gets."""


def install_project(session, extras=HARNESS):
    """Install the project (this checkout, not editable) with extras, every dependency pinned by constraints.txt;
    its packages are installed anew each time, so a session always runs the tree as it is now."""
    session.install(*CONSTRAINTS, f".[{extras}]")
    session.install("--no-deps", "--force-reinstall", ".")
    session.env.update(installed_environment())


def installed_environment():
    """Run the installed packages (no current folder on sys.path) against this repository's files."""
    return {"PYTHONSAFEPATH": "1", "OOF_REPLICATION_ROOT": os.path.dirname(os.path.abspath(__file__))}


def replication(session, *args, env=None):
    session.run("python", "-m", "replication", *args, env=env)


def cuda_available(session):
    output = session.run("python", "-c", "import torch; print(torch.cuda.is_available())", silent=True)
    return output.strip().endswith("True")


@nox.session
def tests(session):
    """Run the test suite (under 5 minutes on 2 cores), less its end-to-end runs (end_to_end)."""
    install_project(session, "test")
    session.run("python", "-m", "pytest", "-m", "not slow", *session.posargs)


@nox.session
def end_to_end(session):
    """Run the tests marked slow: small end-to-end runs of the command line (closure, real maps, sharded sweeps,
    an interrupted cross-check, every kind of run rendered, a contributed run audited) and the standard errors'
    coverage over repeated fits (about 2 minutes on 2 cores). CI runs them after tests."""
    install_project(session, "test")
    session.run("python", "-m", "pytest", "-m", "slow", *session.posargs)


@nox.session
def lint(session):
    """Lint the code with ruff (the rules in pyproject.toml)."""
    session.install(*CONSTRAINTS, "ruff")
    session.run("ruff", "check", ".", *session.posargs)


@nox.session(default=False)
def crosscheck(session):
    """Check that NumPy, torch-cpu (and torch-cuda) agree: model, gradient, fits; into your run."""
    install_project(session)
    replication(session, "crosscheck", *session.posargs)


@nox.session(default=False)
def timing_cpu(session):
    """Time NumPy and torch-cpu fits over the quick profile into your run (-- --profile paper: the paper's grid)."""
    install_project(session)
    replication(session, "sweep", "--impl", "numpy", "--impl", "torch-cpu", *session.posargs)


@nox.session(default=False)
def timing_cuda(session):
    """Time torch-cuda fits (float64 and float32) into your run; says so and succeeds where there is no CUDA."""
    install_project(session)
    if not cuda_available(session):
        session.log("torch-cuda: CUDA is not available on this machine; the CUDA sweep is not measured here.")
        return
    replication(session, "sweep", "--impl", "torch-cuda", *session.posargs)


@nox.session(default=False)
def timing_cluster(session):
    """A sharded sweep on a SLURM cluster through submitit (docs/gpu-and-cluster.md), e.g.
    `nox -s timing_cluster -- --partition gpu --shards 16 --gpus-per-task 1`; the paper's grid unless
    --profile is given. Run the same command again to resubmit only what did not finish."""
    install_project(session)
    options = list(session.posargs)
    defaults = {"--profile": "paper", "--shards": "16"}
    for flag, value in defaults.items():
        if not any(option == flag or option.startswith(flag + "=") for option in options):
            options += [flag, value]
    replication(session, "sweep", "--executor", "slurm", *options)


@nox.session(default=False)
def bench(session):
    """Time one evaluation of each implementation against the 3-FFT floor, into your run; then the same with
    glibc's default malloc settings (bench-default-allocator), for the allocator comparison."""
    install_project(session)
    replication(session, "bench", *session.posargs)
    replication(session, "bench", *session.posargs, env=DEFAULT_MALLOC)


@nox.session(default=False)
def peers(session):
    """The JAX peer beside NumPy and torch: install jax (pinned), gate it against NumPy (its tests and
    peers-check, which fail the session loudly), time its fits over the Cauchy sweep of your run and its value
    and gradient in bench-peers, then re-render the report (its peers section)."""
    parser = argparse.ArgumentParser(prog="nox -s peers --")
    parser.add_argument("--profile", default="quick", choices=["smoke", "quick", "paper"])
    args = parser.parse_args(session.posargs)
    install_project(session, "test,jax")
    session.run("python", "-m", "pytest", "-q", "tests/test_peers.py")
    replication(session, "peers-check")
    replication(session, "sweep", "--profile", args.profile, "--impl", "jax")
    # one thread count, all cores: JAX's own thread pool is not limited by threadpoolctl
    replication(session, "bench", "--peers", "--npix", "128", "256", "512", "1024", "--nzern", "5", "--threads",
                str(min(2, os.cpu_count() or 1)))
    replication(session, "figures")
    replication(session, "report")


@nox.session(default=False)
def retrieval(session):
    """Retrieval from a cold start into your run (quick profile: npix 128 and 256, n = 2-8, aberrations of 0.5-3
    rad rms, ten seeds; resumable), then figures and report. -- --profile full: npix up to 512, twenty seeds;
    --threads N as the command's; --new-run: a run of its own."""
    parser = argparse.ArgumentParser(prog="nox -s retrieval --")
    parser.add_argument("--profile", default="quick", choices=["smoke", "quick", "full"])
    parser.add_argument("--threads", type=int, help=THREADS_HELP)
    parser.add_argument("--new-run", action="store_true", help="start a new run even if this machine has one")
    args = parser.parse_args(session.posargs)
    install_project(session)
    replication(session, "retrieve", "--profile", args.profile, *threads_option(args.threads),
                *(["--new-run"] if args.new_run else []))
    replication(session, "figures")
    replication(session, "report")


def threads_option(threads):
    """The --threads argument passed on to the measuring commands (none: theirs by default)."""
    return [] if threads is None else ["--threads", str(threads)]


@nox.session(default=False)
def real_maps(session):
    """Fit the SRT's real OOF maps and a GRASP simulation of them (orders 1-5, NumPy and torch, resumable) into your
    run, then figures and report. The maps are not in the repository (docs/real-maps.md): -- --maps DIR names their
    folder (default $OOF_REAL_MAPS, else data/srt-oof-2019 in the repository); other options are the command's. The
    fits extra (astropy) is installed: each source's surface and its uncertainty are also written as FITS."""
    install_project(session, HARNESS + ",fits")
    replication(session, "real-maps", *session.posargs)
    replication(session, "figures")
    replication(session, "report")


BEYOND_THE_BOUND = {"--panels", "--truth-order"}
"""The closure's options whose truths lie beyond the fitted orders, where the Fisher bound does not apply."""


@nox.session(default=False)
def closure(session):
    """The closure test of the real-maps reduction: 100 seeds of simulated SRT-like maps with a known surface,
    reduced from a cold start, and what the maps allow at best (the Fisher information at each truth; not for truths
    beyond the fitted orders: --panels, --truth-order) (resumable; -- --seeds N, --npix, --noise F, --threads), into
    your run, then figures and report."""
    install_project(session)
    replication(session, "closure", *session.posargs)
    same_run = [argument for argument in session.posargs if argument != "--new-run"]  # the run just made: the newest
    if not BEYOND_THE_BOUND.intersection(session.posargs):
        replication(session, "closure", "--bound", *same_run)
    replication(session, "figures")
    replication(session, "report")


PYOOF_PINS = ("pyoof==0.2.3", "astropy==5.3.4", "numpy==1.26.4", "scipy==1.11.4", "matplotlib==3.8.4", "pyyaml==6.0.2",
              "msgspec==0.22.0")
"""pyoof 0.2.3's environment: it imports with astropy 5.3.4 and numpy 1.26.4, not with today's (its own pins, not
constraints.txt's); msgspec for the records the peer writes (the harness is installed there without its
dependencies)."""


@nox.session(default=False)
def pyoof(session):
    """pyoof 0.2.3 as a peer on the real maps (docs/real-maps.md), in an environment of its own; -- --results DIR
    (default: pyoof/ in this machine's newest run), --maps DIR, --max-order N; --closure-seeds N fits the closure
    test's seeds 0..N-1 instead (--results <run>/closure/pyoof beside that run's closure)."""
    session.install(*PYOOF_PINS)
    session.install("--no-deps", ".")
    arguments = list(session.posargs)
    if "--results" not in arguments:
        newest = sorted(pathlib.Path("results", "runs").glob("*/run.json"))
        if not newest:
            session.error("no run of yours yet: run nox -s real_maps first, or pass -- --results DIR")
        arguments += ["--results", str(newest[-1].parent / "pyoof")]
    peer = "closure" if "--closure-seeds" in arguments else "real_maps"
    session.run("python", "-m", f"replication.studies.{peer}.pyoof_peer", *arguments, env=installed_environment())


@nox.session(default=False)
def pyoof_maps(session):
    """Maps made by pyoof's own forward model for a known phase (tests/data/pyoof-maps.npz, which
    tests/test_pyoof_orientation.py reduces): checks that pyoof makes the committed file again; -- --write makes it
    anew."""
    session.install(*PYOOF_PINS)
    session.install("--no-deps", ".")
    check = [] if "--write" in session.posargs else ["--check"]
    session.run("python", "-m", "replication.core.reduction.pyoof_maps", "--output", "tests/data/pyoof-maps.npz",
                *check, env=installed_environment())


@nox.session(default=False)
def figures(session):
    """Redraw the figures: your newest run beside the reference runs (none: the committed figures/)."""
    install_project(session)
    replication(session, "figures", *session.posargs)


@nox.session(default=False)
def report(session):
    """Render REPORT.md: your newest run beside the reference runs (none: paper/REPORT.md); -- --check compares."""
    install_project(session)
    replication(session, "report", *session.posargs)


@nox.session(default=False)
def replicate(session):
    """Measure this machine: cross-check, sweeps (quick profile: the Cauchy likelihood and least squares in noise
    units, every gradient; the author's unscaled least squares at the smoke profile's points) into a run of its own,
    then figures and report."""
    parser = argparse.ArgumentParser(prog="nox -s replicate --")
    parser.add_argument("--profile", default="quick", choices=["smoke", "quick", "paper"])
    parser.add_argument("--new-run", action="store_true", help="start a new run even if this machine has one")
    parser.add_argument("--threads", type=int, help=THREADS_HELP)
    args = parser.parse_args(session.posargs)
    install_project(session)
    threads = threads_option(args.threads)
    replication(session, "crosscheck", *threads, *(["--new-run"] if args.new_run else []))
    replication(session, "sweep", "--profile", args.profile, *threads)
    replication(session, "sweep", "--profile", args.profile, "--objective", "gaussian", *threads)
    replication(session, "sweep", "--profile", "smoke", "--objective", "least-squares", *threads)  # as published
    replication(session, "sweep", "--profile", args.profile, *(f"--gradient={name}" for name in GRADIENTS), *threads)
    if not cuda_available(session):
        session.log("torch-cuda: CUDA is not available on this machine; reported as not measured here.")
    replication(session, "figures")
    replication(session, "report")

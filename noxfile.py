"""Sessions of the replication: `nox -l` lists them; every session installs from constraints.txt.

Routine sessions (lint, tests) run by default; the experiment's sessions are named explicitly.
"""

import argparse

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

RUNTIME = ["numpy", "scipy", "torch", "matplotlib", "jinja2", "tqdm", "threadpoolctl"]
CONSTRAINTS = ("-c", "constraints.txt")
GRADIENTS = ("finite-differences", "analytic", "autograd")
"""Every gradient, timed by replicate for the speed-up decomposition (the variants on the profile's subset)."""
ALLOCATOR = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(2**36)}
"""glibc settings for every timed implementation alike: large temporaries are reused from the heap instead
of being mapped afresh (and page-faulted) on every evaluation; the bench measures the effect."""


def install_runtime(session, *extra):
    """Install the pinned runtime dependencies (the packages run from the repository root)."""
    session.install(*CONSTRAINTS, *RUNTIME, *extra)


def replication(session, *args, env=None):
    session.run("python", "-m", "replication", *args, env=env)


def cuda_available(session):
    output = session.run("python", "-c", "import torch; print(torch.cuda.is_available())", silent=True)
    return output.strip().endswith("True")


@nox.session
def tests(session):
    """Run the test suite (under 5 minutes on 2 cores)."""
    install_runtime(session, "pytest")
    session.run("python", "-m", "pytest", *session.posargs)


@nox.session
def lint(session):
    """Lint the code with ruff."""
    session.install(*CONSTRAINTS, "ruff")
    session.run("ruff", "check", ".", *session.posargs)


@nox.session(default=False)
def crosscheck(session):
    """Check that NumPy, torch-cpu (and torch-cuda) agree: model, gradient, fits; into your run."""
    install_runtime(session)
    replication(session, "crosscheck", *session.posargs)


@nox.session(default=False)
def timing_cpu(session):
    """Time NumPy and torch-cpu fits over the quick profile into your run (-- --profile paper: the paper's grid)."""
    install_runtime(session)
    replication(session, "sweep", "--impl", "numpy", "--impl", "torch-cpu", *session.posargs, env=ALLOCATOR)


@nox.session(default=False)
def timing_cuda(session):
    """Time torch-cuda fits (float64 and float32) into your run; says so and succeeds where there is no CUDA."""
    install_runtime(session)
    if not cuda_available(session):
        session.log("torch-cuda: CUDA is not available on this machine; the CUDA sweep is not measured here.")
        return
    replication(session, "sweep", "--impl", "torch-cuda", *session.posargs, env=ALLOCATOR)


@nox.session(default=False)
def bench(session):
    """Time one evaluation of each implementation against the 3-FFT floor, into your run (allocator settings on)."""
    install_runtime(session)
    replication(session, "bench", *session.posargs, env=ALLOCATOR)


@nox.session(default=False)
def figures(session):
    """Redraw the figures: your newest run beside the reference runs (none: the committed figures/)."""
    install_runtime(session)
    replication(session, "figures", *session.posargs)


@nox.session(default=False)
def report(session):
    """Render REPORT.md: your newest run beside the reference runs (none: paper/REPORT.md); -- --check compares."""
    install_runtime(session)
    replication(session, "report", *session.posargs)


@nox.session(default=False)
def replicate(session):
    """Measure this machine: cross-check, sweeps (quick profile: both objectives, every gradient) into a run of
    its own, then figures and report."""
    parser = argparse.ArgumentParser(prog="nox -s replicate --")
    parser.add_argument("--profile", default="quick", choices=["smoke", "quick", "paper"])
    parser.add_argument("--new-run", action="store_true", help="start a new run even if this machine has one")
    args = parser.parse_args(session.posargs)
    install_runtime(session)
    replication(session, "crosscheck", *(["--new-run"] if args.new_run else []))
    replication(session, "sweep", "--profile", args.profile, env=ALLOCATOR)
    replication(session, "sweep", "--profile", args.profile, "--objective", "least-squares", env=ALLOCATOR)
    replication(session, "sweep", "--profile", args.profile, *(f"--gradient={name}" for name in GRADIENTS),
                env=ALLOCATOR)
    if not cuda_available(session):
        session.log("torch-cuda: CUDA is not available on this machine; reported as not measured here.")
    replication(session, "figures")
    replication(session, "report")

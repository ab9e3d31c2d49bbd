"""Sessions of the replication: `nox -l` lists them; every session installs from constraints.txt."""

import nox

nox.options.sessions = ["lint", "tests"]
nox.options.reuse_existing_virtualenvs = True

RUNTIME = ["numpy", "scipy", "torch", "matplotlib", "jinja2", "tqdm", "threadpoolctl"]
CONSTRAINTS = ("-c", "constraints.txt")


def install_runtime(session, *extra):
    """Install the pinned runtime dependencies (the packages run from the repository root)."""
    session.install(*CONSTRAINTS, *RUNTIME, *extra)


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

"""Every path the replication reads or writes, in one place."""

import os
import pathlib

ROOT_VARIABLE = "OOF_REPLICATION_ROOT"


def is_project(folder):
    """Whether folder is a checkout of this repository (its report templates and results folder are there)."""
    return (folder / "paper" / "REPORT.md.j2").is_file() and (folder / "results").is_dir()


def project_root():
    """The repository the harness reads and writes: $OOF_REPLICATION_ROOT where set; else the checkout holding
    this package (run from the source tree); else, for an installed package, the nearest checkout at or above
    the current folder; else the current folder."""
    if os.environ.get(ROOT_VARIABLE):
        return pathlib.Path(os.environ[ROOT_VARIABLE]).resolve()
    here, cwd = pathlib.Path(__file__).resolve().parents[2], pathlib.Path.cwd().resolve()
    return next((folder for folder in (here, cwd, *cwd.parents) if is_project(folder)), cwd)


ROOT = project_root()
"""The repository root (project_root)."""
NUMPY_TREE = ROOT / "reference_numpy"
TORCH_TREE = ROOT / "torch_impl"
COMMON_TREE = ROOT / "oof_common"
"""What the two trees share (constants, limits, telescope, checks, the losses' rules, the BFGS glue): model code too."""
RESULTS = ROOT / "results"
"""Every run's results: results/reference/ (committed) and results/runs/ (your own, not committed)."""
REFERENCE = RESULTS / "reference"
"""The committed reference runs, one folder each; the harness reads them and never writes there."""
RUNS = RESULTS / "runs"
"""Your own runs, one folder each, named after the date and the machine (ignored by git)."""
FIGURES = ROOT / "figures"
"""The figures of the committed report (reference runs only)."""
PAPER = ROOT / "paper"
"""The committed report, its templates and the model's description."""
TEMPLATES = PAPER
"""The report templates live beside the report they render."""

"""Every path the replication reads or writes, in one place."""

import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
"""The repository root."""
NUMPY_TREE = ROOT / "reference_numpy"
TORCH_TREE = ROOT / "torch_impl"
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

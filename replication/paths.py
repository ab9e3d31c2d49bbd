"""Every path the replication reads or writes, in one place."""

import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
"""The repository root."""
NUMPY_TREE = ROOT / "reference_numpy"
TORCH_TREE = ROOT / "torch_impl"
RESULTS = ROOT / "replication" / "results"
"""Results of the runs, one folder per profile (replication/results/<profile>/)."""
FIGURES = ROOT / "figures"
PAPER = ROOT / "paper"
TEMPLATES = ROOT / "replication" / "templates"

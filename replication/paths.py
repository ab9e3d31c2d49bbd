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
TEMPLATES = PAPER
"""The report templates live beside the report they render."""
GPU_RESULTS = RESULTS / "h200"
"""Results brought back from a lent GPU machine (the device tool): sweep, cross-check, GPU name."""

"""The implementations the experiment measures, each reached only through the packages' public interface."""

import dataclasses

import torch

import reference_numpy
import torch_impl

DTYPES = {"float64": torch.float64, "float32": torch.float32}


@dataclasses.dataclass(frozen=True)
class Implementation:
    """One implementation in one precision: a package, a device and a dtype name."""

    name: str
    dtype: str = "float64"

    @property
    def package(self):
        return reference_numpy if self.name == "numpy" else torch_impl

    @property
    def device(self):
        return {"numpy": "cpu", "torch-cpu": "cpu", "torch-cuda": "cuda"}[self.name]

    @property
    def label(self):
        return self.name if self.dtype == "float64" else f"{self.name} ({self.dtype})"

    def available(self):
        """Whether this machine can run it (torch-cuda needs a CUDA device)."""
        return self.name != "torch-cuda" or torch.cuda.is_available()

    def make_setup(self, npix, nzern):
        if self.name == "numpy":
            return reference_numpy.make_setup(npix, nzern)
        return torch_impl.make_setup(npix, nzern, device=self.device, dtype=DTYPES[self.dtype])

    def synchronize(self):
        """Wait for queued GPU work before a clock is read."""
        if self.device == "cuda":
            torch.cuda.synchronize()


ALL = (
    Implementation("numpy"),
    Implementation("torch-cpu"),
    Implementation("torch-cpu", "float32"),
    Implementation("torch-cuda"),
    Implementation("torch-cuda", "float32"),
)
"""Every implementation the sweep knows, the NumPy reference first."""


def select(names):
    """The implementations whose name is in names (all of them for None)."""
    unknown = set(names or ()) - {impl.name for impl in ALL}
    if unknown:
        raise ValueError(f"--impl: unknown implementation(s) {sorted(unknown)}; use numpy, torch-cpu or torch-cuda")
    return [impl for impl in ALL if names is None or impl.name in names]

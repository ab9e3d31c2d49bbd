"""The implementations the experiment measures, each reached only through the packages' public interface."""

import dataclasses
import importlib
import importlib.util

import torch

import reference_numpy
import torch_impl
from replication.series import IMPLEMENTATIONS, Series

DTYPES = {"float64": torch.float64, "float32": torch.float32}




@dataclasses.dataclass(frozen=True)
class Implementation:
    """One implementation in one precision, with one gradient and one minimizer: a package (NumPy, torch, or
    the JAX peer), a device, a dtype name, a gradient name ("": the package's own, the paper's: finite
    differences in NumPy, autograd in torch and JAX) and a minimizer ("scipy", or "torchmin": pytorch-minimize's
    BFGS, on the device)."""

    name: str
    dtype: str = "float64"
    gradient: str = ""
    minimizer: str = "scipy"

    @property
    def fit_module(self):
        """The package's fit module (the package re-exports a function named fit); the JAX peer is one module."""
        if self.name == "jax":
            return self.package
        return importlib.import_module(f"{self.package.__name__}.fit")

    @property
    def gradient_name(self):
        """The gradient its fits use (the JAX peer's is autograd; it is not imported to say so)."""
        if self.name == "jax":
            return self.gradient or "autograd"
        return self.gradient or self.fit_module.DEFAULT_GRADIENT

    @property
    def package(self):
        if self.name == "jax":
            return importlib.import_module("replication.jax_peer")
        return reference_numpy if self.name == "numpy" else torch_impl

    @property
    def device(self):
        return self.series.device

    @property
    def series(self):
        """The series its measurements belong to."""
        return Series(self.name, self.dtype, self.gradient, self.minimizer)

    @property
    def label(self):
        return self.series.label

    def available(self):
        """Whether this machine can run it (torch-cuda needs a CUDA device, the JAX peer an installed jax)."""
        if self.name == "jax":
            return importlib.util.find_spec("jax") is not None
        return self.name != "torch-cuda" or torch.cuda.is_available()

    def make_setup(self, npix, nzern):
        if self.name in ("numpy", "jax"):
            return self.package.make_setup(npix, nzern)
        return torch_impl.make_setup(npix, nzern, device=self.device, dtype=DTYPES[self.dtype])

    def synchronize(self):
        """Wait for queued GPU work before a clock is read."""
        if self.device == "cuda":
            torch.cuda.synchronize()


ALL = (
    Implementation("numpy"),
    Implementation("torch-cpu"),
    Implementation("torch-cpu", "float32"),
    Implementation("torch-cpu", minimizer="torchmin"),
    Implementation("torch-cuda"),
    Implementation("torch-cuda", "float32"),
    Implementation("torch-cuda", minimizer="torchmin"),
    Implementation("torch-cuda", "float32", minimizer="torchmin"),
    Implementation("jax"),
)
"""Every implementation the sweep knows, the NumPy reference first; the JAX peer where jax is installed."""


def select(names):
    """The implementations whose name is in names (all of them for None)."""
    unknown = set(names or ()) - {impl.name for impl in ALL}
    if unknown:
        raise ValueError(f"--impl: unknown implementation(s) {sorted(unknown)}; use {', '.join(IMPLEMENTATIONS)}")
    return [impl for impl in ALL if names is None or impl.name in names]


def with_gradients(impls, gradients):
    """The implementations to time for the requested gradients: each one's own gradient as itself, any other
    gradient its package offers as a float64 variant (None or empty: each one's own gradient only)."""
    if not gradients:
        return list(impls)
    chosen = []
    for impl in impls:
        for gradient in gradients:
            if gradient == impl.gradient_name:
                chosen.append(impl)
            elif impl.name != "jax" and gradient in impl.fit_module.GRADIENTS and impl.dtype == "float64" \
                    and impl.minimizer == "scipy":
                chosen.append(dataclasses.replace(impl, gradient=gradient))
    return chosen

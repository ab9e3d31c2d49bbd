"""The implementations the experiment measures, each reached only through its package's public interface, as
the registry (replication.core.registry) declares it."""

from __future__ import annotations

import dataclasses
import importlib
import time

from replication.core import registry
from replication.core.problem import Problem
from replication.core.registry import ADJOINT, FIT_OPTIONS, GAUSS_NEWTON_GRID, PER_GRID, SCIPY, Registration
from replication.core.results import RunError
from replication.core.series import Series


@dataclasses.dataclass(frozen=True)
class Implementation:
    """One registered implementation in one precision, with one gradient and one minimizer: gradient "" is its
    own (the paper's: finite differences in NumPy, autograd in torch and JAX), another name a variant; minimizer
    "scipy", or "torchmin" (pytorch-minimize's BFGS, on the device)."""

    name: str
    dtype: str = "float64"
    gradient: str = ""
    minimizer: str = SCIPY

    @property
    def registration(self) -> Registration:
        return registry.get(self.name)

    @property
    def package(self):
        """The module of the public interface (make_setup, negative_log_likelihood, value_and_grad, fit, ...)."""
        return self.registration.module()

    @property
    def gradient_name(self) -> str:
        """The gradient its fits use."""
        return self.gradient or self.registration.own_gradient

    @property
    def device(self) -> str:
        return self.registration.device

    @property
    def fit_options(self) -> dict:
        """The keyword arguments of the package's fit that its minimizer stands for (registry.FIT_OPTIONS)."""
        return dict(FIT_OPTIONS[self.minimizer])

    def fit_keywords(self, problem: Problem, p0) -> dict:
        """fit's keyword arguments for a fit of the problem from p0: fit_options, where they ask for a start matrix
        per grid (registry.PER_GRID) with the grid's matrix (grid_start: made on first use, off any fit's clock)."""
        options = self.fit_options
        if options.get("start_hessian") == PER_GRID:
            options["start_hessian"] = grid_start(self, problem, p0)[0]
        return options

    @property
    def series(self) -> Series:
        """The series its measurements belong to."""
        return Series(self.name, self.dtype, self.gradient, self.minimizer)

    @property
    def label(self) -> str:
        return self.series.label

    def available(self) -> bool:
        """Whether this machine can run it (see Registration.available)."""
        return self.registration.available()

    def make_setup(self, npix: int, nzern: int, **options):
        """The package's setup of an npix x npix problem of Zernike order nzern, on its device, in its dtype; options
        (telescope, oversamp, sigma, offsets, ...) passed on to make_setup."""
        registration = self.registration
        if registration.setup_device:
            dtype = getattr(importlib.import_module(registration.array_library), self.dtype)
            return self.package.make_setup(npix, nzern, device=self.device, dtype=dtype, **options)
        return self.package.make_setup(npix, nzern, **options)

    def synchronize(self) -> None:
        """Wait for queued device work before a clock is read (CUDA runs asynchronously)."""
        if self.registration.cuda:
            importlib.import_module("torch").cuda.synchronize()


def of(series: Series) -> Implementation:
    """The Implementation that fits a series."""
    return Implementation(series.impl, series.dtype, series.gradient, series.minimizer)


def every() -> list[Implementation]:
    """Every series the sweep knows, as implementations: each registration's (dtype, minimizer) pairs, in registry
    order (the NumPy reference first); those not available here included (the sweep says so)."""
    return [Implementation(r.name, dtype, minimizer=minimizer) for r in registry.registrations()
            for dtype, minimizer in r.series]


def select(names: tuple[str, ...] | list[str] | None) -> list[Implementation]:
    """The implementations whose name is in names (all of them for None)."""
    unknown = set(names or ()) - set(registry.names())
    if unknown:
        raise RunError(f"--impl: unknown implementation(s) {sorted(unknown)}; use {', '.join(registry.names())}")
    return [impl for impl in every() if names is None or impl.name in names]


def with_gradients(impls: list[Implementation], gradients: tuple[str, ...] | None) -> list[Implementation]:
    """The implementations to time for the requested gradients: each one's own gradient as itself, any other
    gradient its registration offers as a float64 variant with scipy's BFGS from the identity, and the exact adjoint
    also from the per-grid Gauss-Newton matrix where the registration times that start (each tree's fastest path;
    None or empty: each one's own gradient only)."""
    if not gradients:
        return list(impls)
    chosen = []
    for impl in impls:
        for gradient in gradients:
            if gradient == impl.gradient_name:
                chosen.append(impl)
            elif gradient in impl.registration.gradients and impl.dtype == "float64" and (
                    impl.minimizer == SCIPY or (impl.minimizer == GAUSS_NEWTON_GRID and gradient == ADJOINT)):
                chosen.append(dataclasses.replace(impl, gradient=gradient))
    return chosen


GRID_STARTS: dict = {}
"""The Gauss-Newton start matrix of each grid made in this process: {(implementation, dtype, npix, nzern, objective,
gamma, illumination): (matrix, seconds it took)}."""


def grid_start(impl: Implementation, problem: Problem, p0) -> tuple:
    """(the Gauss-Newton matrix of a grid, the seconds it took to make): at p0's illumination with every Zernike term
    0 and no residual (the model's own beams as the data: the Cauchy weights at a perfect fit), so that it depends on
    the grid, the objective and gamma only, never on the maps; made once per process and grid."""
    setup, gamma, objective = problem.setup_for(impl), problem.gamma, problem.objective
    nominal = [float(v) for v in p0]
    nominal[:setup.basis.shape[0]] = [0.0] * setup.basis.shape[0]
    key = (impl.name, impl.dtype, problem.npix, problem.nzern, objective, float(gamma),
           tuple(nominal[setup.basis.shape[0]:]))
    if key not in GRID_STARTS:
        impl.synchronize()
        start = time.perf_counter()
        beams = impl.package.beam_maps(nominal, setup)
        matrix = impl.package.gauss_newton_matrix(nominal, setup, beams, gamma, objective)
        impl.synchronize()
        GRID_STARTS[key] = (matrix, time.perf_counter() - start)
    return GRID_STARTS[key]

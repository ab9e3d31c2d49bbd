"""The implementations the harness knows, each declared once: what it is, what it can do, how it is reached.

Everything else (the sweep, the cross-check, the bench, the figures, the report) iterates this registry; no other
module names an implementation by string. Adding an implementation is one package (or module) exposing the
packages' public interface (make_setup, negative_log_likelihood, value_and_grad, fit, and hessian where it
declares one) plus one `register(Registration(...))`.

No torch here, nor any model package: a registration names its package, which is imported only when its
numerics are used, so the read side (readers, figures, claims, report) can use the registry.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.metadata
import importlib.util
from collections.abc import Iterator

from replication.core.results import RunError

FINITE_DIFFERENCES, ADJOINT, AUTOGRAD = "finite-differences", "adjoint", "autograd"
GRADIENTS = (FINITE_DIFFERENCES, ADJOINT, AUTOGRAD)
"""Every gradient a fit may use: scipy's two-point differences, the hand-written adjoint (reverse mode by hand),
reverse-mode automatic differentiation."""
SCIPY, ON_DEVICE, GAUSS_NEWTON_START = "scipy", "torchmin", "scipy-gauss-newton"
GAUSS_NEWTON_GRID = "scipy-gauss-newton-grid"
MINIMIZERS = (SCIPY, ON_DEVICE, GAUSS_NEWTON_START, GAUSS_NEWTON_GRID)
"""Whose BFGS runs a fit, from which start: scipy's, on the host (the paper's), from the identity; pytorch-minimize's,
on the implementation's device; scipy's started from the Gauss-Newton matrix at the start (fit's
start_hessian="gauss-newton", built inside the fit and on its clock); or scipy's started from a Gauss-Newton matrix
made once per grid (size, order, objective), at the start's illumination with no aberration and no residual: it does
not depend on the maps, so every fit on that grid shares it, made off the fits' clocks and its one-off cost recorded
beside them (implementations.Implementation.fit_keywords)."""
PER_GRID = "per-grid"
"""What FIT_OPTIONS gives as start_hessian for GAUSS_NEWTON_GRID: the harness puts the grid's matrix there."""
FIT_OPTIONS = {SCIPY: {"minimizer": "scipy"}, ON_DEVICE: {"minimizer": "torchmin"},
               GAUSS_NEWTON_START: {"minimizer": "scipy", "start_hessian": "gauss-newton"},
               GAUSS_NEWTON_GRID: {"minimizer": "scipy", "start_hessian": PER_GRID}}
"""The keyword arguments of the packages' fit that each minimizer stands for."""
DTYPES = ("float64", "float32")


@dataclasses.dataclass(frozen=True)
class Registration:
    """One implementation of the model as the harness measures it.

    name: its name in records and on the command line ('torch-cpu'); package: the module exposing the public
    interface; device: where its arrays live ('cpu', 'cuda'); own_gradient: the gradient of its plain fits (the
    paper's: finite differences in NumPy, autograd in torch); gradients: every gradient its fits offer (others
    than its own are timed as float64 variants); series: the (dtype, minimizer) pairs the sweep times, its plain
    one first; hessian: whether the package computes an exact Hessian (the cross-check compares it where so);
    reference: the implementation every other is checked against (exactly one); peer: a comparison, not a tree
    of the paper (timed and reported apart, never in the paper's claims); versions: the distributions whose
    versions identify its results; needs: modules that must be importable; cuda: needs a CUDA device;
    setup_device: make_setup takes device and dtype keyword arguments, the dtype as array_library's attribute of
    that name (torch.float32); bench: 'module:function' making its
    bench steps for a point (`{step: callable}`), 'public' for the public interface's objective and value and
    gradient, None for no bench; bench_prefix: the first word of its bench steps, whose FFT floor is
    '<floor>' (floor_step); peer_bench: its steps are timed only by `bench --peers`."""

    name: str
    package: str
    device: str = "cpu"
    own_gradient: str = AUTOGRAD
    gradients: tuple[str, ...] = (AUTOGRAD,)
    series: tuple[tuple[str, str], ...] = (("float64", SCIPY),)
    hessian: bool = True
    reference: bool = False
    peer: bool = False
    versions: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    cuda: bool = False
    setup_device: bool = False
    array_library: str = "numpy"
    bench: str | None = "public"
    bench_prefix: str | None = None
    floor: str | None = None

    def __post_init__(self):
        if self.own_gradient not in self.gradients or not set(self.gradients) <= set(GRADIENTS):
            raise ValueError(f"{self.name}: own_gradient {self.own_gradient!r} must be one of its gradients "
                             f"{self.gradients}, all of them among {GRADIENTS}")
        for dtype, minimizer in self.series:
            if dtype not in DTYPES or minimizer not in MINIMIZERS:
                raise ValueError(f"{self.name}: series ({dtype!r}, {minimizer!r}) needs a dtype of {DTYPES} and a "
                                 f"minimizer of {MINIMIZERS}")
        if not self.series or self.series[0] != ("float64", SCIPY):
            raise ValueError(f"{self.name}: its first series must be the plain one (float64, scipy's BFGS)")

    @property
    def dtypes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(dtype for dtype, _ in self.series))

    @property
    def minimizers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(minimizer for _, minimizer in self.series))

    @property
    def exact_gradient(self) -> bool:
        """Whether its own gradient is exact (its fits then inform the predictions of finite-difference fits)."""
        return self.own_gradient != FINITE_DIFFERENCES

    def module(self):
        """The package exposing the public interface (imported now)."""
        return importlib.import_module(self.package)

    def available(self) -> bool:
        """Whether this machine can run it: its modules are installed and, for a CUDA one, a device is present."""
        return self.why_unavailable() is None

    def why_unavailable(self) -> str | None:
        """Why this machine cannot run it, in a few words, or None where it can."""
        missing = [name for name in (*self.needs, self.package.split(".")[0]) if importlib.util.find_spec(name) is None]
        if missing:
            return f"{', '.join(missing)} not installed"
        if self.cuda:
            import torch  # only a CUDA registration asks torch, and only when asked whether it can run

            if not torch.cuda.is_available():
                return "torch.cuda.is_available() is False"
        return None

    def installed_versions(self) -> dict[str, str | None]:
        """{distribution (with '_' for '-'): its installed version, or None} of its versions."""
        return {name.replace("-", "_"): installed_version(name) for name in self.versions}


def installed_version(distribution: str) -> str | None:
    """The installed version of a distribution, or None where it is not installed."""
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


_REGISTRY: dict[str, Registration] = {}


def register(registration: Registration) -> Registration:
    """Add an implementation to the registry (after those already there); an existing name is refused."""
    if registration.name in _REGISTRY:
        raise ValueError(f"an implementation named {registration.name!r} is registered already")
    if registration.reference and any(other.reference for other in _REGISTRY.values()):
        raise ValueError(f"{registration.name}: there is a reference implementation already ({reference().name})")
    _REGISTRY[registration.name] = registration
    return registration


def unregister(name: str) -> None:
    """Remove a registration (for tests and plug-ins that registered one for a while)."""
    if _REGISTRY.get(name) is None or _REGISTRY[name].reference:
        raise ValueError(f"{name!r}: not a registered implementation that can be removed")
    del _REGISTRY[name]


@contextlib.contextmanager
def registered(registration: Registration) -> Iterator[Registration]:
    """Register an implementation for the duration of a with block."""
    register(registration)
    try:
        yield registration
    finally:
        unregister(registration.name)


def names() -> tuple[str, ...]:
    """Every registered implementation's name, in registration order: the order of tables and legends."""
    return tuple(_REGISTRY)


def registrations() -> tuple[Registration, ...]:
    return tuple(_REGISTRY.values())


def get(name: str) -> Registration:
    """The registration of a name; a ValueError naming the known ones otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown implementation {name!r}; registered: {', '.join(_REGISTRY)}") from None


def reference() -> Registration:
    """The implementation every other is checked against."""
    return next(registration for registration in _REGISTRY.values() if registration.reference)


def floor_step(step: str) -> str:
    """The bench step holding the FFT floor of the library a step (or profile walk) named `step` runs in: the
    floor of the registration whose bench_prefix is the step's first word, else the first registered floor
    that is not the reference's (torch's)."""
    word = step.split("_")[0].split(" ")[0]
    floors = {r.bench_prefix: r.floor for r in _REGISTRY.values() if r.bench_prefix and r.floor}
    default = next(r.floor for r in _REGISTRY.values() if r.floor and not r.reference)
    return floors.get(word, default)


def version_keys(peers: bool = False) -> tuple[str, ...]:
    """The version keys (distribution names, '_' for '-') that identify results: those of every tree, and of the
    peers where asked."""
    keys = (name.replace("-", "_") for r in _REGISTRY.values() if peers or not r.peer for name in r.versions)
    return tuple(dict.fromkeys(keys))


NUMPY = register(Registration(
    name="numpy", package="reference_numpy", own_gradient=FINITE_DIFFERENCES, gradients=(FINITE_DIFFERENCES, ADJOINT),
    reference=True, versions=("numpy", "scipy"), bench="replication.studies.bench.measure:numpy_steps",
    bench_prefix="numpy",
    floor="floor_numpy"))
TORCH_CPU = register(Registration(
    name="torch-cpu", package="torch_impl", gradients=GRADIENTS,
    series=(("float64", SCIPY), ("float32", SCIPY), ("float64", ON_DEVICE), ("float64", GAUSS_NEWTON_START),
            ("float64", GAUSS_NEWTON_GRID)),
    versions=("torch",),
    setup_device=True, array_library="torch", bench="replication.studies.bench.measure:torch_steps",
    bench_prefix="torch",
    floor="floor_torch"))
TORCH_CUDA = register(Registration(
    name="torch-cuda", package="torch_impl", device="cuda", gradients=GRADIENTS,
    series=(("float64", SCIPY), ("float32", SCIPY), ("float64", ON_DEVICE), ("float32", ON_DEVICE),
            ("float64", GAUSS_NEWTON_START), ("float64", GAUSS_NEWTON_GRID)),
    versions=("torch",), cuda=True, setup_device=True, array_library="torch", bench=None))
JAX = register(Registration(
    name="jax", package="replication.studies.peers.jax_peer", hessian=False, peer=True, versions=("jax",),
    series=(("float64", SCIPY), ("float64", GAUSS_NEWTON_GRID)),
    needs=("jax",),
    bench="replication.studies.bench.measure:jax_steps", bench_prefix="jax", floor="floor_jax"))
EXTRA_VERSIONS = ("pytorch-minimize",)
"""Distributions recorded with every run besides the registrations' own (the on-device BFGS)."""


def require_jax(prefix=""):
    """jax must be installed for the peer: say how to get it (nox -s peers installs the pinned version)."""
    reason = JAX.why_unavailable()
    if reason is not None:
        raise RunError(f"{prefix}the JAX peer cannot run here ({reason}); `nox -s peers` installs the pinned "
                         "version and runs the peers")

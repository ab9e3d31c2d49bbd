"""What a measured series is: an implementation on a device, in a precision, with a gradient and a minimizer.

The one place series get their display label; everything else selects series by these fields. No torch here:
the read side (readers, figures, claims, report) uses it.
"""

from __future__ import annotations

import dataclasses

from replication.core import registry
from replication.core.registry import (
    ADJOINT,
    DTYPES,
    FINITE_DIFFERENCES,
    GAUSS_NEWTON_GRID,
    GAUSS_NEWTON_START,
    GRADIENTS,
    ON_DEVICE,
    SCIPY,
)

MINIMIZER_LABELS = {SCIPY: "", ON_DEVICE: "on-device BFGS", GAUSS_NEWTON_START: "Gauss-Newton start",
                    GAUSS_NEWTON_GRID: "Gauss-Newton start per grid"}
"""How a label names a minimizer: scipy's BFGS (the paper's) is not named."""


@dataclasses.dataclass(frozen=True)
class Series:
    """One measured series. gradient "" is the implementation's own (the paper's: its registration's own_gradient),
    another name a
    variant; minimizer "scipy" (on the host), "torchmin" (pytorch-minimize, on the device) or "scipy-gauss-newton"
    (scipy's, started from the Gauss-Newton matrix). The objective is
    not a field: each sweep folder holds one objective, and series are compared within a sweep."""

    impl: str
    dtype: str = "float64"
    gradient: str = ""
    minimizer: str = "scipy"

    def __post_init__(self):
        if self.impl not in registry.names() or self.dtype not in DTYPES or self.minimizer not in MINIMIZER_LABELS \
                or self.gradient not in ("", *GRADIENTS):
            raise ValueError(f"not a series: {self!r}")

    @classmethod
    def of(cls, record: dict):
        """The series a point or fit record as written names by its fields (an unnamed one the default's)."""
        return cls(record.get("impl"), record.get("dtype", "float64"), record.get("gradient") or "",
                   record.get("minimizer") or "scipy")

    @classmethod
    def parse(cls, label):
        """The series a label names (label(parse(x)) == x): for records that kept only the label."""
        words = label.replace("(", "[").replace(")", "]").split(" [")
        impl, options = words[0], [word.rstrip("]") for word in words[1:]]
        dtype = next((word for word in options if word in DTYPES), "float64")
        gradient = next((word for word in options if word in GRADIENTS), "")
        minimizer = next((name for name, text in MINIMIZER_LABELS.items() if text and text in options), "scipy")
        series = cls(impl, dtype, gradient, minimizer)
        if series.label != label:
            raise ValueError(f"not a series label: {label!r}")
        return series

    @property
    def device(self):
        return registry.get(self.impl).device

    @property
    def gradient_name(self):
        """The gradient its fits use."""
        return self.gradient or registry.get(self.impl).own_gradient

    @property
    def is_paper(self):
        """Whether it is one of the paper's series: float64, its own gradient, scipy's BFGS."""
        return (self.dtype, self.gradient, self.minimizer) == ("float64", "", "scipy")

    @property
    def label(self):
        """'torch-cpu', 'torch-cuda (float32)', 'numpy [adjoint]', 'torch-cpu [on-device BFGS]': the display
        name in tables, legends and cross-check comparisons."""
        text = self.impl if self.dtype == "float64" else f"{self.impl} ({self.dtype})"
        text += f" [{self.gradient}]" if self.gradient else ""
        return text + (f" [{MINIMIZER_LABELS[self.minimizer]}]" if self.minimizer != "scipy" else "")

    def __str__(self):
        return self.label

    def sort_key(self):
        """The order tables and legends show series in: the paper's (NumPy, torch on the CPU, on the GPU, each in
        float64 then float32), then the on-device BFGS, the JAX peer, and the gradient variants."""
        group = 3 if self.gradient else 2 if registry.get(self.impl).peer else 1 if self.minimizer != SCIPY else 0
        return group, registry.names().index(self.impl), self.dtype != "float64", self.label


NUMPY, TORCH_CPU, TORCH_CUDA, JAX = (Series(r.name) for r in (registry.NUMPY, registry.TORCH_CPU, registry.TORCH_CUDA,
                                                               registry.JAX))
"""The paper's series (and the JAX peer's)."""
TORCH_CPU_FLOAT32, TORCH_CUDA_FLOAT32 = (Series(s.impl, "float32") for s in (TORCH_CPU, TORCH_CUDA))
NUMPY_ADJOINT, TORCH_ADJOINT, CUDA_ADJOINT = (Series(s.impl, gradient=ADJOINT) for s in (NUMPY, TORCH_CPU, TORCH_CUDA))
"""The exact (hand-written adjoint) gradient in each tree: the speed-up decomposition's middle steps."""
TORCH_DIFFERENCES, CUDA_DIFFERENCES = (Series(s.impl, gradient=FINITE_DIFFERENCES) for s in (TORCH_CPU, TORCH_CUDA))
TORCH_ON_DEVICE, CUDA_ON_DEVICE = (Series(s.impl, minimizer=ON_DEVICE) for s in (TORCH_CPU, TORCH_CUDA))
CUDA_FLOAT32_ON_DEVICE = Series(TORCH_CUDA.impl, "float32", minimizer=ON_DEVICE)
TORCH_SEEDED, CUDA_SEEDED = (Series(s.impl, minimizer=GAUSS_NEWTON_START) for s in (TORCH_CPU, TORCH_CUDA))
"""torch with autograd and scipy's BFGS started from the Gauss-Newton matrix: the "start" factor's faster side."""
TORCH_GRID_SEEDED = Series(TORCH_CPU.impl, minimizer=GAUSS_NEWTON_GRID)
"""torch autograd with scipy's BFGS started from the Gauss-Newton matrix made once per grid."""
TORCH_FASTEST = Series(TORCH_CPU.impl, gradient=ADJOINT, minimizer=GAUSS_NEWTON_GRID)
"""torch's fastest path on the CPU: the exact adjoint, scipy's BFGS started from the per-grid Gauss-Newton matrix."""
JAX_GRID_SEEDED = Series(JAX.impl, minimizer=GAUSS_NEWTON_GRID)
"""The JAX peer with scipy's BFGS started from the per-grid Gauss-Newton matrix (the NumPy reference's): JAX given
the matrix torch's fastest path starts from."""


def ordered(series):
    """The series present, in Series.sort_key order."""
    return sorted(series, key=Series.sort_key)


SERIES_COLOURS = {NUMPY: "tab:blue", TORCH_CPU: "tab:orange", TORCH_CPU_FLOAT32: "goldenrod",
                  TORCH_CUDA: "tab:green", TORCH_CUDA_FLOAT32: "yellowgreen",
                  NUMPY_ADJOINT: "tab:cyan", TORCH_ADJOINT: "tab:red", TORCH_DIFFERENCES: "tab:pink",
                  CUDA_ADJOINT: "darkgreen", CUDA_DIFFERENCES: "olive",
                  TORCH_ON_DEVICE: "tab:brown", CUDA_ON_DEVICE: "darkslategrey",
                  CUDA_FLOAT32_ON_DEVICE: "cadetblue", JAX: "tab:purple", TORCH_SEEDED: "deeppink",
                  CUDA_SEEDED: "seagreen", TORCH_GRID_SEEDED: "hotpink", TORCH_FASTEST: "crimson",
                  JAX_GRID_SEEDED: "mediumpurple"}
"""Colour of each series, the same in every run; a series not named here takes series_colour's."""
SPARE_COLOURS = ("tab:olive", "tab:gray", "indigo", "maroon", "teal", "orchid", "sienna", "navy")
"""Colours of the implementations registered beyond those above, in registry order."""


def series_colour(series):
    """A series' colour: SERIES_COLOURS's, else the spare colour of its implementation's place among the
    registrations that have no colour of their own (the same in every run)."""
    if series in SERIES_COLOURS:
        return SERIES_COLOURS[series]
    coloured = {known.impl for known in SERIES_COLOURS}
    others = [name for name in registry.names() if name not in coloured]
    if series.impl in others:
        return SPARE_COLOURS[others.index(series.impl) % len(SPARE_COLOURS)]
    return "grey"


PAPER_SERIES = (NUMPY, TORCH_CPU, TORCH_CUDA)
"""The series the paper drew: NumPy, and torch on the CPU and on the GPU."""
OTHER_SERIES = (
    ("precision", (TORCH_CPU, TORCH_CPU_FLOAT32, TORCH_CUDA, TORCH_CUDA_FLOAT32)),
    ("minimizer", (TORCH_CPU, TORCH_ON_DEVICE, TORCH_CUDA, CUDA_ON_DEVICE, CUDA_FLOAT32_ON_DEVICE)),
    ("gradient", (NUMPY, NUMPY_ADJOINT, TORCH_DIFFERENCES, TORCH_ADJOINT, TORCH_CPU)),
    ("peer", (TORCH_CPU, TORCH_ADJOINT, JAX)),
    ("start", (TORCH_CPU, TORCH_SEEDED, TORCH_CUDA, CUDA_SEEDED)),
)
"""The other series, one panel per question (what changes), each beside the series it is compared with."""

"""Where the speed-up comes from: the whole split into measured factors (algorithm, library, autograd,
device) whose ratios multiply to it."""

import math

from replication.claims.verdicts import verdict_c4
from replication.core.judging import aggregate, geometric_mean
from replication.core.series import (
    NUMPY,
    NUMPY_ADJOINT,
    TORCH_ADJOINT,
    TORCH_CPU,
    TORCH_CUDA,
    TORCH_DIFFERENCES,
)
from replication.studies.sweep.read import complete_sizes, speedups

FACTORS = (
    ("algorithm", NUMPY, NUMPY_ADJOINT, "finite differences -> exact gradient, both NumPy"),
    ("library", NUMPY_ADJOINT, TORCH_ADJOINT, "NumPy -> torch, both the exact gradient on the CPU"),
    ("autograd", TORCH_ADJOINT, TORCH_CPU, "hand-written adjoint -> autograd, both torch on the CPU"),
    ("device", TORCH_CPU, TORCH_CUDA, "CPU -> GPU, both torch autograd"),
)
"""The speed-up from NumPy with finite differences to torch with autograd, split into measured ratios of
times to solution: (name, slower series, faster series, what changes). At each point their product is the whole."""


def decomposition(series):
    """Per npix, the geometric mean over Zernike orders of each factor's ratio (a Ratio: its range from the repeats'
    ranges, a bound where a censored fit leaves it open), at the points where every series of the chain and the
    whole were measured; plus the whole (NumPy over the last series of the chain) and the library factor at fixed
    finite differences. At each point the factors' ratios multiply to the whole exactly (the times telescope), and
    so do their geometric means where every one is a value. {} without gradient variants."""
    chain = [factor for factor in FACTORS if factor[1] in series and factor[2] in series]
    if not chain or chain[0][0] != "algorithm":
        return {}
    last = chain[-1][2]
    ratios = {name: speedups(series, slow, fast) for name, slow, fast, _ in chain}
    ratios["whole"] = speedups(series, NUMPY, last)
    ratios["library at finite differences"] = speedups(series, NUMPY, TORCH_DIFFERENCES)
    common = set.intersection(*(set(ratios[name]) for name, *_ in chain)) & set(ratios["whole"])
    rows = {}
    for npix in sorted({key[0] for key in common}):
        keys = [key for key in common if key[0] == npix]
        rows[npix] = {name: aggregate(geometric_mean, [values[key] for key in keys])
                      if all(key in values for key in keys) else None for name, values in ratios.items()}
        rows[npix]["orders"] = sorted(key[1] for key in keys)
        factors = [rows[npix][name] for name, *_ in chain]
        exact = not any(r.is_bound for r in [*factors, rows[npix]["whole"]])
        rows[npix]["product"] = math.prod(factors) if exact else None
        rows[npix]["product_is_whole"] = exact and math.isclose(rows[npix]["product"], rows[npix]["whole"],
                                                                rel_tol=1e-9)
    return {"factors": [(name, slow, fast, what) for name, slow, fast, what in chain], "last": last, "rows": rows,
            "c4": {gradient: verdict_c4(complete_sizes(series, slow, fast)) for gradient, slow, fast in (
                ("finite differences", NUMPY, TORCH_DIFFERENCES),
                ("exact (adjoint)", NUMPY_ADJOINT, TORCH_ADJOINT),
                ("paper's (NumPy differences, torch autograd)", NUMPY, TORCH_CPU))}}

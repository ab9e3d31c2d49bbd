"""A fit's phase on a grid across the dish, and another package's phase map against it under every convention they
may differ by: how the real maps and the closure test compare pyoof's surface with ours."""

import numpy as np

import reference_numpy

PHASE_VARIANTS = {"as is": (1, False, False), "negated": (-1, False, False),
                  "mirrored in u": (1, False, True), "mirrored in v": (1, True, False),
                  "point-reflected": (1, True, True), "point-reflected and negated (the OOF twin)": (-1, True, True),
                  "negated, mirrored in u": (-1, False, True), "negated, mirrored in v": (-1, True, False)}
"""The ways a phase map may differ from ours by convention alone (sign, the direction of u and v) or by the OOF
twin: pyoof's is compared with ours under each, and the closest is reported."""


def our_phase(x, order, pixels):
    """Our phase (radians, tilts and piston removed) from a fit's parameters on a pixels x pixels grid across the
    dish, rows along v and columns along u as the maps (NaN off the dish)."""
    t = np.linspace(-1.0, 1.0, pixels)
    along_v, along_u = np.meshgrid(t, t, indexing="ij")  # the model's x is conjugate to the maps' rows (v)
    basis = reference_numpy.zernike_basis(order, along_v, along_u)[1:]
    coefficients = np.array(x[:basis.shape[0]], dtype=float)
    coefficients[:2] = 0.0
    phase = np.tensordot(coefficients, basis, axes=1)
    dish = np.hypot(along_v, along_u) <= 1.0
    return np.where(dish, phase - phase[dish].mean(), np.nan)


def compare_phases(ours, theirs):
    """{variant: rms difference (radians) over the dish} of theirs (mean removed) against ours, for every
    PHASE_VARIANTS."""
    theirs = theirs - np.nanmean(theirs)
    out = {}
    for name, (sign, flip_v, flip_u) in PHASE_VARIANTS.items():
        other = sign * theirs[::-1 if flip_v else 1, ::-1 if flip_u else 1]
        out[name] = float(np.sqrt(np.nanmean((other - ours) ** 2)))
    return out

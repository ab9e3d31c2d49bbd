"""Unnormalised Zernike circle polynomials (Born & Wolf), in the order of the paper's code.

Order: for n in 0..nmax, for l in -n, -n+2, ..., n; index 0 is the piston. With m = |l|,
Z_{n,l} = R_n^m(r) cos(l phi) for l > 0, R_n^m(r) sin(m phi) for l < 0 and R_n^0(r) for l = 0.
"""

from __future__ import annotations

import math

import torch

from .backend import Array


def zernike_indices(nmax):
    """The (n, l) pairs up to order nmax, (nmax+1)(nmax+2)/2 of them."""
    return [(n, l) for n in range(nmax + 1) for l in range(-n, n + 1, 2)]


def radial_terms(n, m):
    """The (coefficient, power of r) terms of the radial polynomial R_n^m."""
    return [
        ((-1) ** s * math.factorial(n - s)
         // (math.factorial(s) * math.factorial((n + m) // 2 - s) * math.factorial((n - m) // 2 - s)), n - 2 * s)
        for s in range((n - m) // 2 + 1)
    ]


def radial_polynomial(n, m, r):
    """R_n^m(r), dimensionless, for radius r in dish radii."""
    total = torch.zeros_like(r)
    for coefficient, power in radial_terms(n, m):
        total = total + coefficient * r**power
    return total


def azimuthal_factor(l, phi):
    """cos(l phi) for l > 0, sin(|l| phi) for l < 0, 1 for l = 0; phi in radians."""
    if l > 0:
        return torch.cos(l * phi)
    if l < 0:
        return torch.sin(-l * phi)
    return torch.ones_like(phi)


def zernike_basis(nmax: int, x: Array, y: Array) -> Array:
    """Zernike polynomials up to order nmax at points (x, y) in dish radii: shape (N, *x.shape). Each power of r and
    each azimuthal factor is computed once and shared by the terms that use it (the same operations as
    radial_polynomial and azimuthal_factor: the same numbers to the bit)."""
    r = torch.hypot(x, y)
    phi = torch.atan2(y, x)
    powers = [r**power for power in range(nmax + 1)]
    factors = {l: azimuthal_factor(l, phi) for l in range(-nmax, nmax + 1)}
    rows = []
    for n, l in zernike_indices(nmax):
        radial = torch.zeros_like(r)
        for coefficient, power in radial_terms(n, abs(l)):
            radial = radial + coefficient * powers[power]
        rows.append(radial * factors[l])
    return torch.stack(rows)

"""Zernike basis: order, count, closed forms of low orders, R_n^m(1) = 1 and orthogonality on the disk."""

import numpy as np
import pytest
import torch
from conftest import to_numpy

import reference_numpy
import torch_impl
from reference_numpy.zernike import radial_polynomial, zernike_indices


def basis_numpy(nmax, x, y):
    return reference_numpy.zernike_basis(nmax, x, y)


def basis_torch(nmax, x, y):
    return to_numpy(torch_impl.zernike_basis(nmax, torch.as_tensor(x), torch.as_tensor(y)))


BASES = [pytest.param(basis_numpy, id="numpy"), pytest.param(basis_torch, id="torch")]


@pytest.mark.parametrize("nmax", range(10))
def test_count_is_triangular(nmax):
    assert len(zernike_indices(nmax)) == (nmax + 1) * (nmax + 2) // 2


def test_order_starts_with_piston_then_tilts():
    assert zernike_indices(2) == [(0, 0), (1, -1), (1, 1), (2, -2), (2, 0), (2, 2)]


@pytest.mark.parametrize("basis", BASES)
def test_low_orders_match_closed_forms(basis, rng):
    x, y = rng.uniform(-1, 1, (2, 50))
    z = basis(2, x, y)
    assert z.shape == (6, 50)
    expected = [np.ones_like(x), y, x, 2 * x * y, 2 * (x**2 + y**2) - 1, x**2 - y**2]
    np.testing.assert_allclose(z, np.stack(expected), rtol=0, atol=1e-13)


@pytest.mark.parametrize("n", range(10))
def test_radial_polynomials_equal_one_at_the_rim(n):
    for m in range(n % 2, n + 1, 2):
        assert radial_polynomial(n, m, np.ones(1))[0] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("basis", BASES)
def test_orthogonal_over_the_unit_disk(basis):
    """Integral of Z_j Z_k over the disk: pi/(2n+2) on the diagonal (doubled for l = 0), 0 elsewhere."""
    npix = 801
    t = np.linspace(-1, 1, npix)
    x, y = np.meshgrid(t, t, indexing="ij")
    inside = np.hypot(x, y) <= 1
    z = basis(6, x[inside], y[inside])
    gram = z @ z.T * (t[1] - t[0]) ** 2
    expected = np.diag([np.pi / (2 * n + 2) * (2 if l == 0 else 1) for n, l in zernike_indices(6)])
    # A pixelated disk edge limits the accuracy to about a pixel's share of the rim.
    np.testing.assert_allclose(gram, expected, rtol=0, atol=2e-2)
    assert np.max(np.abs(gram - expected)) > 0  # the check compares real sums, not a copy of the formula


@pytest.mark.parametrize("basis", BASES)
def test_shape_follows_the_points(basis, rng):
    x, y = rng.uniform(-1, 1, (2, 4, 5))
    assert basis(3, x, y).shape == (10, 4, 5)


@pytest.mark.parametrize("nmax", [0, 1, 4, 9])
def test_the_basis_shares_powers_and_factors_and_gives_each_term_to_the_bit(nmax, rng):
    """zernike_basis computes each power of r and each azimuthal factor once: every row is still
    radial_polynomial(n, |l|, r) * azimuthal_factor(l, phi) to the bit, in both trees."""
    import torch

    import reference_numpy
    import torch_impl

    x, y = rng.uniform(-1, 1, 200), rng.uniform(-1, 1, 200)
    for tree, library in ((reference_numpy.zernike, np), (torch_impl.zernike, torch)):
        xs, ys = library.asarray(x), library.asarray(y)
        r, phi = library.hypot(xs, ys), library.arctan2(ys, xs)
        rows = [tree.radial_polynomial(n, abs(l), r) * tree.azimuthal_factor(l, phi)
                for n, l in tree.zernike_indices(nmax)]
        np.testing.assert_array_equal(np.asarray(tree.zernike_basis(nmax, xs, ys)), np.stack([np.asarray(row)
                                                                                             for row in rows]))

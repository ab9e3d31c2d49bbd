"""The exact adjoint's sums of a loss: the Cauchy log-sum by products of eight factors and the squares by a dot
product give the plain sums to rounding, in both trees, on every size, and fall back where a product overflows."""

import math

import numpy as np
import pytest
import torch

import reference_numpy
import torch_impl
from replication.core.objectives import CAUCHY
from replication.core.problem import Problem

TREES = {"numpy": (reference_numpy.losses, np.asarray), "torch": (torch_impl.losses, torch.as_tensor)}


@pytest.fixture(params=sorted(TREES))
def tree(request):
    return TREES[request.param]


@pytest.mark.parametrize("size", [1, 7, 8, 9, 3 * 33 * 33, 3 * 64 * 64])
def test_the_grouped_log_sum_is_the_plain_sum(tree, size, rng):
    losses, array = tree
    factors = 1 + (rng.standard_normal(size) * 10.0 ** rng.uniform(-9, 3, size)) ** 2
    expected = math.fsum(np.log(factors))
    assert float(losses.log_sum(array(factors))) == pytest.approx(expected, rel=1e-14, abs=1e-12)


def test_a_product_that_overflows_falls_back_to_the_plain_sum(tree):
    losses, array = tree
    factors = np.full(64, 1e60)  # eight factors of 1e60 overflow float64; their logs sum to 64 * 138.2
    factors[5] = 2.0
    value = float(losses.log_sum(array(factors)))
    assert math.isfinite(value)
    assert value == pytest.approx(63 * math.log(1e60) + math.log(2.0), rel=1e-14)


def test_an_infinite_or_nan_factor_stays_so(tree):
    losses, array = tree
    assert float(losses.log_sum(array(np.array([1.0, np.inf] + [2.0] * 8)))) == math.inf
    assert math.isnan(float(losses.log_sum(array(np.array([1.0, np.nan] + [2.0] * 8)))))


def test_the_squares_sum_is_the_plain_sum(tree, rng):
    losses, array = tree
    excess = rng.standard_normal((3, 33, 33)) * 1e-3
    assert float(losses.squares_sum(array(excess))) == pytest.approx(math.fsum((excess**2).ravel()), rel=1e-14)


def test_torch_float32_sums_in_float64_term_by_term(rng):
    factors = 1 + rng.uniform(0, 300, 1000) ** 2  # products of eight would overflow float32
    value = torch_impl.losses.log_sum(torch.as_tensor(factors, dtype=torch.float32))
    assert value.dtype == torch.float64
    assert float(value) == pytest.approx(math.fsum(np.log(factors.astype(np.float32).astype(np.float64))), rel=1e-7)
    excess = torch.as_tensor(rng.standard_normal(100), dtype=torch.float32)
    assert torch_impl.losses.squares_sum(excess).dtype == torch.float64


@pytest.mark.parametrize("objective", ["cauchy", "least-squares", "gaussian"])
def test_the_adjoint_objective_is_the_plain_objective_in_both_trees(objective, rng):
    """value_and_grad's value (the adjoint's sums) against negative_log_likelihood (the plain sums) and across the
    trees, to 1e-12."""
    problem = Problem.simulated(64, 5, CAUCHY)
    truth, data = problem.truth, problem.data
    params = truth + 0.1 * rng.standard_normal(truth.size)
    values = []
    for package in (reference_numpy, torch_impl):
        setup = package.make_setup(64, 5)
        value, _ = package.value_and_grad(params, setup, data, objective=objective, gradient="adjoint")
        assert value == pytest.approx(package.negative_log_likelihood(params, setup, data, objective=objective),
                                      rel=1e-12)
        values.append(value)
    assert values[0] == pytest.approx(values[1], rel=1e-12)

"""The bench's compiled variant (torch.compile of the likelihood, differentiated by autograd) gives the uncompiled
numbers: the value to 1e-12 and the gradient to 1e-12 of its largest component, against autograd and the exact
adjoint. Optional: torch.compile's CPU backend needs a C++ compiler, and without one these tests skip."""

import os

import numpy as np
import pytest
from test_harness import cli

import torch_impl
from replication.core.objectives import CAUCHY
from replication.core.problem import Problem
from replication.studies.bench import measure as bench

needs_a_compiler = pytest.mark.skipif(bench.cpp_compiler() is None, reason="torch.compile's CPU backend needs a "
                                      "C++ compiler (g++); none here, so the compiled variant is not offered")
pytestmark = [
    # torch.compile imports torch modules that still decorate with the deprecated torch.jit.script_method
    pytest.mark.filterwarnings("ignore:.*torch.jit.script.* is deprecated:DeprecationWarning"),
    # inductor leaves the complex steps (the FFTs' inputs and outputs) to eager kernels, and says so
    pytest.mark.filterwarnings("ignore:Torchinductor does not support code generation for complex:UserWarning"),
]


@needs_a_compiler
@pytest.mark.parametrize("npix", [48, 64])
def test_the_compiled_likelihood_and_its_gradient_equal_the_uncompiled_ones(npix):
    """Two grid sizes, one after the other: the second compiles for its own shapes (dynamic=False)."""
    problem = Problem.simulated(npix, 3, CAUCHY)
    truth, data = problem.truth, problem.data
    setup = torch_impl.make_setup(npix, 3)
    observed = torch_impl.prepare_data(data, setup)
    start = truth + 0.01  # off the truth, where the gradient is not small
    compiled_value, compiled_grad = bench.compiled_value_and_grad(setup, observed, bench.GAMMA,
                                                                   torch_impl.losses.loss_of("cauchy"))(start)
    for gradient in ("autograd", "adjoint"):
        value, grad = torch_impl.value_and_grad(start, setup, observed, bench.GAMMA, gradient=gradient)
        assert compiled_value == pytest.approx(value, rel=1e-12), gradient
        assert np.max(np.abs(compiled_grad - grad)) <= 1e-12 * np.max(np.abs(grad)), gradient


def test_bench_compile_without_a_compiler_is_refused_in_one_line(tmp_path):
    """--compile where no C++ compiler is found: exit status 2, one line naming --compile, nothing written."""
    completed = cli("bench", "--compile", "--npix", "32", "--nzern", "2", "--threads", "1", "--results",
                    str(tmp_path / "bench"), env=os.environ | {"CXX": "no-such-compiler-here"})
    assert completed.returncode == 2
    assert completed.stderr.strip().count("\n") == 0
    assert "--compile" in completed.stderr
    assert not (tmp_path / "bench").exists()

"""Per-evaluation benchmark against the FFT floor: where each implementation spends its time."""

import dataclasses
import importlib
import os
import random
import shutil
import statistics
import time

import numpy as np
import scipy.fft
import scipy.optimize
import torch

import reference_numpy
import torch_impl
from oof_common.constants import GAMMA
from oof_common.limits import FORWARD_DIFFERENCE_STEP
from replication.core import registry, runs
from replication.core.environment import environment_record, thread_limits
from replication.core.implementations import Implementation
from replication.core.load import watching_load
from replication.core.objectives import CAUCHY, Objective
from replication.core.problem import Problem
from replication.core.profiles import BENCH_NPIX, BENCH_NZERN
from replication.core.registry import floor_step
from replication.core.results import write_json
from replication.studies.bench.records import AUTOGRAD_PARTS, read_bench_record

THREADS = (1, 2)
NUMPY_FIT, TORCH_FIT = reference_numpy.fitting, torch_impl.fitting
TORCH_LIKELIHOOD = torch_impl.likelihood
TORCH_AUTOGRAD = TORCH_FIT.GRADIENTS["autograd"][0]
"""torch's value-and-gradient by autograd, as a fit calls it."""
NUMPY_GRADIENT, TORCH_GRADIENT = reference_numpy.gradient, torch_impl.gradient
FD_STEPS = ("numpy_fd_grad", "torch_fd_grad")
"""The finite-difference gradients (P + 1 evaluations each), timed in fewer rounds to keep the bench short."""
BURST = 3
"""Calls per timed sample of every step but the finite differences (which are P + 1 calls already): back to back,
as a fit makes them, the sample's time divided by them. A single call after a long other step measures a cold
start instead: the JAX peer's value and gradient at npix 512 took 18 ms so, against 7.7-8.2 ms in a burst and in
its fits (1 thread, 2-core AMD EPYC)."""


def burst_seconds(function, calls):
    """Seconds per call of `calls` calls of function made back to back."""
    start = time.perf_counter()
    for _ in range(calls):
        function()
    return (time.perf_counter() - start) / calls


def median_seconds(function, repeats):
    """Median wall time of function() over repeats calls, after one warm-up call."""
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def adjoint_walk(gradient, params, setup, data, gamma, loss):
    """One gradient.value_and_gradient, each of its steps (gradient.STEPS) timed as it ends: {step: seconds}. loss:
    that tree's Loss."""
    times, clock = {}, [time.perf_counter()]

    def lap(step):
        now = time.perf_counter()
        times[step], clock[0] = now - clock[0], now

    gradient.value_and_gradient(params, setup, data, gamma, loss, lap=lap)
    return times


def autograd_walk(params, setup, data, gamma, loss):
    """One torch autograd value-and-gradient, split into the forward pass and backward(): {part: seconds}."""
    start = time.perf_counter()
    params = torch.as_tensor(params).requires_grad_()
    nll = TORCH_LIKELIHOOD.prepared_nll(params, setup, data, gamma, loss)
    forward = time.perf_counter()
    nll.backward()
    return dict(zip(AUTOGRAD_PARTS, (forward - start, time.perf_counter() - forward), strict=True))


def step_profile(walks, repeats):
    """Median milliseconds of each step of each walk, {walk: {step: ms}}, walks interleaved round by round."""
    for walk in walks.values():
        walk()
    rounds = {name: [] for name in walks}
    for _ in range(repeats):
        for name, walk in walks.items():
            rounds[name].append(walk())
    return {name: {step: 1e3 * statistics.median(r[step] for r in laps) for step in laps[0]}
            for name, laps in rounds.items()}


def profiles(npix, nzern, repeats, objective: Objective = CAUCHY):
    """Where one value-and-gradient spends its time: the adjoint's steps in both trees, autograd's two passes."""
    problem = Problem.simulated(npix, nzern, objective)
    truth, data = problem.truth, problem.data
    setup_np, setup_t = problem.reference, torch_impl.make_setup(npix, nzern)
    data_np = reference_numpy.prepare_data(data, setup_np)
    data_t = torch_impl.prepare_data(data, setup_t)
    truth_t = torch.as_tensor(truth)
    numpy_loss, torch_loss = reference_numpy.losses.loss_of(objective), torch_impl.losses.loss_of(objective)
    return step_profile({
        "numpy adjoint": lambda: adjoint_walk(NUMPY_GRADIENT, truth, setup_np, data_np, GAMMA, numpy_loss),
        "torch adjoint": lambda: adjoint_walk(TORCH_GRADIENT, truth_t, setup_t, data_t, GAMMA, torch_loss),
        "torch autograd": lambda: autograd_walk(truth, setup_t, data_t, GAMMA, torch_loss)}, repeats)


def cpp_compiler():
    """The C++ compiler torch.compile's CPU backend would call ($CXX, else g++), or None: --compile needs one."""
    return shutil.which(os.environ.get("CXX", "g++"))


def compiled_value_and_grad(setup, data, gamma, loss):
    """torch.compile of the likelihood (loss: torch_impl's Loss), differentiated by autograd: a callable of the
    parameters. Compiled for the
    point's shapes (dynamic=False): on the second grid size torch would otherwise recompile with symbolic shapes,
    whose backward of the FFTs' zero padding inductor (torch 2.13) gets wrong (a stride assertion at npix 512)."""
    compiled = torch.compile(TORCH_LIKELIHOOD.prepared_nll, dynamic=False)

    def value_and_grad(params):
        params = torch.as_tensor(params).requires_grad_()
        nll = compiled(params, setup, data, gamma, loss)
        nll.backward()
        return float(nll.detach()), params.grad.numpy()

    return value_and_grad


@dataclasses.dataclass(frozen=True)
class BenchPoint:
    """What every implementation's bench steps at one point share: the grid, the truth and its simulated maps
    (NumPy arrays, natural order), the objective, and whether torch.compile is timed too."""

    npix: int
    nzern: int
    truth: np.ndarray
    data: np.ndarray
    objective: Objective = CAUCHY
    compile_torch: bool = False


def fft_field(npix, module):
    """Three complex grids with a single non-zero sample: the input of the 3-FFT floor."""
    field = np.zeros((3, npix, npix), dtype=complex)
    field[..., 0, 0] = 1.0
    return module(field)


def numpy_steps(point):
    """The NumPy reference's bench steps: its FFT floor, objective, exact (adjoint) value and gradient, and
    scipy's finite-difference gradient."""
    setup = reference_numpy.make_setup(point.npix, point.nzern)
    data = reference_numpy.prepare_data(point.data, setup)
    truth, loss, field = point.truth, reference_numpy.losses.loss_of(point.objective), fft_field(point.npix, np.asarray)
    return {
        "floor_numpy": lambda: scipy.fft.ifft2(field),
        "numpy_nll": lambda: NUMPY_FIT.value_objective(truth, setup, data, GAMMA, loss),
        "numpy_adjoint_value_and_grad": lambda: NUMPY_GRADIENT.value_and_gradient(truth, setup, data, GAMMA, loss),
        "numpy_fd_grad": lambda: scipy.optimize.approx_fprime(truth, NUMPY_FIT.value_objective, FORWARD_DIFFERENCE_STEP,
                                                              setup, data, GAMMA, loss),
    }


def batch_starts(npix):
    """How many parameter vectors the batched step evaluates at once: 64 at npix <= 128, fewer on larger grids
    (the same memory), at least one."""
    return max(1, 64 * 128**2 // npix**2)


def start_vectors(truth, count):
    """count parameter vectors 0.3 rad rms from the truth in every Zernike term (a multi-start's starts)."""
    batch = np.tile(truth, (count, 1))
    batch[:, :-3] += 0.3 * np.random.default_rng(count).standard_normal((count, truth.size - 3))
    return batch


def torch_steps(point):
    """torch's bench steps on the CPU: its FFT floor, objective, autograd and adjoint values and gradients (the
    internal calls a fit makes, and the public value_and_grad with raw and prepared maps), scipy's
    finite-difference gradient, and torch.compile of the likelihood where asked."""
    setup = torch_impl.make_setup(point.npix, point.nzern)
    observed = torch_impl.prepare_data(point.data, setup)
    data, raw = observed, point.data
    truth, truth_t, objective = point.truth, torch.as_tensor(point.truth), point.objective
    loss = torch_impl.losses.loss_of(objective)
    field = fft_field(point.npix, torch.as_tensor)
    starts = start_vectors(truth, batch_starts(point.npix))

    def torch_nll():
        with torch.no_grad():
            return float(TORCH_LIKELIHOOD.prepared_nll(truth_t, setup, data, GAMMA, loss))

    steps = {
        "floor_torch": lambda: torch.fft.ifft2(field),
        "torch_nll": torch_nll,
        "torch_value_and_grad": lambda: TORCH_AUTOGRAD(truth, setup, data, GAMMA, loss),
        "torch_adjoint_value_and_grad": lambda: TORCH_GRADIENT.value_and_gradient(truth_t, setup, data, GAMMA, loss),
        "torch_public_adjoint": lambda: torch_impl.value_and_grad(truth, setup, raw, GAMMA, objective, "adjoint"),
        "torch_public_adjoint_prepared": lambda: torch_impl.value_and_grad(truth, setup, observed, GAMMA, objective,
                                                                           "adjoint"),
        "torch_public_autograd_prepared": lambda: torch_impl.value_and_grad(truth, setup, observed, GAMMA, objective,
                                                                            "autograd"),
        "torch_fd_grad": lambda: scipy.optimize.approx_fprime(truth, TORCH_FIT.value_objective, FORWARD_DIFFERENCE_STEP,
                                                              setup, data, GAMMA, loss),
        "torch_gauss_newton": lambda: torch_impl.gauss_newton_matrix(truth, setup, observed, GAMMA, objective),
        "torch_batch_value_and_grad": lambda: torch_impl.batched_value_and_grad(starts, setup, observed, GAMMA,
                                                                                objective),
    }
    if point.compile_torch:
        compiled = compiled_value_and_grad(setup, data, GAMMA, loss)
        steps["torch_compiled_value_and_grad"] = lambda: compiled(truth)
    return steps


def jax_steps(point):
    """The JAX peer's value and gradient (jitted) and its own 3-FFT floor, on the same data."""
    import jax  # an optional peer: only where jax is installed (registry.JAX.available())
    import jax.numpy as jnp

    jax_peer = registry.JAX.module()
    setup_np = reference_numpy.make_setup(point.npix, point.nzern)
    data_np = reference_numpy.prepare_data(point.data, setup_np).fft_order
    setup = jax_peer.make_setup(point.npix, point.nzern)
    function = jax_peer.bound(jax_peer.jitted_value_and_grad, setup, jnp.asarray(data_np), GAMMA, point.objective)
    field = jnp.zeros((3, setup.npix, setup.npix), dtype=jnp.complex128).at[..., 0, 0].set(1.0)
    floor = jax.jit(jnp.fft.ifft2)
    return {"floor_jax": lambda: floor(field).block_until_ready(),
            "jax_value_and_grad": lambda: jax_peer.autograd_objective(point.truth, function)}


def public_steps(registration):
    """The bench steps of a registration that declares none of its own: its objective and its value and gradient
    (own gradient) through the public interface, on its device, as a user's script calls them."""
    prefix = registration.name  # its first word before "_" names no library's floor: torch's floor is its unit

    def steps(point):
        impl = Implementation(registration.name)
        setup = impl.make_setup(point.npix, point.nzern)
        package, truth, objective = impl.package, point.truth, point.objective

        def synchronized(function):
            def call():
                result = function()
                impl.synchronize()
                return result
            return call

        return {
            f"{prefix}_nll": synchronized(lambda: package.negative_log_likelihood(truth, setup, point.data,
                                                                                   objective=objective)),
            f"{prefix}_value_and_grad": synchronized(lambda: package.value_and_grad(
                truth, setup, point.data, objective=objective, gradient=impl.gradient_name)),
        }

    return steps


def bench_steps(registration):
    """The function making a registration's bench steps for a point (Registration.bench)."""
    if registration.bench == "public":
        return public_steps(registration)
    module, name = registration.bench.split(":")
    return getattr(importlib.import_module(module), name)


def timed_steps(npix, nzern, compile_torch=False, objective: Objective = CAUCHY, peers=False):
    """The timed callables of one point, {name: function}, of every registered implementation with bench steps
    that this machine can run (the peers' only with peers), all on the same data and objective."""
    problem = Problem.simulated(npix, nzern, objective)
    truth = problem.truth
    point = BenchPoint(npix, nzern, truth, problem.data, objective, compile_torch)
    steps = {}
    for registration in registry.registrations():
        if registration.bench is not None and (peers or not registration.peer) and registration.available():
            steps |= bench_steps(registration)(point)
    return steps, truth.size


def bench_point(npix, nzern, threads, repeats, compile_torch=False, objective: Objective = CAUCHY, peers=False):
    """One row: milliseconds of every step (per call, in bursts of BURST calls but the finite differences),
    interleaved round by round in an order shuffled each round (the same orders in every run), and multiples of the
    floor."""
    steps, nparams = timed_steps(npix, nzern, compile_torch, objective, peers)
    rounds = {name: [] for name in steps}
    warm_up_s = {}
    for name, function in steps.items():
        start = time.perf_counter()
        function()  # warm-up: plans, caches, first-touch of memory, and compilation
        warm_up_s[name] = time.perf_counter() - start
    for round_number in range(repeats):
        order = list(steps.items())
        random.Random(round_number).shuffle(order)  # no step always runs after the same one (caches, allocator)
        for name, function in order:
            if name in FD_STEPS and len(rounds[name]) >= max(1, repeats // 3):
                continue  # P + 1 evaluations: fewer repeats keep the bench short
            rounds[name].append(burst_seconds(function, 1 if name in FD_STEPS else BURST))
    ms = {name: 1e3 * statistics.median(times) for name, times in rounds.items()}
    floor = ms["floor_torch"]
    return {"npix": npix, "nzern": nzern, "nparams": nparams, "threads": threads, "objective": objective.name, "ms": ms,
            "batch_starts": batch_starts(npix), "burst": BURST,
            "warm_up_s": warm_up_s,
            "repeats": {name: len(times) for name, times in rounds.items()},
            "x_floor": {name: value / floor for name, value in ms.items()},
            "x_own_floor": {name: value / ms[floor_step(name)] for name, value in ms.items()},
            "profile_ms": profiles(npix, nzern, repeats, objective),
            "numpy_over_torch_nll": ms["numpy_nll"] / ms["torch_nll"]}


def run_bench(results_dir, npix=BENCH_NPIX, nzern=BENCH_NZERN, threads=THREADS, repeats=9, quiet=False,
              compile_torch=False, objective: Objective = CAUCHY, peers=False):
    """Run the bench for every (threads, npix, nzern), writing bench.json (atomically) after each row.

    An unfinished bench.json of the same settings is resumed: its finished rows are kept, not redone.
    """
    path = results_dir / "bench.json"
    settings = {"npix": list(npix), "nzern": list(nzern), "threads": list(threads), "repeats": repeats,
                "compile": compile_torch, "objective": objective.name, "peers": peers}
    previous = read_bench_record(path)  # a damaged file is refused, named; older step names read as today's
    if previous:
        runs.check_same_settings(path, previous.get("settings") or {}, settings)
    content = previous or {"environments": [], "rows": [], "floor": "3 complex inverse FFTs, torch.fft.ifft2",
                           "settings": settings, "complete": False}
    done = {(row["threads"], row["npix"], row["nzern"]) for row in content["rows"]}
    for count in threads:
        with thread_limits(count):
            if not any(environment["threads"] == count for environment in content["environments"]):
                content["environments"].append(environment_record(count))
            for size in npix:
                for order in nzern:
                    if (count, size, order) in done:
                        continue
                    with watching_load() as load:
                        row = bench_point(size, order, count, repeats, compile_torch, objective, peers)
                    row["load"] = load
                    content["rows"].append(row)
                    write_json(path, content)
                    if not quiet:
                        print(format_row(row), flush=True)
    content["complete"] = True
    write_json(path, content)
    return content


def format_row(row):
    """A printable line: milliseconds and multiples of the torch FFT floor."""
    cells = "  ".join(f"{name} {row['ms'][name]:8.2f} ms ({row['x_floor'][name]:5.1f}x)" for name in row["ms"])
    return f"threads={row['threads']} npix={row['npix']:<5} nzern={row['nzern']}  {cells}"

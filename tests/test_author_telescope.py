"""The author's telescope gives byte-identical results to the model trees before the telescope became data.

The trees as they stood at BEFORE (the commit before the telescope, masks and offsets were added) are read from
git and imported beside today's; every result of the default telescope (setup arrays, beams, both objectives,
every gradient, the Hessian and the score covariance) must match to the last bit. (Fits are left out: since
2026-12-02 the minimizer sees the objective without its constant, by design, which changes where BFGS stops.)
"""

import importlib
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

import reference_numpy
import torch_impl
from replication.core.simulation import simulate_observation

ROOT = pathlib.Path(__file__).resolve().parent.parent
BEFORE = "0f62989"
"""main before the telescope as data (2026-12-01)."""


def tree_at(commit, tree, folder):
    """Import `tree` as it stood at commit, as a package named <tree>_<commit>, or skip where git cannot say."""
    name = f"{tree}_{commit}"
    if name in sys.modules:
        return sys.modules[name]
    try:
        listing = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", commit, f"{tree}/"],
                                 capture_output=True, text=True, check=True).stdout.split()
        package = folder / name
        package.mkdir()
        for path in listing:
            source = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"], capture_output=True,
                                    check=True).stdout
            (package / pathlib.PurePosixPath(path).name).write_bytes(source)
    except (OSError, subprocess.CalledProcessError) as error:
        pytest.skip(f"the trees at {commit} are not in this checkout's git history ({error})")
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(folder))


@pytest.fixture(scope="module")
def before(tmp_path_factory):
    folder = tmp_path_factory.mktemp("before")
    return {"numpy": tree_at(BEFORE, "reference_numpy", folder), "torch": tree_at(BEFORE, "torch_impl", folder)}


def as_bytes(value):
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    return np.asarray(value).tobytes()


def results(package, npix, nzern, data, params):
    """Every result of the public API at one point, as bytes."""
    setup = package.make_setup(npix, nzern)
    out = {field: as_bytes(getattr(setup, field)) for field in ("x", "y", "index", "basis", "screens")}
    out["beams"] = as_bytes(package.beam_maps(params, setup))
    gradients = ["finite-differences", "adjoint"] + (["autograd"] if package.__name__.startswith("torch") else [])
    for objective in ("cauchy", "least-squares"):
        out[f"nll {objective}"] = as_bytes(package.negative_log_likelihood(params, setup, data, objective=objective))
        for gradient in gradients:
            value, grad = package.value_and_grad(params, setup, data, objective=objective, gradient=gradient)
            out[f"{gradient} {objective}"] = as_bytes(value) + as_bytes(grad)
    out["hessian"] = as_bytes(package.hessian(params, setup, data))
    out["scores"] = as_bytes(package.score_covariance(params, setup, data))
    return out


REROUNDED = {
    "adjoint cauchy": "the adjoint's Cauchy value sums log(1 + s^2) by products of eight (losses.log_sum, "
                      "2026-12-05) and forms 1 + s^2 in one fused pass (torch: addcmul)",
    "adjoint least-squares": "the adjoint's sum of squares is a dot product (losses.squares_sum, 2026-12-05)",
    "scores": "the score covariance's W = s / (1 + s^2) has 1 + s^2 from the same fused pass (torch: addcmul)",
}
"""Results whose arithmetic was reordered by design since BEFORE, for speed: the same numbers to rounding (1e-13
relative to the largest), not to the bit."""


@pytest.mark.parametrize("tree", ["numpy", "torch"])
def test_the_author_telescope_is_unchanged_to_the_bit(before, tree):
    package = {"numpy": reference_numpy, "torch": torch_impl}[tree]
    npix, nzern = 32, 2
    params = np.concatenate([np.linspace(-0.3, 0.4, 5), [0.05, -0.05, 1.1]])
    data = simulate_observation(reference_numpy.make_setup(npix, nzern), params, seed=3)
    old, new = results(before[tree], npix, nzern, data, params), results(package, npix, nzern, data, params)
    assert old.keys() == new.keys()
    differing = [name for name in old if old[name] != new[name] and name not in REROUNDED]
    assert not differing, f"{tree}: results differ from {BEFORE}'s: {differing}"
    for name in REROUNDED:
        was, now = np.frombuffer(old[name]), np.frombuffer(new[name])
        parts = [slice(0, 1), slice(1, None)] if name.startswith("adjoint") else [slice(None)]  # value, gradient
        for part in parts:
            np.testing.assert_allclose(now[part], was[part], rtol=0, atol=1e-13 * np.max(np.abs(was[part])),
                                       err_msg=name)


def test_the_default_telescope_is_the_author_one():
    setup = reference_numpy.make_setup(16, 1)
    assert setup.telescope == reference_numpy.AUTHOR_TELESCOPE
    assert (setup.radius, setup.focal_length, setup.wavelength, setup.dz) == (2.8, 14.4, 1.1e-3, 0.05)
    assert setup.n_offsets == 0
    assert setup.nparams == 2 + 3

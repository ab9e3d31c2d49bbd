"""Shared fixtures: explicit seeds, both implementations and their array conversions."""

import contextlib
import hashlib
import io
import os
import pathlib
import subprocess

import numpy as np
import pytest

import reference_numpy
import torch_impl
from replication.core.allocator import keep_freed_memory
from replication.core.paths import FIGURES, PAPER, REFERENCE, ROOT
from replication.studies.crosscheck.measure import relative, to_numpy

keep_freed_memory()  # the harness's allocator setting, as `python -m replication` applies it (core/allocator.py)

SEED = 20180518
"""Seed of every random draw in the tests (the paper's arXiv submission date)."""


@pytest.fixture
def rng():
    """A fresh, explicitly seeded generator for each test."""
    return np.random.default_rng(SEED)


def random_params(rng, setup, scale=0.3):
    """Random aberrations of `scale` radians, an offset illumination and amplitude near 1."""
    params = scale * rng.standard_normal(setup.nparams)
    params[-3:] = [0.1 * rng.standard_normal(), 0.1 * rng.standard_normal(), 1 + 0.1 * rng.standard_normal()]
    return params


def relative_error(a, b):
    """||a - b|| / ||b|| of two arrays of either package."""
    return relative(to_numpy(a), to_numpy(b))


@pytest.fixture(params=["numpy", "torch"])
def package(request):
    """Each implementation package in turn."""
    return {"numpy": reference_numpy, "torch": torch_impl}[request.param]


def checksums():
    """Every committed file the harness must never write, with its hash."""
    files = [path for folder in (REFERENCE, PAPER, FIGURES) for path in folder.rglob("*") if path.is_file()]
    return {path: hashlib.sha256(path.read_bytes()).hexdigest() for path in files}


@pytest.fixture(scope="module")
def untouched():
    """The reference runs, the committed report and figures: byte for byte the same after the module's tests."""
    before = checksums()
    yield
    assert checksums() == before, "a command wrote into the reference runs or the committed report"


def run_command(*args):
    """`python -m replication args` run in this process from the repository root, as a subprocess would report it
    (exit status, stdout, stderr): the same code path without a new interpreter's start (seconds with torch)."""
    from replication import cli

    out, err, cwd = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = cli.main([str(argument) for argument in args])
            except SystemExit as leaving:  # argparse's own errors
                code = leaving.code if isinstance(leaving.code, int) else int(leaving.code is not None)
    finally:
        os.chdir(cwd)
    return subprocess.CompletedProcess(["python", "-m", "replication", *map(str, args)], code, out.getvalue(),
                                       err.getvalue())


def real_maps_folder():
    """Where the tests find the SRT maps: $OOF_REAL_MAPS, else data/srt-oof-2019 in the repository, else the team's
    shared copy beside the checkout (../shared/data/srt-oof-2019); the first that exists (the last where none does)."""
    candidates = [os.environ.get("OOF_REAL_MAPS"), ROOT / "data" / "srt-oof-2019",
                  ROOT.parent / "shared" / "data" / "srt-oof-2019"]
    folders = [pathlib.Path(c) for c in candidates if c]
    return next((folder for folder in folders if folder.is_dir()), folders[-1])


@pytest.fixture(scope="session")
def reference_texts():
    """The committed reference runs rendered once (render_all()), for the tests that only read that rendering."""
    from replication.report.render import render_all

    return render_all()


def both(texts):
    """The report's pages (REPORT.md, DETAILS.md, METHODS.md, REAL_MAPS.md) of a render_all, as one text to
    search."""
    from replication.report.render import PAGES

    return "\n".join(texts[name] for name in PAGES)


def measured_point(npix, nzern, seconds, impl="numpy", nfev=1, **fields):
    """A typed measured point (as the sweep's reader returns it) whose fit ended with success and no exact account:
    a time to stop of `seconds`, one parameter; fields: any other key of its record."""
    import msgspec

    from replication.studies.sweep.records import MeasuredPoint

    outcome = {"success": True, "message": "ok", "nfev": nfev, "nit": nfev, "fun": 0.0, "x": [0.0], "stderr": [1.0]}
    return msgspec.convert({"impl": impl, "dtype": "float64", "npix": npix, "nzern": nzern, "nparams": 1,
                            "estimated": False, "fit_s": {"median": seconds}, "setup_s": {"median": 0.0},
                            "total_s": {"median": seconds}, "tol": 1e-8, "outcome": outcome} | fields, MeasuredPoint)


def adjoint_in_both_trees(prepare, point, gamma, objective):
    """The exact adjoint gradient at point of maps prepared as prepare(package) -> (setup, data) says: the same in
    both trees and as torch's autograd to 1e-10, and as NumPy's central differences of the objective to 1e-5;
    returns it."""
    grads = {}
    for package, gradient in ((reference_numpy, "adjoint"), (torch_impl, "adjoint"), (torch_impl, "autograd")):
        setup, data = prepare(package)
        grads[(package.__name__, gradient)] = np.asarray(
            package.value_and_grad(point, setup, data, gamma, objective, gradient=gradient)[1], dtype=np.float64)
    reference = grads[("reference_numpy", "adjoint")]
    for key, grad in grads.items():
        np.testing.assert_allclose(grad, reference, rtol=1e-10, atol=1e-10 * np.abs(reference).max(), err_msg=str(key))
    setup, data = prepare(reference_numpy)
    step, central = 1e-6, []
    for k in range(point.size):
        shift = np.zeros(point.size)
        shift[k] = step
        ahead, behind = (reference_numpy.negative_log_likelihood(point + sign * shift, setup, data, gamma, objective)
                         for sign in (1, -1))
        central.append((ahead - behind) / (2 * step))
    np.testing.assert_allclose(reference, central, rtol=1e-5, atol=1e-5 * np.abs(reference).max())
    return reference


def gauss_newton_is_the_hessian(prepare, truth, **options):
    """In both trees, the Gauss-Newton matrix at the truth of maps the model makes exactly, prepared as
    prepare(package) -> (setup, data) says, equals the Hessian of least squares in noise units (to 2e-4: NumPy's
    Jacobian is forward differences); options go to gauss_newton_matrix."""
    for package in (reference_numpy, torch_impl):
        setup, data = prepare(package)
        hessian = package.hessian(truth, setup, data, 0.01, "gaussian")
        matrix = package.gauss_newton_matrix(truth, setup, data, 0.01, "gaussian", **options)
        np.testing.assert_allclose(matrix, hessian, rtol=2e-4, atol=2e-4 * np.abs(hessian).max(),
                                   err_msg=package.__name__)

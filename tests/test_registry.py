"""The registry: an implementation is one registration, found by the sweep, the cross-check, the bench and the
report without touching another file; no module names an implementation by string; the layers hold."""

import ast
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from replication.core import registry, runs
from replication.core.environment import machine_record
from replication.core.implementations import every, select
from replication.core.objectives import CAUCHY
from replication.core.paths import ROOT
from replication.core.problem import Problem
from replication.core.profiles import SweepSettings
from replication.core.registry import ADJOINT, FINITE_DIFFERENCES, Registration
from replication.core.series import Series
from replication.report.render import render_all
from replication.studies.bench import measure as bench
from replication.studies.crosscheck import measure as crosscheck
from replication.studies.sweep import measure as sweep
from replication.studies.sweep.records import read_points

PACKAGE = ROOT / "replication"
TWIN = Registration(name="numpy-twin", package="reference_numpy", own_gradient=FINITE_DIFFERENCES,
                    gradients=(FINITE_DIFFERENCES, ADJOINT), versions=("numpy",))
"""A toy implementation: the NumPy tree again, under another name, with the public interface's bench steps."""
NO_HESSIAN = Registration(name="numpy-no-hessian", package="reference_numpy", own_gradient=ADJOINT,
                          gradients=(ADJOINT,), hessian=False)
"""A registration that declares no Hessian (as the JAX peer does)."""


@pytest.fixture(scope="module")
def twin_run(tmp_path_factory):
    """A run holding a smoke sweep, a one-point cross-check and a one-point bench, all made with TWIN registered."""
    with registry.registered(TWIN), pytest.MonkeyPatch.context() as patch:
        patch.setitem(crosscheck.POINTS, "smoke", ((16, 2),))
        run = runs.create_run(tmp_path_factory.mktemp("twin") / "2026-01-03_twin", machine_record())
        settings = SweepSettings("smoke", impls=(TWIN.name,), threads=1)
        sweep.run_sweep(settings, run / "sweep-smoke", quiet=True)
        content = crosscheck.run_crosscheck(run / "crosscheck", points="smoke", threads=1, objectives=(CAUCHY,))
        rows = bench.run_bench(run / "bench", npix=(32,), nzern=(2,), threads=(1,), repeats=1, quiet=True)["rows"]
    return run, content, rows


def test_a_registered_implementation_is_swept(twin_run):
    run, _, _ = twin_run
    with registry.registered(TWIN):
        records = read_points(run / "sweep-smoke" / "points.jsonl")
    assert {(r.npix, r.nzern) for r in records} == {(16, 2), (16, 3), (32, 2), (32, 3)}
    assert all(r.impl == TWIN.name and not r.estimated and r.outcome.nit > 0 for r in records)


def test_a_registered_implementation_is_cross_checked(twin_run):
    _, content, _ = twin_run
    compared = {(check["check"], check["compare"]) for check in content["checks"]}
    assert ("objective", "numpy-twin vs numpy") in compared
    assert ("beams", "numpy-twin vs numpy") in compared
    assert ("gradient", "numpy-twin adjoint vs numpy adjoint") in compared
    assert ("hessian", "numpy-twin adjoint vs numpy differences of adjoint") in compared
    twin_checks = [check for check in content["checks"] if check["compare"].startswith("numpy-twin")]
    assert twin_checks
    assert all(check["passed"] for check in twin_checks)
    assert any(fit["impl"] == TWIN.name for fit in content["fits"])


def test_a_registered_implementation_is_benched_through_its_public_interface(twin_run):
    _, _, (row,) = twin_run
    assert {"numpy-twin_nll", "numpy-twin_value_and_grad", "numpy_nll", "torch_nll"} <= set(row["ms"])
    ratio = row["ms"]["numpy-twin_nll"] / row["ms"]["floor_torch"]
    assert row["x_own_floor"]["numpy-twin_nll"] == pytest.approx(ratio)


def test_a_registered_implementation_appears_in_the_report(twin_run, tmp_path):
    run, _, _ = twin_run
    (tmp_path / "reference").mkdir()
    with registry.registered(TWIN):
        texts = render_all([run], tmp_path / "reference", output=tmp_path / "out", figures=tmp_path / "out" / "figures")
    appendix = texts["runs/your-2026-01-03_twin.md"]
    assert "numpy-twin" in appendix


def test_a_registration_that_declares_no_hessian_is_not_asked_for_one(tmp_path):
    with registry.registered(NO_HESSIAN):
        impls = [impl for impl in every() if impl.name in ("numpy", NO_HESSIAN.name)]
        problem = Problem.simulated(16, 2, CAUCHY)
        checks = crosscheck.model_checks(impls, problem, np.random.default_rng(1), (CAUCHY,))
    names = {(check["check"], check["compare"].split(" ")[0]) for check in checks}
    assert ("gradient", NO_HESSIAN.name) in names
    assert ("hessian", NO_HESSIAN.name) not in names
    assert all(check["passed"] for check in checks)


def test_registrations_are_checked_and_names_are_unique():
    with pytest.raises(ValueError, match="registered already"):
        registry.register(Registration(name=registry.NUMPY.name, package="reference_numpy"))
    with pytest.raises(ValueError, match="own_gradient"):
        Registration(name="x", package="reference_numpy", own_gradient=ADJOINT, gradients=(FINITE_DIFFERENCES,))
    with pytest.raises(ValueError, match="plain one"):
        Registration(name="x", package="reference_numpy", series=(("float32", "scipy"),))
    with pytest.raises(ValueError, match="reference implementation already"):
        registry.register(Registration(name="x", package="reference_numpy", reference=True))
    with pytest.raises(ValueError, match="not a registered implementation"):
        registry.unregister(registry.NUMPY.name)
    with pytest.raises(ValueError, match="--impl"):
        select(["no-such-implementation"])
    assert TWIN.name not in registry.names()


def test_an_unregistered_implementation_names_no_series():
    with pytest.raises(ValueError, match="not a series"):
        Series(TWIN.name)
    with registry.registered(TWIN):
        assert Series(TWIN.name).gradient_name == FINITE_DIFFERENCES


def string_constants(path):
    """(line, value) of every string constant in a module, docstrings and f-string pieces included."""
    tree = ast.parse(path.read_text())
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_no_module_names_an_implementation_by_string_outside_the_registry():
    names = set(registry.names())
    found = [f"{path.relative_to(ROOT)}:{line}: {value!r}" for path in sorted(PACKAGE.rglob("*.py"))
             if path.name != "registry.py" for line, value in string_constants(path) if value in names]
    assert not found, "name implementations through the registry (registry.NUMPY.name, ...):\n" + "\n".join(found)


@pytest.mark.skipif(not os.environ.get("PYTHONSAFEPATH"), reason="nox runs the installed project; this is a "
                    "source-tree run")
def test_nox_runs_the_installed_packages_not_the_source_tree():
    import reference_numpy
    import replication
    import torch_impl

    for package in (replication, reference_numpy, torch_impl):
        source = ROOT / package.__name__
        assert not pathlib.Path(package.__file__).resolve().is_relative_to(source), package.__file__
    completed = subprocess.run([sys.executable, "-m", "replication", "--help"], cwd=ROOT, capture_output=True,
                               text=True, check=True, env=os.environ | {"PYTHONVERBOSE": "1"})
    loaded = [line for line in completed.stderr.splitlines() if "replication/cli.py" in line]
    assert loaded
    assert not any(str(ROOT / "replication") in line for line in loaded), loaded


def test_a_fault_inside_a_library_keeps_its_traceback_while_bad_input_is_one_line(monkeypatch, capsys):
    from replication import cli
    from replication.studies.sweep import command

    def fault(args):
        return np.reshape(np.zeros(3), (2, 2))  # a ValueError raised inside numpy: a bug, not bad input

    def refusal(args):
        raise runs.RunError("--npix: refused")

    monkeypatch.setattr(command, "run_simulate", fault)
    with pytest.raises(ValueError, match="reshape"):
        cli.main(["simulate", "--output", "x.npz"])
    monkeypatch.setattr(command, "run_simulate", refusal)
    assert cli.main(["simulate", "--output", "x.npz"]) == 2
    assert capsys.readouterr().err.strip() == "python -m replication simulate: error: --npix: refused"

"""The two trees mirror each other, and each uses only its own library for the physics."""

import ast
import pathlib

import pytest

from replication.core.mirror import mirror_counts, mirror_table

ROOT = pathlib.Path(__file__).resolve().parent.parent
NUMPY_TREE, TORCH_TREE = ROOT / "reference_numpy", ROOT / "torch_impl"
TORCH_ONLY = set()
"""Public functions only the torch side has: none (the autograd bridge, gradient="autograd", and the on-device
BFGS, minimizer="torchmin", are private to torch_impl/fitting.py, as device handling is to backend.py)."""
NAMED_APART = {("gauss_newton.py", "forward_difference_jacobian"): "forward_mode_jacobian"}
"""Public functions that compute the same thing by different algorithms, named for their algorithm: NumPy's
Jacobian by forward differences of the beams, torch's exact by forward mode."""
TORCH_EXTRA_PARAMETERS = {"device", "dtype"}
"""Parameters only the torch side takes."""
NUMPY_IN_TORCH_TREE = {
    "fitting.py": "scipy's BFGS takes and returns float64 NumPy arrays",
    "uncertainty.py": "the Hessian is returned, and inverted, as a float64 NumPy array, like scipy's results",
    "gauss_newton.py": "the matrix is returned as a float64 NumPy array, as the Hessian is",
}
"""Modules of torch_impl allowed to import NumPy, each with its reason."""


def modules(tree):
    return sorted(p.name for p in tree.glob("*.py"))


def public_functions(path):
    """{name: [parameter names]} of the module-level and class-level public functions."""
    tree = ast.parse(path.read_text())
    return {
        node.name: [a.arg for a in node.args.args + node.args.kwonlyargs]
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    }


def imported_modules(path):
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_same_modules():
    assert modules(NUMPY_TREE) == modules(TORCH_TREE)
    assert len(modules(NUMPY_TREE)) >= 8


@pytest.mark.parametrize("name", modules(NUMPY_TREE))
def test_same_public_functions_with_the_same_parameters(name):
    numpy_side, torch_side = public_functions(NUMPY_TREE / name), public_functions(TORCH_TREE / name)
    for (module, numpy_name), torch_name in NAMED_APART.items():
        if module == name:
            assert numpy_name in numpy_side
            assert torch_name in torch_side
            numpy_side.pop(numpy_name), torch_side.pop(torch_name)
    assert set(torch_side) - TORCH_ONLY == set(numpy_side)
    for function, parameters in numpy_side.items():
        extra = [p for p in torch_side[function] if p not in parameters]
        assert [p for p in torch_side[function] if p in parameters] == parameters, function
        assert set(extra) <= TORCH_EXTRA_PARAMETERS, function


ONE_SIDED = {
    "backend.py": "the array library itself: device, precision and conversions",
    "fitting.py": "the gradient: finite differences by scipy against the autograd bridge",
    "gauss_newton.py": "the beams' Jacobian: forward differences (as a NumPy user takes it) against exact forward mode",
    "__init__.py": "re-exports",
}
"""Modules that differ in kind between the trees, each with its reason."""


@pytest.mark.parametrize("name", sorted(set(modules(NUMPY_TREE)) - set(ONE_SIDED)))
def test_physics_modules_are_mostly_identical(name):
    same, total = mirror_counts(name)
    assert same / total >= 0.7, f"{name}: {same}/{total} lines alike"


def test_most_of_all_lines_are_identical():
    """The physics modules mirror closely; device and precision handling (torch only) lower the total."""
    rows, total, _ = mirror_table()
    physics = [row for row in rows if row.module not in ONE_SIDED]
    assert sum(row.same for row in physics) / sum(row.total for row in physics) >= 0.8
    assert total.share >= 0.7, f"{total.share:.0%} of all lines alike"


def test_no_module_is_the_same_text_in_both_trees_what_cannot_differ_is_shared():
    """What cannot differ (constants, limits, telescope, checks, the losses' rules, the BFGS glue) lives once in
    oof_common, which both trees import and which imports neither torch nor a tree: `diff -r` of the trees shows
    only what the library changes."""
    _, _, identical = mirror_table()
    assert identical.modules == []
    common = ROOT / "oof_common"
    shared = {"constants.py", "limits.py", "telescope.py", "validation.py", "losses.py", "bfgs.py"}
    assert shared <= set(modules(common))
    for path in common.glob("*.py"):
        assert not {"torch", "reference_numpy", "torch_impl", "replication"} & imported_modules(path), path.name
    for tree in (NUMPY_TREE, TORCH_TREE):
        assert "oof_common" in set().union(*(imported_modules(path) for path in tree.glob("*.py")))


def test_byte_identical_modules_are_counted_apart():
    rows, total, identical = mirror_table()
    assert not {row.module for row in rows} & set(identical.modules)
    assert total.total == sum(row.total for row in rows)
    assert identical.lines == sum(mirror_counts(name)[1] for name in identical.modules)


@pytest.mark.parametrize("name", modules(NUMPY_TREE))
def test_reference_never_imports_torch(name):
    assert "torch" not in imported_modules(NUMPY_TREE / name)


@pytest.mark.parametrize("name", modules(TORCH_TREE))
def test_torch_physics_never_falls_back_to_numpy(name):
    if name in NUMPY_IN_TORCH_TREE:
        pytest.skip(NUMPY_IN_TORCH_TREE[name])
    assert not {"numpy", "scipy"} & imported_modules(TORCH_TREE / name)


def test_both_packages_export_the_spec_interface():
    import reference_numpy
    import torch_impl

    spec = {"make_setup", "zernike_basis", "beam_maps", "negative_log_likelihood", "fit"}
    assert spec <= set(reference_numpy.__all__)
    assert spec | {"value_and_grad", "hessian", "standard_errors"} <= set(torch_impl.__all__)
    assert spec | {"value_and_grad", "hessian", "standard_errors"} <= set(reference_numpy.__all__)
    assert set(torch_impl.__all__) == set(reference_numpy.__all__)

"""The harness's layers, derived from the package paths (docs/architecture.md): core below everything; each study's
measuring, reading and drawing in its own folder; claims above the studies; the report on top; cli dispatches. The
read side (report, claims, every study's records, read and figures modules) never loads torch or a measuring
module; no project import hides inside a function; no import cycle."""

import ast
import json
import pathlib
import re
import subprocess
import sys

from replication import cli
from replication.core.paths import ROOT

PACKAGE = ROOT / "replication"
PROJECT = ("replication", "oof_common", "reference_numpy", "torch_impl")
READ_ROLES = ("records", "read", "figures")
"""A study's modules on the read side; its measure module writes records; any other module of a study is a helper
that the read side may use where it loads neither torch nor a measure module."""


def module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def place(name):
    """(layer, study, role) of a module from its path; layer None for a module outside every layer."""
    parts = name.split(".")
    if name in ("replication", "replication.__main__", "replication.cli"):
        return "cli", None, None
    if len(parts) >= 2 and parts[1] in ("core", "claims", "report"):
        return parts[1], None, None
    if len(parts) >= 4 and parts[1] == "studies":
        return "studies", parts[2], parts[3]
    if name == "replication.studies" or (len(parts) == 3 and parts[1] == "studies"):
        return "studies", None, None
    return None, None, None


def is_read_side(name):
    layer, _, role = place(name)
    return layer in ("claims", "report") or (layer == "studies" and role in READ_ROLES)


def imports_of(path, inside_functions=None):
    """(line, module) of every import of a project module: anywhere, or only inside (True) / outside (False)
    function bodies."""
    tree = ast.parse(path.read_text())
    nested = {id(node) for function in ast.walk(tree) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
              for node in ast.walk(function) if node is not function}
    found = []
    for node in ast.walk(tree):
        if inside_functions is not None and (id(node) in nested) != inside_functions:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PROJECT:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.append((node.lineno, child if child in MODULES else node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.split(".")[0] in PROJECT]
    return found


def graph():
    """{module: the project modules it imports}; the command line's also those its command table loads."""
    edges = {name: sorted({target for _, target in imports_of(path) if target in MODULES and target != name})
             for name, path in MODULES.items()}
    edges["replication.cli"] = sorted({*edges["replication.cli"], *(module for module, _ in cli.COMMANDS.values())})
    return edges


def test_every_module_sits_in_a_layer():
    outside = [name for name in MODULES if place(name)[0] is None]
    assert not outside, f"put these modules under core/, studies/<study>/, claims/ or report/: {outside}"


def test_no_project_import_hides_inside_a_function():
    hidden = [f"{path.relative_to(ROOT)}:{line}: {target}" for path in MODULES.values()
              for line, target in imports_of(path, inside_functions=True)]
    assert not hidden, "import at the top of the module (a layer that holds only inside a function does not hold):\n" \
        + "\n".join(hidden)


def test_the_harness_has_no_import_cycle():
    edges, state, cycles = graph(), {}, []

    def visit(module, stack):
        state[module] = "open"
        for target in edges.get(module, []):
            if state.get(target) == "open":
                cycles.append(" -> ".join([*stack[stack.index(target):], target]))
            elif target not in state:
                visit(target, [*stack, target])
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def allowed(source, target):
    """Whether module source may import module target (arrows point down only)."""
    layer, _, _ = place(source)
    to_layer = place(target)[0]
    if target in ("replication", "replication.studies") or target.endswith("__init__"):
        return True
    if layer == "core":
        return to_layer == "core"
    if layer == "studies":
        if to_layer == "core" or target == "replication.claims":
            return True
        if to_layer != "studies" or place(target)[1] not in (None, place(source)[1]):
            return False  # no study imports another study: what they share is core's
        return not is_read_side(source) or place(target)[2] != "measure"
    if layer == "claims":
        return to_layer in ("core", "claims") or (to_layer == "studies" and place(target)[2] != "measure")
    if layer == "report":
        return to_layer in ("core", "claims", "report") or (to_layer == "studies" and place(target)[2] != "measure")
    return True  # the command line dispatches to every layer


def test_imports_point_down_the_layers():
    crossing = [f"{source} -> {target}" for source, targets in graph().items() for target in targets
                if target.startswith("replication") and not allowed(source, target)]
    assert not crossing, "imports against the layers (docs/architecture.md):\n" + "\n".join(crossing)


def test_no_study_imports_another_study():
    studies = {name: place(name)[1] for name in MODULES if place(name)[0] == "studies" and place(name)[1]}
    crossing = [f"{source} -> {target}" for source, targets in graph().items() for target in targets
                if source in studies and target in studies and studies[source] != studies[target]]
    assert studies
    assert not crossing, "a study imports another (move what they share to core/):\n" + "\n".join(crossing)


def test_the_read_side_loads_no_torch_and_no_measuring_module():
    read_side = sorted(name for name in MODULES if is_read_side(name))
    code = ("import importlib, json, sys\n"
            f"for name in {read_side!r}:\n"
            "    importlib.import_module(name)\n"
            "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'torch_impl', 'jax', "
            "'torchmin') or (m.startswith('replication.studies.') and m.endswith('.measure')))))\n")
    completed = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout) == []


def test_the_report_command_loads_no_torch(tmp_path):
    code = ("import sys, argparse, pathlib\n"
            "from replication.report import command\n"
            "args = argparse.Namespace(reference=pathlib.Path(sys.argv[1]), reference_only=False, run=None, "
            "output=None)\n"
            "command.shown_runs(args)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'jax', 'torch_impl')))\n")
    (tmp_path / "reference").mkdir()
    completed = subprocess.run([sys.executable, "-c", code, str(tmp_path / "reference")], cwd=ROOT,
                               capture_output=True, text=True, check=False)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout.replace("'", '"')) == []


def test_the_architecture_page_places_every_module():
    page = (ROOT / "docs" / "architecture.md").read_text()
    missing = [name for name in MODULES if name.count(".") >= 1 and not name.endswith("__main__")
               and f"`{pathlib.Path(*name.split('.')[1:])}" not in page.replace(".py`", "`")]
    assert not missing, f"docs/architecture.md does not name: {missing}"


def test_each_figure_stem_is_written_once():
    stems = [node.value for path in MODULES.values() for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and re.fullmatch(r"fig\d+_[a-z_]+", node.value)]
    assert len(stems) >= 11
    assert len(stems) == len(set(stems)), "declare each figure once (core.plotting.Figure) and use its stem"


def test_no_objective_is_compared_as_a_string_outside_its_value():
    names = {"cauchy", "least-squares", "gaussian"}
    exempt = {"replication.core.objectives", "replication.studies.peers.jax_peer"}  # the value; a model tree
    found = [f"{path.relative_to(ROOT)}:{node.lineno}" for name, path in MODULES.items() if name not in exempt
             for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Compare)
             and any(isinstance(side, ast.Constant) and side.value in names for side in [node.left, *node.comparators])]
    assert not found, ("compare core.objectives values (objective is CAUCHY), or a record's name with an objective's "
                       ".name, not literal names:\n" + "\n".join(found))


MAX_MODULE_LINES, MAX_FUNCTION_LINES = 400, 60
"""The harness stays readable: a module of at most 400 lines, a function of at most 60."""


def test_no_module_is_over_400_lines_and_no_function_over_60():
    long_modules = [name for name, path in MODULES.items() if len(path.read_text().splitlines()) > MAX_MODULE_LINES]
    long_functions = [f"{name}.{node.name}" for name, path in MODULES.items()
                      for node in ast.walk(ast.parse(path.read_text()))
                      if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long_modules, f"modules over {MAX_MODULE_LINES} lines: {long_modules}"
    assert not long_functions, f"functions over {MAX_FUNCTION_LINES} lines: {long_functions}"

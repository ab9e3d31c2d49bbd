"""One name per series: every series is a Series record, its label made in one place, and the read side of the
harness runs without the measuring stack (a source archive's rendering of the whole report
loads no torch: tests/test_report.py)."""

import ast
import json
import re

import pytest

from replication.core.paths import REFERENCE, ROOT
from replication.core.series import NUMPY, Series, ordered

LABEL = re.compile(r"""["'](numpy|torch-cpu|torch-cuda|jax) ?[(\[]""")
"""A series' display label written out as a string: '"torch-cpu [adjoint]"', '"torch-cuda (float32)"'."""


def test_every_series_of_the_reference_runs_is_a_series_and_its_label_comes_back():
    labels = set()
    for path in REFERENCE.glob("*/sweep-*/points.jsonl"):
        for line in path.read_text().splitlines():
            series = Series.of(json.loads(line))
            assert Series.parse(series.label) == series
            labels.add(series.label)
    for path in REFERENCE.glob("*/crosscheck/crosscheck.json"):
        for fit in json.loads(path.read_text()).get("fits", []):
            assert Series.parse(fit["impl"]).label == fit["impl"]
    assert {"numpy", "torch-cpu", "torch-cpu (float32)", "torch-cpu [on-device BFGS]", "numpy [adjoint]"} <= labels


def test_series_sort_as_the_tables_show_them():
    names = ["jax", "torch-cpu [adjoint]", "torch-cuda", "torch-cpu [on-device BFGS]", "torch-cpu (float32)",
             "numpy", "numpy [adjoint]", "torch-cpu"]
    assert [str(s) for s in ordered(map(Series.parse, names))] == [
        "numpy", "torch-cpu", "torch-cpu (float32)", "torch-cuda", "torch-cpu [on-device BFGS]", "jax",
        "numpy [adjoint]", "torch-cpu [adjoint]"]
    assert NUMPY.is_paper
    assert not Series("torch-cpu", "float32").is_paper


@pytest.mark.parametrize("bad", ["fortran", "torch-cpu [adam]", "numpy (float16)", "torch-cpu[adjoint]"])
def test_a_label_that_names_no_series_is_refused(bad):
    with pytest.raises(ValueError, match="not a series"):
        Series.parse(bad)


def test_no_series_is_matched_by_its_display_string_outside_series_py():
    modules = sorted((ROOT / "replication").rglob("*.py"))
    assert len(modules) > 90  # every module of the harness, in every folder
    offenders = [f"{path.relative_to(ROOT)}:{number}" for path in modules if path.name != "series.py"
                 for number, line in enumerate(path.read_text().splitlines(), 1) if LABEL.search(line)]
    assert not offenders


def test_no_function_in_the_harness_is_longer_than_60_lines():
    modules = sorted((ROOT / "replication").rglob("*.py"))
    assert len(modules) > 90  # every module of the harness, in every folder
    long = [f"{path.relative_to(ROOT)}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path in modules
            for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.FunctionDef)
            and node.end_lineno - node.lineno + 1 > 60]
    assert not long

"""The model code a run was measured with: hashed as code (docstrings and comments aside), recorded as a run starts,
read from git for older runs, and set against main's."""

import types

import msgspec

from replication.core import model_code
from replication.core.records import ModelCode

SOURCE = '''"""A module."""


def f(x):
    """Twice x."""
    return 2 * x  # doubled
'''


def test_wording_and_comments_leave_the_code_unchanged_and_code_does_not():
    reworded = SOURCE.replace("Twice x.", "Two times x, in other words.").replace("# doubled", "# times two")
    assert model_code.code_digest(reworded) == model_code.code_digest(SOURCE)
    assert model_code.code_digest(SOURCE.replace("2 * x", "x + x")) != model_code.code_digest(SOURCE)
    only_docstring = '"""Only words."""\n\n\ndef g():\n    """Nothing else."""\n'
    assert model_code.code_digest(only_docstring) == model_code.code_digest('def g():\n    pass\n')


def test_a_run_is_set_against_main_by_the_modules_whose_code_differs():
    main = model_code.identity({"reference_numpy/a.py": SOURCE, "torch_impl/a.py": SOURCE})
    run = model_code.identity({"reference_numpy/a.py": SOURCE, "torch_impl/a.py": SOURCE.replace("2 *", "3 *"),
                               "torch_impl/b.py": ""})
    assert run.hash != main.hash
    assert model_code.differing_modules(run.modules, main.modules) == ["torch_impl/a.py", "torch_impl/b.py"]
    assert model_code.differing_modules(main.modules, main.modules) == []


def test_a_run_reads_its_recorded_code_first_and_git_for_older_records():
    recorded = model_code.recorded()
    assert recorded["hash"] == model_code.identity(model_code.working_sources()).hash
    assert 0 < recorded["mirror"]["share"] <= 1
    head = model_code.sources_at("HEAD")
    if head is None:  # a copy without git history
        return
    def session(commit, code=None):
        return types.SimpleNamespace(git_commit=commit, model_code=code and msgspec.convert(code, ModelCode))

    codes = model_code.run_code([session("abc (given by the caller)", recorded), session(None)])
    assert [code.hash for code in codes] == [recorded["hash"], None]
    (from_git,) = model_code.run_code([session("HEAD-dirty")])
    assert from_git.hash == model_code.identity(head).hash
    assert from_git.commits == ["HEAD"]
    assert model_code.run_code([session("0" * 40)]) == [model_code.RunCode(["0" * 40], None)]

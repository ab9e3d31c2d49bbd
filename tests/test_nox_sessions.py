"""The nox sessions' own logic, run with a stand-in for nox (the test environment has none): what each command of a
session is given."""

import importlib.util
import sys
import types

from replication.core.paths import ROOT


def noxfile(monkeypatch):
    """noxfile.py loaded with a stand-in nox module whose session decorator returns the function as written."""
    stand_in = types.ModuleType("nox")
    stand_in.options = types.SimpleNamespace()
    stand_in.session = lambda *args, **kwargs: args[0] if args and callable(args[0]) else (lambda function: function)
    monkeypatch.setitem(sys.modules, "nox", stand_in)
    spec = importlib.util.spec_from_file_location("noxfile_under_test", ROOT / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Session:
    """What a session was asked to run, in order."""

    def __init__(self, *posargs):
        self.posargs, self.env, self.commands = list(posargs), {}, []

    def install(self, *args):
        pass

    def run(self, *args, env=None, **kwargs):
        self.commands.append(list(args))


def test_the_closure_session_writes_the_fisher_bound_into_the_run_its_reductions_made(monkeypatch):
    """`nox -s closure -- --new-run` makes one run: the bound goes into the newest run (the one just made), not into
    a second new one (which left the reductions and the bound in two folders)."""
    session = Session("--new-run", "--threads", "1", "--noise", "0.001")
    noxfile(monkeypatch).closure(session)
    reductions, bound = (command for command in session.commands if command[3:4] == ["closure"])
    assert reductions == ["python", "-m", "replication", "closure", "--new-run", "--threads", "1", "--noise", "0.001"]
    assert bound == ["python", "-m", "replication", "closure", "--bound", "--threads", "1", "--noise", "0.001"]


def test_the_closure_session_skips_the_bound_for_truths_beyond_the_fitted_orders(monkeypatch):
    """The Fisher bound is for truths inside the fitted orders (the closure command refuses it with --panels or
    --truth-order): the session reduces such seeds and renders, without a bound step that would fail."""
    for beyond in (("--panels", "30"), ("--truth-order", "8")):
        session = Session("--new-run", *beyond)
        noxfile(monkeypatch).closure(session)
        closures = [command for command in session.commands if command[3:4] == ["closure"]]
        assert closures == [["python", "-m", "replication", "closure", "--new-run", *beyond]]

"""The packages' malloc setting (applied on request and by the harness, never at import), its opt-out, and the
bench's step profile."""

import subprocess
import sys

import msgspec
import pytest

from reference_numpy.gradient import STEPS
from replication.core.paths import ROOT
from replication.studies.bench import measure as bench
from replication.studies.bench.command import bench_folder_name
from replication.studies.bench.read import bench_profiles, bench_targets
from replication.studies.bench.records import BenchRead
from torch_impl.gradient import STEPS as TORCH_STEPS

IMPORT_THEN_ASK = """
import ctypes
calls = []
class Watched:
    def __init__(self, library):
        self.library = library
    def mallopt(self, *args):
        calls.append(args)
        return self.library.mallopt(*args)
opened = ctypes.CDLL
ctypes.CDLL = lambda name, *a, **k: Watched(opened(name, *a, **k)) if name == "libc.so.6" else opened(name, *a, **k)
import reference_numpy, torch_impl
from replication.core import allocator
print(len(calls), allocator.freed_memory_kept(), allocator.keep_freed_memory(), len(calls) > 0)
"""


def fresh_process_says(env):
    return subprocess.run([sys.executable, "-c", IMPORT_THEN_ASK], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=True).stdout.split()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the setting is glibc's")
def test_importing_the_models_sets_nothing_the_harness_sets_it_and_the_variable_opts_out():
    env = {"PATH": "/usr/bin:/bin"}
    assert fresh_process_says(env) == ["0", "False", "True", "True"]  # no mallopt at import; set on request
    assert fresh_process_says({**env, "OOF_MALLOC": "default"}) == ["0", "False", "False", "False"]
    main = (ROOT / "replication" / "__main__.py").read_text()
    assert main.index("keep_freed_memory()") < main.index("main()")  # before any command runs


def test_the_bench_folder_says_which_allocator_it_measured(monkeypatch):
    monkeypatch.delenv("OOF_MALLOC", raising=False)
    assert bench_folder_name(False) == "bench"
    assert bench_folder_name(True) == "bench-compile"
    monkeypatch.setenv("OOF_MALLOC", "default")
    assert bench_folder_name(False) == "bench-default-allocator"


def test_the_step_profile_walks_every_step_of_the_adjoint_and_both_autograd_passes():
    profile = bench.profiles(32, 3, repeats=2)
    assert set(profile) == {"numpy adjoint", "torch adjoint", "torch autograd"}
    for walk in ("numpy adjoint", "torch adjoint"):
        assert tuple(profile[walk]) == STEPS == tuple(TORCH_STEPS)
    assert set(profile["torch autograd"]) == {"forward (records the graph)", "backward()"}
    assert all(ms > 0 for steps in profile.values() for ms in steps.values())


def test_targets_are_judged_at_npix_512_only_and_against_each_librarys_own_floor():
    def row(npix, numpy_ms):
        ms = {"floor_numpy": 10.0, "floor_torch": 2.0, "numpy_adjoint_value_and_grad": numpy_ms,
              "torch_adjoint_value_and_grad": 6.0, "torch_value_and_grad": 9.0}
        return {"threads": 2, "npix": npix, "nzern": 5, "ms": ms, "x_floor": {k: v / 2.0 for k, v in ms.items()},
                "profile_ms": {"numpy adjoint": {"a": 1.0, "b": 2.0}}}

    def bench(*rows):
        return msgspec.convert({"environments": [], "floor": "", "rows": list(rows)}, BenchRead)

    targets = bench_targets(bench(row(256, 40.0), row(512, 24.0)))
    by_name = {t["target"]: t for t in targets}
    assert by_name["NumPy value + exact (adjoint) gradient, npix 512: <= 2.5x its library's floor"]["met"] is True
    assert by_name["NumPy value + exact (adjoint) gradient, npix 256: <= 2.5x its library's floor"]["met"] is None
    assert by_name["torch value + exact (adjoint) gradient, npix 512: <= 2.5x its library's floor"]["met"] is False
    assert by_name["torch value + autograd gradient, npix 512: <= 5x its library's floor"]["met"] is True
    profiles = bench_profiles(bench(row(512, 24.0)))
    assert profiles[0]["total"] == 3.0
    assert profiles[0]["floor"] == 10.0

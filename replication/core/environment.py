"""The record of the machine and software a run used: CPU, GPU, threads, versions, commit, date."""

import contextlib
import datetime
import os
import platform
import subprocess
import sys

import scipy
import scipy.fft
import threadpoolctl
import torch

from replication.core import model_code, registry, runs
from replication.core.allocator import freed_memory_kept
from replication.core.paths import ROOT
from replication.core.runs import cpu_model

ALLOCATOR_VARIABLES = ("OOF_MALLOC", "MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_", "LD_PRELOAD", "OPENBLAS_CORETYPE")
"""Environment variables that change the speed of every implementation; recorded as found."""


class ThreadCount(int):
    """A thread count that says how it was chosen: "--threads" (given), "resumed" (the run folder's own, kept on a
    resume) or "free cores" (from the cores other processes left free when the command started, with
    others_busy_cores, what they kept busy then). environment_record records both beside the count."""

    def __new__(cls, count: int, chosen_by: str = "--threads", others_busy_cores: float | None = None):
        value = super().__new__(cls, count)
        value.chosen_by, value.others_busy_cores = chosen_by, others_busy_cores
        return value


def git_commit():
    """The repository's commit, with '-dirty' when the tree has uncommitted changes.

    Outside a git checkout (a copy of the tree sent to a GPU machine) it is REPLICATION_COMMIT as the
    caller set it, marked as such, or None.
    """
    if "REPLICATION_COMMIT" in os.environ:
        return os.environ["REPLICATION_COMMIT"] + " (given by the caller)"
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        status = subprocess.run(["git", "status", "--porcelain", "--", "oof_common", "reference_numpy", "torch_impl",
                                 "replication", ":!replication/results"],
                                cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit.stdout.strip() + ("-dirty" if status.stdout.strip() else "")


def gpu_name():
    """The first CUDA device's name, or None where torch sees no CUDA device."""
    return runs.machine_text(torch.cuda.get_device_name(0)) if torch.cuda.is_available() else None


def machine_record():
    """This machine as a run records it: host name, CPU model, logical cores and the first CUDA device (or None)."""
    return runs.host_record() | {"gpu": gpu_name()}


@contextlib.contextmanager
def thread_limits(threads):
    """Give torch, the BLAS libraries and scipy.fft (NumPy's FFT here) the same number of threads."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        with threadpoolctl.threadpool_limits(limits=threads), scipy.fft.set_workers(threads):
            yield
    finally:
        torch.set_num_threads(previous)


def library_versions():
    """{distribution ('_' for '-'): version or None} of every registered implementation's libraries and the extra
    ones (registry.EXTRA_VERSIONS): an imported module's own __version__, else the installed distribution's."""
    distributions = [name for r in registry.registrations() for name in r.versions] + list(registry.EXTRA_VERSIONS)
    return {name.replace("-", "_"): getattr(sys.modules.get(name), "__version__", None) or
            registry.installed_version(name) for name in dict.fromkeys(distributions)}


def environment_record(threads):
    """A JSON-ready description of this machine and software, as the run found them."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "hostname": platform.node(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "gpu": gpu_name(),
        "cuda_available": torch.cuda.is_available(),
        "cuda_version": torch.version.cuda,
        "python": sys.version.split()[0],
        **library_versions(),
        "threads": int(threads),
        **({"threads_chosen_by": threads.chosen_by, "others_busy_cores_at_start": threads.others_busy_cores}
           if isinstance(threads, ThreadCount) else {}),
        "torch_threads": torch.get_num_threads(),
        "scipy_fft_workers": scipy.fft.get_workers(),
        "blas": [{key: info.get(key) for key in ("internal_api", "num_threads", "version", "architecture")}
                 for info in threadpoolctl.threadpool_info()],
        "allocator_env": {name: os.environ.get(name) for name in ALLOCATOR_VARIABLES},
        "malloc_kept": freed_memory_kept(),
        "git_commit": git_commit(),
        "model_code": model_code.recorded(),
    }

"""The record of the machine and software a run used: CPU, GPU, threads, versions, commit, date."""

import contextlib
import datetime
import importlib.metadata
import importlib.util
import os
import platform
import subprocess
import sys

import numpy as np
import scipy
import scipy.fft
import threadpoolctl
import torch

import reference_numpy
import torch_impl
from replication.paths import ROOT

ALLOCATOR_VARIABLES = ("OOF_MALLOC", "MALLOC_MMAP_MAX_", "MALLOC_TRIM_THRESHOLD_", "LD_PRELOAD", "OPENBLAS_CORETYPE")
"""Environment variables that change the speed of every implementation; recorded as found."""


def cpu_model():
    """The CPU's model name from /proc/cpuinfo, or platform's guess elsewhere."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit():
    """The repository's commit, with '-dirty' when the tree has uncommitted changes.

    Outside a git checkout (a copy of the tree sent to a GPU machine) it is REPLICATION_COMMIT as the
    caller set it, marked as such, or None.
    """
    if "REPLICATION_COMMIT" in os.environ:
        return os.environ["REPLICATION_COMMIT"] + " (given by the caller)"
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
        status = subprocess.run(["git", "status", "--porcelain", "--", "reference_numpy", "torch_impl", "replication",
                                 ":!replication/results"],
                                cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit.stdout.strip() + ("-dirty" if status.stdout.strip() else "")


def gpu_name():
    """The first CUDA device's name, or None where torch sees no CUDA device."""
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


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
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "torch": torch.__version__,
        "pytorch_minimize": importlib.metadata.version("pytorch-minimize"),
        "jax": importlib.metadata.version("jax") if importlib.util.find_spec("jax") else None,
        "threads": threads,
        "torch_threads": torch.get_num_threads(),
        "scipy_fft_workers": scipy.fft.get_workers(),
        "blas": [{key: info.get(key) for key in ("internal_api", "num_threads", "version", "architecture")}
                 for info in threadpoolctl.threadpool_info()],
        "allocator_env": {name: os.environ.get(name) for name in ALLOCATOR_VARIABLES},
        "malloc_kept": reference_numpy.MALLOC_KEPT and torch_impl.MALLOC_KEPT,
        "git_commit": git_commit(),
    }

"""The harness's memory allocator setting: glibc's malloc asked to reuse freed memory (the models'
backend.keep_freed_memory, which importing them does not apply), applied once per process by `python -m replication`
before any command runs, so that every measured run has it; OOF_MALLOC=default leaves glibc's defaults (the bench's
default-allocator run). The environment record says which a run had."""

import reference_numpy

_kept = False
"""Whether this process has the setting (set once, by keep_freed_memory)."""


def keep_freed_memory() -> bool:
    """Apply the setting to this process (once; later calls only report it): whether it is set."""
    global _kept
    if not _kept:
        _kept = reference_numpy.keep_freed_memory()
    return _kept


def freed_memory_kept() -> bool:
    """Whether this process has the setting (keep_freed_memory was called and glibc took it)."""
    return _kept

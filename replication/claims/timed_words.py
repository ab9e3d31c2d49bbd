"""The words of the claims judged on times to solution (claims.speed): a verdict in a cell, over several runs, and
the limits and caveats the first screen names."""

import math

from replication.claims.claim import C4_ORDERS
from replication.core import point_times
from replication.core.format import bound_text, times
from replication.core.judging import Ratio
from replication.core.load import LOADED_CORES
from replication.core.objectives import Objective
from replication.core.series import TORCH_CUDA


def host_cores(records):
    """'2 of 16 cores': the threads NumPy and torch-cpu ran with on the sweep's host, from its run records."""
    pairs = sorted({(record.threads, record.cpu_count, fewer_for_others(record)) for record in records})
    return ", ".join(f"{threads} of {cores} cores" + (" (as many as others left free)" if fewer else "")
                     for threads, cores, fewer in pairs) or "threads not recorded"


def fewer_for_others(record):
    """Whether a session measured with fewer threads than by default because other processes kept cores busy."""
    others = record.others_busy_cores_at_start or 0
    return record.threads_chosen_by == "free cores" and others >= LOADED_CORES


def cores_of(run, objective: Objective) -> str:
    """The threads of the sweep an objective is judged on, in words (host_cores)."""
    name = run.judged(objective)[0]
    return host_cores(run.sweeps[name][1] if name else [])


def slope_text(c4) -> str:
    """C4's cell: the slope at its grid with its range over the repeats' ranges; a range where a censored fit leaves
    it open ("slope >= 1.2")."""
    above = c4.open_above
    if c4.value is not None:
        low, high = (f"{end:.2f}" for end in c4.repeats)
        spread = f"slope {c4.value:.2f}" + ("" if low == high else f" ({low} to {high})")
        passed = f" (at npix {', '.join(map(str, above))} bounds leave the verdict open)" if above else ""
        return f"{spread} at npix {c4.npix}, spread {times(c4.spread)}{passed}"
    passed = f"; at npix {', '.join(map(str, above))} bounds leave the verdict open" if above else ""
    return f"slope {known_text(c4.known)} at npix {c4.npix} (a bound: a fit never reached the target{passed})"


def known_text(known) -> str:
    """The range bounds leave a slope: '>= 1.20', '<= 0.30', '0.10 to 0.50' or 'open'."""
    low, high = known
    if math.isinf(high) and math.isfinite(low):
        return f">= {low:.2f}"
    if math.isinf(low) and math.isfinite(high):
        return f"<= {high:.2f}"
    return f"{low:.2f} to {high:.2f}" if math.isfinite(low) and math.isfinite(high) else "open"


def per_size_text(by_npix) -> str:
    """'npix 256: 2.2x (2.0-2.3); npix 512: ...'"""
    return "; ".join(f"npix {npix}: {times(value)}" for npix, value in by_npix.items())


def c1_orders(found: list) -> list[str]:
    """C1's limit where a run measured fewer orders than C4's set at its largest grid: 'n = 2, 4 only'."""
    orders = [f.orders for f in found if len(f.orders) < len(C4_ORDERS)]
    return [f"n = {', '.join(map(str, min(orders, key=len)))} only"] if orders else []


def bound_caveats(size):
    """The runs whose value of a claim is a bound: 'a bound on EPYC 2c, 12-03: >= 12.2x at npix 2048' (size: the
    verdict -> the grid size its value is read at)."""

    def caveats(measured, objective: Objective) -> list[str]:
        return [f"a bound on {name}: {bound_text(found.value)} at npix {size(found)}" for name, _, found in measured
                if isinstance(found.value, Ratio) and found.value.is_bound]

    return caveats


def gpu_seconds(measured, objective: Objective) -> list[str]:
    """C2's first run's torch-cuda times to solution and the sizes they span."""
    for _, run, _ in measured[:1]:
        cuda = run.judged(objective)[1].get(TORCH_CUDA, {})
        gpu = [point_times.seconds(record) for record in cuda.values()
               if not record.estimated and point_times.is_solution(record)]
        sizes = sorted({npix for npix, _ in cuda})
        if gpu:
            return [f"torch-cuda {min(gpu):.2g}-{max(gpu):.2g} s, npix {sizes[0]}-{sizes[-1]}"]
    return []


def size_text(value, npix) -> str:
    return f"{times(value, False)} at npix {npix}"


def slope_words(found) -> str:
    value = f"{found.value:.2f}" if found.value is not None else known_text(found.known)
    return f"slope {value} at npix {found.npix}"


def at_size(npix) -> callable:
    """A speed-up in the fewest words, with the grid size it is read at ('7.25x (npix 128)'; npix: verdict ->
    size)."""
    return lambda found: f"{times(found.value, False)} (npix {npix(found)})"


def slope_brief(found) -> str:
    """C4 in the fewest words: 'slope 1.23', 'slope >= 0.90', with its grid size."""
    value = f"{found.value:.2f}" if found.value is not None else known_text(found.known)
    return f"slope {value} (npix {found.npix})"

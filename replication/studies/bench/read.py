"""Reading the bench: its targets against the FFT floor, the profiles of a step, the allocator's effect and
torch.compile's reading."""

import statistics

from reference_numpy.gradient import STEPS
from replication.core.format import times
from replication.core.registry import floor_step
from replication.studies.bench.records import AUTOGRAD_PARTS

TARGET_POINT = (2, 5)
"""(threads, nzern) of the bench's performance targets, reported at every npix, judged at npix 512."""


TARGETS = (("numpy_adjoint_value_and_grad", "NumPy value + exact (adjoint) gradient", 2.5),
           ("torch_adjoint_value_and_grad", "torch value + exact (adjoint) gradient", 2.5),
           ("torch_value_and_grad", "torch value + autograd gradient", 5.0),
           ("torch_public_adjoint_prepared", "public value_and_grad, adjoint, prepared data", 3.0),
           ("torch_public_autograd_prepared", "public value_and_grad, autograd, prepared data", 5.0))
"""(step, what, limit): each step's multiple of its own library's 3-FFT floor must be <= limit."""


PUBLIC_OVERHEAD = (("torch_public_adjoint_prepared", "torch_adjoint_value_and_grad", 1.10, 256),)
"""(public step, internal step, limit, smallest npix judged): a user's loop over the public API against the
internal path it calls, the same data already prepared."""


START_TARGETS = (("torch_gauss_newton", "the Gauss-Newton matrix (torch, exact forward mode)", 10.0, (512, 8)),
                 ("torch_batch_value_and_grad", "a batch of starts' values and gradients in one call", 8.0,
                  (128, 5)))
"""(step, what, limit, (npix, nzern) judged): the step's time in torch value + autograd gradient evaluations (the
batch: of one vector) must be <= limit, at the bench's target threads."""


LIKELIHOOD_TARGET = 1.5
"""NumPy's objective alone at 1 thread may take at most this multiple of torch's: the libraries' own speed."""


def fastest_floors(bench, threads) -> dict[int, float]:
    """{npix: milliseconds} of the fastest FFT floor (any library's: every step named floor_*) the bench measured
    at each grid size with `threads` threads (the median over its rows of that size), {} without such rows."""
    found = {}
    for row in bench.rows if bench else []:
        if row.threads == threads:
            found.setdefault(row.npix, []).append(min(ms for step, ms in row.ms.items() if step.startswith("floor_")))
    return {npix: statistics.median(values) for npix, values in found.items()}


def bench_targets(bench):
    """The performance targets: per npix at 2 threads and nzern 5, each step's multiple of its own library's
    FFT floor (NumPy: scipy.fft; torch: torch.fft) and of torch's, judged at npix 512."""
    if not bench:
        return []
    targets = []
    for row in bench.rows:
        if (row.threads, row.nzern) != TARGET_POINT or "numpy_adjoint_value_and_grad" not in row.ms:
            continue
        for step, what, limit in TARGETS:
            if step not in row.ms:
                continue  # a bench made before the step was timed
            value = row.ms[step] / row.ms[floor_step(step)]
            targets.append({"target": f"{what}, npix {row.npix}: <= {limit:g}x its library's floor",
                            "value": times(value), "torch_floor": times(row.x_floor[step]),
                            "met": (value <= limit) if row.npix == 512 else None})
        for step, internal, limit, smallest in PUBLIC_OVERHEAD:
            if step in row.ms and row.npix >= smallest:
                value = row.ms[step] / row.ms[internal]
                targets.append({"target": f"a loop over the public API, prepared data, against the internal path, "
                                          f"npix {row.npix}: <= {limit:g}x", "value": times(value),
                                "torch_floor": "", "met": value <= limit})
    targets += start_targets(bench)
    for row in bench.rows:
        if row.threads == 1:
            value = row.numpy_over_torch_nll
            targets.append({"target": f"NumPy likelihood <= {LIKELIHOOD_TARGET:g}x torch likelihood, 1 thread, "
                                      f"npix {row.npix}, nzern {row.nzern}", "value": times(value),
                            "torch_floor": "", "met": value <= LIKELIHOOD_TARGET})
    return targets


def start_targets(bench):
    """The costs of the Gauss-Newton matrix and of a batch of starts, in torch autograd evaluations, at the target
    threads (benches made before these steps have none)."""
    targets = []
    for row in bench.rows:
        for step, what, limit, judged in START_TARGETS:
            if row.threads != TARGET_POINT[0] or step not in row.ms or row.nzern != judged[1]:
                continue
            count = f" ({row.batch_starts} vectors)" if step == "torch_batch_value_and_grad" else ""
            value = row.ms[step] / row.ms["torch_value_and_grad"]
            targets.append({"target": f"{what}{count}, npix {row.npix}, n = {row.nzern}: <= {limit:g} "
                                      "autograd evaluations", "value": times(value),
                            "torch_floor": times(row.x_floor[step]),
                            "met": (value <= limit) if row.npix == judged[0] else None})
    return targets


def bench_profiles(bench):
    """Rows of the step profiles (nzern 5, or the bench's first order): where a value-and-gradient goes."""
    rows = [row for row in (bench.rows if bench else []) if row.profile_ms is not None]
    orders = sorted({row.nzern for row in rows})
    keep = 5 if 5 in orders else (orders[0] if orders else None)
    order = {step: place for place, step in enumerate(STEPS + AUTOGRAD_PARTS)}
    return [{"threads": row.threads, "npix": row.npix, "nzern": row.nzern,
             "walk": walk,
             "steps": dict(sorted(steps.items(), key=lambda item: order.get(item[0], len(order)))),
             "total": sum(steps.values()),
             "floor": row.ms[floor_step(walk)]}
            for row in rows if row.nzern == keep for walk, steps in row.profile_ms.items()]


ALLOCATOR_STEPS = {"numpy_nll": "NumPy objective", "torch_nll": "torch objective",
                   "torch_value_and_grad": "torch value + autograd gradient",
                   "numpy_adjoint_value_and_grad": "NumPy value + adjoint gradient",
                   "torch_adjoint_value_and_grad": "torch value + adjoint gradient"}
"""The bench steps the allocator comparison shows: {record key: what it is}."""


def allocator_effect(bench, default_bench):
    """Rows comparing the bench with the allocator settings against glibc's defaults, same steps."""
    if not bench or not default_bench:
        return []
    default = {(r.threads, r.npix, r.nzern): r for r in default_bench.rows}
    rows = []
    for row in bench.rows:
        other = default.get((row.threads, row.npix, row.nzern))
        if other:
            rows.append({"threads": row.threads, "npix": row.npix, "nzern": row.nzern,
                         "steps": {what: (other.ms[name], row.ms[name]) for name, what in
                                   ALLOCATOR_STEPS.items() if name in row.ms and name in other.ms}})
    return rows


def compiled_reading(bench_compile):
    """The bench-compile rows holding the compiled variant, and what they say: {"rows", "faster" / "slower" (where
    compiled autograd beat eager autograd, or did not), "adjoint_fastest" / "adjoint_not_fastest" (where the eager
    exact adjoint beat both, or did not)}, each a phrase naming the points ('npix 256, 512'); {} without rows."""
    rows = [row for row in (bench_compile.rows if bench_compile else []) if "torch_compiled_value_and_grad" in row.ms]
    if not rows:
        return {}
    one_setting = len({(row.nzern, row.threads) for row in rows}) == 1

    def points(chosen):
        if one_setting:
            return "npix " + ", ".join(str(row.npix) for row in chosen) if chosen else ""
        return "; ".join(f"npix {r.npix}, n = {r.nzern}, {r.threads} thread(s)" for r in chosen)

    def split(wins):
        """(the points where wins(row) holds, those where it does not), as phrases."""
        return points([r for r in rows if wins(r.ms)]), points([r for r in rows if not wins(r.ms)])

    faster, slower = split(lambda ms: ms["torch_compiled_value_and_grad"] < ms["torch_value_and_grad"])
    adjoint_fastest, adjoint_not_fastest = split(lambda ms: ms["torch_adjoint_value_and_grad"] < min(
        ms["torch_compiled_value_and_grad"], ms["torch_value_and_grad"]))
    return {"rows": rows, "faster": faster, "slower": slower, "adjoint_fastest": adjoint_fastest,
            "adjoint_not_fastest": adjoint_not_fastest}

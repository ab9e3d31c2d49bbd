"""Reading the peers: every way to fit a point side by side (the JAX peer, the on-device BFGS), and the
peer targets."""

import dataclasses
import statistics

from replication.core.format import values_and_bounds
from replication.core.judging import aggregate
from replication.core.point_times import (
    comparable,
    ended_repeats,
    is_solution,
    ratio_of,
    seconds,
    speedups,
    timed_to_target,
)
from replication.core.series import (
    CUDA_ON_DEVICE,
    JAX,
    JAX_GRID_SEEDED,
    NUMPY,
    TORCH_ADJOINT,
    TORCH_CPU,
    TORCH_CUDA,
    TORCH_FASTEST,
    TORCH_GRID_SEEDED,
    TORCH_ON_DEVICE,
    TORCH_SEEDED,
)

PEERS = ((NUMPY, "NumPy, finite differences, scipy BFGS"),
         (TORCH_CPU, "torch autograd, scipy BFGS"),
         (TORCH_ADJOINT, "torch exact adjoint, scipy BFGS"),
         (TORCH_ON_DEVICE, "torch autograd, on-device BFGS"),
         (TORCH_SEEDED, "torch autograd, scipy BFGS from the Gauss-Newton matrix"),
         (TORCH_GRID_SEEDED, "torch autograd, scipy BFGS from a Gauss-Newton matrix made once per grid"),
         (TORCH_FASTEST, "torch exact adjoint, scipy BFGS from the per-grid Gauss-Newton matrix"),
         (JAX, "JAX autograd (jit), scipy BFGS"),
         (JAX_GRID_SEEDED, "JAX autograd (jit), scipy BFGS from the per-grid Gauss-Newton matrix"),
         (TORCH_CUDA, "torch-cuda autograd, scipy BFGS"),
         (CUDA_ON_DEVICE, "torch-cuda autograd, on-device BFGS"))
"""The ways to fit the peers section compares: (series, what it is)."""


PEER_SERIES = (JAX, JAX_GRID_SEEDED, TORCH_ON_DEVICE, CUDA_ON_DEVICE, TORCH_SEEDED, TORCH_GRID_SEEDED, TORCH_FASTEST)
"""The series that make a run's peers table: the JAX peer, an on-device BFGS or BFGS from the Gauss-Newton matrix."""
AGAINST_SCIPY = ((TORCH_ON_DEVICE, "The on-device BFGS (pytorch-minimize)"),
                 (TORCH_SEEDED, "scipy's BFGS started from the Gauss-Newton matrix"),
                 (TORCH_GRID_SEEDED, "scipy's BFGS started from a Gauss-Newton matrix made once per grid"))
"""The other minimizers of torch autograd on the CPU, each summed up against scipy's BFGS from the identity."""


PEER_MIN_NPIX = 128


@dataclasses.dataclass(frozen=True)
class PeerTarget:
    """A target on time(slow) / time(fast) at points ((npix, nzern); nzern None: every order): at most limit at
    every point, or, where median, at most limit at the median over the points."""

    slow: object
    fast: object
    limit: float
    points: tuple
    text: str
    median: bool = False

    def judged(self, ratios):
        """Whether the ratios meet it: True, False, or None where none was measured or a bound leaves it open."""
        if not ratios:
            return None
        if not self.median:
            return all(value <= self.limit for value in ratios.values())
        middle = aggregate(statistics.median, ratios.values())
        return True if middle.ceiling <= self.limit else False if middle.floor > self.limit else None


PEER_POINTS = ((256, 4), (256, 8), (512, 4), (512, 8))
PEER_TARGETS = (
    PeerTarget(TORCH_CPU, JAX, 1.5, PEER_POINTS, "torch autograd (scipy BFGS) within 1.5x of JAX's time-to-solution"),
    PeerTarget(TORCH_ADJOINT, JAX, 1.5, PEER_POINTS,
               "torch exact adjoint (scipy BFGS) within 1.5x of JAX's time-to-solution"),
    PeerTarget(TORCH_ADJOINT, JAX, 1.0, ((256, None), (512, None)),
               "torch exact adjoint (scipy BFGS) at most JAX's time-to-solution, npix 256 and 512"),
    PeerTarget(TORCH_FASTEST, JAX_GRID_SEEDED, 1.0, PEER_POINTS,
               "torch's fastest path (exact adjoint, per-grid Gauss-Newton start) at most JAX's time-to-solution "
               "from the same matrix, at the median over the points", median=True),
    PeerTarget(TORCH_CUDA, CUDA_ON_DEVICE, 1 / 3, ((256, None), (512, None)),
               "on-device BFGS at least 3x faster than scipy BFGS on torch-cuda"),
    PeerTarget(TORCH_CUDA, TORCH_CPU, 1 / 5, ((256, None),), "torch-cpu / torch-cuda at least 5x"))
"""The peer targets the peers table judges."""


LIMIT_FACTOR = 3.0
"""How far above the algorithmic limit torch's fastest path may be: its target."""


@dataclasses.dataclass(frozen=True)
class Limit:
    """The algorithmic limit at one point: the fewest evaluations any way took to the target and by which way, the
    fastest FFT floor (ms), their product (ms), and each way's time to the target over it."""

    npix: int
    nzern: int
    evaluations: int
    best: object
    floor_ms: float
    limit_ms: float
    over: dict


@dataclasses.dataclass(frozen=True)
class TargetRow:
    """A peer target as the table shows it: its words, the pair of series, the measured ratios (time(a) / time(b))
    by point, whether they meet it (None: not measured, or a bound leaves it open), and whether it asks for a ratio
    below 1."""

    target: str
    pair: str
    ratios: dict
    met: bool | None
    inverted: bool


@dataclasses.dataclass(frozen=True)
class PeerCell:
    """One way at one point: its time to solution (s), its ratio to the fastest, whether it is a solution, its
    evaluations and iterations, and the cost of one evaluation (ms)."""

    s: float
    ratio: object
    solution: bool
    nfev: int
    nit: int
    eval_ms: float


@dataclasses.dataclass(frozen=True)
class PeerRow:
    npix: int
    nzern: int
    fastest: object
    cells: dict


@dataclasses.dataclass(frozen=True)
class Peers:
    """The peers table: the ways measured (series, what) and the rows, the targets, the sentences read from them and
    the algorithmic limits."""

    names: list = dataclasses.field(default_factory=list)
    rows: list[PeerRow] = dataclasses.field(default_factory=list)
    targets: list[TargetRow] = dataclasses.field(default_factory=list)
    readings: list[str] = dataclasses.field(default_factory=list)
    limits: list[Limit] = dataclasses.field(default_factory=list)


def algorithmic_limits(series, floors) -> list[Limit]:
    """Per point of PEER_POINTS measured with its target: the algorithmic limit, the fewest evaluations any way took
    to the target (its first repeat's, run to its end) times the fastest FFT floor of that grid size (floors: {npix:
    ms}, the run's bench at the sweep's threads), and each way's time to the target over it (only where every repeat
    reached it: a bound enters no ratio). [] without floors."""
    rows = []
    for key in PEER_POINTS:
        timed = {name: points[key] for name, points in series.items() if key in points and timed_to_target(points[key])}
        counts = {name: record.target.evaluations[0] for name, record in timed.items()
                  if record.target.evaluations and record.target.evaluations[0] is not None}
        if key[0] not in floors or not counts:
            continue
        best = min(counts, key=counts.get)
        limit_s = counts[best] * floors[key[0]] / 1e3
        over = {name: seconds(record) / limit_s for name, record in timed.items()
                if record.target.reached == len(record.target.times)}
        rows.append(Limit(key[0], key[1], counts[best], best, floors[key[0]], 1e3 * limit_s, over))
    return rows


def limit_target(limits) -> TargetRow:
    """The target on torch's fastest path against the algorithmic limit, as peer_targets' entries."""
    ratios = {(row.npix, row.nzern): row.over[TORCH_FASTEST] for row in limits if TORCH_FASTEST in row.over}
    return TargetRow(f"torch's fastest path within {LIMIT_FACTOR:g}x of the algorithmic limit at every point",
                     f"{TORCH_FASTEST} / limit", ratios,
                     all(value <= LIMIT_FACTOR for value in ratios.values()) if ratios else None, False)


def per_evaluation_s(record):
    """Fit seconds per objective evaluation (per value-and-gradient call where the gradient comes with it): the
    repeats run to their end, whose evaluations the outcome counts."""
    return statistics.median(ended_repeats(record, "fit_s")) / record.outcome.nfev


def peers(series, floors=None) -> Peers:
    """The peers table: per point with npix >= PEER_MIN_NPIX measured in at least two ways, each way's time to
    solution, its ratio to the fastest, its evaluations and their cost; plus the peer targets, and where floors
    ({npix: ms}, the fastest FFT floor of the run's bench) are given, the algorithmic limits."""
    if not any(name in series for name in PEER_SERIES):
        return Peers()
    limits = algorithmic_limits(series, floors or {})
    present = [(name, what) for name, what in PEERS if name in series]
    keys = sorted({key for name, _ in present for key, record in series[name].items()
                   if key[0] >= PEER_MIN_NPIX and not record.estimated})
    rows = []
    for key in keys:
        cells = {name: series[name][key] for name, _ in present
                 if key in series[name] and not series[name][key].estimated}
        node = next(iter(cells.values())).node if cells else None
        cells = {name: record for name, record in cells.items() if record.node == node}  # one node only
        if len(cells) < 2:
            continue
        fastest = min(cells, key=lambda name: seconds(cells[name]))
        rows.append(PeerRow(key[0], key[1], fastest, {
            name: PeerCell(seconds(record), peer_ratio(record, cells[fastest]), is_solution(record),
                           record.outcome.nfev, record.outcome.nit, 1e3 * per_evaluation_s(record))
            for name, record in cells.items()}))
    return Peers(names=[(name, what) for name, what in present if any(name in row.cells for row in rows)],
                 rows=rows, targets=peer_targets(series) + ([limit_target(limits)] if limits else []), limits=limits,
                 readings=[text for other, what in AGAINST_SCIPY for text in [against_scipy(series, other, what)]
                           if text] + peer_readings(rows))


def against_scipy(series, other, what):
    """One sentence: another minimizer's time to target as a multiple of scipy's BFGS's (both torch autograd on the
    CPU) over the points of npix >= PEER_MIN_NPIX, and the evaluations each needed (medians); None unmeasured."""
    ratios = {key: ratio for key, ratio in speedups(series, other, TORCH_CPU).items() if key[0] >= PEER_MIN_NPIX}
    if not ratios:
        return None
    evaluations = [(series[other][key].outcome.nfev, series[TORCH_CPU][key].outcome.nfev)
                   for key in ratios]
    slower = sum(float(ratio) > 1 for ratio in ratios.values() if not ratio.is_bound)
    one_off = [series[other][key].grid_start_s for key in ratios if series[other][key].grid_start_s]
    once = (f"; its matrix, made once per grid and on no fit's clock, took {min(one_off):.2g}-{max(one_off):.2g} s"
            if one_off else "")
    return (f"{what} against scipy's BFGS from the identity (both torch autograd on the CPU), at {len(ratios)} "
            f"point(s) of npix >= {PEER_MIN_NPIX}: its time to solution is {values_and_bounds(ratios.values())} "
            f"scipy's (slower at {slower}), with a median of {statistics.median(e for e, _ in evaluations):g} "
            f"evaluations to scipy's {statistics.median(s for _, s in evaluations):g}{once}.")


def peer_ratio(record, fastest):
    """A way's time over the fastest's at one point (Ratio): a bound where a fit timed to the target never reached it;
    None where a fit recorded before times to target is not a solution (it enters no ratio, as the old rule says)."""
    if not comparable(record, fastest):
        return None
    if not timed_to_target(record) and not (is_solution(record) and is_solution(fastest)):
        return None
    return ratio_of(record, fastest)


def peer_targets(series):
    """Each peer target with its measured ratios (time(a) / time(b)) and whether they meet it."""
    targets = []
    for target in PEER_TARGETS:
        ratios = speedups(series, target.slow, target.fast)
        chosen = {key: value for key, value in ratios.items()
                  if any(key[0] == npix and nzern in (None, key[1]) for npix, nzern in target.points)}
        targets.append(TargetRow(target.text, f"{target.slow} / {target.fast}", chosen, target.judged(chosen),
                                 target.limit < 1))
    return targets


def peer_readings(rows):
    """One sentence per point, from the numbers: who was fastest, and why torch autograd and JAX differ
    (evaluations made against the cost of each)."""
    readings = []
    for row in rows:
        cells, fastest = row.cells, row.fastest
        if not any(name in cells for name in PEER_SERIES):
            continue
        text = f"npix {row.npix}, n = {row.nzern}: fastest {fastest} ({cells[fastest].s:.3g} s)"
        for series, other, words in ((TORCH_CPU, JAX, "torch autograd took"),
                                     (TORCH_ADJOINT, JAX, "torch's exact adjoint took"),
                                     (TORCH_FASTEST, JAX_GRID_SEEDED,
                                      "from the same per-grid matrix, torch's exact adjoint took")):
            if series in cells and other in cells:
                ours, theirs = cells[series], cells[other]
                text += (f"; {words} {ours.ratio / theirs.ratio:.2f}x JAX's time with {ours.nfev} evaluations to "
                         f"JAX's {theirs.nfev}, each costing {ours.eval_ms / theirs.eval_ms:.2f}x as much")
        if TORCH_ON_DEVICE in cells and TORCH_CPU in cells:
            device, host = cells[TORCH_ON_DEVICE], cells[TORCH_CPU]
            text += (f"; on-device BFGS took {device.nit} iterations ({device.nfev} evaluations) to scipy's "
                     f"{host.nit} ({host.nfev}), each evaluation costing {device.eval_ms / host.eval_ms:.2f}x scipy's")
        readings.append(text + ".")
    return readings

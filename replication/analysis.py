"""Read recorded results and compute what the report states: timing tables, speed-ups and verdicts."""

import dataclasses
import math
import pathlib
import statistics

import numpy as np

from replication import runs
from replication.claims import C4_MIN_NPIX, C4_ORDERS, CLAIMS, SAME_SOLUTION_STDERR, parameter_count
from replication.data import (
    covariance_scale,
    ended_at_optimum,
    identifiable,
    judging_newton,
    judging_stderr,
)
from replication.optimum import mahalanobis
from replication.profiles import sweep_folder_name
from replication.records import (
    crosscheck_fits,
    fit_series,
    read_bench,
    read_crosscheck,
    read_optima,
    read_peers_check,
    read_points,
    read_retrieval,
    read_run_records,
)
from replication.registry import GRADIENTS
from replication.results import refuse_links_inside
from replication.series import (
    CUDA_ON_DEVICE,
    JAX,
    NUMPY,
    NUMPY_ADJOINT,
    TORCH_ADJOINT,
    TORCH_CPU,
    TORCH_CUDA,
    TORCH_DIFFERENCES,
    TORCH_ON_DEVICE,
    Series,
    ordered,
)

REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_MEASURED = "reproduced", "partly", "not reproduced", "not measured here"
PROFILE_ORDER = ("paper", "quick", "smoke")
"""A run's sweep that its verdicts are judged on: the largest profile it holds."""


def load_sweep(folder):
    """{Series: {(npix, nzern): record}} of a sweep folder, and its run records; empty where absent."""
    points, environments = read_points(folder / "points.jsonl"), read_run_records(folder / "runs.jsonl")
    series = {}
    for record in points:
        series.setdefault(Series.of(record), {})[(record["npix"], record["nzern"])] = record
    return series, environments


def load_sharded_sweeps(folder):
    """The sweeps of a sharded run, each merged over its shards and nodes; every record marked with its node,
    and the nodes listed: ({sweep name: (series, environments)}, [{shard, node, cpu, cores, gpu, points}])."""
    sweeps, nodes = {}, []
    for node in sorted(folder.glob("shards/*/*")):
        info = runs.read_run(node)
        if info is None:
            continue
        machine = info["machine"]
        for sub in sorted(path for path in node.glob("sweep-*") if path.is_dir()):
            series, environments = load_sweep(sub)
            merged, all_environments = sweeps.setdefault(sub.name, ({}, []))
            for name, points in series.items():
                for key, record in points.items():
                    known = merged.setdefault(name, {}).get(key)
                    if known is None or (known["estimated"] and not record["estimated"]):  # a measurement first
                        merged[name][key] = record | {"node": machine["hostname"]}
            all_environments.extend(environments)
            nodes.append({"shard": node.parent.name, "node": machine["hostname"], "cpu": machine["cpu"],
                          "cores": machine["cpu_count"], "gpu": machine.get("gpu"), "sweep": sub.name,
                          "points": sum(len(points) for points in series.values())})
    return sweeps, nodes


@dataclasses.dataclass
class Run:
    """Everything recorded in one run folder: its sweeps, cross-check and benches, and whose run it is."""

    folder: pathlib.Path
    info: dict
    own: bool
    sweeps: dict
    crosscheck: dict
    bench: dict
    bench_default: dict
    bench_compile: dict
    bench_peers: dict
    peers_check: dict
    nodes: list = dataclasses.field(default_factory=list)
    retrieval: dict = dataclasses.field(default_factory=dict)
    """{folder name: records} of the run's cold-start retrievals (retrieval-<profile>)."""
    optima: dict = dataclasses.field(default_factory=dict)
    """{sweep folder name: {(npix, nzern, objective, data_sha256): optimum record}}: the points' optima (runs since
    2026-12-02), merged over shards."""
    off_yardstick: dict = dataclasses.field(default_factory=dict)
    """{sweep folder name: points left out of it because their optimum's covariance is not the sandwich}
    (off_yardstick_points)."""

    @property
    def retrieval_shown(self):
        """(folder name, records) of the largest retrieval profile the run holds, or (None, [])."""
        for profile in ("full", "quick", "smoke"):
            if f"retrieval-{profile}" in self.retrieval:
                return f"retrieval-{profile}", self.retrieval[f"retrieval-{profile}"]
        return None, []

    @property
    def machine(self):
        return self.info["machine"]

    @property
    def title(self):
        """'your run' or 'reference', its date and its machine (and its profile, where not the quick one): the
        run's name in tables and legends."""
        whose = "your run" if self.own else "reference"
        return f"{whose} {self.info['created'][:10]}: {runs.machine_label(self.machine)}{self.profile_label}"

    @property
    def short_title(self):
        """The run in a sentence: 'your run', or the reference's date and machine (and profile)."""
        return ("your run" if self.own else
                f"{self.info['created'][:10]} {runs.machine_label(self.machine)}{self.profile_label}")

    @property
    def profile_label(self):
        """', paper profile' where the judged sweep is not the quick profile, ', 1 thread' where its fits ran with
        one thread, ', real maps' for a run of real maps and no sweep (two runs of one machine and day then read
        apart); '' otherwise."""
        name = self.judged("cauchy")[0]
        if not self.sweeps and (self.folder / "real-maps").is_dir():
            return ", real maps"
        threads = {record.get("threads") for record in self.sweeps[name][1]} if name else set()
        one = ", 1 thread" if threads == {1} else ""
        return ("" if self.profile in (None, "quick") else f", {self.profile} profile") + one

    @property
    def appendix_name(self):
        """The name of the run's appendix (and of its figures' folder): its folder's name, 'your-' first for
        your own runs."""
        return ("your-" if self.own else "") + self.folder.name

    def judged(self, objective="cauchy"):
        """The sweep an objective's verdicts are judged on: (its folder name, its series), the largest profile
        the run holds for that objective; (None, {}) without one."""
        for profile in PROFILE_ORDER:
            name = sweep_folder_name(profile, objective)
            if name in self.sweeps:
                return name, self.sweeps[name][0]
        return None, {}

    @property
    def profile(self):
        """The profile of the sweep the Cauchy verdicts are judged on, or None without a sweep."""
        name = self.judged("cauchy")[0]
        return name and name.removeprefix("sweep-")

    @property
    def series(self):
        """{label: {(npix, nzern): record}} of the judged Cauchy sweep ({} without one)."""
        return self.judged("cauchy")[1]


def sweep_objective(name):
    """The objective of a sweep folder's name."""
    return next((objective for objective in ("least-squares", "gaussian") if name.endswith(f"-{objective}")), "cauchy")


def load_run(folder, own):
    """A run folder's results; an error where the folder is not a run (no run.json)."""
    folder = pathlib.Path(folder)
    info = runs.read_run(folder)
    if info is None:
        raise runs.RunError(f"{folder}: not a run folder (no {runs.RUN_FILE}); `python -m replication sweep` makes one")
    refuse_links_inside(folder)  # a run's records are its own files: a link could bring in another run's
    sweeps = {sub.name: load_sweep(sub) for sub in sorted(folder.glob("sweep-*")) if sub.is_dir()}
    sharded, nodes = load_sharded_sweeps(folder)
    clash = sorted(set(sweeps) & set(sharded))
    if clash:
        raise runs.RunError(f"{folder}: {clash[0]} is both a sweep and a sharded sweep of this run; keep one")
    optima = {}
    for path in sorted(folder.glob("sweep-*/optima.jsonl")) + sorted(folder.glob("shards/*/*/sweep-*/optima.jsonl")):
        optima.setdefault(path.parent.name, {}).update(read_optima(path))
    sweeps, off_yardstick = sweeps | sharded, {}
    for name, (series, _) in sweeps.items():
        left = off_yardstick_points(series, optima.get(name, {}))
        if left:
            off_yardstick[name] = left
    return Run(folder=folder, info=info, own=own, sweeps=sweeps, nodes=nodes, optima=optima,
               off_yardstick=off_yardstick,
               crosscheck=read_crosscheck(folder / "crosscheck" / "crosscheck.json"),
               bench=read_bench(folder / "bench" / "bench.json"),
               bench_default=read_bench(folder / "bench-default-allocator" / "bench.json"),
               bench_compile=read_bench(folder / "bench-compile" / "bench.json"),
               bench_peers=read_bench(folder / "bench-peers" / "bench.json"),
               peers_check=read_peers_check(folder / "peers" / "check.json"),
               retrieval={sub.name: read_retrieval(sub / "points.jsonl") for sub in sorted(folder.glob("retrieval-*"))
                          if (sub / "points.jsonl").is_file()})


def off_yardstick_points(series, optima):
    """Remove from series (in place) the points timed to a target whose optimum's covariance is not the sandwich
    (optima recorded before 2026-12-03 above npix 512 used the inverse Hessian): no rule judges a time or a distance
    on another yardstick. Returns how many were removed."""
    removed = 0
    for points in series.values():
        for key in [key for key, record in points.items() if timed_to_target(record)]:
            record = points[key]
            found = optima.get((*key, record.get("objective", "cauchy"), record.get("data_sha256")))
            if found is not None and not found.get("sandwich", True):
                del points[key]
                removed += 1
    return removed


def run_environments(run):
    """Every session record of a run (sweeps, shards, cross-check, benches, retrievals, real maps): what each found of
    the machine, the software and the code."""
    found = [environment for _, environments in run.sweeps.values() for environment in environments]
    found += [content["environment"] for content in (run.crosscheck, run.bench, run.bench_default, run.bench_compile,
                                                     run.bench_peers) if content and content.get("environment")]
    for path in sorted(run.folder.glob("retrieval-*/runs.jsonl")) + sorted(run.folder.glob("real-maps/runs.jsonl")):
        found += read_run_records(path)
    return found


def judges_claims(run):
    """Whether a run has a column in the claims tables: yours always; a reference run where it measured something
    the claims judge (a sweep, a cross-check or a bench), so that a reference run of real maps only has none."""
    return bool(run.own or run.sweeps or run.crosscheck or run.bench)


def timed_to_target(record):
    """Whether a measured point records each repeat's time to its optimum (runs since 2026-12-02): its time is then
    a time to solution, else (older runs) the time the optimiser took to stop."""
    return not record["estimated"] and "target" in record


def repeat_times(record):
    """(seconds per repeat, whether every repeat reached the optimum) of a measured point: each repeat's time to
    solution, a repeat that never came within the target counted at its total time (a lower bound); a point
    recorded before the targets: each repeat's time to stop, reached where the fit is a solution (how_it_ended)."""
    totals = record["total_s"].get("all") or [record["total_s"]["median"]]
    if timed_to_target(record):
        times = record["target"]["times"]
        return [t if t is not None else total for t, total in zip(times, totals, strict=True)], None not in times
    return list(totals), is_solution(record)


def seconds(record):
    """Median time to solution of a point (setup + fit up to the first evaluation within the target of the point's
    optimum; a repeat that never got there at its total time, then a bound), measured or estimated; the time to stop
    where the point records no target (runs before 2026-12-02)."""
    if record["estimated"]:
        return record["fit_s"]["median"]
    return statistics.median(repeat_times(record)[0]) if timed_to_target(record) else record["total_s"]["median"]


def stop_seconds(record):
    """Median seconds from the start to the optimiser's stop (setup + fit): what the paper's script timed."""
    return record["fit_s"]["median"] if record["estimated"] else record["total_s"]["median"]


def stopped_at_limit(record):
    """Whether a point's fit was stopped at the sweep's time limit (since 2026-12-02; such a fit is its point's
    only one): not allowed to end, so its end is not its own (C5a, C5b leave it out) and its time, where it never
    reached the target, is a bound."""
    return not record["estimated"] and bool(record.get("stopped_at_limit"))


def how_it_ended(record):
    """Why a point's time is not a time to solution, in a few words, or None where it is one.

    Points timed to the target: a solution where every repeat came within the target of the point's optimum, else
    censored (its time a bound). Older points: measured fits with an exact account are solutions when they ended at
    the optimum (data.ended_at_optimum); fits recorded before the account, when neither scipy nor torchmin flagged a
    failure other than precision loss (scipy's word for a line search that can no longer see a decrease, at the
    optimum or not). Estimated points are predictions, judged by the fit they were predicted from.
    """
    if not identifiable(record["npix"], record["nzern"]):
        return "not identifiable (rank-deficient design)"
    if record["estimated"]:
        return None
    targeted = timed_to_target(record)
    if targeted and record["target"]["reached"] == len(record["target"]["times"]):
        return None
    if stopped_at_limit(record):
        return f"stopped at its time limit ({record['time_limit_s']:g} s) before the target (time a bound)"
    outcome = record["outcome"]
    if "convergence" in outcome:
        if outcome["convergence"] is None:
            return "objective not finite"
        if not np.isfinite(judging_newton(outcome["convergence"])):
            return "not at a minimum (Hessian not positive definite)"
        if not ended_at_optimum(outcome):
            return "stopped before the optimum"
    if targeted:
        return f"never within {record['target']['se']:g} SE of the optimum (time a bound)"
    if outcome["success"] or "precision loss" in outcome["message"]:
        return None
    return f"failed: {outcome['message']}"


def is_solution(record):
    """Whether a point's time counts as a time to solution (see how_it_ended)."""
    return how_it_ended(record) is None


VALUE, AT_LEAST, AT_MOST, BETWEEN, UNDETERMINED = "value", "at least", "at most", "between", "undetermined"
"""How far a speed-up is known: a value; a lower bound (the slower fit never reached the target, so its time is at
least its total); an upper bound (the faster one never did); between two bounds (a median that bounds can move
only so far); undetermined (neither fit reached it)."""


class Ratio(float):
    """A speed-up time(slow) / time(fast): the ratio of the medians over repeats (for a bound, the bound), with low and
    high the smallest and largest ratio over every pair of repeats (one of each series; open, 0 or inf, on a bound's
    open side), its kind, and floor and ceiling: what it can be given what was measured. A float, so that it sorts and
    plots as one."""

    def __new__(cls, value, low, high, kind=VALUE, floor=None, ceiling=None):
        ratio = super().__new__(cls, value)
        ratio.low, ratio.high, ratio.kind = float(low), float(high), kind
        ratio.floor = float(floor) if floor is not None else float(value) if kind in (VALUE, AT_LEAST) else 0.0
        ratio.ceiling = float(ceiling) if ceiling is not None else float(value) if kind in (VALUE, AT_MOST) \
            else math.inf
        return ratio

    @property
    def is_bound(self):
        return self.kind != VALUE

    def __repr__(self):
        return f"Ratio({float(self)!r}, {self.low!r}, {self.high!r}, {self.kind!r}, {self.floor!r}, {self.ceiling!r})"


def ratio_of(slow, fast):
    """The speed-up between two measured points timed alike (Ratio), or None where neither fit reached the target."""
    a, a_reached = repeat_times(slow)
    b, b_reached = repeat_times(fast)
    value = seconds(slow) / seconds(fast)
    pairs = [x / y for x in a for y in b]
    if a_reached and b_reached:
        return Ratio(value, min(pairs), max(pairs))
    if b_reached:
        return Ratio(value, min(pairs), math.inf, AT_LEAST)
    if a_reached:
        return Ratio(value, 0.0, max(pairs), AT_MOST)
    return Ratio(math.nan, 0.0, math.inf, UNDETERMINED)


def as_ratio(value):
    """A speed-up as a Ratio (a plain number: a value without a range)."""
    return value if isinstance(value, Ratio) else Ratio(value, value, value)


def as_ratios(ratios):
    return {key: as_ratio(value) for key, value in ratios.items()}


def aggregate(function, ratios):
    """function (median, min, max, a geometric mean: any function increasing in each argument) of speed-ups, as a
    Ratio: a value where every bound among them leaves the result fixed, else a bound or undetermined; low and high
    the function of the lows and of the highs."""
    ratios = list(ratios)
    floor, ceiling = function([r.floor for r in ratios]), function([r.ceiling for r in ratios])
    low, high = function([r.low for r in ratios]), function([r.high for r in ratios])
    if floor == ceiling:
        return Ratio(floor, low, high)
    if math.isinf(ceiling) and floor > 0:
        return Ratio(floor, low, math.inf, AT_LEAST)
    if floor == 0 and math.isfinite(ceiling):
        return Ratio(ceiling, 0.0, high, AT_MOST)
    if floor > 0 and math.isfinite(ceiling):
        return Ratio(floor, low, high, BETWEEN, floor, ceiling)
    return Ratio(math.nan, 0.0, math.inf, UNDETERMINED)


def comparable(a, b, measured_only=True):
    """Whether two points of one grid point enter a ratio: both measured (or measured_only False), timed on the same
    node, both identifiable, and both timed alike (to the target, or both to the optimiser's stop)."""
    if measured_only and (a["estimated"] or b["estimated"]):
        return False
    if a.get("node") != b.get("node") or not identifiable(a["npix"], a["nzern"]):
        return False
    return a["estimated"] or b["estimated"] or timed_to_target(a) == timed_to_target(b)


def speedups(series, slow, fast, measured_only=True):
    """{(npix, nzern): Ratio of seconds(slow) / seconds(fast)} over points both series have, timed on the same node.
    Points timed to the target: every pair enters, a censored fit's as a bound (a pair where neither fit reached the
    target has no ratio, see complete_sizes); older points: both fits solutions (how_it_ended), time to stop."""
    a, b = series.get(slow, {}), series.get(fast, {})
    ratios = {}
    for key in sorted(set(a) & set(b)):
        if not comparable(a[key], b[key], measured_only):
            continue
        if a[key]["estimated"] or b[key]["estimated"]:
            value = seconds(a[key]) / seconds(b[key])
            ratios[key] = Ratio(value, value, value)
        elif timed_to_target(a[key]) or (is_solution(a[key]) and is_solution(b[key])):
            ratio = ratio_of(a[key], b[key])
            if ratio.kind != UNDETERMINED:
                ratios[key] = ratio
    return ratios


def complete_sizes(series, slow, fast):
    """The speed-ups a per-size verdict (C2, C3, C4) judges. Points timed to the target: every measured pair, a pair
    where neither fit reached the target entering as undetermined (so that no order is silently left out). Older
    points: those of grid sizes where every measured pair of the two series is a pair of solutions, so that leaving
    out fits that stopped short never narrows the orders a verdict takes its median or spread over."""
    a, b = series.get(slow, {}), series.get(fast, {})
    measured = [key for key in set(a) & set(b) if comparable(a[key], b[key])]
    ratios = speedups(series, slow, fast)
    short = {key[0] for key in measured if not timed_to_target(a[key]) and key not in ratios}
    complete = {key: value for key, value in ratios.items() if key[0] not in short}
    complete |= {key: ratio_of(a[key], b[key]) for key in measured if timed_to_target(a[key])}
    return dict(sorted(complete.items()))


def left_out(series):
    """{reason: count} of the measured fits whose times are not times to solution."""
    reasons = {}
    for points in series.values():
        for record in points.values():
            reason = how_it_ended(record)
            if reason is not None:
                reasons[reason] = reasons.get(reason, 0) + 1
    return dict(sorted(reasons.items()))


def timed_to_targets(series):
    """Whether a sweep's measured points record times to target (runs since 2026-12-02), so that its verdicts rest
    on times to solution rather than on the optimiser's stop."""
    return any(timed_to_target(record) for points in series.values() for record in points.values())


@dataclasses.dataclass(frozen=True)
class Rule:
    """How a claim is judged: what is measured, and the two thresholds of the verdict (larger is better unless
    upper, where the measure must stay at or below them). The verdict functions and the report's rules table are
    both made from RULES."""

    measure: str
    reproduced: float
    partly: float
    upper: bool = False

    def grade(self, value):
        """The verdict of a measured value (None: not measured). A speed-up known only as a bound (Ratio) is graded
        at both ends of what it can be: the verdict where both agree, else undetermined (never graded as a value)."""
        if value is None:
            return NOT_MEASURED
        if isinstance(value, Ratio):
            return self.grade_range(value.floor, value.ceiling) if value.kind != UNDETERMINED else UNDETERMINED
        return self.grade_range(value, value)

    def grade_range(self, low, high):
        """The verdict of a value known to lie in [low, high]: the grade both ends share, else undetermined."""
        grades = {self.grade_value(low), self.grade_value(high)}
        return grades.pop() if len(grades) == 1 else UNDETERMINED

    def grade_value(self, value):
        meets = (lambda limit: value <= limit) if self.upper else (lambda limit: value >= limit)
        return REPRODUCED if meets(self.reproduced) else PARTLY if meets(self.partly) else NOT_REPRODUCED

    def possible(self, low, high):
        """The grades a value in [low, high] may have, worst first (one where the verdict is determined)."""
        order = (NOT_REPRODUCED, PARTLY, REPRODUCED)
        ends = sorted({order.index(self.grade_value(low)), order.index(self.grade_value(high))})
        return order[ends[0]:ends[-1] + 1]

    @property
    def text(self):
        sign = "<=" if self.upper else ">="
        return (f"{self.measure}: {sign} {self.reproduced:g} reproduced, {sign} {self.partly:g} partly, else not "
                "reproduced")


RULES = {claim.id: Rule(claim.measure, claim.reproduced, claim.partly, claim.upper) for claim in CLAIMS}
"""Each claim's rule, made from claims.CLAIMS: the verdict functions grade with it, the report prints its text."""


def verdict_c1(ratios):
    """C1, up to ~100x NumPy -> torch on a GPU: the median over Zernike orders at the largest grid size with a
    measured ratio (one outlier cannot set it); >= 50 reproduced, >= 10 partly. The largest single ratio and its
    point are kept beside it. Bounds (censored fits) enter as bounds (aggregate)."""
    ratios = as_ratios(ratios)
    if not ratios:
        return {"value": None, "verdict": NOT_MEASURED, "npix": None, "max": None, "point": None}
    npix = max(key[0] for key in ratios)
    value = aggregate(statistics.median, [v for key, v in ratios.items() if key[0] == npix])
    point = max((key for key in ratios if ratios[key].kind != UNDETERMINED), key=ratios.get, default=None)
    return {"value": value, "verdict": RULES["C1"].grade(value), "npix": npix,
            "max": ratios[point] if point else None, "point": point,
            "orders": sorted(key[1] for key in ratios if key[0] == npix)}


def per_size_medians(ratios, min_npix):
    """{npix: median ratio over Zernike orders (a Ratio, a bound where a censored fit leaves it open)} for the grid
    sizes from min_npix up."""
    by_npix = {}
    for (npix, _), value in ratios.items():
        if npix >= min_npix:
            by_npix.setdefault(npix, []).append(value)
    return {npix: aggregate(statistics.median, values) for npix, values in sorted(by_npix.items())}


def weakest_size(ratios, min_npix):
    """The claim must hold at every grid size from min_npix up: the smallest per-size median, with all of them."""
    medians = per_size_medians(as_ratios(ratios), min_npix)
    if not medians:
        return None, medians
    value = aggregate(min, medians.values())
    if value.kind == VALUE:  # one size is the weakest: its own median, its range over its own repeats
        value = medians[weakest_npix(medians)]
    return value, medians


def weakest_npix(by_npix):
    """The grid size whose median sets the smallest: the least floor (the size that may be the weakest)."""
    return min(by_npix, key=lambda npix: (by_npix[npix].floor, float(by_npix[npix].ceiling)))


def verdict_c2(ratios, min_npix=256):
    """C2, GPU ~10x CPU torch for npix >= 256: the smallest per-size median ratio there (RULES["C2"]), and each
    size's."""
    value, medians = weakest_size(ratios, min_npix)
    return {"value": value, "verdict": RULES["C2"].grade(value), "by_npix": medians}


def verdict_c3(ratios, min_npix=128):
    """C3, CPU torch ~10x NumPy for intermediate and large grids: the smallest per-size median ratio over
    npix >= 128 (RULES["C3"])."""
    value, medians = weakest_size(ratios, min_npix)
    return {"value": value, "verdict": RULES["C3"].grade(value), "by_npix": medians}


def slope_range(log_p, lows, highs):
    """Least and largest least-squares slope of log(ratio) against log_p over ratios known to lie in [lows, highs]
    (the slope is linear in each log ratio: each end takes the low or the high by the sign of its weight)."""
    x = np.asarray(log_p) - np.mean(log_p)
    weights = x / np.sum(x * x)
    with np.errstate(divide="ignore"):
        low_logs, high_logs = np.log(lows), np.log(highs)
    least = sum(w * (lo if w > 0 else hi) for w, lo, hi in zip(weights, low_logs, high_logs, strict=True) if w)
    most = sum(w * (hi if w > 0 else lo) for w, lo, hi in zip(weights, low_logs, high_logs, strict=True) if w)
    return float(least), float(most)


def absolute_range(least, most):
    """[least, most] of |s| for s in [least, most]."""
    if least <= 0 <= most:
        return 0.0, max(-least, most)
    return min(abs(least), abs(most)), max(abs(least), abs(most))


def verdict_c4(ratios):
    """C4, speed-up independent of the number of parameters: the slope of log(speed-up) against log(P) over the
    fixed set of orders C4_ORDERS only (other orders a run measured are ignored, so the verdict does not depend on
    them), at the largest grid (npix >= C4_MIN_NPIX) with every order of the set where the verdict is determined (a
    value, or bounds that leave one verdict), else at the largest such grid; "open_above" lists the larger sizes
    passed over because bounds left their verdict undetermined there. |slope| <= 0.3
    reproduced, <= 0.6 partly. A slope of 1 is a speed-up proportional to P (finite differences' P + 1
    evaluations against one gradient). The spread (max / min over the set) is kept beside it. Where a ratio is a
    bound, the slope is known only within a range ("known"): graded at both ends (Rule.grade_range); "repeats" is the
    slope's range over the repeats' ranges."""
    by_npix = {}
    for (npix, nzern), value in as_ratios(ratios).items():
        if nzern in C4_ORDERS:
            by_npix.setdefault(npix, {})[nzern] = value
    candidates = sorted(npix for npix, values in by_npix.items() if npix >= C4_MIN_NPIX
                        and len(values) == len(C4_ORDERS))
    if not candidates:
        return {"value": None, "verdict": NOT_MEASURED, "npix": None, "by_nzern": {}, "spread": None,
                "known": None, "repeats": None, "open_above": []}
    slopes = {npix: slope_at(npix, dict(sorted(by_npix[npix].items()))) for npix in candidates}
    chosen = max((npix for npix in candidates if slopes[npix]["verdict"] != UNDETERMINED), default=candidates[-1])
    return slopes[chosen] | {"open_above": [npix for npix in candidates if npix > chosen]}


def slope_at(npix, values):
    """C4's slope and verdict at one grid size, from its ratios at the orders C4_ORDERS ({nzern: Ratio})."""
    log_p = np.log([parameter_count(n) for n in values])
    known = slope_range(log_p, [r.floor for r in values.values()], [r.ceiling for r in values.values()])
    repeats = slope_range(log_p, [r.low for r in values.values()], [r.high for r in values.values()])
    exact = not any(r.is_bound for r in values.values())
    slope = float(np.polyfit(log_p, np.log(list(values.values())), 1)[0]) if exact else None
    verdict = UNDETERMINED if any(map(math.isnan, known)) else RULES["C4"].grade_range(*absolute_range(*known))
    spread = max(values.values()) / min(values.values()) if exact else None
    return {"value": slope, "verdict": verdict, "npix": npix, "by_nzern": values, "spread": spread,
            "known": known, "repeats": repeats}


VERDICTS = {"C1": verdict_c1, "C2": verdict_c2, "C3": verdict_c3, "C4": verdict_c4}
"""The verdict function of each claim judged on times to solution (claims.Claim.ratio)."""


def judge_timed(series):
    """{claim: verdict} of every claim judged on times to solution, on a sweep's series: the claim's speed-up
    (claims.Claim.ratio) at every point both series measured (complete_sizes: censored ones as bounds), judged by
    its verdict function."""
    return {claim.id: VERDICTS[claim.id](complete_sizes(series, *claim.ratio))
            for claim in CLAIMS if claim.timed}


def exact_stderr(outcome):
    """The standard errors of a fit's outcome that rules use (data.judging_stderr: sandwich where recorded, else
    the exact inverse Hessian's), or None without an exact account."""
    account = outcome.get("convergence")
    return judging_stderr(account) if account else None


def fit_differences(series, reference=NUMPY, optima=None):
    """How far apart the float64 fits of each point ended. With the point's optimum (optima, runs since 2026-12-02):
    every pair of series, as the Mahalanobis distance between their ends under the optimum's covariance (standard
    errors), every pair compared whether or not its fits reached the optimum. Older runs: each series against the
    reference, largest |x - x_reference| / stderr (exact standard errors of the reference fit where recorded, else
    the BFGS estimate of the other), comparable where both fits are solutions."""
    if optima:
        return mahalanobis_differences(series, optima)
    rows = []
    base = series.get(reference, {})
    for name, points in series.items():
        if name == reference or name.dtype != "float64":
            continue
        for key in sorted(set(points) & set(base)):
            a, b = base[key], points[key]
            if a["estimated"] or b["estimated"]:
                continue
            exact = exact_stderr(a["outcome"])
            stderr = exact if exact is not None else np.array(b["outcome"]["stderr"], dtype=float)
            shift = np.abs(np.array(b["outcome"]["x"]) - np.array(a["outcome"]["x"])) / stderr
            basis = "BFGS" if exact is None else "sandwich" if a["outcome"]["convergence"].get(
                "stderr_sandwich") else "exact"
            rows.append({"series": name, "against": reference, "npix": key[0], "nzern": key[1],
                         "max_stderr": float(shift.max()), "basis": basis,
                         "comparable": is_solution(a) and is_solution(b) and bool(np.all(np.isfinite(stderr)))})
    return rows


def mahalanobis_differences(series, optima):
    """Every pair of float64 series measured at a point with a polished optimum: the Mahalanobis distance between
    their fits' ends (the last repeat's) under the optimum's covariance; rows as fit_differences' ("series" the
    second of the pair, "against" the first, in the report's order); a pair with a fit stopped at the sweep's time
    limit is not comparable (that fit was not allowed to end)."""
    names = [name for name in ordered(series) if name.dtype == "float64"]
    rows = []
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            for key in sorted(set(series[first]) & set(series[second])):
                a, b = series[first][key], series[second][key]
                if a["estimated"] or b["estimated"] or a.get("data_sha256") != b.get("data_sha256"):
                    continue
                found = optima.get((*key, a.get("objective", "cauchy"), a.get("data_sha256")))
                if not found or not found["polished"]:
                    continue
                rows.append({"series": second, "against": first, "npix": key[0], "nzern": key[1],
                             "max_stderr": mahalanobis(b["outcome"]["x"], a["outcome"]["x"], found["covariance"]),
                             "basis": "Mahalanobis", "comparable": not (stopped_at_limit(a) or stopped_at_limit(b))})
    return rows


def crosscheck_differences(crosscheck, objective):
    """The cross-check's fit comparisons of one objective as fit_differences rows, each fit against the NumPy fit of
    its point, once. Cross-checks since 2026-12-02 (the NumPy fit holds the point's polished optimum): the
    Mahalanobis distance under the optimum's covariance, every fit compared; older ones: the largest parameter
    difference in the NumPy fit's exact standard errors, comparable where both fits ended at the optimum."""
    fits = [fit for fit in crosscheck_fits(crosscheck) if fit.get("objective", "cauchy") == objective]
    rows = []
    for fit in fits:
        reference = next((f for f in fits if fit_series(f) == NUMPY and (f["npix"], f["nzern"]) ==
                          (fit["npix"], fit["nzern"])), None)
        if fit_series(fit) == NUMPY or reference is None or not reference.get("convergence"):
            continue
        found = reference.get("optimum")
        if found and found["polished"]:
            rows.append({"series": fit_series(fit), "against": NUMPY, "npix": fit["npix"], "nzern": fit["nzern"],
                         "max_stderr": mahalanobis(fit["x"], reference["x"], found["covariance"]),
                         "basis": "Mahalanobis", "comparable": True, "source": "cross-check"})
            continue
        stderr = judging_stderr(reference["convergence"])
        shift = float(np.max(np.abs(np.array(fit["x"]) - np.array(reference["x"])) / stderr))
        comparable = all(f.get("convergence") and ended_at_optimum(f) for f in (fit, reference))
        rows.append({"series": fit_series(fit), "against": NUMPY, "npix": fit["npix"], "nzern": fit["nzern"],
                     "max_stderr": shift, "basis": "exact", "comparable": bool(comparable), "source": "cross-check"})
    return rows


def compared_series(check):
    """The series a cross-check's comparison names first (its label, then the gradient's name or " vs ...")."""
    first = check["compare"].split(" vs ")[0]
    for gradient in GRADIENTS:
        first = first.removesuffix(f" {gradient}")
    return Series.parse(first)


def crosscheck_checks(crosscheck):
    """The cross-check's checks, each once: files before schema 2 repeated torch-cpu's model checks and fit
    checks under the on-device label (the same computation), left out here."""
    if not crosscheck:
        return []
    checks = crosscheck["checks"]
    if crosscheck.get("schema", 1) >= 2:
        return checks
    return [c for c in checks if c["compare"].startswith("numpy ") or compared_series(c).minimizer == "scipy"]


def endings(series):
    """Whether each measured fit of an identifiable point with an exact account ended at the optimum (bools)."""
    return [ended_at_optimum(record["outcome"]) for points in series.values() for record in points.values()
            if not record["estimated"] and record["outcome"].get("convergence")
            and identifiable(record["npix"], record["nzern"]) and not stopped_at_limit(record)]


def stopped_at_limits(series):
    """How many measured fits were stopped at the sweep's time limit (left out of C5a and C5b)."""
    return sum(stopped_at_limit(record) for points in series.values() for record in points.values())


def share_verdict(passed, rule):
    """The share of passes graded by rule; none: not measured."""
    if not passed:
        return {"value": None, "verdict": NOT_MEASURED, "passed": 0, "total": 0}
    share = sum(passed) / len(passed)
    verdict = rule.grade(share)
    return {"value": share, "verdict": verdict, "passed": sum(passed), "total": len(passed)}


def verdict_c5a(crosscheck_fits, sweep_differences):
    """C5a, the implementations agree: each float64 fit within SAME_SOLUTION_STDERR standard error of the other fits
    of the same data, over the cross-check's fits and the sweep's; all reproduced, >= 90% partly; the worst pair
    kept. Runs since 2026-12-02: every pair of fits, by the Mahalanobis distance under the point's optimum. Older
    runs: against the NumPy fit, where both fits are solutions (a comparison of two fits stopped short of the
    optimum says where each stopped, not whether the implementations agree)."""
    rows = [row for row in list(crosscheck_fits) + list(sweep_differences) if row["comparable"]]
    result = share_verdict([row["max_stderr"] <= SAME_SOLUTION_STDERR for row in rows], RULES["C5a"])
    result["worst"] = max(rows, key=lambda row: row["max_stderr"]) if rows else None
    result["not_comparable"] = sum(not row["comparable"] for row in list(crosscheck_fits) + list(sweep_differences))
    return result


def verdict_c5b(fit_endings):
    """C5b, the fits reached the optimum: each measured fit with an exact account (cross-check and sweep) ended
    at the optimum (data.ended_at_optimum); all reproduced, >= 90% partly."""
    return share_verdict(list(fit_endings), RULES["C5b"])


def bfgs_over_exact(record):
    """BFGS's standard errors over the exact ones, per parameter (least squares: BFGS's put on the same
    likelihood scale first)."""
    outcome = record["outcome"]
    scale = covariance_scale(outcome["fun"], 3 * record["npix"] ** 2, record["nparams"],
                             record.get("objective", "cauchy"))
    return np.sqrt(scale) * np.array(outcome["stderr"], dtype=float) / np.array(
        outcome["convergence"]["stderr"], dtype=float)


def convergence_rows(series):
    """Per series: how its measured fits ended, by scipy's word and by the exact account."""
    rows = []
    for name in ordered(series):
        measured = [record for record in series[name].values() if not record["estimated"]]
        accounted = [record for record in measured if record["outcome"].get("convergence")]
        accounts = [record["outcome"]["convergence"] for record in accounted]
        minima = [a for a in accounts if np.isfinite(judging_newton(a))]
        ratios = [r[np.isfinite(r)] for r in map(bfgs_over_exact, accounted)]
        ratios = [r for r in ratios if r.size]
        rows.append({
            "series": name, "fits": len(measured), "success": sum(r["outcome"]["success"] for r in measured),
            "messages": sorted({r["outcome"]["message"] for r in measured}),
            "grad_norm": max((a["grad_norm"] for a in accounts), default=None),
            "newton": max((judging_newton(a) for a in minima), default=None),
            "decrease_over_rounding": max((a["expected_decrease"] / a["rounding"] for a in minima), default=None),
            "at_optimum": sum(ended_at_optimum(r["outcome"]) for r in accounted), "accounted": len(accounts),
            "not_minimum": len(accounts) - len(minima),
            "bfgs_ratio": (float(min(r.min() for r in ratios)), float(max(r.max() for r in ratios))) if ratios
            else None})
    return rows


def verdict_c6(mirror_total):
    """C6, readable port: share of lines identical between the trees once library names are folded, over the
    modules that differ at all (byte-identical modules call no array-library function that differs and are
    counted apart); >= 0.8 reproduced, >= 0.6 partly."""
    return {"value": mirror_total["share"], "verdict": RULES["C6"].grade(mirror_total["share"])}


FACTORS = (
    ("algorithm", NUMPY, NUMPY_ADJOINT, "finite differences -> exact gradient, both NumPy"),
    ("library", NUMPY_ADJOINT, TORCH_ADJOINT, "NumPy -> torch, both the exact gradient on the CPU"),
    ("autograd", TORCH_ADJOINT, TORCH_CPU, "hand-written adjoint -> autograd, both torch on the CPU"),
    ("device", TORCH_CPU, TORCH_CUDA, "CPU -> GPU, both torch autograd"),
)
"""The speed-up from NumPy with finite differences to torch with autograd, split into measured ratios of
times to solution: (name, slower series, faster series, what changes). At each point their product is the whole."""


def geometric_mean(values):
    """exp(mean(log v)): the mean of ratios that multiplies, geometric_mean(a * b) = geometric_mean(a) *
    geometric_mean(b) over the same points; 0 or inf where one of them is (a bound's open end)."""
    values = list(values)
    zero, infinite = 0 in values, any(map(math.isinf, values))
    if zero or infinite:
        return math.nan if zero and infinite else 0.0 if zero else math.inf
    return math.exp(statistics.fmean(math.log(v) for v in values))


def decomposition(series):
    """Per npix, the geometric mean over Zernike orders of each factor's ratio (a Ratio: its range from the repeats'
    ranges, a bound where a censored fit leaves it open), at the points where every series of the chain and the
    whole were measured; plus the whole (NumPy over the last series of the chain) and the library factor at fixed
    finite differences. At each point the factors' ratios multiply to the whole exactly (the times telescope), and
    so do their geometric means where every one is a value. {} without gradient variants."""
    chain = [factor for factor in FACTORS if factor[1] in series and factor[2] in series]
    if not chain or chain[0][0] != "algorithm":
        return {}
    last = chain[-1][2]
    ratios = {name: speedups(series, slow, fast) for name, slow, fast, _ in chain}
    ratios["whole"] = speedups(series, NUMPY, last)
    ratios["library at finite differences"] = speedups(series, NUMPY, TORCH_DIFFERENCES)
    common = set.intersection(*(set(ratios[name]) for name, *_ in chain)) & set(ratios["whole"])
    rows = {}
    for npix in sorted({key[0] for key in common}):
        keys = [key for key in common if key[0] == npix]
        rows[npix] = {name: aggregate(geometric_mean, [values[key] for key in keys])
                      if all(key in values for key in keys) else None for name, values in ratios.items()}
        rows[npix]["orders"] = sorted(key[1] for key in keys)
        factors = [rows[npix][name] for name, *_ in chain]
        exact = not any(r.is_bound for r in [*factors, rows[npix]["whole"]])
        rows[npix]["product"] = math.prod(factors) if exact else None
        rows[npix]["product_is_whole"] = exact and math.isclose(rows[npix]["product"], rows[npix]["whole"],
                                                                rel_tol=1e-9)
    return {"factors": [(name, slow, fast, what) for name, slow, fast, what in chain], "last": last, "rows": rows,
            "c4": {gradient: verdict_c4(complete_sizes(series, slow, fast)) for gradient, slow, fast in (
                ("finite differences", NUMPY, TORCH_DIFFERENCES),
                ("exact (adjoint)", NUMPY_ADJOINT, TORCH_ADJOINT),
                ("paper's (NumPy differences, torch autograd)", NUMPY, TORCH_CPU))}}


PEERS = ((NUMPY, "NumPy, finite differences, scipy BFGS"),
         (TORCH_CPU, "torch autograd, scipy BFGS"),
         (TORCH_ADJOINT, "torch exact adjoint, scipy BFGS"),
         (TORCH_ON_DEVICE, "torch autograd, on-device BFGS"),
         (JAX, "JAX autograd (jit), scipy BFGS"),
         (TORCH_CUDA, "torch-cuda autograd, scipy BFGS"),
         (CUDA_ON_DEVICE, "torch-cuda autograd, on-device BFGS"))
"""The ways to fit the peers section compares: (series, what it is)."""
PEER_SERIES = (JAX, TORCH_ON_DEVICE, CUDA_ON_DEVICE)
"""The series that make a run's peers table: the JAX peer or an on-device BFGS."""
PEER_MIN_NPIX = 128
PEER_TARGETS = ((TORCH_CPU, JAX, 1.5, ((256, 4), (256, 8), (512, 4), (512, 8)),
                 "torch autograd (scipy BFGS) within 1.5x of JAX's time-to-solution"),
                (TORCH_ADJOINT, JAX, 1.5, ((256, 4), (256, 8), (512, 4), (512, 8)),
                 "torch exact adjoint (scipy BFGS) within 1.5x of JAX's time-to-solution"),
                (TORCH_ADJOINT, JAX, 1.0, ((256, None), (512, None)),
                 "torch exact adjoint (scipy BFGS) at most JAX's time-to-solution, npix 256 and 512"),
                (TORCH_CUDA, CUDA_ON_DEVICE, 1 / 3, ((256, None), (512, None)),
                 "on-device BFGS at least 3x faster than scipy BFGS on torch-cuda"),
                (TORCH_CUDA, TORCH_CPU, 1 / 5, ((256, None),),
                 "torch-cpu / torch-cuda at least 5x"))
"""(series a, series b, limit of time(a) / time(b), points ((npix, nzern); None: every order), target)."""


def per_evaluation_s(record):
    """Fit seconds per objective evaluation (per value-and-gradient call where the gradient comes with it)."""
    return record["fit_s"]["median"] / record["outcome"]["nfev"]


def peers(series):
    """The peers table: per point with npix >= PEER_MIN_NPIX measured in at least two ways, each way's time to
    solution, its ratio to the fastest, its evaluations and their cost; plus the peer targets."""
    if not any(name in series for name in PEER_SERIES):
        return {"names": [], "rows": [], "targets": [], "readings": []}
    present = [(name, what) for name, what in PEERS if name in series]
    keys = sorted({key for name, _ in present for key, record in series[name].items()
                   if key[0] >= PEER_MIN_NPIX and not record["estimated"]})
    rows = []
    for key in keys:
        cells = {name: series[name][key] for name, _ in present
                 if key in series[name] and not series[name][key]["estimated"]}
        node = next(iter(cells.values()))["node"] if cells and "node" in next(iter(cells.values())) else None
        cells = {name: record for name, record in cells.items() if record.get("node") == node}  # one node only
        if len(cells) < 2:
            continue
        fastest = min(cells, key=lambda name: seconds(cells[name]))
        rows.append({"npix": key[0], "nzern": key[1], "fastest": fastest, "cells": {
            name: {"s": seconds(record), "ratio": peer_ratio(record, cells[fastest]), "solution": is_solution(record),
                   "nfev": record["outcome"]["nfev"], "nit": record["outcome"]["nit"],
                   "eval_ms": 1e3 * per_evaluation_s(record)} for name, record in cells.items()}})
    return {"names": [(name, what) for name, what in present if any(name in row["cells"] for row in rows)],
            "rows": rows, "targets": peer_targets(series), "readings": peer_readings(rows)}


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
    for slow, fast, limit, points, text in PEER_TARGETS:
        ratios = speedups(series, slow, fast)
        chosen = {key: value for key, value in ratios.items()
                  if any(key[0] == npix and nzern in (None, key[1]) for npix, nzern in points)}
        targets.append({"target": text, "pair": f"{slow} / {fast}", "ratios": chosen,
                        "met": all(value <= limit for value in chosen.values()) if chosen else None,
                        "inverted": limit < 1})
    return targets


def peer_readings(rows):
    """One sentence per point, from the numbers: who was fastest, and why torch autograd and JAX differ
    (evaluations made against the cost of each)."""
    readings = []
    for row in rows:
        cells, fastest = row["cells"], row["fastest"]
        if not any(name in cells for name in PEER_SERIES):
            continue
        text = f"npix {row['npix']}, n = {row['nzern']}: fastest {fastest} ({cells[fastest]['s']:.3g} s)"
        if TORCH_CPU in cells and JAX in cells:
            torch_cell, jax_cell = cells[TORCH_CPU], cells[JAX]
            text += (f"; torch autograd took {torch_cell['ratio'] / jax_cell['ratio']:.2f}x JAX's time with "
                     f"{torch_cell['nfev']} evaluations to JAX's {jax_cell['nfev']}, each costing "
                     f"{torch_cell['eval_ms'] / jax_cell['eval_ms']:.2f}x as much")
        if TORCH_ADJOINT in cells and JAX in cells:
            adjoint, jax_cell = cells[TORCH_ADJOINT], cells[JAX]
            text += (f"; torch's exact adjoint took {adjoint['ratio'] / jax_cell['ratio']:.2f}x JAX's time with "
                     f"{adjoint['nfev']} evaluations to JAX's {jax_cell['nfev']}, each costing "
                     f"{adjoint['eval_ms'] / jax_cell['eval_ms']:.2f}x as much")
        if TORCH_ON_DEVICE in cells and TORCH_CPU in cells:
            device, host = cells[TORCH_ON_DEVICE], cells[TORCH_CPU]
            text += (f"; on-device BFGS took {device['nit']} iterations ({device['nfev']} evaluations) to scipy's "
                     f"{host['nit']} ({host['nfev']}), each evaluation costing "
                     f"{device['eval_ms'] / host['eval_ms']:.2f}x scipy's")
        readings.append(text + ".")
    return readings

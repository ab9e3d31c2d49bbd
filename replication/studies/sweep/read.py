"""Reading a sweep's records: its series, how each fit ended, its times to solution and the speed-ups between
series (a bound where a fit never reached its target), and how far apart the fits ended."""


import msgspec
import numpy as np

from replication.core import runs
from replication.core.fit_records import record_objective
from replication.core.judging import Pair
from replication.core.objectives import of_sweep_folder
from replication.core.optimum import ended_at_target, mahalanobis
from replication.core.point_times import (
    comparable,
    how_it_ended,
    is_solution,
    ratio_of,
    speedups,
    stopped_at_limit,
    timed_to_target,
)
from replication.core.series import (
    NUMPY,
    ordered,
)
from replication.core.simulation import (
    identifiable,
)
from replication.studies.sweep.records import optimum_key, read_points, read_sweep_sessions


def load_sweep(folder):
    """{Series: {(npix, nzern): record}} of a sweep folder, and its run records; empty where absent."""
    points, environments = read_points(folder / "points.jsonl"), read_sweep_sessions(folder / "runs.jsonl")
    series = {}
    for point in points:
        series.setdefault(point.series, {})[point.grid_point] = point
    return series, environments


def load_sharded_sweeps(folder):
    """The sweeps of a sharded run, each merged over its shards and nodes; every record marked with its node,
    and the nodes listed: ({sweep name: (series, environments)}, [{shard, node, cpu, cores, gpu, points}])."""
    sweeps, nodes = {}, []
    for node in sorted(folder.glob("shards/*/*")):
        info = runs.read_run_info(node)
        if info is None:
            continue
        machine = info.machine
        for sub in sorted(path for path in node.glob("sweep-*") if path.is_dir()):
            series, environments = load_sweep(sub)
            merged, all_environments = sweeps.setdefault(sub.name, ({}, []))
            for name, points in series.items():
                for key, record in points.items():
                    known = merged.setdefault(name, {}).get(key)
                    if known is None or (known.estimated and not record.estimated):  # a measurement first
                        merged[name][key] = msgspec.structs.replace(record, node=machine.hostname)
            all_environments.extend(environments)
            nodes.append({"shard": node.parent.name, "node": machine.hostname, "cpu": machine.cpu,
                          "cores": machine.cpu_count, "gpu": machine.gpu, "sweep": sub.name,
                          "points": sum(len(points) for points in series.values())})
    return sweeps, nodes


def sweep_objective(name):
    """The objective of a sweep folder's name."""
    return of_sweep_folder(name).name


def off_yardstick_points(series, optima):
    """Remove from series (in place) the points timed to a target whose optimum's covariance is not the sandwich
    (older optima above npix 512 used the inverse Hessian): no rule judges a time or a distance
    on another yardstick. Returns how many were removed."""
    removed = 0
    for points in series.values():
        for key in [key for key, record in points.items() if timed_to_target(record)]:
            record = points[key]
            found = optima.get(optimum_key(record))
            if found is not None and not found.sandwich:
                del points[key]
                removed += 1
    return removed


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
    """Whether a sweep's measured points record times to target (runs that time to a target), so that its verdicts rest
    on times to solution rather than on the optimiser's stop."""
    return any(timed_to_target(record) for points in series.values() for record in points.values())


TIME_TO_SOLUTION, TIME_TO_STOP = "time to solution", "time to the optimiser's stop"
"""What a sweep's times measure: to the first evaluation within the target of the optimum (runs that time to a target),
or to the optimiser's stop (older runs)."""


def time_measure(series) -> str:
    """The words for what a sweep's times measure (TIME_TO_SOLUTION or TIME_TO_STOP)."""
    return TIME_TO_SOLUTION if timed_to_targets(series) else TIME_TO_STOP


def exact_stderr(outcome):
    """The standard errors of a fit's outcome that rules use (Account.judging_stderr: sandwich where recorded, else
    the exact inverse Hessian's), or None without an exact account."""
    return outcome.convergence.judging_stderr if outcome.convergence else None


def fit_differences(series, reference=NUMPY, optima=None):
    """How far apart the float64 fits of each point ended. With the point's optimum (optima, runs that time to a
    target): every pair of series, as the Mahalanobis distance between their ends under the optimum's covariance
    (standard errors), every pair compared whether or not its fits reached the optimum. Runs without optima: each
    series against the reference, largest |x - x_reference| / stderr (exact standard errors of the reference fit
    where recorded, else the BFGS estimate of the other), comparable where both fits are solutions."""
    if optima:
        return mahalanobis_differences(series, optima)
    rows = []
    base = series.get(reference, {})
    for name, points in series.items():
        if name == reference or name.dtype != "float64":
            continue
        for key in sorted(set(points) & set(base)):
            a, b = base[key], points[key]
            if a.estimated or b.estimated:
                continue
            exact = exact_stderr(a.outcome)
            stderr = exact if exact is not None else np.array(b.outcome.stderr, dtype=float)
            shift = np.abs(np.array(b.outcome.x) - np.array(a.outcome.x)) / stderr
            basis = "BFGS" if exact is None else "sandwich" if a.outcome.convergence.stderr_sandwich else "exact"
            rows.append(Pair(name, reference, key[0], key[1], float(shift.max()), basis,
                             is_solution(a) and is_solution(b) and bool(np.all(np.isfinite(stderr)))))
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
                if a.estimated or b.estimated or a.data_sha256 != b.data_sha256:
                    continue
                found = optima.get(optimum_key(a))
                if not found or not found.polished:
                    continue
                rows.append(Pair(second, first, key[0], key[1], mahalanobis(b.outcome.x, a.outcome.x, found.covariance),
                                 "Mahalanobis", not (stopped_at_limit(a) or stopped_at_limit(b))))
    return rows


def endings(series):
    """Whether each measured fit of an identifiable point with an exact account ended at the optimum (bools): by its
    end distance from the point's optimum where its sweep timed to a target (the time to target's yardstick), else by
    the Newton step left (ended_at_target)."""
    return [ended_at_target(record.end_distance, record.outcome.convergence)
            for points in series.values() for record in points.values()
            if not record.estimated and record.outcome.convergence
            and identifiable(record.npix, record.nzern) and not stopped_at_limit(record)]


def stopped_at_limits(series):
    """How many measured fits were stopped at the sweep's time limit (left out of C5a and C5b)."""
    return sum(stopped_at_limit(record) for points in series.values() for record in points.values())


def bfgs_over_exact(record):
    """BFGS's standard errors over the exact ones, per parameter (least squares: BFGS's put on the same
    likelihood scale first)."""
    outcome = record.outcome
    scale = record_objective(record).covariance_scale(outcome.fun, 3 * record.npix ** 2, record.nparams)
    return np.sqrt(scale) * np.array(outcome.stderr, dtype=float) / np.array(outcome.convergence.stderr, dtype=float)


def convergence_rows(series):
    """Per series: how its measured fits ended, by scipy's word and by the exact account."""
    rows = []
    for name in ordered(series):
        measured = [record for record in series[name].values() if not record.estimated]
        accounted = [record for record in measured if record.outcome.convergence]
        accounts = [record.outcome.convergence for record in accounted]
        minima = [a for a in accounts if np.isfinite(a.judging_newton)]
        ratios = [r[np.isfinite(r)] for r in map(bfgs_over_exact, accounted)]
        ratios = [r for r in ratios if r.size]
        rows.append({
            "series": name, "fits": len(measured), "success": sum(r.outcome.success for r in measured),
            "messages": sorted({r.outcome.message for r in measured}),
            "grad_norm": max((a.grad_norm for a in accounts), default=None),
            "newton": max((a.judging_newton for a in minima), default=None),
            "decrease_over_rounding": max((a.expected_decrease / a.rounding for a in minima), default=None),
            "at_optimum": sum(a.at_optimum for a in accounts), "accounted": len(accounts),
            "not_minimum": len(accounts) - len(minima),
            "bfgs_ratio": (float(min(r.min() for r in ratios)), float(max(r.max() for r in ratios))) if ratios
            else None})
    return rows

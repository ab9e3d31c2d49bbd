"""The timing sweep: time-to-solution over grid sizes and Zernike orders, resumable point by point."""

import dataclasses
import math

import msgspec
import numpy as np

import reference_numpy
import torch_impl
from replication.core import measurement, optimum, registry
from replication.core.environment import environment_record, thread_limits
from replication.core.fit_records import OptimumRecord
from replication.core.implementations import Implementation, grid_start, select, with_gradients
from replication.core.load import watching_load
from replication.core.objectives import Objective
from replication.core.problem import Problem
from replication.core.profiles import PROFILES, Profile, SweepSettings  # noqa: F401 (sweep's API)
from replication.core.records import as_written
from replication.core.results import RunError, append_record
from replication.core.timing import fit_outcome, summary, time_evaluation, time_fit
from replication.core.watch import TIMED_OUT
from replication.studies.sweep import trajectories
from replication.studies.sweep.records import as_read, check_point, key_of, measured_keys, read_optima, read_points

MACHINE = ("hostname", "cpu", "cpu_count", "gpu", "python", *registry.version_keys())
"""The machine and versions a sweep's series are measured on (those of every tree, not the peers'), part of its
identity with the settings'."""


OPTIMA_FILE = "optima.jsonl"
"""A sweep folder's optima: one line per point (and data), found once before its first timed fit."""


class PointOptima:
    """The optima of a sweep's points, read from its optima.jsonl, found (untimed) and written there when first
    asked for."""

    def __init__(self, path):
        self.path = path
        self.known = read_optima(path, repair=True)
        self.checked = set()

    def of(self, problem: Problem, start):
        """The problem's optimum (optimum.Optimum); one read from the file is checked to be this point's first."""
        key = (problem.npix, problem.nzern, problem.objective.name, problem.fingerprint)
        if key not in self.known:
            record = {"npix": problem.npix, "nzern": problem.nzern, "objective": problem.objective.name,
                      "data_sha256": key[3], **find_optimum(problem, start).record()}
            append_record(self.path, record)
            self.known[key] = msgspec.convert(record, type=OptimumRecord)
        elif key not in self.checked:
            self.check(self.known[key], problem, start)
            self.checked.add(key)
        return optimum.Optimum.of(self.known[key])

    def check(self, record, problem: Problem, start):
        """Refuse, in one line naming the file, a recorded optimum that is not this point's: of another size, or
        whose recorded objective is not the objective of this point's data at its x (an edited or misplaced line)."""
        where = f"{self.path}: the optimum recorded for npix {problem.npix}, n = {problem.nzern}, {problem.objective}"
        if len(record.x) != len(start) or np.shape(record.covariance) != (len(start), len(start)):
            raise RunError(f"{where} holds {len(record.x)} parameters, not this point's {len(start)}; remove the "
                           "line, and the sweep finds the optimum again")
        if record.fun is None:
            return
        value = reference_numpy.negative_log_likelihood(record.x, problem.reference, problem.data, problem.gamma,
                                                        objective=problem.objective)
        if not math.isclose(value, record.fun, rel_tol=1e-8, abs_tol=1e-8):
            raise RunError(f"{where} is not an optimum of this point's data (objective {value!r} at its x, recorded "
                           f"{record.fun!r}); remove the line, and the sweep finds the optimum again")


def find_optimum(problem: Problem, start):
    """A problem's optimum, untimed: torch's fit with the exact adjoint from the start, to optimum.OPTIMUM_TOL,
    polished by Newton steps (optimum.polish)."""
    setup = problem.setup_for(Implementation(registry.TORCH_CPU.name))
    observed = torch_impl.prepare_data(problem.data, setup)
    gamma, objective = problem.gamma, problem.objective
    fitted = torch_impl.fit(setup, observed, start, tol=optimum.OPTIMUM_TOL, gamma=gamma, objective=objective,
                            gradient="adjoint")
    return optimum.polish(torch_impl, fitted.x, setup, observed, gamma, objective)


def target_record(setup_s, results, best):
    """Each repeat's time to the optimum (setup included; None where it never came within the target) and the
    evaluations it took to get there, the repeats that reached it, which were stopped there (time_fit), and the first
    fit's end distance (standard errors): the first runs to its own end."""
    times = [optimum.time_to_target(s, r.trajectory, best) for s, r in zip(setup_s, results, strict=True)]
    return {"se": optimum.TARGET, "times": times, "reached": sum(t is not None for t in times),
            "evaluations": [optimum.evaluations_to_target(r.trajectory, best) for r in results],
            "stopped": [bool(r.stopped_at_target) for r in results],
            "end_distance": optimum.end_distance(best, results[0].x)}


def measure_point(impl, npix, nzern, profile, tol, run_id, objective: Objective, optima=None):
    """Time one point: up to the profile's repeats, as many as its budget holds (timing.another_repeat_fits), each
    fit stopped at the profile's time limit (a fit stopped there is the point's only one, its time to the optimum,
    where it never got there, a bound). With optima (the sweep's PointOptima), the point's optimum is found first
    (untimed), a point also records each repeat's time to it, the repeats after the first stop at it
    (timing.time_fit), and each fit's trajectory is kept beside it (trajectories.write_trajectories)."""
    with watching_load() as load:
        record = timed_point(impl, npix, nzern, profile, tol, run_id, objective, optima)
    return record | {"load": load}


def timed_point(impl, npix, nzern, profile, tol, run_id, objective, optima):
    """measure_point's measurements, without the machine's load. The record's outcome is the first repeat's, the
    one run to the minimizer's own stop."""
    problem = Problem.simulated(npix, nzern, objective)
    truth = problem.truth
    eval_s = time_evaluation(impl, problem, truth)
    record = {"impl": impl.name, "dtype": impl.dtype, "gradient": impl.gradient, "minimizer": impl.minimizer,
              "npix": npix, "nzern": nzern,
              "nparams": int(truth.size),
              "run_id": run_id, "data_sha256": problem.fingerprint, "eval_s": eval_s, "tol": tol,
              "objective": objective.name}
    best = optima.of(problem, truth) if optima is not None else None
    setup_s, fit_s, results = time_fit(impl, problem, truth, profile.repeats, tol, time_limit=profile.fit_limit_s,
                                       budget_s=profile.budget_s, best=best)
    total_s = [a + b for a, b in zip(setup_s, fit_s, strict=True)]
    record |= {"estimated": False, "setup_s": summary(setup_s), "fit_s": summary(fit_s), "total_s": summary(total_s),
               "outcome": fit_outcome(results[0], problem),
               "time_limit_s": profile.fit_limit_s, "stopped_at_limit": results[0].status == TIMED_OUT}
    if impl.fit_options.get("start_hessian") == registry.PER_GRID:  # its grid's matrix: made once, off the clocks
        record |= {"grid_start_s": grid_start(impl, problem, truth)[1]}
    if best is not None:
        kept = trajectories.write_trajectories(optima.path.parent, key_of(impl.series, npix, nzern),
                                               [result.trajectory for result in results])
        record |= {"target": target_record(setup_s, results, best), "trajectories": kept}
    return record


def plan(profile, impls, done, objective: Objective):
    """Points still to run, smallest first; at each point the NumPy reference last. done: the keys of the points
    measured (an estimate, made by older sweeps for points predicted over the budget, is measured and
    replaced)."""
    ordered = sorted(impls, key=lambda impl: impl.registration.reference)
    return [(impl, npix, nzern) for npix in profile.npix for nzern in profile.orders(objective) for impl in ordered
            if (npix, nzern) in profile.points(impl, objective)
            and key_of(impl.series, npix, nzern) not in done]


def run_sweep(settings, results_dir, quiet=False, points=None, skip=frozenset()):
    """Run (or resume) the sweep of settings (a SweepSettings) into results_dir; returns the number of points
    measured or estimated in this call.

    points: only these (npix, nzern) of the profile (a shard's); skip: point keys finished elsewhere (by
    another node of the same shard), not measured again.
    """
    profile, objective, gradients = settings.grid, settings.objective, settings.gradients
    points_path = results_dir / "points.jsonl"
    with thread_limits(settings.threads):
        environment = environment_record(settings.threads) | {
            "kind": "sweep", "profile": settings.profile, "tol": settings.tol, "objective": objective.name,
            "profile_settings": dataclasses.asdict(profile)}
    identity = {key: environment[key] for key in SweepSettings.IDENTITY + MACHINE}
    measurement.check_identity(results_dir, identity, records=(points_path.name,))
    measurement.record_identity(results_dir, identity)
    records = read_points(points_path, repair=True)
    impls = with_gradients(select(settings.impls), gradients)
    available = [impl for impl in impls if impl.available()]
    todo = [item for item in plan(profile, available, measured_keys(records) | set(skip), objective)
            if points is None or item[1:] in points]
    unavailable = sorted({impl.label for impl in impls if not impl.available()})
    missing = {}  # one line per implementation this machine cannot run, naming its series
    for impl in impls:
        if not impl.available():
            missing.setdefault(impl.name, (impl.registration, []))[1].append(impl.label)
    for name, (registration, labels) in missing.items():
        series = "" if labels == [name] else f" ({', '.join(dict.fromkeys(labels))})"
        print(f"{name}{series}: not available on this machine ({registration.why_unavailable()}); skipped")
    if not impls:
        print(f"nothing to measure: no requested implementation offers the gradient(s) {', '.join(gradients)}")
        return 0
    if not available:
        print(f"nothing to measure: no requested implementation ({', '.join(unavailable)}) is available on this "
              "machine; the report shows it as not measured here")
        return 0
    if not todo:
        print(f"{points_path}: all {len(records)} points of the {settings.profile} profile are done; nothing to run")
        return 0
    optima = PointOptima(results_dir / OPTIMA_FILE)
    with measurement.measuring(results_dir, environment | {"unavailable": unavailable}, settings.threads, len(todo),
                               f"sweep {settings.profile} {objective.name}", "point", quiet) as (run_id, bar):
        for impl, npix, nzern in todo:
            bar.set_postfix_str(f"{impl.label} npix={npix} nzern={nzern}")
            record = measure_point(impl, npix, nzern, profile, settings.tol, run_id, objective, optima)
            record = as_written(points_path, len(records) + 1, record, check_point)
            append_record(points_path, record)
            records.append(as_read(record))
            bar.update()
    return len(todo)

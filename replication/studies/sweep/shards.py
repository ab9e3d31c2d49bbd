"""A sweep split into shards, each run as one job on one node through submitit: SLURM on a cluster, its local
executor elsewhere (one shard after another, so that they never compete for cores).

Layout of a sharded run (a run folder of its own, made on the submitting machine):

    <run>/run.json                          the submitting machine, and "sharded": each sweep's settings
    <run>/shards-<sweep>.json               the plan: which (npix, nzern) points each shard holds, its jobs
    <run>/shards/<k>-of-<N>/<node>/         one run folder per shard and node (run.json of that node), holding
                                            the usual sweep-<profile>[-least-squares]/points.jsonl and runs.jsonl
    <run>/logs/                             submitit's pickles and the jobs' stdout/stderr

A shard runs every requested implementation of its points on one node, so every speed-up ratio compares
records of one node. Resubmitting the same command runs only the shards that did not finish (no
finished-<sweep>.json in any of their node folders), and within them only the points not yet recorded; a
shard resumed on another node writes beside the first node's folder.
"""

import contextlib
import os
import pathlib
import platform
import re
import shutil
import sys

from tqdm import tqdm

from replication.core import runs
from replication.core.allocator import keep_freed_memory
from replication.core.environment import machine_record
from replication.core.implementations import select, with_gradients
from replication.core.records import load_json
from replication.core.results import write_json
from replication.studies.sweep.measure import run_sweep
from replication.studies.sweep.records import measured_keys, point_key, read_points

EXECUTORS = ("local", "slurm")
SHARDS_FOLDER = "shards"


def shard_points(profile, impls, objective, nshards):
    """The (npix, nzern) points of a sweep dealt into nshards lists: the costliest first (cost taken as
    npix^2 x nzern), each to the shard with the least work so far, so that every shard gets a like share."""
    points = sorted({point for impl in impls for point in profile.points(impl, objective)},
                    key=lambda point: (point[0] ** 2 * point[1], point), reverse=True)
    shards, work = [[] for _ in range(nshards)], [0] * nshards
    for point in points:
        lightest = work.index(min(work))
        shards[lightest].append(point)
        work[lightest] += point[0] ** 2 * point[1]
    return [sorted(shard) for shard in shards]


def plan_shards(settings, nshards):
    """The points of each shard, or a RunError where some shard would get none (more shards than points), said
    before anything is allocated for the shards."""
    impls = with_gradients(select(settings.impls), settings.gradients)
    count = len({point for impl in impls for point in settings.grid.points(impl, settings.objective)})
    if nshards > count:
        raise runs.RunError(f"--shards {nshards}: the {settings.profile} profile has {count} point(s) to shard; give "
                            f"at most {count}")
    return shard_points(settings.grid, impls, settings.objective, nshards)


def shard_folder(run, index, nshards):
    """The folder of shard `index` (from 0) of a sharded run; node folders lie inside it."""
    return run / SHARDS_FOLDER / f"{index:02d}-of-{nshards:02d}"


def node_name():
    """This node's name as its folder inside a shard."""
    return platform.node() or "node"


def finished(folder, sweep_name):
    """Whether a shard's job ran its sweep to the end on some node (points its node could not run, such as
    torch-cuda without a GPU, were reported there and skipped)."""
    return any(folder.glob(f"*/finished-{sweep_name}.json"))


def done_keys(folder, sweep_name):
    """Point keys measured in a shard, over every node folder it has (an older sweep's estimate is not finished)."""
    keys = set()
    for path in sorted(folder.glob(f"*/{sweep_name}/points.jsonl")):
        keys |= measured_keys(read_points(path))
    return keys


def run_shard(run, index, nshards, settings, points):
    """The job of one shard, run on its node: the sweep of settings over its points into <shard>/<node>/<sweep>,
    skipping points another node of this shard already finished. Returns the number of points measured. A job
    is a fresh process that `python -m replication` did not start: it sets the harness's allocator itself."""
    keep_freed_memory()
    folder = shard_folder(pathlib.Path(run), index, nshards)
    node = runs.create_run(folder / node_name(), machine_record())
    sweep_name = settings.folder_name
    elsewhere = done_keys(folder, sweep_name) - {point_key(r) for r in read_points(node / sweep_name / "points.jsonl")}
    with runs.exclusive(node):
        count = run_sweep(settings, node / sweep_name, quiet=False, points={tuple(point) for point in points},
                          skip=elsewhere)
        write_json(node / f"finished-{sweep_name}.json", {"shard": index, "of": nshards, "measured_now": count})
    return count


def check_reachable(kind):
    """Refuse --executor slurm where SLURM's commands are not on this machine, in one line."""
    if kind == "slurm" and shutil.which("sbatch") is None:
        raise runs.RunError("--executor slurm: SLURM is not reachable from here (no sbatch on the PATH); submit from a "
                            "login node of the cluster, or use --executor local")


def executor_for(run, kind, partition=None, time_min=240, gpus=0, cpus=None):
    """submitit's executor: SLURM with the cluster settings given, or the local one (same machine)."""
    import submitit

    folder = run / "logs"
    if kind == "slurm":
        try:
            executor = submitit.SlurmExecutor(folder=folder)
        except RuntimeError as error:  # no srun on this machine
            raise runs.RunError(f"--executor slurm: SLURM is not reachable from here ({error}); submit from a login "
                             "node of the cluster, or use --executor local") from None
        executor.update_parameters(time=time_min, gpus_per_node=gpus, cpus_per_task=cpus or 2, ntasks_per_node=1,
                                   job_name="oof-sweep-shard", **({"partition": partition} if partition else {}))
    else:
        executor = submitit.LocalExecutor(folder=folder)
        executor.update_parameters(timeout_min=time_min, gpus_per_node=gpus)
    return executor


def sharded_run(run, sweep_name, settings):
    """The sharded run folder: made if new, the sweep's recorded settings checked if resumed."""
    run = runs.create_run(run, machine_record())
    info = runs.read_run(run)
    previous = info.get("sharded", {}).get(sweep_name)
    if previous is None:
        sharded = info.get("sharded", {}) | {sweep_name: settings}
        write_json(run / runs.RUN_FILE, info | {"sharded": sharded})
    else:
        runs.check_same_settings(run, previous, settings)
    return run


def run_sharded_sweep(run, settings, nshards, executor_kind, partition=None, time_min=240, gpus=0, wait=True):
    """Plan, submit (only unfinished shards) and, where wait, follow the sharded sweep of settings (a
    SweepSettings); returns the number of shards that failed (each reported with its log). The local executor
    runs shards one after another."""
    sweep_name = settings.folder_name
    recorded = {"profile": settings.profile, "objective": settings.objective.name, "shards": nshards,
                "impl": list(settings.impls) if settings.impls else None,
                "gradients": list(settings.gradients) if settings.gradients else None, "tol": settings.tol,
                "threads": settings.threads}
    plan = plan_shards(settings, nshards)
    if (pathlib.Path(run) / sweep_name).exists():  # the same series measured twice, the report would refuse the run
        raise runs.RunError(f"{run}: this run holds the plain (unsharded) {sweep_name}; a sharded {sweep_name} goes "
                            "into a run of its own (--new-run)")
    check_reachable(executor_kind)  # before the run is made: a refused command leaves nothing behind
    run = sharded_run(run, sweep_name, recorded)  # then the run: the executor makes its logs folder inside it
    executor = executor_for(run, executor_kind, partition, time_min, gpus, cpus=settings.threads)
    plan_path = run / f"shards-{sweep_name}.json"
    jobs_log = (load_json(plan_path, lists=("jobs",)) or {}).get("jobs", [])  # a damaged plan: one line
    todo = [index for index in range(nshards) if not finished(shard_folder(run, index, nshards), sweep_name)]
    print(f"{run}: {nshards} shard(s) of the {settings.profile} {settings.objective} sweep; {len(todo)} not finished"
          + (f": {', '.join(str(index) for index in todo)}" if todo else ""))
    failed = 0
    submitted = []
    local = executor_kind == "local"
    for index in tqdm(todo, unit="shard", desc="shards (one after another)") if local else todo:
        with controller_errors_to(run / "logs" / f"controller-{index:02d}.err", local):
            job = executor.submit(run_shard, str(run), index, nshards, settings,
                                  [list(point) for point in plan[index]])
        jobs_log.append({"shard": index, "job_id": str(job.job_id), "executor": executor_kind,
                         "stdout": str(job.paths.stdout), "stderr": str(job.paths.stderr)})
        write_json(plan_path, {"settings": recorded, "points": [[list(p) for p in shard] for shard in plan],
                               "jobs": jobs_log})
        submitted.append((index, job))
        if local:  # one shard at a time: shards must not compete for the cores
            failed += follow(index, job)
    if executor_kind == "slurm" and wait:
        for index, job in tqdm(submitted, unit="shard", desc="shards"):
            failed += follow(index, job)
    elif executor_kind == "slurm":
        print("submitted; run the same command again to see which shards finished and resubmit the others")
    return failed


@contextlib.contextmanager
def controller_errors_to(path, redirect):
    """While submitit starts a local job, point stderr (file descriptor 2, which its controller process
    inherits) at a log file: the controller's own messages, such as its traceback when Ctrl-C reaches it too,
    go there instead of the terminal."""
    if not redirect:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def follow(index, job):
    """Wait for a shard's job: 0 when it finished, 1 (after saying why and where its log is) when it failed."""
    try:
        count = job.result()
    except KeyboardInterrupt:
        job.cancel(check=False)  # the shard must not go on competing for the cores; its finished points are kept
        raise
    except Exception as error:  # a failed job: submitit raises with the job's traceback in its message
        tqdm.write(f"shard {index} failed: {cause(error)}; log: {job.paths.stderr}")
        return 1
    tqdm.write(f"shard {index}: {count} point(s) measured (log: {job.paths.stdout})")
    return 0


def cause(error):
    """The line of a failed job's traceback that says what went wrong (its last 'SomeError: ...' line)."""
    lines = [line.strip() for line in str(error).splitlines()]
    raised = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception|Interrupt)\b.*:", line)]
    return raised[-1] if raised else (lines[0] if lines and lines[0] else type(error).__name__)

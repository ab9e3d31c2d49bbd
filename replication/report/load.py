"""A run folder as the report reads it: every study's records in one Run."""

import dataclasses
import pathlib

from replication.core import runs
from replication.core.objectives import CAUCHY, Objective
from replication.core.profiles import sweep_folder_name
from replication.core.records import read_run_records
from replication.core.results import refuse_links_inside
from replication.studies.bench.records import BenchRead, read_bench
from replication.studies.closure.maps import NOISE
from replication.studies.closure.read import closure_beyond_words, closure_noise
from replication.studies.crosscheck.records import CrosscheckRead, read_crosscheck
from replication.studies.peers.records import PeersCheckRead, read_peers_check
from replication.studies.retrieval.records import read_retrieval
from replication.studies.sweep.read import load_sharded_sweeps, load_sweep, off_yardstick_points
from replication.studies.sweep.records import read_optima

PROFILE_ORDER = ("paper", "quick", "smoke")
"""A run's sweep that its verdicts are judged on: the largest profile it holds."""


@dataclasses.dataclass
class Run:
    """Everything recorded in one run folder: its sweeps, cross-check and benches, and whose run it is."""

    folder: pathlib.Path
    info: runs.RunInfo
    own: bool
    sweeps: dict
    crosscheck: CrosscheckRead | None
    bench: BenchRead | None
    bench_default: BenchRead | None
    bench_compile: BenchRead | None
    bench_peers: BenchRead | None
    peers_check: PeersCheckRead | None
    nodes: list = dataclasses.field(default_factory=list)
    retrieval: dict = dataclasses.field(default_factory=dict)
    """{folder name: records} of the run's cold-start retrievals (retrieval-<profile>)."""
    optima: dict = dataclasses.field(default_factory=dict)
    """{sweep folder name: {(npix, nzern, objective, data_sha256): optimum record}}: the points' optima (runs that
    time to a target), merged over shards."""
    off_yardstick: dict = dataclasses.field(default_factory=dict)
    """{sweep folder name: points left out of it because their optimum's covariance is not the sandwich}
    (off_yardstick_points)."""
    clock: str = ""
    """', HH:MM' (UTC, the run's creation) where another run would otherwise read the same (tell_apart), else ''."""

    @property
    def retrieval_shown(self):
        """(folder name, records) of the largest retrieval profile the run holds, or (None, [])."""
        for profile in ("full", "quick", "smoke"):
            if f"retrieval-{profile}" in self.retrieval:
                return f"retrieval-{profile}", self.retrieval[f"retrieval-{profile}"]
        return None, []

    @property
    def machine(self):
        return self.info.machine

    @property
    def title(self):
        """'your run' or 'reference', its date and its machine (and its profile, where not the quick one): the
        run's name in tables and legends."""
        whose = "your run" if self.own else "reference"
        machine = runs.machine_label(self.machine)
        return f"{whose} {self.info.created[:10]}: {machine}{self.profile_label}{self.clock}"

    @property
    def short_title(self):
        """The run in a sentence: 'your run', or the reference's date and machine (and profile)."""
        return ("your run" if self.own else
                f"{self.info.created[:10]} {runs.machine_label(self.machine)}{self.profile_label}{self.clock}")

    @property
    def profile_label(self):
        """', paper profile' where the judged sweep is not the quick profile, ', 1 thread' where its fits ran with
        one thread, ', real maps' for a run of real maps and no sweep, ', closure test' for one of the closure test
        alone (' at noise F' where not at the SRT's, and what its truths hold beyond the fitted orders: two runs of one
        machine and day then read apart); '' otherwise."""
        if not self.sweeps and (self.folder / "real-maps").is_dir():
            return ", real maps"
        if not self.sweeps and (self.folder / "closure").is_dir():
            noise, beyond = closure_noise(self.folder / "closure"), closure_beyond_words(self.folder / "closure")
            return (", closure test" + ("" if noise in (None, NOISE) else f" at noise {noise:g}")
                    + (f", {beyond}" if beyond else ""))
        one = ", 1 thread" if self.judged_threads() == {1} else ""
        return ("" if self.profile in (None, "quick") else f", {self.profile} profile") + one

    def judged_threads(self, objective: Objective = CAUCHY) -> set[int]:
        """The thread counts the sessions of the sweep an objective is judged on ran with (empty without one)."""
        name = self.judged(objective)[0]
        return {record.threads for record in self.sweeps[name][1]} if name else set()

    def environments(self):
        """Every session record of the run (run_environments)."""
        return run_environments(self)

    @property
    def appendix_name(self):
        """The name of the run's appendix (and of its figures' folder): its folder's name, 'your-' first for
        your own runs."""
        return ("your-" if self.own else "") + self.folder.name

    def judged(self, objective: Objective = CAUCHY):
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
        name = self.judged(CAUCHY)[0]
        return name and name.removeprefix("sweep-")

    @property
    def series(self):
        """{label: {(npix, nzern): record}} of the judged Cauchy sweep ({} without one)."""
        return self.judged(CAUCHY)[1]


def load_run(folder, own):
    """A run folder's results; an error where the folder is not a run (no run.json)."""
    folder = pathlib.Path(folder)
    info = runs.read_run_info(folder)
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


def run_environments(run):
    """Every session record of a run (sweeps, shards, cross-check, benches, retrievals, real maps, closure test): what
    each found of the machine, the software and the code."""
    found = [environment for _, environments in run.sweeps.values() for environment in environments]
    found += [run.crosscheck.environment] if run.crosscheck else []
    found += [environment for bench in (run.bench, run.bench_default, run.bench_compile, run.bench_peers) if bench
              for environment in bench.environments]
    for path in [*sorted(run.folder.glob("retrieval-*/runs.jsonl")), *run.folder.glob("real-maps/runs.jsonl"),
                 *run.folder.glob("closure/runs.jsonl")]:
        found += read_run_records(path)
    return found


def judges_claims(run):
    """Whether a run has a column in the claims tables: yours always; a reference run where it measured something
    the claims judge (a sweep, a cross-check or a bench), so that a reference run of real maps only has none."""
    return bool(run.own or run.sweeps or run.crosscheck or run.bench)


def tell_apart(all_runs):
    """The runs, each whose title another shares (the same day, machine and profile) marked with its creation's
    time of day (Run.clock), so that no two runs read the same in a sentence or a legend."""
    titles = [run.title for run in all_runs]
    for run, title in zip(all_runs, titles, strict=True):
        if titles.count(title) > 1:
            run.clock = f", {run.info.created[11:16]}"
    return all_runs

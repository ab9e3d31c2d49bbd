"""Retiring a reference run from the evidence: what it found (its headline verdicts), how it was made and the commit
that holds its records are written once to results/retired.jsonl, so that DETAILS.md still names it, with those
values, after its folder is removed from results/reference/ (git keeps the records at that commit)."""

import pathlib
import subprocess

import msgspec

from replication.claims import design
from replication.core import paths, runs
from replication.core.load import measured_quiet
from replication.core.objectives import BY_NAME
from replication.core.records import Record, as_typed, check_typed
from replication.core.results import append_record, read_records
from replication.core.runs import RunError
from replication.report import load
from replication.report.first_screen import short_name
from replication.report.screen import PAPER_CLAIMS, Judgement, plain_title
from replication.studies.sweep import read as sweep_read

RETIRED = paths.RESULTS / "retired.jsonl"
"""The runs retired from the evidence, one line each (Retired)."""


class Retired(Record):
    """One run retired from the evidence: its folder under results/reference/, its name in the report then, the
    repository's commit that holds its records, the model code's commits it was measured with, the rule its times
    were judged by and whether its machine was quiet ("—" without a sweep), its headline (each paper claim it
    measured, per objective, in the first screen's words) and why it was retired (a person's words)."""

    folder: str
    name: str
    commit: str
    model_commits: list[str]
    rule: str
    machine: str
    headline: list[str]
    why: str


def check_retired(path, number, record):
    check_typed(path, number, record, Retired)


def read_retired(path: pathlib.Path = RETIRED) -> list[Retired]:
    """The retired runs, in the order they were retired (none where the file is absent)."""
    return [as_typed(path, number, record, Retired)
            for number, record in enumerate(read_records(path, check=check_retired), 1)]


def committed_at(folder: pathlib.Path) -> str:
    """The repository's commit, where the folder's records are committed as they are; else refused in one line."""
    where = ["git", "-C", str(paths.ROOT)]
    try:
        commit = subprocess.run([*where, "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        changed = subprocess.run([*where, "status", "--porcelain", "--", str(folder)], capture_output=True,
                                 text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        raise RunError(f"{folder}: retiring a run needs a git checkout, whose history keeps its records") from None
    if changed.stdout.strip():
        raise RunError(f"{folder}: not committed as it is; commit its records first, so that git keeps them")
    return commit.stdout.strip()


def headline(run) -> list[str]:
    """Each paper claim a run measured, per objective: 'the Cauchy likelihood: C3 8.73x (npix 256): reproduced'."""
    lines = []
    for objective in BY_NAME.values():
        if run.judged(objective)[0]:
            judged = [Judgement(claim, claim.judge(run, objective), False) for claim in PAPER_CLAIMS]
            said = [f"{judgement.claim.id} {judgement.text}" for judgement in judged if judgement.measured]
            lines += [f"{plain_title(objective)}: {'; '.join(said)}"] if said else []
    return lines


def retire(folder_name: str, why: str, reference: pathlib.Path | None = None,
           retired: pathlib.Path = RETIRED) -> Retired:
    """Write a reference run's retirement (refused where the design names it, where it is retired already, where
    why is empty, and where its records are not committed as they are)."""
    folder = pathlib.Path(reference or paths.REFERENCE) / folder_name
    if folder_name in design.BY_FOLDER:
        raise RunError(f"--folder {folder_name}: the design names it (replication/claims/design.py); take it out "
                       "of the design first")
    if not (folder / "run.json").is_file() or folder.is_symlink():
        raise RunError(f"--folder {folder_name}: not a reference run under {folder.parent}")
    if any(entry.folder == folder_name for entry in read_retired(retired)):
        raise RunError(f"--folder {folder_name}: retired already ({retired})")
    if not why.strip():
        raise RunError("--why: say in a sentence why the run leaves the evidence")
    commit = committed_at(folder)
    every = load.tell_apart([load.load_run(path, own=False) for path in runs.reference_runs(folder.parent)])
    run = next(run for run in every if run.folder.name == folder_name)
    rule = "—" if not run.series else "time to solution" if sweep_read.timed_to_targets(run.series) else \
        "time to stop"
    machine = "—" if not run.sweeps else "quiet" if measured_quiet(run) else "loaded"
    entry = Retired(folder=folder_name, name=short_name(run), commit=commit, model_commits=model_commits(run),
                    rule=rule, machine=machine, headline=headline(run), why=why.strip())
    append_record(retired, msgspec.to_builtins(entry))
    return entry


def model_commits(run) -> list[str]:
    """The commits a run's sessions were measured at (as recorded, seven characters), in order, once each."""
    return list(dict.fromkeys(environment.git_commit[:7] for environment in run.environments()
                              if environment.git_commit))

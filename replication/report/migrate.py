"""Bringing a run's records written by older code into today's schema, once. Each study's records module says how
its kind changed (sweep.records.migrated_point, core.records.migrated_fit for the retrieval's fits,
crosscheck.records.migrated_crosscheck, bench.records.migrated_bench); this walks a run folder, rewrites each file
one of them changes (atomically, in the writers' own format) and says which. The readers refuse an older record,
naming this command, so that no reader converts on the fly."""

from __future__ import annotations

import json
import os
import pathlib

from replication.core.records import migrated_fit
from replication.core.results import NotStrictJSON, RunError, dumps, loads, write_atomically, write_json
from replication.core.runs import RUN_FILE, is_run_folder
from replication.studies.bench.records import migrated_bench
from replication.studies.crosscheck.records import migrated_crosscheck
from replication.studies.sweep.records import migrated_point

LINES = (("sweep-", "points.jsonl", migrated_point), ("retrieval-", "points.jsonl", migrated_fit))
"""The record files of one record a line: (their folder's prefix, the file's name, the migration of one record)."""
DOCUMENTS = (("crosscheck", "crosscheck.json", migrated_crosscheck), ("bench", "bench.json", migrated_bench))
"""The record files of one JSON document: (their folder's prefix, the file's name, the migration of the document)."""


def record_files(folder: pathlib.Path, prefix: str, name: str) -> list[pathlib.Path]:
    """The files of that name in folders of that prefix anywhere under the run folder (a sharded sweep's nodes
    too; no link to a folder followed), each a regular file: a link or a special file is refused, naming it."""
    found = sorted(pathlib.Path(root) / name for root, _, files in os.walk(folder)
                   if name in files and pathlib.Path(root).name.startswith(prefix))
    for path in found:
        if path.is_symlink() or not path.is_file():
            raise RunError(f"{path}: not a regular file; migrate reads and rewrites plain files only")
    return found


def migrate_lines(path: pathlib.Path, migrate) -> bool:
    """Rewrite a JSON-lines file with each record migrated, where any changes; whether it did."""
    try:
        records = [loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (UnicodeDecodeError, json.JSONDecodeError, NotStrictJSON) as error:
        raise RunError(f"{path}: not JSON lines ({str(error)[:60]}); repair it before migrating") from None
    migrated = [migrate(record) if isinstance(record, dict) else record for record in records]
    if all(new is old for new, old in zip(migrated, records, strict=True)):
        return False
    write_atomically(path, "".join(dumps(record) + "\n" for record in migrated).encode("utf-8"))
    return True


def migrate_document(path: pathlib.Path, migrate) -> bool:
    """Rewrite a JSON document migrated, where that changes it; whether it did."""
    try:
        content = loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, NotStrictJSON) as error:
        raise RunError(f"{path}: not JSON ({str(error)[:60]}); repair it before migrating") from None
    migrated = migrate(content) if isinstance(content, dict) else content
    if migrated is content:
        return False
    write_json(path, migrated)
    return True


def migrate_run(folder: pathlib.Path) -> list[pathlib.Path]:
    """Every record file of a run folder brought into today's schema: the files rewritten."""
    folder = pathlib.Path(folder)
    if folder.is_symlink() or not folder.is_dir():
        raise RunError(f"--run {folder}: no such run folder")
    if not is_run_folder(folder):
        raise RunError(f"--run {folder}: not a run folder (no {RUN_FILE})")
    changed = [path for prefix, name, migrate in LINES for path in record_files(folder, prefix, name)
               if migrate_lines(path, migrate)]
    return changed + [path for prefix, name, migrate in DOCUMENTS for path in record_files(folder, prefix, name)
                      if migrate_document(path, migrate)]


def add_migrate_command(parser):
    """The migrate: bring a run's records written by older code into today's schema."""
    parser.description = ("Rewrites each record file of the run that older code wrote in an older schema (sweep and "
                           "retrieval points, the cross-check, the benches) in today's, atomically; files already in "
                           "today's schema are left as they are. Run it once on a run made with older code.")
    parser.add_argument("--run", type=pathlib.Path, required=True, help="the run folder to migrate")
    parser.set_defaults(func=run_migrate_command)


def run_migrate_command(args) -> int:
    changed = migrate_run(args.run)
    for path in changed:
        print(f"{path}: migrated to today's schema")
    if not changed:
        print(f"{args.run}: every record file is in today's schema; nothing to migrate")
    return 0


ARGUMENTS = {"migrate": add_migrate_command}
"""The arguments of each command this module runs (cli.COMMANDS names it)."""

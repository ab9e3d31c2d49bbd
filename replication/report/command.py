"""The figures, report and contribute commands: your runs beside the references."""

import pathlib

from replication.core import runs
from replication.core.options import add_report_options
from replication.core.paths import FIGURES, PAPER, RUNS
from replication.core.results import (
    add_to_manifest,
    keep_only_what_was_made,
    refuse_overwriting_foreign,
    resolved,
    writing_into,
)
from replication.report import contribute as contributing
from replication.report import retire as retiring
from replication.report.figures import draw_all
from replication.report.render import load_runs, render_command


def add_figures_command(figures):
    """The figures: draw the figures of your runs beside the references."""
    add_report_options(figures, "figures")
    figures.set_defaults(func=run_figures_command)


def add_report_command(report):
    """The report: render the report of your runs beside the references."""
    add_report_options(report, "report")
    report.add_argument("--check", action="store_true", help="compare with the file on disk instead of writing it")
    report.set_defaults(func=run_report_command)


def add_contribute_command(contribute):
    """The contribute: make one of your runs a reference run."""
    contribute.description = ("Copies the run's records (not its rendered report) into a new folder under "
                              "results/reference/; existing reference runs are never changed. Then re-render the "
                              "committed report and commit.")
    contribute.add_argument("--run", type=pathlib.Path, default=None,
                            help="the run to contribute (default: this machine's newest run)")
    contribute.add_argument("--note", required=True, help="one sentence shown in the report: the machine, what ran")
    contribute.set_defaults(func=run_contribute_command)


def add_retire_command(retire):
    """The retire: take a reference run out of the evidence, keeping its headline in results/retired.jsonl."""
    retire.description = ("Writes the run's headline verdicts, how it was made and the commit that holds its records "
                          "to results/retired.jsonl, which DETAILS.md shows; the run's folder is left for you to "
                          "remove (git rm -r), and its records stay in git at that commit.")
    retire.add_argument("--folder", required=True, help="the reference run's folder name under results/reference/")
    retire.add_argument("--why", required=True, help="one sentence: why the run leaves the evidence")
    retire.set_defaults(func=run_retire_command)


def run_retire_command(args):
    entry = retiring.retire(args.folder, args.why)
    print(f"wrote {retiring.RETIRED} ({entry.name}, records at {entry.commit[:7]})\nnext: git rm -r "
          f"results/reference/{entry.folder}, then re-render and commit the figures and the report")
    return 0


def shown_runs(args):
    """Your runs that figures and report show: those named, else this machine's newest, else none."""
    if not args.reference.is_dir():
        raise runs.RunError(f"--reference {args.reference}: no such folder")
    if args.reference_only:
        if args.run:
            raise runs.RunError("--run: give either --run or --reference-only, not both")
        return []
    for folder in args.run or []:
        if runs.read_run(folder) is None:
            raise runs.RunError(f"--run {folder}: not a run folder (no {runs.RUN_FILE})")
    if args.run:
        return list(dict.fromkeys(args.run))  # a run named twice is shown once
    latest = runs.latest_run()
    return [latest] if latest is not None else []


def report_folders(args):
    """(your runs, report folder, figures folder): your first run's folder by default, else paper/ and figures/.
    A run being written now is said to be so: what is shown is what was finished when it was read."""
    own = shown_runs(args)
    for run in own:
        writer = runs.writer_of(run)
        if writer is not None:
            print(f"{run}: being written now (pid {writer}); shown as far as it was finished when read")
    if args.output is not None:
        output = args.output
    else:
        output = own[0] if own else PAPER
    runs.check_output(output, "--output", committed=not own)  # a link loop refused here, in one line
    if pathlib.Path(output).is_symlink() or (pathlib.Path(output).exists() and not pathlib.Path(output).is_dir()):
        raise runs.RunError(f"--output {output}: not a folder (a file, a link or a special file); name a folder to "
                            "render into")
    figures = FIGURES if resolved(output) == PAPER.resolve() else output / "figures"
    runs.check_output(figures, "--output", committed=not own)
    return own, output, figures


FIGURE_KINDS = (".png", ".svg")
"""The files a figure is drawn as."""


def run_figures_command(args):
    own, _, figures = report_folders(args)
    target = figures  # where the report with the same options links them: <output>/figures, or figures/
    guarded = resolved(target) != FIGURES.resolve() and not runs.is_run_folder(target.parent)  # a folder you named
    if guarded:
        refuse_overwriting_foreign("--output", target.parent, [
            (target, [path for path in target.glob("fig*") if path.suffix in FIGURE_KINDS]),
            (target / "runs", [path for path in target.glob("runs/*/fig*") if path.suffix in FIGURE_KINDS])])
    with writing_into(target, committed=not own):
        drawn = draw_all(load_runs(own, args.reference), target)
        if guarded:
            add_to_manifest(target, [path for path in drawn if path.parent == target])
        for path in drawn:
            print(f"wrote {path}")
        figures_of_runs = [path for path in (target / "runs").glob("*/*") if path.suffix in FIGURE_KINDS]
        removed, left = keep_only_what_was_made(target / "runs", [path for path in drawn if path.is_relative_to(
            target / "runs")], figures_of_runs)
        for path in removed:
            print(f"removed {path} (a figure of a run no longer shown)")
        for folder in sorted({path.parent for path in removed}):
            if folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()):
                folder.rmdir()  # a folder that removing our figures emptied
    if left:
        print(f"left {len(left)} file(s) under {target / 'runs'} that no figures command drew (first: "
              f"{left[0].relative_to(target / 'runs')})")
    return 0


def run_report_command(args):
    own, output, figures = report_folders(args)
    return render_command(own, args.reference, output, figures, check=args.check)


def run_contribute_command(args):
    run = args.run if args.run is not None else runs.latest_run()
    if run is None:
        raise runs.RunError(f"--run: this machine has no run under {RUNS}; `nox -s replicate` makes one")
    target = contributing.contribute(run, args.note)
    print(f"wrote {target}\nnext: python -m replication figures --reference-only && "
          "python -m replication report --reference-only && nox -s tests, then commit results/reference/, figures/ "
          "and paper/")
    return 0


ARGUMENTS = {"figures": add_figures_command, "report": add_report_command, "contribute": add_contribute_command,
             "retire": add_retire_command}
"""The arguments of each command this module runs (cli.COMMANDS names it)."""

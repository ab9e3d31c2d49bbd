"""Where a measuring command writes: a run folder of this machine (never a reference run), locked while it writes;
finished results are never overwritten."""

from replication.core import runs
from replication.core.environment import machine_record


def writer_folder(args, kind):
    """(folder to write, folder to lock) of a writer, checked before any work: never a reference run."""
    if args.results is not None:
        if args.run is not None or args.new_run:
            raise runs.RunError("--results: give either --results or --run/--new-run, not both")
        folder = runs.check_writable(args.results, "--results")
        return folder, runs.run_of(folder) or folder
    if args.run is not None:
        if args.new_run:
            raise runs.RunError("--run: give either --run or --new-run, not both")
        runs.check_writable(args.run)
    run = runs.current_run(machine_record(), args.run, new=args.new_run)
    return run / kind, run


def already_done(path, what):
    """Finished results are never overwritten: say so and how to measure again."""
    print(f"{path}: {what} is already done in this run; nothing to run (--new-run measures again)")
    return 0

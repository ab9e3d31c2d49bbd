"""Two runs of the same sweeps compared point by point: each series' time to solution in one over the other's at one
grid size (a run beside a busy core against a quiet one, say), with the threads each chose.

    python -m replication.studies.sweep.compare QUIET_RUN OTHER_RUN [--npix 256] [--impl torch]
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import sys

from replication.core import point_times
from replication.core.results import RunError
from replication.studies.sweep.read import load_sweep


def time_ratios(base: pathlib.Path, other: pathlib.Path, npix: int, impl: str = "torch") -> dict:
    """{sweep folder name: {(series label, nzern): other's time to solution / base's}} at grid size npix, for the
    measured points of the series whose implementation name starts with impl that both runs hold."""
    ratios = {}
    for folder in sorted(path for path in base.glob("sweep-*") if path.is_dir()):
        a, b = load_sweep(folder)[0], load_sweep(other / folder.name)[0]
        found = {}
        for series, points in a.items():
            for (size, nzern), record in points.items():
                twin = b.get(series, {}).get((size, nzern))
                if size == npix and series.label.startswith(impl) and twin is not None \
                        and not (record.estimated or twin.estimated):
                    found[(series.label, nzern)] = point_times.seconds(twin) / point_times.seconds(record)
        if found:
            ratios[folder.name] = dict(sorted(found.items()))
    return ratios


def threads_of(run: pathlib.Path) -> str:
    """The threads a run's first sweep session measured with, and how they were chosen."""
    for folder in sorted(path for path in run.glob("sweep-*") if path.is_dir()):
        for session in load_sweep(folder)[1]:
            return f"{session.threads} thread(s), chosen by {session.threads_chosen_by or '--threads'}"
    return "no sweep session"


def summary_lines(base: pathlib.Path, other: pathlib.Path, npix: int, impl: str = "torch") -> list[str]:
    """The comparison in lines: per sweep, the median and range of the ratios, then each point's."""
    lines = [f"{other.name} ({threads_of(other)}) over {base.name} ({threads_of(base)}), npix {npix}, {impl}*:"]
    for sweep, found in time_ratios(base, other, npix, impl).items():
        values = list(found.values())
        lines.append(f"{sweep}: {len(values)} points, median {statistics.median(values):.2f}x, range "
                     f"{min(values):.2f}-{max(values):.2f}x")
        lines += [f"  {label} n = {nzern}: {value:.2f}x" for (label, nzern), value in found.items()]
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m replication.studies.sweep.compare", description=__doc__)
    parser.add_argument("base", type=pathlib.Path, help="the run to compare against (a quiet one)")
    parser.add_argument("other", type=pathlib.Path, help="the run compared")
    parser.add_argument("--npix", type=int, default=256)
    parser.add_argument("--impl", default="torch", help="series whose implementation name starts with this")
    args = parser.parse_args(argv)
    for run in (args.base, args.other):
        if not run.is_dir():
            print(f"error: {run}: no such run folder", file=sys.stderr)
            return 2
    try:
        print("\n".join(summary_lines(args.base, args.other, args.npix, args.impl)))
    except RunError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

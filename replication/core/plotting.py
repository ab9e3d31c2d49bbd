"""How every figure looks and is saved: one style, a line style per run, PNG and SVG without dates (byte-identical
re-renders)."""

import dataclasses
from collections.abc import Callable

import matplotlib
import matplotlib.figure
import matplotlib.ticker
from matplotlib.backends.backend_agg import FigureCanvasAgg

from replication.core.judging import AT_LEAST, AT_MOST, VALUE
from replication.core.load import measured_quiet
from replication.core.results import atomic_stream

STYLE = {"figure.dpi": 110, "savefig.dpi": 110, "font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
         "legend.fontsize": 8, "axes.titlesize": 10, "svg.hashsalt": "oof-replication"}
"""The one place the figures' look is set; a fixed hash salt makes the SVG ids the same on every render."""


RUN_STYLES = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"), ((0, (5, 1, 1, 1)), "v"))
"""Line style and marker of each run, in the report's order: yours first, then the references."""


FORMATS = ("png", "svg")


METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None}}
"""No date or library version in the files: the same results always give the same bytes."""


@dataclasses.dataclass(frozen=True)
class Figure:
    """A figure declared once: its file's stem (the name every format shares) and its caption, made from what it
    draws (a function of the run it shows: the words the report writes after "Figure N"). The report numbers the
    figures in the order a reader meets them."""

    stem: str
    caption: Callable[..., str]

    def path(self, folder, extension="png"):
        """Where the figure is (or will be) in folder."""
        return folder / f"{self.stem}.{extension}"


def subplots(*args, **options):
    """A figure and its axes, as pyplot.subplots makes them, but owned by no GUI: drawing the figures changes no
    global state (no backend chosen at import, no window)."""
    figure = matplotlib.figure.Figure(figsize=options.pop("figsize", None))
    FigureCanvasAgg(figure)  # the raster canvas every figure is drawn on, whatever pyplot's backend is
    return figure, figure.subplots(*args, **options)


def save(figure, folder, name):
    """Write a figure in every format, cropped to its drawn extent; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    # The extent found once for every format: bbox_inches="tight" draws each figure twice per format.
    extent = figure.get_tightbbox(figure.canvas.get_renderer()).padded(matplotlib.rcParams["savefig.pad_inches"])
    paths = []
    for extension in FORMATS:
        path = folder / f"{name}.{extension}"
        with atomic_stream(path) as stream:
            figure.savefig(stream, format=extension, bbox_inches=extent, metadata=METADATA[extension])
        paths.append(path)
    return paths


def run_style(index):
    return RUN_STYLES[index % len(RUN_STYLES)]


def appendix_folder(folder, run):
    """Where a run's own figures go: <figures>/runs/<name>/ (the name of its appendix too)."""
    return folder / "runs" / run.appendix_name


def spaced(values, factor):
    """The values (increasing, positive) kept for a tick label on a log axis: each at least factor times the last
    one kept, so that no two labels crowd each other."""
    kept = []
    for value in values:
        if not kept or value >= factor * kept[-1]:
            kept.append(value)
    return kept


def shown_run(candidates, rank=lambda run: 0):
    """The run a figure shows among candidates: your first, else a reference run measured on a quiet machine before
    one measured on a loaded one (core.load.measured_quiet), then the one of the highest rank, the newest (by its
    start) among equals; None where there is none."""
    own = [run for run in candidates if run.own]
    return own[0] if own else max(candidates, key=lambda run: (measured_quiet(run), rank(run), run.info.created),
                                  default=None)


def draw_ratio(axis, xs, ratios, colour, label, marker="o", linestyle="-"):
    """Ratios (judging.Ratio) against xs: values joined by a line with their range over repeats as error bars,
    bounds as open triangles pointing where the value may lie (never on the line)."""
    values = [(x, r) for x, r in zip(xs, ratios, strict=True) if r.kind == VALUE]
    if values:
        x, r = zip(*values, strict=True)
        axis.errorbar(x, [float(v) for v in r], yerr=[[float(v) - v.low for v in r], [v.high - float(v) for v in r]],
                      color=colour, marker=marker, markersize=4, capsize=2, linewidth=1.5, label=label,
                      linestyle=linestyle)
    for x, r in zip(xs, ratios, strict=True):
        if r.kind in (AT_LEAST, AT_MOST):
            axis.plot(x, float(r), "^" if r.kind == AT_LEAST else "v", color=colour, markerfacecolor="none",
                      markersize=7)

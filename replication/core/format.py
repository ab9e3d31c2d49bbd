"""How the report writes numbers: values with their range over repeats, bounds, shares and seconds (used by every
reader that words a number)."""

import os
import pathlib
import re

from replication.core import judging


def number(value, digits=3):
    """A number with `digits` significant figures, or an em dash for nothing."""
    if value is None:
        return "—"
    return f"{value:.{digits}g}"


def um(value):
    """Micrometres as a reader takes them: whole above 100 ("364", "1275"), three significant figures below ("64.3",
    "8.15"); an em dash for nothing."""
    if value is None:
        return "—"
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def times(value, interval=True):
    """A speed-up's cell: the value and its range over pairs of repeats ("9.5x (8.1-10)"), a bound marked as one
    (">= 12x"), or plain for a number without a range."""
    if value is None:
        return "—"
    if not isinstance(value, judging.Ratio):
        return f"{value:.3g}x"
    if value.kind == judging.UNDETERMINED:
        return "undetermined"
    if value.kind == judging.BETWEEN:
        return f"{value.floor:.3g}x to {value.ceiling:.3g}x (bounds)"
    if value.kind != judging.VALUE:
        return f"{'>=' if value.kind == judging.AT_LEAST else '<='} {value:.3g}x"
    low, high = short_number(value.low), short_number(value.high)
    if not interval or low == high:
        return f"{value:.3g}x"
    return f"{value:.3g}x ({low}-{high})"


def share_range(interval):
    """A share's interval in per cent: '60-98%'."""
    return "—" if interval is None else f"{100 * interval[0]:.0f}-{100 * interval[1]:.0f}%"


def short_number(value):
    """Two significant figures, without an exponent below 10,000 (150, not 1.5e+02)."""
    return f"{value:.0f}" if 100 <= abs(value) < 1e4 else f"{value:.2g}"


def sci(value):
    """A small number in scientific notation, two significant figures."""
    return "—" if value is None else f"{value:.1e}"


def value_range(values, format_value):
    """'a' or 'a to b' over values (floats), each end written by format_value."""
    low, high = min(values, key=float), max(values, key=float)
    return format_value(low) if format_value(low) == format_value(high) else \
        f"{format_value(low)} to {format_value(high)}"


def values_and_bounds(ratios):
    """The runs' speed-ups of one claim: the range of the values, the runs that give only a bound counted beside it
    ('3.97x to 7.25x, 1 run only a bound'; bound_text gives them), so that no range joins a value with a bound; the
    bounds alone without a value."""
    values = [r for r in ratios if not (isinstance(r, judging.Ratio) and r.is_bound)]
    bounds = [r for r in ratios if isinstance(r, judging.Ratio) and r.is_bound]
    if not values:
        return ", ".join(bound_text(r) for r in sorted(bounds, key=lambda r: r.floor))
    more = f", {len(bounds)} run{'s' if len(bounds) > 1 else ''} only a bound" if bounds else ""
    return value_range(values, lambda v: times(v, False)) + more


def bound_text(ratio):
    """A bound in words: '>= 19x', '<= 2x', '3.15x-6.37x (bounds)'."""
    return f"{ratio.floor:.3g}x-{ratio.ceiling:.3g}x (bounds)" if ratio.kind == judging.BETWEEN else times(ratio)


def relative(path, start):
    """path relative to start, in forward slashes (links in the report)."""
    return pathlib.Path(os.path.relpath(pathlib.Path(path).resolve(), pathlib.Path(start).resolve())).as_posix()


MARKUP = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", **{c: "\\" + c for c in "\\`*_[]|#~!{}"}})
"""What markdown or HTML could read as structure in text a person wrote, and its literal spelling."""


def inline(text) -> str:
    """Text a run recorded (a version, a fit's message, a check's name) as the report shows it within a line: one
    line, every markdown and HTML character written literally (escaped), so that it can make no table, link, emphasis
    or tag."""
    return " ".join(str(text).split()).translate(MARKUP)


def plain(text) -> str:
    """Text a person wrote (a run's note) as the report shows it, a paragraph of its own: inline, and what would
    open a list or a heading at the start of a line escaped too."""
    line = inline(text)
    number = re.match(r"\d+(?=[.)])", line)  # "1. " or "1) " would open a list
    if number:
        return line[:number.end()] + "\\" + line[number.end():]
    return "\\" + line if line[:1] in ("-", "+", "=") else line


def code_span(text) -> str:
    """Text a run recorded (a commit, a folder, a run id) as a markdown code span on one line: a backtick in it
    becomes a quote, so that it cannot close the span, and a '|' is escaped, so that it cannot split a table's
    cell."""
    line = " ".join(str(text).split()).replace("`", "'").replace("|", "\\|")
    return f"`{line}`"

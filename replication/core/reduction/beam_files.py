"""Readers of beam maps made by others: the Sardinia Radio Telescope's three-column text maps and TICRA's grid files.

Each reader gives a BeamMap (rows = v, columns = u) or raises MapFileError, a ValueError whose one-line message
names the file (and the line, where one is at fault) and what is wrong; nothing is returned half-read.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
import re

import numpy as np

GRID_TOLERANCE = 0.05
"""How far (in steps) a coordinate may sit from its place on a regular grid: the SRT files print u and v to 1e-6 rad,
about 3% of their 3.3e-5 rad step."""


class MapFileError(ValueError):
    """A beam-map file that cannot be read as documented: the message names the file, the line where one is at
    fault, and what is wrong."""


@dataclasses.dataclass(frozen=True)
class BeamMap:
    """One beam map on a regular u, v grid: u (cols,) and v (rows,) in radians, increasing; power (rows, cols),
    rows along v and columns along u, in the file's units; path: where it was read from."""

    u: np.ndarray = dataclasses.field(repr=False)
    v: np.ndarray = dataclasses.field(repr=False)
    power: np.ndarray = dataclasses.field(repr=False)
    path: str

    @property
    def step(self):
        """The grid's step (radians), the same along u and v (checked by the readers)."""
        return float(self.u[1] - self.u[0])


def fail(path, message, line=None):
    """A MapFileError naming the file (and line)."""
    place = f"{path}:{line}" if line is not None else f"{path}"
    return MapFileError(f"{place}: {message}")


MAX_MAP_BYTES = 256 * 2**20
"""The largest map file read (bytes): a 2048 x 2048 map in text is about 100 MB; a larger file is refused before
it is read rather than filling the memory."""


def lines_of(path):
    """The file's lines, or a MapFileError where it cannot be read (or is larger than MAX_MAP_BYTES)."""
    try:
        size = pathlib.Path(path).stat().st_size
        if size > MAX_MAP_BYTES:
            raise fail(path, f"{size / 2**20:.0f} MiB, larger than a beam map's {MAX_MAP_BYTES / 2**20:.0f} MiB limit "
                             "(beam_files.MAX_MAP_BYTES)")
        return pathlib.Path(path).read_text().splitlines()
    except FileNotFoundError:
        raise fail(path, "no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise fail(path, f"cannot be read as text ({error})") from None


NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|nan|inf|infinity)", re.ASCII | re.IGNORECASE)
"""A number as these files write it: ASCII digits, a point, an exponent (nan and inf are numbers here, refused as
not finite); Python's float() also takes '4_7' and other scripts' digits, which no map file holds."""
COUNT = re.compile(r"[+-]?\d+", re.ASCII)
"""A count: ASCII digits only."""


MAX_VALUE = 1e150
"""The largest magnitude a map file's number may have: its square (a power, a residual) still fits a float64."""


def numbers_of(path, line, number, count, pattern=NUMBER):
    """The `count` numbers of one line (number: its 1-based line number), every one finite and written as pattern
    (NUMBER; COUNT for counts)."""
    fields = line.split()
    if len(fields) != count:
        raise fail(path, f"expected {count} numbers, found {len(fields)} field(s)", number)
    if not all(pattern.fullmatch(field) for field in fields):
        what = "a count (digits only)" if pattern is COUNT else "a number"
        raise fail(path, f"not {what} among {line.strip()!r}", number)
    values = [float(field) for field in fields]
    if not all(math.isfinite(value) for value in values):
        raise fail(path, f"a value is not finite: {line.strip()!r}", number)
    if any(abs(value) > MAX_VALUE for value in values):
        raise fail(path, f"a value beyond {MAX_VALUE:g} in magnitude (its square overflows): {line.strip()!r}"[:200],
                   number)
    return values


def regular_axis(path, name, values):
    """The sorted distinct coordinates of one axis, checked to form a regular grid of at least two points."""
    axis = np.unique(values)
    if axis.size < 2:
        raise fail(path, f"{name} takes fewer than two values: not a grid")
    step = (axis[-1] - axis[0]) / (axis.size - 1)
    worst = np.max(np.abs(axis - (axis[0] + step * np.arange(axis.size)))) / step
    if worst > GRID_TOLERANCE:
        raise fail(path, f"{name} is not on a regular grid (a value {worst:.2f} steps from its place)")
    return axis[0] + step * np.arange(axis.size)


def read_srt_map(path) -> BeamMap:
    """A Sardinia Radio Telescope OOF map: ASCII, one sample per line, three numbers u [rad], v [rad], power
    [counts], on a regular grid with u in the outer loop (v varies fastest)."""
    rows = [numbers_of(path, line, number, 3) for number, line in enumerate(lines_of(path), start=1) if line.strip()]
    if not rows:
        raise fail(path, "holds no samples")
    table = np.array(rows)
    u, v = regular_axis(path, "u", table[:, 0]), regular_axis(path, "v", table[:, 1])
    if len(rows) != u.size * v.size:
        raise fail(path, f"{len(rows)} samples do not fill the {u.size} x {v.size} grid of its u and v values")
    expected_u, expected_v = np.repeat(u, v.size), np.tile(v, u.size)
    off = np.flatnonzero((np.abs(table[:, 0] - expected_u) > GRID_TOLERANCE * (u[1] - u[0]))
                         | (np.abs(table[:, 1] - expected_v) > GRID_TOLERANCE * (v[1] - v[0])))
    if off.size:
        raise fail(path, "sample out of the grid's order (u in the outer loop, v increasing within it)", off[0] + 1)
    check_square_step(path, u, v)
    return BeamMap(u=u, v=v, power=table[:, 2].reshape(u.size, v.size).T.copy(), path=str(path))


def check_square_step(path, u, v):
    """Refuse a grid whose u and v steps differ: the model's beam pixels are square."""
    if not math.isclose(u[1] - u[0], v[1] - v[0], rel_tol=1e-3):
        raise fail(path, f"u and v steps differ ({u[1] - u[0]:.4g} and {v[1] - v[0]:.4g} rad); the model's pixels are "
                         "square")


TICRA_MARKER = "++++"
"""The line that ends a TICRA grid file's free-text header."""


def read_ticra_grid(path) -> BeamMap:
    """A TICRA (GRASP) far-field grid: a free-text header ending in '++++', then the field type, the set and
    component counts (one set; two numbers, real and imaginary, per component), the set's centre, its extent
    (u_min v_min u_max v_max, radians), its counts (nu nv 0), and nu nv rows, u varying fastest. The power is
    |co-polar|^2, re^2 + im^2 of the first component."""
    lines = lines_of(path)
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == TICRA_MARKER) + 1
    except StopIteration:
        raise fail(path, f"no {TICRA_MARKER!r} line ending the header: not a TICRA grid file") from None
    if len(lines) < start + 5:
        raise fail(path, "ends inside the grid's description", len(lines))
    numbers = start + 1  # 1-based line numbers of lines[start:]
    numbers_of(path, lines[start], numbers, 1)
    nset, _, ncomp, _ = (int(x) for x in numbers_of(path, lines[start + 1], numbers + 1, 4, COUNT))
    if nset != 1 or ncomp < 1:
        raise fail(path, f"{nset} field set(s) of {ncomp} component(s): one set of at least one expected", numbers + 1)
    numbers_of(path, lines[start + 2], numbers + 2, 2)
    u_min, v_min, u_max, v_max = numbers_of(path, lines[start + 3], numbers + 3, 4)
    nu, nv, limit = (int(x) for x in numbers_of(path, lines[start + 4], numbers + 4, 3, COUNT))
    if limit != 0 or nu < 2 or nv < 2:
        raise fail(path, f"counts {nu} {nv} {limit}: a full grid (last count 0) of at least 2 x 2 expected",
                   numbers + 4)
    body = [line for line in lines[start + 5:]]
    while body and not body[-1].strip():
        body.pop()
    if len(body) != nu * nv:
        raise fail(path, f"{len(body)} rows of field values, not the {nu} x {nv} = {nu * nv} of its counts")
    values = np.array([numbers_of(path, line, numbers + 5 + i, 2 * ncomp) for i, line in enumerate(body)])
    u, v = np.linspace(u_min, u_max, nu), np.linspace(v_min, v_max, nv)
    if not (u[1] > u[0] and v[1] > v[0]):
        raise fail(path, "its extent does not increase along u and v", numbers + 3)
    check_square_step(path, u, v)
    power = (values[:, 0] ** 2 + values[:, 1] ** 2).reshape(nv, nu)
    return BeamMap(u=u, v=v, power=power, path=str(path))


def same_grid(maps):
    """Refuse maps whose grids differ; the three maps of one observation must share one."""
    first = maps[0]
    for other in maps[1:]:
        if other.u.shape != first.u.shape or other.v.shape != first.v.shape or not (
                np.allclose(other.u, first.u, rtol=0, atol=GRID_TOLERANCE * first.step)
                and np.allclose(other.v, first.v, rtol=0, atol=GRID_TOLERANCE * first.step)):
            raise fail(other.path, f"its u, v grid ({other.v.size} x {other.u.size}, step {other.step:.4g} rad) "
                                   f"differs from that of {first.path} ({first.v.size} x {first.u.size}, step "
                                   f"{first.step:.4g} rad)")
    return maps

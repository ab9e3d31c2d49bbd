"""Judging measured speed-ups and shares: a speed-up known as a value or a bound (Ratio), aggregates that keep
bounds open (aggregate), and a claim's rule with its grades (Rule). No records are read here."""

import dataclasses
import math
import statistics

import numpy as np

REPRODUCED, PARTLY, NOT_REPRODUCED, NOT_MEASURED = "reproduced", "partly", "not reproduced", "not measured here"


VALUE, AT_LEAST, AT_MOST, BETWEEN, UNDETERMINED = "value", "at least", "at most", "between", "undetermined"
"""How far a speed-up is known: a value; a lower bound (the slower fit never reached the target, so its time is at
least its total); an upper bound (the faster one never did); between two bounds (a median that bounds can move
only so far); undetermined (neither fit reached it)."""


class Ratio(float):
    """A speed-up time(slow) / time(fast): the ratio of the medians over repeats (for a bound, the bound), with low and
    high the smallest and largest ratio over every pair of repeats (one of each series; open, 0 or inf, on a bound's
    open side), its kind, and floor and ceiling: what it can be given what was measured. A float, so that it sorts and
    plots as one."""

    def __new__(cls, value, low, high, kind=VALUE, floor=None, ceiling=None):
        ratio = super().__new__(cls, value)
        ratio.low, ratio.high, ratio.kind = float(low), float(high), kind
        ratio.floor = float(floor) if floor is not None else float(value) if kind in (VALUE, AT_LEAST) else 0.0
        ratio.ceiling = float(ceiling) if ceiling is not None else float(value) if kind in (VALUE, AT_MOST) \
            else math.inf
        return ratio

    @property
    def is_bound(self):
        return self.kind != VALUE

    def __repr__(self):
        return f"Ratio({float(self)!r}, {self.low!r}, {self.high!r}, {self.kind!r}, {self.floor!r}, {self.ceiling!r})"


def as_ratio(value):
    """A speed-up as a Ratio (a plain number: a value without a range)."""
    return value if isinstance(value, Ratio) else Ratio(value, value, value)


def as_ratios(ratios):
    return {key: as_ratio(value) for key, value in ratios.items()}


def aggregate(function, ratios):
    """function (median, min, max, a geometric mean: any function increasing in each argument) of speed-ups, as a
    Ratio: a value where every bound among them leaves the result fixed, else a bound or undetermined; low and high
    the function of the lows and of the highs."""
    ratios = list(ratios)
    floor, ceiling = function([r.floor for r in ratios]), function([r.ceiling for r in ratios])
    low, high = function([r.low for r in ratios]), function([r.high for r in ratios])
    if floor == ceiling:
        return Ratio(floor, low, high)
    if math.isinf(ceiling) and floor > 0:
        return Ratio(floor, low, math.inf, AT_LEAST)
    if floor == 0 and math.isfinite(ceiling):
        return Ratio(ceiling, 0.0, high, AT_MOST)
    if floor > 0 and math.isfinite(ceiling):
        return Ratio(floor, low, high, BETWEEN, floor, ceiling)
    return Ratio(math.nan, 0.0, math.inf, UNDETERMINED)


@dataclasses.dataclass(frozen=True)
class Rule:
    """How a claim is judged: what is measured, and the two thresholds of the verdict (larger is better unless
    upper, where the measure must stay at or below them). The verdict functions and the report's rules table are
    both made from RULES."""

    measure: str
    reproduced: float
    partly: float
    upper: bool = False

    def grade(self, value):
        """The verdict of a measured value (None: not measured). A speed-up known only as a bound (Ratio) is graded
        at both ends of what it can be: the verdict where both agree, else undetermined (never graded as a value)."""
        if value is None:
            return NOT_MEASURED
        if isinstance(value, Ratio):
            return self.grade_range(value.floor, value.ceiling) if value.kind != UNDETERMINED else UNDETERMINED
        return self.grade_range(value, value)

    def grade_range(self, low, high):
        """The verdict of a value known to lie in [low, high]: the grade both ends share, else undetermined."""
        grades = {self.grade_value(low), self.grade_value(high)}
        return grades.pop() if len(grades) == 1 else UNDETERMINED

    def grade_value(self, value):
        meets = (lambda limit: value <= limit) if self.upper else (lambda limit: value >= limit)
        return REPRODUCED if meets(self.reproduced) else PARTLY if meets(self.partly) else NOT_REPRODUCED

    def possible(self, low, high):
        """The grades a value in [low, high] may have, worst first (one where the verdict is determined)."""
        order = (NOT_REPRODUCED, PARTLY, REPRODUCED)
        ends = sorted({order.index(self.grade_value(low)), order.index(self.grade_value(high))})
        return order[ends[0]:ends[-1] + 1]

    @property
    def text(self):
        sign = "<=" if self.upper else ">="
        return (f"{self.measure}: {sign} {self.reproduced:g} reproduced, {sign} {self.partly:g} partly, else not "
                "reproduced")


def per_size_medians(ratios, min_npix):
    """{npix: median ratio over Zernike orders (a Ratio, a bound where a censored fit leaves it open)} for the grid
    sizes from min_npix up."""
    by_npix = {}
    for (npix, _), value in ratios.items():
        if npix >= min_npix:
            by_npix.setdefault(npix, []).append(value)
    return {npix: aggregate(statistics.median, values) for npix, values in sorted(by_npix.items())}


def weakest_size(ratios, min_npix):
    """The claim must hold at every grid size from min_npix up: the smallest per-size median, with all of them."""
    medians = per_size_medians(as_ratios(ratios), min_npix)
    if not medians:
        return None, medians
    value = aggregate(min, medians.values())
    if value.kind == VALUE:  # one size is the weakest: its own median, its range over its own repeats
        value = medians[weakest_npix(medians)]
    return value, medians


def weakest_npix(by_npix):
    """The grid size whose median sets the smallest: the least floor (the size that may be the weakest)."""
    return min(by_npix, key=lambda npix: (by_npix[npix].floor, float(by_npix[npix].ceiling)))


def slope_range(log_p, lows, highs):
    """Least and largest least-squares slope of log(ratio) against log_p over ratios known to lie in [lows, highs]
    (the slope is linear in each log ratio: each end takes the low or the high by the sign of its weight)."""
    x = np.asarray(log_p) - np.mean(log_p)
    weights = x / np.sum(x * x)
    with np.errstate(divide="ignore"):
        low_logs, high_logs = np.log(lows), np.log(highs)
    least = sum(w * (lo if w > 0 else hi) for w, lo, hi in zip(weights, low_logs, high_logs, strict=True) if w)
    most = sum(w * (hi if w > 0 else lo) for w, lo, hi in zip(weights, low_logs, high_logs, strict=True) if w)
    return float(least), float(most)


def absolute_range(least, most):
    """[least, most] of |s| for s in [least, most]."""
    if least <= 0 <= most:
        return 0.0, max(-least, most)
    return min(abs(least), abs(most)), max(abs(least), abs(most))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Verdict:
    """A claim judged on one run: value (a number, a Ratio, or None where not measured), verdict (its grade) and
    text (the value in a few words, for a cell; None where not measured). A claim's own kind adds what it found."""

    value: float | None = None
    verdict: str = NOT_MEASURED
    text: str | None = None

    def worded(self, text):
        """The same verdict with its text (None for an empty one)."""
        return dataclasses.replace(self, text=text or None)

    def extent(self):
        """The range its value is known to lie in: a bound's floor and ceiling."""
        return self.value.floor, self.value.ceiling


@dataclasses.dataclass(frozen=True, kw_only=True)
class Share(Verdict):
    """A verdict on a share: passed of total."""

    passed: int = 0
    total: int = 0


def share_verdict(passed, rule) -> Share:
    """The share of passes graded by rule; none: not measured."""
    if not passed:
        return Share()
    share = sum(passed) / len(passed)
    return Share(value=share, verdict=rule.grade(share), passed=sum(passed), total=len(passed))


def geometric_mean(values):
    """exp(mean(log v)): the mean of ratios that multiplies, geometric_mean(a * b) = geometric_mean(a) *
    geometric_mean(b) over the same points; 0 or inf where one of them is (a bound's open end)."""
    values = list(values)
    zero, infinite = 0 in values, any(map(math.isinf, values))
    if zero or infinite:
        return math.nan if zero and infinite else 0.0 if zero else math.inf
    return math.exp(statistics.fmean(math.log(v) for v in values))


Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95% interval."""


def wilson(successes, trials):
    """The 95% Wilson score interval of a success rate (low, high)."""
    if not trials:
        return None
    share = successes / trials
    centre = (share + Z95**2 / (2 * trials)) / (1 + Z95**2 / trials)
    half = Z95 * math.sqrt(share * (1 - share) / trials + Z95**2 / (4 * trials**2)) / (1 + Z95**2 / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclasses.dataclass(frozen=True)
class Pair:
    """Two fits of the same data compared (C5a): series against `against` at (npix, nzern), how far apart they
    ended (standard errors: the Mahalanobis distance under the point's optimum, or the largest parameter difference in
    the basis' standard errors), on which basis ("Mahalanobis", "sandwich", "exact", "BFGS"), whether the two can be
    compared (a fit stopped short or at a time limit cannot), and where the pair comes from."""

    series: object
    against: object
    npix: int
    nzern: int
    max_stderr: float
    basis: str
    comparable: bool
    source: str = "sweep"

    @property
    def comparison(self) -> tuple:
        """What the pair compares: its two series and its point. The cross-check and the sweep fit the same data at a
        point (problem.Problem.simulated), so their fits of one pair of series there are refits of one comparison."""
        return frozenset((self.series, self.against)), self.npix, self.nzern


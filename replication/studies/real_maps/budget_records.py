"""The records of a source's error budget beside its fit (budget.py, truncation.py, misfit.py): what moves its
surface when a choice is made the other way, the orders beyond its last, the model's misfit. RealSource holds them."""

from __future__ import annotations

from typing import Annotated

import msgspec

from replication.core.records import Count, MaybeNumber, Number, Order, Record, Vector


class TermValues(Record):
    """The per-map terms' fitted values by name (None: not fitted): the -dz and +dz maps' pointing (phase tilts x, y,
    radians at the rim, map by map), the feed offset's scale (minus one), the two maps' gains (minus one)."""

    pointing: Vector | None = None
    defocus_scale: Vector | None = None
    gains: Vector | None = None


class TermsEffect(Record):
    """What a source's per-map terms did (budget.terms_effect): which were fitted, their parameter count, how much
    lower the objective ends with them, how far the surface moves, and their fitted values by name."""

    terms: list[str]
    parameters: Count
    lower_by: MaybeNumber
    surface_difference_rms_um: Number
    values: TermValues


class HigherOrders(Record):
    """The source fitted beyond its last order (truncation.higher_orders): per higher order, the parameters it adds,
    how much lower its objective ends, the chi-squared p-value of that, how far the surface moves (micrometres rms);
    the taper refitted at each order (dish radii, the last order's first); the order the rule chooses and its
    level."""

    orders: Annotated[list[Order], msgspec.Meta(min_length=1)]
    parameters: list[Count]
    lower_by: list[MaybeNumber]
    p_value: list[MaybeNumber]
    moved_um: list[MaybeNumber]
    tapers: list[Annotated[float, msgspec.Meta(gt=0)]]
    chosen: Order
    significant_p: Annotated[float, msgspec.Meta(gt=0, lt=1)]


class Additions(Record):
    """The source's last fit refitted without the model's additions (budget.additions_effect): which additions its
    fits make, the surface's rms with them and without (micrometres, on the same dish pixels), how far it moves, how
    the refit ended."""

    additions: list[str]
    with_rms_um: Number
    without_rms_um: Number
    surface_difference_rms_um: Number
    message: str


class OtherWeighting(Record):
    """The source's last fit refitted under the other noise weighting (budget.other_weighting): whether the refit
    weighted each map by its own noise, how far its surface moved (micrometres rms), how it ended."""

    per_map_noise: bool
    surface_difference_rms_um: Number
    message: str


class Misfit(Record):
    """The model's misfit as a surface (misfit.misfit): the panel-scale surface rms the residuals' excess over the
    noise implies (micrometres along the normal), its rms phase, the squared residuals' level where the probes move
    nothing (noise units squared), the mean squared excess the misfit accounts for per sample, the probes it was
    calibrated with and their scale (dish radii)."""

    misfit_um: Number
    phase_rad: Number
    level: Number
    excess: Number
    probes: Count
    probe_scale: Number


class OtherObjective(Record):
    """The same ladder fitted under the other loss (budget.other_objective): the surface it moved (micrometres rms)
    and, for the Cauchy likelihood at the residuals' scale, each stage's scale (noise units)."""

    objective: str
    surface_difference_rms_um: Number
    widths: list[Number] | None = None

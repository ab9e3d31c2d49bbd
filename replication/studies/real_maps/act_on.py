"""What an engineer can act on, per source of real maps (the main report's short table): the residuals, the order
the maps ask for, the panel surface left once the optics terms are removed, the surface's uncertainty as its
statistical part and its two largest systematics, the axial focus; and one sentence on whether the model holds the
maps. Read side: no torch."""

from __future__ import annotations

import dataclasses

from replication.core.format import um

HOLDS_RESIDUAL = 1.5
"""Residual rms (noise units) up to which the model is said to hold a map: a model that holds it leaves 1, and the
noise's own estimate is good to a few tens of percent."""


@dataclasses.dataclass(frozen=True)
class ActOn:
    """One source's row, as the table shows it: its short name, the residual rms of its three maps (noise units),
    the order the rule asks for ('n = 5', or '>= 8' where the highest fitted is still called for), the panel
    surface's rms once the optics terms are out (um), the statistical uncertainty (median 1 sigma), the order
    truncation and the model's misfit (um rms; '—' where not recorded), the axial focus as a feed offset (mm, with
    its standard error)."""

    short: str
    residuals: str
    order: str
    panels_um: str
    statistical_um: str
    truncation_um: str
    misfit_um: str
    focus_mm: str


def act_on_row(short, record) -> ActOn:
    """A source record's row (ActOn)."""
    higher, optics, misfit = record.higher_orders, record.optics, record.misfit
    order, truncation = f"n = {record.order}", "—"
    if higher:
        highest = higher.chosen == higher.orders[-1]
        order = f">= {higher.chosen}" if highest else f"n = {higher.chosen}"
        truncation = "none" if higher.chosen == record.order else (
            (">= " if highest else "") + um(higher.moved_um[higher.orders.index(higher.chosen)]))
    focus = "—"
    if optics and optics.focus_mm is not None:
        focus = f"{optics.focus_mm:.2f} ± {optics.focus_se_mm:.2f}" if optics.focus_se_mm is not None else (
            f"{optics.focus_mm:.2f}")
    return ActOn(short=short, residuals=", ".join(f"{value:.2g}" for value in record.residual_rms), order=order,
                 panels_um=um(optics.panel_rms_um) if optics else "—",
                 statistical_um=um(record.uncertainty_median_um),
                 truncation_um=truncation,
                 misfit_um=um(misfit.misfit_um) if misfit else "—", focus_mm=focus)


def holds_sentence(records) -> str:
    """Whether the model holds the maps, in one sentence from the records [(short name, source record)]: the
    residuals' range against HOLDS_RESIDUAL, and where it does not hold them, the systematics against the
    statistical uncertainty."""
    if not records:
        return ""
    residuals = [value for _, record in records for value in record.residual_rms]
    low, high = min(residuals), max(residuals)
    if high <= HOLDS_RESIDUAL:
        return f"The model holds these maps (residuals of {low:.2g}-{high:.2g} noise units; 1 where it holds them)."
    misfits = [record.misfit.misfit_um for _, record in records if record.misfit]
    statistical = [record.uncertainty_median_um for _, record in records if record.uncertainty_median_um is not None]
    sentence = (f"The model does not hold these maps (residuals of {low:.2g}-{high:.2g} noise units; 1 where it holds "
                f"them, up to {HOLDS_RESIDUAL:g} read so)")
    if misfits and statistical and min(misfits) > max(statistical):
        sentence += (f": the misfit they imply ({um(min(misfits))}-{um(max(misfits))} um) exceeds the statistical "
                     f"uncertainty ({um(min(statistical))}-{um(max(statistical))} um), so read each surface as its "
                     "large-scale shape, not as panel settings")
    return sentence + "."

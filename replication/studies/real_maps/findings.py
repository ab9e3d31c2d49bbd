"""Sentences of the real-maps findings that read one source record's summaries: what its random starts found and
what its per-map terms did (read.py's findings call them)."""

from __future__ import annotations

import math
import statistics

import scipy.stats

from replication.core.format import number, um


def plural(count, noun):
    """'1 stage', '2 stages'."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


ARCSEC = 180 * 3600 / math.pi
"""Arcseconds a radian."""


def terms_line(short, effect, record):
    """One sentence on what a source's per-map terms did (budget.terms_effect): the objective's decrease as a
    likelihood ratio against chi-squared's 99.9% point for their parameter count, the surface's shift, and the fitted
    values (pointing as the beam's offset on the sky, from the phase tilt t: t wavelength / (2 pi R))."""
    values = effect.values
    parts = []
    if values.gains is not None:
        parts.append("gains " + ", ".join(f"{g:+.1%}" for g in values.gains) + " (-dz, +dz maps)")
    if values.defocus_scale is not None:
        parts.append(f"feed offset x {1 + values.defocus_scale[0]:.3f}")
    if values.pointing is not None:
        radius = record.telescope.radius if record.config else None
        if radius:
            arcsec = [t * record.wavelength / (2 * math.pi * radius) * ARCSEC for t in values.pointing]
            parts.append("pointing (x, y) " + "; ".join(f"{a:+.2g}, {b:+.2g}" for a, b in
                                                      (arcsec[0:2], arcsec[2:4])) + " arcsec (-dz, +dz maps)")
    lower = effect.lower_by
    if lower is None:
        verdict = "the fit without them ended nowhere finite"
    else:
        critical = float(scipy.stats.chi2.ppf(0.999, effect.parameters))
        verdict = (f"twice the objective's decrease, {2 * lower:.4g}, "
                   + ("exceeds" if 2 * lower > critical else "stays below")
                   + f" chi-squared's 99.9% point for {effect.parameters} parameters ({critical:.3g}): they "
                   + ("matter" if 2 * lower > critical else "are not needed"))
    return (f"{short}: fitted with per-map terms ({', '.join(effect.terms)}): {verdict}; without them the surface "
            f"moves by {effect.surface_difference_rms_um:.0f} um rms. Fitted: {'; '.join(parts)}.")


def multistart_line(short, found):
    """One sentence on a source's random starts (measure.finish_source): how many reached the best minimum, how
    many minima there were, where the ladder's optimum lies against the best, and the starts read as independent
    multi-starts of found.group."""
    ladder = ("the ladder's optimum lies " + (f"{found.ladder_from_best_um:.2g} um from it (objective "
              f"{found.ladder_fun - found.best_fun:+.3g})" if found.ladder_from_best_um is not None
              else "nowhere finite"))
    seconds = sorted(found.group_seconds)
    groups = (f" Read as {plural(found.groups, 'independent multi-start')} of {found.group} starts each: "
              f"{found.groups_reaching} of {found.groups} reach it, in {statistics.median(seconds):.2g} s "
              f"each (longest {seconds[-1]:.2g} s) on {plural(found.threads, 'thread')}." if seconds else "")
    minima = len(found.basins)
    return (f"{short}: of {found.starts} random starts (aperture phase {found.scale:g} rad rms), "
            f"{found.reached_best} ended at the best minimum found (surface within {found.same_um:g} um of its "
            f"own), {minima} distinct minim{'um' if minima == 1 else 'a'} in all; {ladder}.{groups}")


def p_text(value) -> str:
    """A chi-squared p-value in a few characters: 'p < 1e-12' below that, else two figures."""
    return "p not finite" if value is None else "p < 1e-12" if value < 1e-12 else f"p = {value:.2g}"


def higher_orders_line(short, found, record):
    """Two sentences on the source fitted beyond its last order (truncation.higher_orders): each higher order's
    decrease of the objective (its chi-squared p for the parameters it adds) and how far the surface moves, against
    the statistical uncertainty; the order the rule chooses, and the truncation systematic (the move to it)."""
    order, chosen, orders = record.order, found.chosen, found.orders
    ps = {p_text(p) for p in found.p_value}
    p_words = f"{ps.pop()} each" if len(ps) == 1 else ", ".join(p_text(p) for p in found.p_value)
    statistical = record.uncertainty_median_um
    lines = (f"{short}, fitted beyond n = {order}: n = {', '.join(map(str, orders))} lower the objective by "
             f"{', '.join(number(v, 2) for v in found.lower_by)} (chi-squared {p_words}, for "
             f"{', '.join(map(str, found.parameters))} more parameters; the taper refitted at each order: "
             f"{', '.join(f'{v:.3g}' for v in found.tapers)} dish radii from n = {order}) and move the surface by "
             f"{', '.join(um(v) for v in found.moved_um)} um rms"
             + (f", against its statistical uncertainty of {um(statistical)} um (median)." if statistical is not None
                else "."))
    rule = (f" The order rule (the lowest order beyond which no higher one lowers the objective past chi-squared's "
            f"{1 - found.significant_p:.1%} point for the parameters it adds) chooses n = {chosen}")
    if chosen == order:
        return lines + rule + ", the order fitted."
    moved = found.moved_um[orders.index(chosen)]
    at_least = ", the highest fitted: the maps ask for at least that order, and" if chosen == orders[-1] else ";"
    return (lines + rule + f"{at_least} the surface at n = {order} carries a truncation systematic of "
            f"{'at least ' if chosen == orders[-1] else ''}{number(moved, 3)} um rms.")


def optics_line(short, optics):
    """One sentence on the optics terms of a source's surface (optics.optics_terms): the axial focus as a feed
    offset, the coma's path at the rim, the pointing, each with its standard error, and the panel surface left."""
    def measured(value, error, unit):
        """value +- error, both to the error's second significant figure."""
        digits = max(0, 1 - math.floor(math.log10(error))) if error and error > 0 else 3
        text = f"{value:.{digits}f}"
        return f"{text.lstrip('-') if float(text) == 0 else text} +- {error:.{digits}f} {unit}"

    parts = [f"pointing {measured(optics.pointing_arcsec[0], optics.pointing_se_arcsec[0], 'arcsec')} along "
             f"the aperture's x and {measured(optics.pointing_arcsec[1], optics.pointing_se_arcsec[1], 'arcsec')}"
             " along its y"]
    if optics.focus_mm is not None:
        parts.insert(0, f"an axial focus error of {measured(optics.focus_mm, optics.focus_se_mm, 'mm')} of "
                        "feed offset (in the sense of the +dz map's; moving the feed by minus it refocuses)")
    if optics.coma_mm:
        parts.insert(1, "coma of " + " and ".join(
            f"{measured(value, error, 'mm')} ({term})" for value, error, term in
            zip(optics.coma_mm, optics.coma_se_mm, ("Z(3,-1)", "Z(3,1)"), strict=True)) + " of path at the rim")
    return (f"{short}: the optics in its phase (moved by the feed or subreflector, not by panels): "
            f"{'; '.join(parts)}. Without them the panel surface is {number(optics.panel_rms_um, 3)} um rms.")


def budget_line(short, record):
    """The surface's error budget in one sentence, each part that the source record holds (micrometres rms over the
    dish, the statistical part the median 1 sigma): statistical, the order truncation (the move to the order the
    rule chooses; none where it chooses the order fitted), the loss, the per-map terms, the noise weighting, the
    whitening along the scans (the whitened refit's move), the model's misfit (misfit.misfit); None where the record
    holds none but the statistical part."""
    parts = []
    higher = record.higher_orders
    if higher:
        chosen = higher.chosen
        if chosen == record.order:
            parts.append(f"order truncation none (the order rule keeps n = {chosen})")
        else:
            bound = "at least " if chosen == higher.orders[-1] else ""
            parts.append(f"order truncation {bound}{um(higher.moved_um[higher.orders.index(chosen)])} "
                         f"(to the rule's n = {chosen})")
    for key, words in (("other_objective", "the loss"), ("terms_effect", "the per-map terms"),
                       ("other_weighting", "the noise weighting")):
        if getattr(record, key):
            parts.append(f"{words} {um(getattr(record, key).surface_difference_rms_um)}")
    whitening = getattr(record, "whitening", None)
    if whitening is not None and whitening.moved_um is not None:
        parts.append(f"the whitening along the scans {um(whitening.moved_um)}")
    misfit = getattr(record, "misfit", None)
    if not parts and misfit is None:
        return None
    moves = "; ".join(parts) + " (each the move of the surface when that choice is made the other way)"
    beyond = misfit and (f"the model's misfit {um(misfit.misfit_um)} (the panel-scale surface the residuals' "
                         "excess over the noise implies: the room they leave for a surface no order holds)")
    return (f"{short}: the surface's error budget (um rms over the dish): statistical "
            f"{um(record.uncertainty_median_um)} (median 1 sigma); "
            + "; ".join(part for part in (parts and moves, beyond) if part) + ".")


def additions_line(short, effect) -> str:
    """What the model's additions (support legs, each map's own noise, the whitening along the scans) do to a
    source's surface, in one sentence: its rms with them and without (the fit refitted without them from its
    optimum, on the same dish pixels) and how far it moves."""
    return (f"{short}: with the model's additions ({', '.join(effect.additions)}) the surface is "
            f"{um(effect.with_rms_um)} um rms; refitted without them from that optimum, "
            f"{um(effect.without_rms_um)} um rms (it moves {um(effect.surface_difference_rms_um)} um "
            "rms).")

"""What an engineer can act on: a source's row (the order the maps ask for, the budget's parts, the focus) and the
sentence on whether the model holds the maps, from made-up source records."""

from types import SimpleNamespace as part

from replication.studies.real_maps.act_on import HOLDS_RESIDUAL, act_on_row, holds_sentence


def source(residuals=(3.9, 3.7, 3.0), chosen=8, misfit=396.0, statistical=113.0, optics=True):
    return part(order=5, residual_rms=list(residuals), uncertainty_median_um=statistical,
                higher_orders=chosen and part(orders=[6, 7, 8], chosen=chosen, moved_um=[143.0, 374.0, 364.0]),
                misfit=misfit and part(misfit_um=misfit),
                optics=optics and part(focus_mm=6.634, focus_se_mm=0.231, panel_rms_um=998.4))


def test_a_row_says_the_order_asked_for_and_each_part_of_the_budget():
    row = act_on_row("SRT", source())
    assert (row.residuals, row.order, row.truncation_um) == ("3.9, 3.7, 3", ">= 8", ">= 364")
    assert (row.panels_um, row.statistical_um, row.misfit_um, row.focus_mm) == ("998", "113", "396", "6.63 ± 0.23")
    inside = act_on_row("SRT", source(chosen=7))
    assert (inside.order, inside.truncation_um) == ("n = 7", "374")
    kept = act_on_row("SRT", source(chosen=5))
    assert (kept.order, kept.truncation_um) == ("n = 5", "none")
    bare = act_on_row("SRT", source(chosen=None, misfit=None, optics=False))
    assert (bare.order, bare.truncation_um, bare.misfit_um, bare.panels_um, bare.focus_mm) == (
        "n = 5", "—", "—", "—", "—")


def test_the_model_is_said_to_hold_the_maps_only_where_every_residual_is_near_the_noise():
    assert holds_sentence([]) == ""
    held = holds_sentence([("a", source(residuals=(1.0, 1.2, HOLDS_RESIDUAL)))])
    assert held == "The model holds these maps (residuals of 1-1.5 noise units; 1 where it holds them)."
    missed = holds_sentence([("a", source()), ("b", source(residuals=(3.1, 8.6, 8.8), misfit=311.0,
                                                           statistical=78.7))])
    assert missed.startswith("The model does not hold these maps (residuals of 3-8.8 noise units;")
    assert "the misfit they imply (311-396 um) exceeds the statistical uncertainty (78.7-113 um)" in missed
    small = holds_sentence([("a", source(misfit=50.0))])
    assert "does not hold" in small
    assert "exceeds" not in small  # a misfit inside the statistical uncertainty is not said to exceed it

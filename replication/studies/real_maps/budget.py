"""What moves a source's surface beside its noise, each measured by fitting again another way: the loss (the other
objective's ladder), the per-map terms (the ladder without them) and the noise weighting (each map in units of its
own noise, or one scale for all three: the fit refitted the other way from its optimum). The budget's other parts
are the statistical uncertainty (surface.py) and the order truncation (truncation.py); findings.budget_line says
them together. Beside the budget, what the model's additions (support legs, each map's own noise, the whitening
along the scans) do to the surface: the fit refitted without all of them (additions_effect)."""

from __future__ import annotations

import dataclasses

import numpy as np

from oof_common.limits import TOL
from replication.core import series
from replication.core.implementations import of
from replication.core.objectives import CAUCHY
from replication.core.optimum import finite_or_none
from replication.core.reduction.ladder import fit_ladder
from replication.core.reduction.sources import OBJECTIVES, TERM_SIZES, Observation, rms, setup_for, surface_error


def other_weighting(observation: Observation, x, order: int, npix: int, tol: float = TOL) -> dict:
    """The fit at the last order refitted (torch's exact adjoint, untimed) from x under the other noise weighting,
    and how far its surface lies from x's: {per_map_noise (the refit's), surface_difference_rms_um, message (how
    the refit ended, scipy's words)}."""
    toggled = observation.with_per_map_noise(not observation.per_map_noise)
    impl = of(series.TORCH_ADJOINT)
    setup = setup_for(impl, toggled, order, npix)
    fitted = impl.package.fit(setup, toggled.prepared(impl.package, setup), np.asarray(x, dtype=np.float64), tol=tol,
                              gamma=toggled.gamma, objective=toggled.objective, gradient=impl.gradient_name)
    plain = setup_for(of(series.NUMPY), observation, order, npix)
    difference = surface_error(np.asarray(fitted.x) - np.asarray(x, dtype=np.float64), plain,
                               observation.source.wavelength)
    return {"per_map_noise": toggled.per_map_noise, "surface_difference_rms_um": rms(difference),
            "message": str(fitted.message)}


def additions(observation: Observation) -> list[str]:
    """The model's additions an observation's fits make, in words: support legs, each map in units of its own noise,
    the whitening along the scans."""
    return [words for on, words in ((observation.source.telescope.legs, "support legs"),
                                    (observation.per_map_noise, "each map in units of its own noise"),
                                    (observation.scan is not None, "whitening along the scans")) if on]


def without_additions(observation: Observation) -> Observation:
    """The observation as the model took it before its additions: no support legs, one noise scale for the three
    maps, no whitening along the scans."""
    return dataclasses.replace(observation, source=observation.source.without_legs()).with_per_map_noise(
        False).whitened(False)


def additions_effect(observation: Observation, x, order: int, npix: int, tol: float = TOL) -> dict | None:
    """What the model's additions do to the surface (None where the fits make none): the fit at the last order
    refitted (torch's exact adjoint, untimed) from x without them (without_additions), and on the same dish pixels
    (the model's without legs) the surface's rms with them and without (micrometres; focus kept), how far it moves,
    how the refit ended: {additions, with_rms_um, without_rms_um, surface_difference_rms_um, message}."""
    names = additions(observation)
    if not names:
        return None
    plain = without_additions(observation)
    impl = of(series.TORCH_ADJOINT)
    setup = setup_for(impl, plain, order, npix)
    fitted = impl.package.fit(setup, plain.prepared(impl.package, setup), np.asarray(x, dtype=np.float64), tol=tol,
                              gamma=plain.gamma, objective=plain.objective, gradient=impl.gradient_name)
    grid, wavelength = setup_for(of(series.NUMPY), plain, order, npix), observation.source.wavelength
    after, before = (surface_error(np.asarray(v, dtype=np.float64), grid, wavelength) for v in (x, fitted.x))
    return {"additions": names, "with_rms_um": rms(after), "without_rms_um": rms(before),
            "surface_difference_rms_um": rms(after - before), "message": str(fitted.message)}


def other_objective(observation, x, order, npix, tol=TOL):
    """The same ladder of orders fitted under the other objective (torch's exact adjoint, untimed, each stage from
    the last; a Cauchy at the residuals' scale, re-estimated per stage: residual_width), and how far its surface lies
    from x's: {objective, widths (each stage's scale in noise units), surface_difference_rms_um, x}."""
    other = next(objective for objective in OBJECTIVES if objective is not observation.objective)
    stages = fit_ladder(of(series.TORCH_ADJOINT), observation.with_objective(other),
                        tuple(range(1, order + 1)), npix, tol, rescale=other is CAUCHY)
    setup = setup_for(of(series.NUMPY), observation, order, npix)
    difference = surface_error(np.asarray(stages[-1].x) - np.asarray(x), setup, observation.source.wavelength)
    return {"objective": other.name, "widths": [stage.width for stage in stages],
            "surface_difference_rms_um": rms(difference), "x": stages[-1].x}


def terms_effect(observation, optimum_found, order, npix, tol=TOL):
    """What the per-map terms do (None where the observation fits none): the same ladder of orders fitted without
    them (torch's exact adjoint, untimed, each stage from the last), how much higher its objective ends than the
    optimum's (a likelihood ratio: under least squares in noise units, twice the difference is chi-squared with as
    many degrees of freedom as the terms' parameters where they do nothing), how far its surface lies from the
    optimum's, and the terms' fitted values: {terms, parameters, lower_by, surface_difference_rms_um, values}."""
    terms = [name for name, on in observation.map_terms.items() if on]
    if not terms:
        return None
    without = observation.without_terms()
    stages = fit_ladder(of(series.TORCH_ADJOINT), without, tuple(range(1, order + 1)), npix, tol)
    setup = setup_for(of(series.NUMPY), observation, order, npix)
    plain = setup_for(of(series.NUMPY), without, order, npix)
    x = np.asarray(optimum_found.x, dtype=np.float64)
    zernikes = setup.basis.shape[0]
    difference = surface_error(np.asarray(stages[-1].x)[:zernikes] - x[:zernikes], setup,
                               observation.source.wavelength)
    return {"terms": terms, "parameters": setup.nparams - plain.nparams,
            "lower_by": finite_or_none(stages[-1].fun - optimum_found.fun),
            "surface_difference_rms_um": rms(difference),
            "values": term_values(x, setup, observation.map_terms)}


def term_values(x, setup, terms) -> dict:
    """The fitted per-map terms by name (make_setup's order: pointing (-dz map's x, y, then +dz map's), the defocus
    scale's d, the gains' g of the -dz and +dz maps): {name: [values]}."""
    values, place = {}, setup.amp_index + 1
    for name, size in TERM_SIZES.items():
        if terms.get(name):
            values[name] = [float(v) for v in x[place:place + size]]
            place += size
    return values

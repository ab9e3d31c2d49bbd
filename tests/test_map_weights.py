"""Each map weighted by its own noise (prepare_data's map_weights): the objective is the loss of each map's excess
times its weight, in both trees alike to 1e-12; the exact adjoint is autograd's and the central differences'; the
Gauss-Newton matrix is the Hessian where the model holds the maps; unit weights change nothing to the bit; bad
weights are refused naming the argument."""

import dataclasses

import numpy as np
import pytest
import torch
from conftest import adjoint_in_both_trees, gauss_newton_is_the_hessian
from test_beam_files import power  # noqa: F401 (the fixture the fake source folder is made from)

import reference_numpy
import torch_impl
from replication.core.simulation import simulate_observation, true_params

WEIGHTS = (1.0, 0.6, 1.7)
NPIX, NZERN = 32, 3


@pytest.fixture(scope="module")
def problem():
    """A setup with the maps' offsets fitted, the truth, noisy maps cut to 24 x 20 pixels with one masked, and a
    point away from the truth."""
    setup = reference_numpy.make_setup(NPIX, NZERN, offsets=True)
    truth = np.concatenate([true_params(setup.nparams - 3), np.zeros(3)])
    maps = simulate_observation(setup, truth, seed=4)[:, 6:30, 6:26]
    mask = np.zeros(maps.shape, dtype=bool)
    mask[1, 3, 4] = True
    point = truth + 0.05 * np.random.default_rng(1).normal(size=truth.size)
    return setup, truth, maps, mask, point


def prepared(package, maps, mask, weights=WEIGHTS, **options):
    setup = package.make_setup(NPIX, NZERN, offsets=True, **options)
    return setup, package.prepare_data(maps, setup, mask, smaller=True, map_weights=weights)


@pytest.mark.parametrize("objective", ["gaussian", "cauchy", "least-squares"])
def test_the_objective_is_the_loss_of_each_maps_excess_times_its_weight(problem, objective):
    setup, _, maps, mask, point = problem
    gamma = 0.01
    model = np.asarray(reference_numpy.beam_maps(point, setup))[:, 4:28, 6:26]  # the maps' place: centred
    excess = np.where(mask, 0.0, (model - maps) * np.array(WEIGHTS)[:, None, None])
    rho = {"gaussian": excess**2 / (2 * gamma**2), "cauchy": np.log1p((excess / gamma) ** 2),
           "least-squares": excess**2}[objective]
    constant = (~mask).sum() * np.log(np.pi * gamma) if objective == "cauchy" else 0.0  # the compared pixels'
    expected = rho.sum() + constant
    values = [package.negative_log_likelihood(point, *prepared(package, maps, mask), gamma, objective)
              for package in (reference_numpy, torch_impl)]
    assert values[0] == pytest.approx(expected, rel=1e-12)
    assert values[1] == pytest.approx(values[0], rel=1e-12)


@pytest.mark.parametrize("objective", ["gaussian", "cauchy"])
def test_the_adjoint_is_autograds_and_the_central_differences_in_both_trees(problem, objective):
    _, _, maps, mask, point = problem
    gamma = 0.02
    adjoint_in_both_trees(lambda package: prepared(package, maps, mask), point, gamma, objective)


def test_the_gauss_newton_matrix_is_the_hessian_where_the_model_holds_the_maps(problem):
    """Least squares in noise units with maps the model makes exactly: the Hessian is J' diag(w^2 / gamma^2) J, the
    Gauss-Newton matrix (both trees: forward differences and exact forward mode)."""
    setup, truth, _, mask, _ = problem
    exact = np.asarray(reference_numpy.beam_maps(truth, setup))[:, 4:28, 6:26]
    gauss_newton_is_the_hessian(lambda package: prepared(package, exact, mask), truth)


def test_unit_weights_change_nothing_to_the_bit(problem):
    _, _, maps, mask, point = problem
    for package in (reference_numpy, torch_impl):
        setup, plain = prepared(package, maps, mask, weights=None)
        _, unit = prepared(package, maps, mask, weights=(1.0, 1.0, 1.0))
        for objective in ("cauchy", "gaussian"):
            a = package.value_and_grad(point, setup, plain, 0.02, objective, gradient="adjoint")
            b = package.value_and_grad(point, setup, unit, 0.02, objective, gradient="adjoint")
            assert float(a[0]) == float(b[0])
            np.testing.assert_array_equal(np.asarray(a[1]), np.asarray(b[1]))


def test_both_trees_fit_weighted_maps_to_the_same_optimum(problem):
    _, truth, maps, mask, _ = problem
    ends = []
    for package in (reference_numpy, torch_impl):
        setup, data = prepared(package, maps, mask)
        ends.append(np.asarray(package.fit(setup, data, truth, gamma=0.02, objective="gaussian",
                                           gradient="adjoint").x))
    np.testing.assert_allclose(ends[0], ends[1], atol=1e-6)


@pytest.mark.parametrize("bad", [(1.0, 2.0), (1.0, -1.0, 1.0), (1.0, float("nan"), 1.0), (0.0, 1.0, 1.0),
                                 "heavy", ((1.0,), (2.0,), (3.0,))])
def test_bad_map_weights_are_refused_naming_the_argument(problem, bad):
    _, _, maps, mask, _ = problem
    for package in (reference_numpy, torch_impl):
        own = package.make_setup(NPIX, NZERN, offsets=True)
        with pytest.raises(ValueError, match="map_weights"):
            package.prepare_data(maps, own, mask, smaller=True, map_weights=bad)


def test_the_weights_apply_to_whole_grid_maps_too():
    setup = torch_impl.make_setup(16, 2)
    truth = true_params(setup.nparams)
    maps = simulate_observation(reference_numpy.make_setup(16, 2), truth, seed=2)
    data = torch_impl.prepare_data(maps, setup, map_weights=WEIGHTS)
    assert data.weights is None
    assert data.map_scale is not None
    assert torch.equal(torch.unique(data.map_scale), torch.tensor(sorted(WEIGHTS), dtype=data.map_scale.dtype))


def test_a_real_maps_run_weights_each_map_by_its_own_noise_where_asked_and_a_resume_keeps_it(tmp_path, power):  # noqa: F811
    """--per-map-noise: each map prepared with the median noise over its own as its weight, the setting in the
    folder's identity and every record's stamp; a resume without it is refused (a folder made before the setting
    holds no such key, and resumes as it was)."""
    from test_beam_files import fake_source_folder

    from replication.core.reduction import sources as real_sources
    from replication.core.results import RunError
    from replication.studies.real_maps import measure as real_maps
    from replication.studies.real_maps.records import read_real_maps

    folder, source = fake_source_folder(tmp_path, power)
    (plain,) = real_sources.read_observations([source], folder, 32)
    plain = plain.without_terms()
    weighted = plain.with_per_map_noise(True)
    setup = real_sources.setup_for(reference_numpy, plain, 2, 32)
    scale = weighted.prepared(reference_numpy, setup).map_scale
    expected = np.median(plain.noise) / np.array(plain.noise)
    np.testing.assert_allclose([scale[k][scale[k] > 0].max() for k in range(3)], expected, rtol=1e-12)
    assert plain.prepared(reference_numpy, setup).map_scale is None
    options = {"max_order": 2, "npix": 32, "repeats": 1, "threads": 1, "quiet": True}
    run = tmp_path / "weighted"
    real_maps.run_real_maps(run, [weighted], **options)
    stages, (summary,), _ = read_real_maps(run)
    assert all(record.per_map_noise is True for record in [*stages, summary])
    with pytest.raises(RunError, match="per_map_noise"):
        real_maps.run_real_maps(run, [plain], **options)
    unweighted = tmp_path / "plain"
    real_maps.run_real_maps(unweighted, [plain], **options)
    assert read_real_maps(unweighted)[0][0].per_map_noise is False


def test_the_noise_weighting_is_measured_as_a_systematic_and_said_in_the_budget(tmp_path, power):  # noqa: F811
    """budget.other_weighting refits the last order the other way from the optimum: toggling twice comes back to
    the same surface, and maps of equal noise move it by nothing. The budget sentence says each part the record
    holds, a truncation to the highest order fitted as a bound, and none where the rule keeps the order."""
    import types

    from test_beam_files import fake_source_folder

    from replication.core.reduction import sources as real_sources
    from replication.studies.real_maps.budget import other_weighting
    from replication.studies.real_maps.findings import budget_line

    folder, source = fake_source_folder(tmp_path, power)
    (observation,) = real_sources.read_observations([source], folder, 32)
    observation = observation.without_terms()
    setup = real_sources.setup_for(reference_numpy, observation, 2, 32)
    start = real_sources.first_start(setup, observation)
    fitted = reference_numpy.fit(setup, observation.prepared(reference_numpy, setup), start, tol=1e-10,
                                 gamma=observation.gamma, objective=observation.objective, gradient="adjoint").x
    moved = other_weighting(observation, fitted, 2, 32)
    assert moved["per_map_noise"] is True
    assert moved["surface_difference_rms_um"] >= 0
    equal = dataclasses.replace(observation, noise=(observation.noise[0],) * 3)
    assert other_weighting(equal, fitted, 2, 32, tol=1e-10)["surface_difference_rms_um"] < 1e-3
    def part(**fields):
        return types.SimpleNamespace(**fields)

    record = part(order=5, uncertainty_median_um=84.0, other_objective=part(surface_difference_rms_um=161.0),
                  terms_effect=part(surface_difference_rms_um=84.4), other_weighting=part(**moved),
                  higher_orders=part(orders=[6, 7, 8], chosen=8, moved_um=[165.0, 350.0, 416.0]))
    line = budget_line("SRT", record)
    assert "statistical 84 (median 1 sigma)" in line
    assert "order truncation at least 416 (to the rule's n = 8)" in line
    assert "the loss 161; the per-map terms 84.4; the noise weighting" in line
    assert "whitening" not in line
    whitened = part(**vars(record) | {"whitening": part(moved_um=91.5)})
    assert budget_line("SRT", whitened).endswith("; the whitening along the scans 91.5 (each the move of the surface "
                                                 "when that choice is made the other way).")
    kept = part(**vars(record) | {"higher_orders": part(orders=[6, 7, 8], chosen=5, moved_um=[1.0, 2.0, 3.0])})
    assert "order truncation none (the order rule keeps n = 5)" in budget_line("SRT", kept)
    bare = part(order=5, uncertainty_median_um=84.0, other_objective=None, terms_effect=None, other_weighting=None,
                higher_orders=None)
    assert budget_line("SRT", bare) is None


def test_the_models_additions_are_measured_by_refitting_without_them(tmp_path, power):  # noqa: F811
    """budget.additions_effect names the additions the fits make (the shipped SRT's support legs, each map's own
    noise) and refits the last order without them from the optimum: on the same dish pixels, the surface with them is
    the one given, the move is the difference; a fit that makes none has nothing to say."""
    from test_beam_files import fake_source_folder

    from replication.core.reduction import sources as real_sources
    from replication.studies.real_maps.budget import additions, additions_effect, without_additions

    folder, _ = fake_source_folder(tmp_path, power)
    source = real_sources.source_named("srt-2019-04-26")  # the shipped one: with its legs
    (observation,) = real_sources.read_observations([source], folder, 32)
    observation = observation.without_terms().with_per_map_noise(True)
    assert additions(observation) == ["support legs", "each map in units of its own noise"]
    plain = without_additions(observation)
    assert additions(plain) == []
    assert additions_effect(plain, [0.0], 2, 32) is None
    assert (plain.source.telescope.legs, observation.source.telescope.legs) == (0, 4)
    setup = real_sources.setup_for(reference_numpy, observation, 2, 32)
    start = real_sources.first_start(setup, observation)
    fitted = reference_numpy.fit(setup, observation.prepared(reference_numpy, setup), start, tol=1e-10,
                                 gamma=observation.gamma, objective=observation.objective, gradient="adjoint").x
    effect = additions_effect(observation, fitted, 2, 32)
    grid = real_sources.setup_for(reference_numpy, plain, 2, 32)
    with_them = real_sources.surface_error(fitted, grid, source.wavelength)
    assert effect["with_rms_um"] == pytest.approx(real_sources.rms(with_them), rel=1e-12)
    assert effect["surface_difference_rms_um"] >= 0
    assert effect["additions"] == additions(observation)

"""Maps whose noise is correlated along the scans, whitened (prepare_data's scan_correlation): the objective is the
loss of the excess whitened along each scan line, in both trees alike to 1e-12; the exact adjoint is autograd's
and the central differences'; each whitened pixel's scores sum to the gradient; the Gauss-Newton matrix is the
Hessian where the model holds the maps; the whitening makes AR(1) noise white; bad settings are refused naming the
argument; without it every path is as before."""

import math

import numpy as np
import pytest
from conftest import adjoint_in_both_trees, gauss_newton_is_the_hessian
from test_beam_files import power  # noqa: F401 (the fixture the fake source folder is made from)

import reference_numpy
import torch_impl
from oof_common.scans import ScanNoise, check_scan
from replication.core.reduction.scan_noise import whitened
from replication.core.simulation import simulate_observation, true_params

NPIX, NZERN = 32, 3
CORRELATION = 0.7
WEIGHTS = (1.0, 0.6, 1.7)


@pytest.fixture(scope="module")
def problem():
    """A setup with the maps' offsets and gains fitted, the truth, noisy maps cut to 24 x 20 pixels with one
    masked, and a point away from the truth."""
    setup = reference_numpy.make_setup(NPIX, NZERN, offsets=True, gains=True)
    truth = np.concatenate([true_params(setup.nparams - 5), np.zeros(5)])
    maps = simulate_observation(setup, truth, seed=4)[:, 6:30, 6:26]
    mask = np.zeros(maps.shape, dtype=bool)
    mask[1, 3, 4] = True
    point = truth + 0.05 * np.random.default_rng(1).normal(size=truth.size)
    return setup, truth, maps, mask, point


def prepared(package, maps, mask, axis=0, weights=WEIGHTS):
    setup = package.make_setup(NPIX, NZERN, offsets=True, gains=True)
    return setup, package.prepare_data(maps, setup, mask, smaller=True, map_weights=weights,
                                       scan_correlation=CORRELATION, scan_axis=axis)


def whitened_by_hand(excess, mask, axis):
    """e' along each line of (3, rows, cols) maps, a masked sample's excess 0 and the sample after it a line's
    first (the module's rule, written out sample by sample)."""
    spread = math.sqrt(1 - CORRELATION**2)
    lines = np.moveaxis(np.where(mask, 0.0, excess), axis + 1, -1)
    kept = np.moveaxis(~mask, axis + 1, -1)
    white = np.zeros_like(lines)
    for index in np.ndindex(lines.shape[:-1]):
        for j in range(lines.shape[-1]):
            if not kept[index][j]:
                continue
            follows = j > 0 and kept[index][j - 1]
            white[index][j] = (lines[index][j] - CORRELATION * lines[index][j - 1]) / spread if follows \
                else lines[index][j]
    return np.moveaxis(white, -1, axis + 1)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("objective", ["gaussian", "cauchy"])
def test_the_objective_is_the_loss_of_the_excess_whitened_along_the_scans(problem, objective, axis):
    setup, _, maps, mask, point = problem
    gamma = 0.01
    model = np.asarray(reference_numpy.beam_maps(point, setup))[:, 4:28, 6:26]  # the maps' place: centred
    excess = whitened_by_hand((model - maps) * np.array(WEIGHTS)[:, None, None], mask, axis)
    rho = excess**2 / (2 * gamma**2) if objective == "gaussian" else np.log1p((excess / gamma) ** 2)
    constant = (~mask).sum() * np.log(np.pi * gamma) if objective == "cauchy" else 0.0
    values = [package.negative_log_likelihood(point, *prepared(package, maps, mask, axis), gamma, objective)
              for package in (reference_numpy, torch_impl)]
    assert values[0] == pytest.approx(rho.sum() + constant, rel=1e-12)
    assert values[1] == pytest.approx(values[0], rel=1e-12)


@pytest.mark.parametrize("objective", ["gaussian", "cauchy"])
def test_the_adjoint_is_autograds_and_the_central_differences_in_both_trees(problem, objective):
    _, _, maps, mask, point = problem
    gamma = 0.02
    reference = adjoint_in_both_trees(lambda package: prepared(package, maps, mask), point, gamma, objective)
    _, batched = torch_impl.batched_value_and_grad(np.stack([point, point]), *prepared(torch_impl, maps, mask),
                                                   gamma, objective)
    np.testing.assert_allclose(batched, np.stack([reference, reference]), rtol=1e-10,
                               atol=1e-10 * np.abs(reference).max())


def test_each_whitened_pixels_scores_sum_to_the_gradient_in_both_trees(problem):
    _, _, maps, mask, point = problem
    gradients, covariances = [], []
    for package in (reference_numpy, torch_impl):
        setup, data = prepared(package, maps, mask)
        gradients.append(np.asarray(package.value_and_grad(point, setup, data, 0.02, "cauchy", gradient="adjoint")[1]))
        params = package.backend.as_model_array(point, setup)
        scores = np.asarray(package.gradient.power_scores(params, setup, data, 0.02, package.losses.loss_of("cauchy")))
        np.testing.assert_allclose(scores.sum(axis=(1, 2, 3)), gradients[-1], rtol=1e-9,
                                   atol=1e-9 * np.abs(gradients[-1]).max(), err_msg=package.__name__)
        covariances.append(package.score_covariance(point, setup, data, 0.02, "cauchy"))
    np.testing.assert_allclose(covariances[1], covariances[0], rtol=1e-9, atol=1e-9 * np.abs(covariances[0]).max())


def test_the_gauss_newton_matrix_is_the_hessian_where_the_model_holds_the_maps(problem):
    """Least squares in noise units with maps the model makes exactly: the Hessian is J''^T J'' / gamma^2, the
    Gauss-Newton matrix (both trees: forward differences and exact forward mode)."""
    setup, truth, _, mask, _ = problem
    exact = np.asarray(reference_numpy.beam_maps(truth, setup))[:, 4:28, 6:26]
    gauss_newton_is_the_hessian(lambda package: prepared(package, exact, mask), truth, window_loss=0.0)


def test_the_whitening_makes_noise_correlated_along_the_scans_white():
    """AR(1) noise along axis 0 of each map, whitened: unit variance, no lag-1 correlation along either axis."""
    rng = np.random.default_rng(3)
    rows, cols = 400, 300
    noise = np.empty((3, rows, cols))
    noise[:, 0] = rng.standard_normal((3, cols))
    for row in range(1, rows):
        noise[:, row] = CORRELATION * noise[:, row - 1] + math.sqrt(1 - CORRELATION**2) * rng.standard_normal((3, cols))
    white = whitened(noise, None, ScanNoise(CORRELATION, 0))
    assert white.std() == pytest.approx(1.0, abs=0.01)
    for axis in (1, 2):
        a, b = np.moveaxis(white, axis, -1)[..., 1:], np.moveaxis(white, axis, -1)[..., :-1]
        assert abs(np.corrcoef(a.ravel(), b.ravel())[0, 1]) < 0.01
    assert abs(np.corrcoef(noise[:, 1:].ravel(), noise[:, :-1].ravel())[0, 1] - CORRELATION) < 0.01


def test_no_whitening_and_a_correlation_of_zero_leave_every_value_as_it_was(problem):
    _, _, maps, mask, point = problem
    for package in (reference_numpy, torch_impl):
        setup = package.make_setup(NPIX, NZERN, offsets=True, gains=True)
        plain = package.prepare_data(maps, setup, mask, smaller=True, map_weights=WEIGHTS)
        zero = package.prepare_data(maps, setup, mask, smaller=True, map_weights=WEIGHTS, scan_correlation=0.0)
        assert plain.whitening is None
        assert zero.whitening is not None
        a = package.value_and_grad(point, setup, plain, 0.02, "cauchy", gradient="adjoint")
        b = package.value_and_grad(point, setup, zero, 0.02, "cauchy", gradient="adjoint")
        assert float(b[0]) == pytest.approx(float(a[0]), rel=1e-14)
        np.testing.assert_allclose(np.asarray(b[1]), np.asarray(a[1]), rtol=1e-13, atol=1e-13 * np.abs(a[1]).max())


@pytest.mark.parametrize(("correlation", "axis", "named"), [
    (1.0, 0, "scan_correlation"), (-1.5, 0, "scan_correlation"), (float("nan"), 0, "scan_correlation"),
    ("0.5", 0, "scan_correlation"), (True, 0, "scan_correlation"), (0.5, 2, "scan_axis"), (0.5, True, "scan_axis"),
    (0.5, "rows", "scan_axis")])
def test_bad_scan_settings_are_refused_naming_the_argument(problem, correlation, axis, named):
    _, _, maps, mask, _ = problem
    with pytest.raises(ValueError, match=named):
        check_scan(correlation, axis)
    for package in (reference_numpy, torch_impl):
        own = package.make_setup(NPIX, NZERN, offsets=True, gains=True)
        with pytest.raises(ValueError, match=named):
            package.prepare_data(maps, own, mask, smaller=True, scan_correlation=correlation, scan_axis=axis)


def test_the_border_bands_correlation_is_the_simulated_scans_and_the_rule_whitens_only_scan_noise():
    """The closure's maps (AR(1) of 0.9 down each column, white across): about 0.9 along axis 0 and 0 along axis 1
    from the in-focus map's border band; the auto rule whitens noise correlated along one axis only."""
    from replication.core.reduction.scan_noise import scan_of, scans_whitened, whitens
    from replication.core.reduction.sources import SOURCES, observation_of
    from replication.studies.closure import maps as closure_maps

    for seed in range(3):
        maps, _, _ = closure_maps.simulated_maps(seed, npix=128, order=3)
        along, across = observation_of(SOURCES[0], maps, closure_maps.STEP).noise_correlation
        assert along == pytest.approx(closure_maps.SCAN_CORRELATION, abs=0.05)
        assert abs(across) < 0.25
        assert scan_of((along, across)) == ScanNoise(along, 0)
    assert scans_whitened((0.79, 0.18))  # the SRT's maps
    assert not scans_whitened((0.92, 0.96))  # GRASP's simulation: smooth along both axes, no scans
    assert not scans_whitened((0.1, 0.0))
    assert scan_of((0.1, -0.5)) == ScanNoise(-0.5, 1)
    assert whitens("yes", (0.0, 0.0))
    assert not whitens("no", (0.9, 0.0))
    assert whitens("auto", (0.9, 0.0))


def test_whitened_residuals_of_scan_noise_are_white_and_keep_the_dropped_samples():
    from replication.core.reduction.scan_noise import whitened_residual
    from replication.studies.closure.maps import SCAN_CORRELATION, scan_noise

    residual = scan_noise(np.random.default_rng(5), (3, 300, 200))
    residual[1, 40, 7] = np.nan
    white = whitened_residual(residual, ScanNoise(SCAN_CORRELATION, 0))
    assert np.isnan(white[1, 40, 7])
    assert np.isfinite(white).sum() == np.isfinite(residual).sum()
    assert np.nanstd(white) == pytest.approx(1.0, abs=0.02)
    lag = white[:, 1:] * white[:, :-1]
    assert abs(np.nanmean(lag)) < 0.02
    assert whitened_residual(residual, None) is residual


def test_a_closure_whitens_where_asked_records_it_and_a_folder_made_before_refuses_a_whitened_resume(tmp_path):
    """--whiten auto on the closure's scan noise: each seed whitened along axis 0, stamped so; a folder whose
    records predate the setting (no whiten key: reduced without) refuses to be resumed whitened, naming it."""
    from conftest import run_command

    from replication.core import measurement
    from replication.core.results import RunError, read_records
    from replication.studies.closure import measure as closure
    from replication.studies.closure.records import CLOSURE_FILE, check_closure

    done = run_command("closure", "--seeds", 1, "--npix", 128, "--max-order", 2, "--whiten", "auto", "--results",
                       tmp_path / "w", "--quiet")
    assert done.returncode == 0, done.stderr
    (record,) = read_records(tmp_path / "w" / CLOSURE_FILE, check=check_closure)
    assert record["whiten"] == "auto"
    assert record["whitened_along"] == 0
    assert record["noise_correlation"][0] == pytest.approx(0.9, abs=0.05)
    assert record["surface_error_um"] < record["truth_surface_um"] / 10
    old = tmp_path / "old"
    old.mkdir()
    identity = closure.closure_identity(128, (1, 2), whiten="no")
    measurement.record_identity(old, {key: value for key, value in identity.items() if key != "whiten"})
    measurement.check_identity(old, identity, before=closure.IDENTITY_BEFORE)  # as it was made: resumes
    with pytest.raises(RunError, match="whiten"):
        measurement.check_identity(old, identity | {"whiten": "auto"}, before=closure.IDENTITY_BEFORE)
    bad = run_command("closure", "--whiten", "maybe", "--results", tmp_path / "b", "--quiet")
    assert bad.returncode == 2
    assert "--whiten" in bad.stderr.strip().splitlines()[-1]


def test_a_real_maps_run_that_whitens_refits_the_last_order_whitened_and_says_so(tmp_path, power):  # noqa: F811
    """real-maps --whiten yes: the timed ladder as before, the source's surface the whitened refit from the last
    stage's optimum (the whitened objective's gradient vanishes there, not the plain one's), its record's
    whitening says the axis and the move; the settings (and --orientation) are stamped, the folder resumes under
    its own and refuses another."""
    from test_beam_files import fake_source_folder

    from replication.core.reduction import sources as real_sources
    from replication.core.results import RunError
    from replication.studies.real_maps import measure as real_maps
    from replication.studies.real_maps.records import read_real_maps

    folder, source = fake_source_folder(tmp_path, power)
    (plain,) = real_sources.read_observations([source], folder, 32)
    plain = plain.without_terms()
    whitened = plain.whitened(True)
    assert whitened.scan is not None
    options = {"max_order": 2, "npix": 32, "repeats": 1, "threads": 1, "quiet": True}
    run = tmp_path / "whitened"
    real_maps.run_real_maps(run, [whitened], **options, whiten="yes", orientation="pyoof")
    assert real_maps.run_real_maps(run, [whitened], **options, whiten="yes", orientation="pyoof") == 0  # resumes
    with pytest.raises(RunError, match="orientation"):
        real_maps.run_real_maps(run, [whitened], **options, whiten="yes")
    stages, (summary,), _ = read_real_maps(run)
    assert summary.orientation == "pyoof"
    assert summary.whiten == "yes"
    assert all(stage.whiten == "yes" for stage in stages)
    assert summary.whitening.axis == whitened.scan.axis
    assert summary.whitening.moved_um > 0
    x = np.asarray(summary.x)
    whitened, plain = whitened.with_taper(summary.sigma), plain.with_taper(summary.sigma)
    setup = real_sources.setup_for(reference_numpy, whitened, 2, 32)
    white_gradient = reference_numpy.value_and_grad(x, setup, whitened.prepared(reference_numpy, setup),
                                                    whitened.gamma, whitened.objective, gradient="adjoint")[1]
    plain_gradient = reference_numpy.value_and_grad(x, setup, plain.prepared(reference_numpy, setup),
                                                    plain.gamma, plain.objective, gradient="adjoint")[1]
    assert np.abs(white_gradient).max() < 1e-3 * np.abs(plain_gradient).max()
    with pytest.raises(RunError, match="whiten"):
        real_maps.run_real_maps(run, [plain], **options, whiten="no")

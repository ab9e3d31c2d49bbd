"""Fits of real maps: time to the optimum from a trajectory (censored where never reached), the stage's optimum,
and a small run of the command on the SRT's GRASP maps where the data are at hand."""

import dataclasses
import json
import types

import msgspec
import numpy as np
import pytest
from conftest import real_maps_folder, run_command

from replication.core import optimum as optima
from replication.core.format import um
from replication.core.optimum import TARGET
from replication.core.reduction import sources as real_sources
from replication.core.reduction.surface import fits_available, uncertainty_ratio
from replication.studies.real_maps import measure as real_maps
from replication.studies.real_maps import read as real_read
from replication.studies.real_maps.records import RealFit, read_real_maps

DATA = real_maps_folder()
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"the SRT maps are absent ({DATA}); "
                                                          f"{real_sources.WHENCE}")


def optimum(covariance):
    covariance = np.asarray(covariance, dtype=float)
    return optima.Optimum(x=np.zeros(len(covariance)), fun=0.0, covariance=covariance,
                             stderr=np.sqrt(np.diag(covariance)), steps=1, last_step=0.0, polished=True)


def test_distances_are_mahalanobis_under_the_sandwich_covariance():
    distances = optimum([[4.0, 0.0], [0.0, 1.0]]).distances(np.array([[4.0, 0.0], [0.0, 0.3], [3.0, 4.0]]))
    np.testing.assert_allclose(distances, [2.0, 0.3, np.sqrt(2.25 + 16.0)])


def test_the_time_to_target_is_the_first_evaluation_within_the_target():
    trajectory = {"seconds": np.array([0.1, 0.2, 0.3, 0.4]),
                  "params": np.array([[1.0, 0.0], [0.15, 0.0], [0.05, 0.0], [0.2, 0.0]])}
    assert optima.time_to_target(0.5, trajectory, optimum(np.eye(2))) == pytest.approx(0.8)


def test_a_fit_that_never_reaches_the_target_is_censored():
    """A fit stopped short (its trajectory never within the target) gets no time to solution: None, a bound at its
    total time, never a value."""
    trajectory = {"seconds": np.array([0.1, 0.2]), "params": np.array([[1.0, 0.0], [0.5, 0.0]])}
    assert optima.time_to_target(0.5, trajectory, optimum(np.eye(2))) is None


def test_the_next_stage_starts_from_the_last_ones_result():
    previous = np.array([0.1, 0.2, 0.01, 0.02, 1.5, 0.3, 0.4, 0.5])  # 2 tilts, illumination, 3 offsets
    plain, every = {}, {"pointing": True, "defocus_scale": True, "gains": True}
    start = real_sources.next_start(previous, types.SimpleNamespace(nparams=11, basis=np.zeros((5, 1))), plain)
    np.testing.assert_array_equal(start, [0.1, 0.2, 0.0, 0.0, 0.0, 0.01, 0.02, 1.5, 0.3, 0.4, 0.5])
    joined = real_sources.next_start(previous, types.SimpleNamespace(nparams=15, basis=np.zeros((2, 1))), plain)
    np.testing.assert_array_equal(joined, [0.1, 0.2, 0.01, 0.02, 1.5] + [0.0] * 7 + [0.3, 0.4, 0.5])  # terms join
    kept = np.arange(15.0)
    again = real_sources.next_start(kept, types.SimpleNamespace(nparams=18, basis=np.zeros((5, 1))), every)
    np.testing.assert_array_equal(again, [0, 1, 0, 0, 0, *range(2, 15)])  # the same terms carried over
    dropped = real_sources.next_start(kept, types.SimpleNamespace(nparams=8, basis=np.zeros((2, 1))), every)
    np.testing.assert_array_equal(dropped, [0, 1, 2, 3, 4, 12, 13, 14])


def the_two_trees_agree_on_the_real_maps(stage, sigma):
    """At a stage's start (where the gradient is not small), on the GRASP maps (Gregorian, blockage, offsets, mask):
    the same objective to 1e-12 and the same exact gradient to 1e-10 in both trees."""
    import reference_numpy
    import torch_impl
    from replication.core.implementations import of
    from replication.core.series import NUMPY, TORCH_CPU

    observation = real_sources.read_observation(real_sources.source_named("grasp-26ghz"), DATA).with_taper(sigma)
    x = np.array(stage.start)
    values = {}
    for package, chosen in ((reference_numpy, NUMPY), (torch_impl, TORCH_CPU)):
        setup = real_sources.setup_for(of(chosen), observation, stage.order, 128)
        data = package.prepare_data(observation.maps, setup, observation.dropped, smaller=True)
        values[chosen] = package.value_and_grad(x, setup, data, observation.gamma, gradient="adjoint")
    (a, grad_a), (b, grad_b) = values.values()
    assert a == pytest.approx(b, rel=1e-12)
    assert np.max(np.abs(grad_a - grad_b)) <= 1e-10 * np.max(np.abs(grad_a))


@pytest.mark.slow
@needs_data
def test_a_small_run_on_the_grasp_maps_writes_checked_records_and_resumes(tmp_path):
    arguments = ("real-maps", "--maps", DATA, "--source", "grasp-26ghz", "--npix", 128, "--max-order", 2,
                 "--repeats", 1, "--starts", 8, "--results", tmp_path / "r", "--quiet")
    done = run_command(*arguments)
    assert done.returncode == 0, done.stderr
    stages, sources, tapers = read_real_maps(tmp_path / "r")
    assert [s.order for s in stages] == [1, 2]
    profile = dict(map(tuple, tapers[0].profile))
    assert set(real_sources.TAPERS) < set(profile)  # the grid, then widths between the best one's neighbours
    assert min(profile.values()) == pytest.approx(profile[tapers[0].sigma])
    widths = sorted(profile)
    nearest = widths[widths.index(tapers[0].sigma) - 1: widths.index(tapers[0].sigma) + 2]
    assert max(nearest) - min(nearest) <= 4 * real_sources.TAPER_TOL  # fitted: its neighbours lie close
    for stage in stages:
        assert stage.optimum.polished
        assert len(stage.fits) == len(real_maps.SERIES)
        assert all(m.fun >= stage.optimum.fun - 1e-6 for m in stage.minima if m.polished)
        for fit in stage.fits:
            assert fit.target_s is None or fit.target_s <= fit.total_s
            assert (fit.target_s is not None) <= (fit.end_distance <= TARGET)
    np.testing.assert_array_equal(stages[1].start[:2], stages[0].optimum.x[:2])
    the_two_trees_agree_on_the_real_maps(stages[-1], tapers[0].sigma)
    (source,) = sources
    assert source.shape == [101, 101]
    residual = np.load(tmp_path / "r" / "residuals-grasp-26ghz.npz")["residual"]
    assert residual.shape == (3, 101, 101)
    assert source.objective == "gaussian"  # least squares in noise units unless asked otherwise
    assert source.telescope.blockage == pytest.approx(3.953)
    found = source.multistart  # least squares: every random start ends where the ladder did
    assert (found.starts, found.reached_best, found.groups_reaching) == (8, 8, 1)
    assert found.ladder_from_best_um < found.same_um
    other = source.other_objective
    assert other.objective == "cauchy"
    assert len(other.widths) == 2  # its scale re-estimated from the residuals at each stage's start
    assert all(width >= 1 for width in other.widths)
    assert other.surface_difference_rms_um > 0
    surface = np.loadtxt(tmp_path / "r" / "surface-grasp-26ghz.txt")
    header = (tmp_path / "r" / "surface-grasp-26ghz.txt").read_text().splitlines()[:5]
    assert any("pairing with the maps' v" in line for line in header)
    assert np.sqrt(np.nanmean(surface**2)) == pytest.approx(source.surface_rms_um, rel=1e-3)
    if fits_available():  # the same surface and its uncertainty as FITS
        assert source.surface_fits == "surface-grasp-26ghz.fits"
        from astropy.io import fits

        with fits.open(tmp_path / "r" / "surface-grasp-26ghz.fits") as hdus:
            np.testing.assert_allclose(hdus[0].data, surface, atol=1e-3, equal_nan=True)
            assert np.all(hdus["UNCERT"].data[np.isfinite(surface)] > 0)
            inflation = np.nanmedian(hdus["UNCERT"].data / hdus["UNCERTIN"].data)
        assert inflation == pytest.approx(source.uncertainty_inflation, rel=1e-5)
        assert (source.uncertainty_reach > 0) == (inflation != pytest.approx(1.0))
        section = types.SimpleNamespace(sources=[types.SimpleNamespace(source=source, short="GRASP", stages=[],
                                                                       agreement=[])])
        said = next(line for line in real_read.findings(section) if "uncertainty" in line)
        assert f"{um(source.uncertainty_median_um)} um" in said
        assert "surface-grasp-26ghz.fits" in said
    again = run_command(*arguments)
    assert again.returncode == 0
    assert "nothing to run" in again.stdout
    assert len((tmp_path / "r" / "stages.jsonl").read_text().splitlines()) == 2
    assert json.loads((tmp_path / "r" / "settings.json").read_text())["npix"] == 128
    written = [json.loads(line) for name in ("stages", "sources", "tapers")
               for line in (tmp_path / "r" / f"{name}.jsonl").read_text().splitlines()]  # each stamped alike
    assert all(r["maps_sha256_grasp-26ghz"] == written[0]["maps_sha256_grasp-26ghz"] and r["tol"] == written[0]["tol"]
               for r in written)
    (tmp_path / "r" / "settings.json").unlink()
    (tmp_path / "r" / "runs.jsonl").unlink()
    before = {path: path.read_bytes() for path in (tmp_path / "r").rglob("*") if path.is_file()}
    mixed = run_command(*arguments[:-1], "--objective", "cauchy", "--quiet")
    assert mixed.returncode == 2, mixed.stderr
    assert "objective" in mixed.stderr
    assert len(mixed.stderr.splitlines()) == 1
    assert {path: path.read_bytes() for path in (tmp_path / "r").rglob("*") if path.is_file()} == before


def fit(impl, gradient, repeat, total, target, distance=0.0):
    return {"impl": impl, "dtype": "float64", "gradient": gradient, "minimizer": "scipy", "repeat": repeat,
            "prep_s": 0.01, "total_s": total, "target_s": target, "end_distance": distance,
            "outcome": {"nit": 3, "nfev": 9, "success": True, "message": "", "fun": -1.0, "x": [0.0]}}


def test_a_ladder_that_missed_an_optimum_gives_a_bound_never_a_value():
    """NumPy misses stage 2's optimum in every repeat: its summed time is a lower bound, so NumPy / torch is "at
    least" that, never a value; torch / adjoint, both at every optimum, is a value with the repeats' range."""
    from replication.core.series import NUMPY, TORCH_ADJOINT, TORCH_CPU
    from replication.studies.real_maps.speedups import Spread, ladder_times, ratio, ratio_text, stage_ratio

    first = [f for r in range(3) for f in (fit("numpy", "", r, 2.0, 1.5), fit("torch-cpu", "", r, 0.5, 0.4 + 0.1 * r),
                                           fit("torch-cpu", "adjoint", r, 0.3, 0.2))]
    second = [f for r in range(3) for f in (fit("numpy", "", r, 4.0, None, 12.0), fit("torch-cpu", "", r, 0.6, 0.5),
                                            fit("torch-cpu", "adjoint", r, 0.4, 0.3))]
    stages = [types.SimpleNamespace(fits=[msgspec.convert(f, RealFit) for f in fits]) for fits in (first, second)]
    numpy_times = ladder_times(stages, NUMPY)
    assert numpy_times == [(5.5, False)] * 3
    bound = ratio(numpy_times, ladder_times(stages, TORCH_CPU))
    assert bound.kind == "at least"
    assert ratio_text(bound).startswith("all stages: >= ")
    assert "a bound" in ratio_text(bound)
    value = ratio(ladder_times(stages, TORCH_CPU), ladder_times(stages, TORCH_ADJOINT))
    assert value.kind == "value"
    assert value.spread.low == pytest.approx(0.9 / 0.5)
    assert value.spread.high == pytest.approx(1.1 / 0.5)
    assert ratio_text(value) == "all stages: 2x (1.8-2.2); no stage solved by both"
    per_stage = stage_ratio(stages, TORCH_CPU, TORCH_ADJOINT)
    assert per_stage.stages == 2
    assert stage_ratio(stages, NUMPY, TORCH_CPU).stages == 1  # NumPy missed stage 2
    assert ratio_text(dataclasses.replace(value, per_stage=Spread(1.5, 2.0, 2.5, stages=2))) == (
        "all stages: 2x (1.8-2.2); stages solved by both (2): 2x (1.5-2.5)")


def test_a_phase_map_is_matched_under_the_oof_twin():
    """pyoof's phase is compared with ours under every convention and the twin: a point-reflected, negated copy of
    ours is found as such, at no difference."""
    from replication.core.reduction.phases import compare_phases, our_phase

    x = np.concatenate([[0.3, -0.2], 0.5 * np.random.default_rng(4).standard_normal(13), [0.0, 0.0, 1.0]])
    ours = our_phase(x, 4, 33)
    differences = compare_phases(ours, -ours[::-1, ::-1] + 7.0)  # a constant offset is not a difference
    closest = min(differences, key=differences.get)
    assert closest == "point-reflected and negated (the OOF twin)"
    assert differences[closest] < 1e-12
    assert differences["as is"] > 0.1


def test_the_pyoof_environment_pins_every_package_its_peer_imports():
    """nox -s pyoof installs the harness without its dependencies beside PYOOF_PINS: every package of ours that the
    peer's module loads (constraints.txt's names, typing-extensions aside: pulled in by the pins' own) is pinned."""
    import ast
    import subprocess
    import sys

    from replication.core.paths import ROOT

    tree = ast.parse((ROOT / "noxfile.py").read_text())
    pins = next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                and getattr(node.targets[0], "id", None) == "PYOOF_PINS")
    pinned = {pin.split("==")[0].lower().replace("-", "_") for pin in pins}
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    ours = {line.split("==")[0].lower().replace("-", "_") for line in lines if "==" in line and line[0] != "#"}
    ours -= {"typing_extensions"}
    peers = "replication.studies.real_maps.pyoof_peer, replication.studies.closure.pyoof_peer"
    loaded = subprocess.run([sys.executable, "-c", f"import sys; import {peers}; "
                             "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"],
                            capture_output=True, text=True, check=True, cwd=ROOT).stdout.split()
    assert {"numpy", "msgspec"} <= set(loaded) & ours
    assert set(loaded) & ours <= pinned, sorted((set(loaded) & ours) - pinned)


def test_a_fit_of_order_one_has_no_uncertainty_ratio_and_its_sentence_says_what_it_has():
    """At n = 1 the surface holds only the tilts and piston it removes: every pixel's uncertainty is 0, the ratio to
    independent pixels' is recorded as null (not a NaN warning), and the report's sentence leaves it out."""
    zero = np.zeros((4, 4))
    assert uncertainty_ratio(zero, zero) is None
    assert uncertainty_ratio(np.full((2, 2), 3.0), np.array([[1.0, 0.0], [np.nan, 2.0]])) == pytest.approx(2.25)
    record = types.SimpleNamespace(uncertainty_median_um=0.0, uncertainty_inflation=None, uncertainty_reach=0,
                                   surface_fits="surface-x.fits")
    assert real_read.uncertainty_line("GRASP", record) == (
        "GRASP: the surface's uncertainty (1 sigma) is 0 um (median over the dish; its map in surface-x.fits).")
    record.uncertainty_inflation, record.uncertainty_reach = 1.5, 3
    assert real_read.uncertainty_line("GRASP", record).endswith(
        "surface-x.fits), 1.5x what independent pixels would give: the residuals correlate over 3 pixels.")


def beam_like_maps(rng, sign=1.0):
    """Three 60 x 60 maps of a Gaussian beam on a baseline with noise, in arbitrary counts (sign -1: negated)."""
    v, u = np.mgrid[-30:30, -30:30]
    beam = 1000.0 * np.exp(-(u**2 + v**2) / 40.0)
    return np.stack([sign * beam + 50.0 + rng.normal(0, 5.0, beam.shape) for _ in range(3)])


@pytest.mark.parametrize("maps", ["negated", "noise only"])
def test_maps_without_a_beam_rising_above_their_edges_are_refused_before_any_stage(maps):
    rng = np.random.default_rng(4)
    source = real_sources.SOURCES[1]
    real_sources.observation_of(source, beam_like_maps(rng), 1e-4)  # a beam: read
    power = beam_like_maps(rng, -1.0) if maps == "negated" else 50.0 + rng.normal(0, 5.0, (3, 60, 60))
    refusal = r"map 0: its beam does not rise above its edges .* a negated map or no beam"
    with pytest.raises(real_sources.RunError, match=refusal):
        real_sources.observation_of(source, power, 1e-4)

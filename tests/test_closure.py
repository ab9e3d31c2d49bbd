"""The closure test of the real-maps reduction, and the written surface's orientation."""

import json
import statistics
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import run_command

from reference_numpy import beam_maps
from replication.core import series
from replication.core.implementations import of
from replication.core.paths import REFERENCE
from replication.core.reduction import surface
from replication.core.reduction.ladder import fit_ladder, residual_maps
from replication.core.reduction.phases import our_phase
from replication.core.reduction.pyoof_fit import PHASE_PIXELS, PyoofOrder
from replication.core.reduction.sources import SOURCES, map_region, observation_of, surface_error, surface_grid
from replication.core.results import RunError, read_records
from replication.report.load import run_environments
from replication.report.render import load_runs
from replication.studies.closure import maps as closure_maps
from replication.studies.closure import pyoof_peer
from replication.studies.closure.read import closure_beyond, closure_shown, closure_summaries, closure_summary
from replication.studies.closure.records import (
    CLOSURE_FILE,
    COVERAGE_GOAL,
    PYOOF_CLOSURE_FILE,
    WITHIN_UM,
    check_closure,
)


def test_the_simulated_surface_and_noise_are_as_stated():
    maps, truth, setup = closure_maps.simulated_maps(3, npix=128, order=3)
    phase = truth[: setup.basis.shape[0]] @ np.asarray(setup.basis)
    assert np.sqrt(np.mean((phase - phase.mean()) ** 2)) == pytest.approx(closure_maps.SURFACE_RADIANS)
    assert maps.shape == (3, *closure_maps.SHAPE)
    noise = closure_maps.scan_noise(np.random.default_rng(0), (3, 400, 50))
    along_scan = np.corrcoef(noise[:, 1:].ravel(), noise[:, :-1].ravel())[0, 1]
    across = np.corrcoef(noise[:, :, 1:].ravel(), noise[:, :, :-1].ravel())[0, 1]
    assert along_scan == pytest.approx(closure_maps.SCAN_CORRELATION, abs=0.02)
    assert abs(across) < 0.05
    assert noise.std() == pytest.approx(1.0, abs=0.05)


def test_a_seed_at_another_noise_is_the_same_draw_with_the_noise_scaled():
    maps, truth, _ = closure_maps.simulated_maps(3, npix=128, order=3)
    quieter, same_truth, _ = closure_maps.simulated_maps(3, npix=128, order=3, noise=closure_maps.NOISE / 4)
    np.testing.assert_array_equal(truth, same_truth)
    pattern = (maps - quieter) / (closure_maps.NOISE * 3 / 4)  # the unit-variance scan noise, baselines cancelled
    assert pattern.std() == pytest.approx(1.0, abs=0.05)
    assert np.corrcoef(pattern[:, 1:].ravel(), pattern[:, :-1].ravel())[0, 1] == pytest.approx(
        closure_maps.SCAN_CORRELATION, abs=0.03)


def test_each_maps_noise_is_its_ratio_times_the_level_and_equal_ratios_change_no_bit():
    """--map-noise: the same draw, each map's noise scaled by its ratio; the default (1, 1, 1) is the draw as it was
    made before the option (identical arrays)."""
    maps, truth, _ = closure_maps.simulated_maps(3, npix=128, order=3)
    equal, _, _ = closure_maps.simulated_maps(3, npix=128, order=3, noise_ratios=(1, 1, 1))
    np.testing.assert_array_equal(maps, equal)
    louder, same_truth, _ = closure_maps.simulated_maps(3, npix=128, order=3, noise_ratios=(1, 1, 2))
    np.testing.assert_array_equal(truth, same_truth)
    np.testing.assert_array_equal(louder[:2], maps[:2])
    extra = (louder[2] - maps[2]) / closure_maps.NOISE  # the +dz map's unit scan noise, once more
    assert extra.std() == pytest.approx(1.0, abs=0.05)
    for bad in ((1, 1), (1, 1, 0), (1, 1, 11), (1, True, 1), (1, float("nan"), 1)):
        with pytest.raises(ValueError, match="map noise"):
            closure_maps.check_noise_ratios(bad)


def test_the_closure_refuses_a_bound_with_map_noise_and_a_resume_with_another_weighting(tmp_path):
    from replication.core import measurement
    from replication.core.results import RunError
    from replication.studies.closure import measure as closure

    bound = run_command("closure", "--bound", "--map-noise", "1", "1", "1.37", "--results", tmp_path / "b",
                        "--quiet")
    assert bound.returncode == 2
    assert bound.stderr.strip().splitlines()[-1].endswith("not with --bound")
    bad = run_command("closure", "--map-noise", "1", "1", "20", "--results", tmp_path / "b", "--quiet")
    assert bad.returncode == 2
    assert "--map-noise" in bad.stderr.strip().splitlines()[-1]
    identity = closure.closure_identity(128, (1, 2), noise_ratios=(1, 1, 1.37), per_map_noise=True)
    assert (identity["noise_ratios"], identity["per_map_noise"]) == ([1.0, 1.0, 1.37], True)
    folder = tmp_path / "c"
    folder.mkdir()
    measurement.record_identity(folder, identity)
    with pytest.raises(RunError, match="per_map_noise"):
        measurement.check_identity(folder, identity | {"per_map_noise": False})


@pytest.mark.parametrize("noise", [0, -0.001, 0.5, float("nan"), float("inf"), True, "0.001"])
def test_a_noise_level_out_of_range_is_refused_naming_it(noise):
    with pytest.raises(ValueError, match=r"^noise: must be a number between 1e-06 and 0.1"):
        closure_maps.check_noise(noise)


@pytest.mark.parametrize("text", ["0", "abc", "0.2", "nan"])
def test_the_closure_command_refuses_a_noise_out_of_range_in_one_line(text, tmp_path):
    done = run_command("closure", "--noise", text, "--results", tmp_path / "c", "--quiet")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].startswith("python -m replication closure: error: argument --noise: "
                                                           "must be a number between")
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("npix", [64, 99, True, 100.0])
def test_a_grid_that_cannot_hold_the_closure_maps_is_refused_naming_it(npix):
    with pytest.raises(ValueError, match=r"^npix: must hold the closure's 100 x 100 maps"):
        closure_maps.check_grid(npix)
    with pytest.raises(ValueError, match=r"^npix: must hold"):
        closure_maps.simulated_maps(0, npix)


@pytest.mark.parametrize("seeds", [0, -1, 100_001, 10**11, True, 2.0])
def test_a_count_of_seeds_out_of_range_is_refused_before_any_list_is_made(seeds):
    with pytest.raises(ValueError, match=r"^seeds: must be an integer between 1 and 100000"):
        closure_maps.check_seeds(seeds)


def test_the_closure_command_refuses_a_count_of_seeds_that_would_not_fit_in_one_line(tmp_path):
    done = run_command("closure", "--seeds", "100000000000", "--results", tmp_path / "c", "--quiet")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1].endswith("argument --seeds: must be between 1 and 100000 (seeds), "
                                                         "got 100000000000")
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize("bound", [(), ("--bound",)])
def test_the_closure_command_refuses_a_grid_smaller_than_its_maps_in_one_line(bound, tmp_path):
    done = run_command("closure", "--npix", "64", *bound, "--results", tmp_path / "c", "--quiet")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == ("python -m replication closure: error: argument --npix: must hold "
                                                    "the closure's 100 x 100 maps (at least 100), got 64")
    assert not (tmp_path / "c").exists()


@pytest.mark.slow
def test_a_small_closure_run_recovers_the_surfaces_writes_checked_records_and_resumes(tmp_path):
    arguments = ("closure", "--seeds", 2, "--npix", 128, "--max-order", 2, "--results", tmp_path / "c", "--quiet")
    done = run_command(*arguments)
    assert done.returncode == 0, done.stderr
    records = read_records(tmp_path / "c" / CLOSURE_FILE, check=check_closure)
    assert [r["seed"] for r in records] == [0, 1]
    for record in records:
        assert record["surface_error_um"] < record["truth_surface_um"] / 10  # the surface is found, not a twin
    summary = closure_summary(tmp_path / "c")
    assert summary.seeds == 2
    assert summary.within == sum(r["surface_error_um"] <= WITHIN_UM for r in records)
    for record in records:  # the cold start ends where a start at the truth does, with an error its fit predicts
        assert record["optimum_distance_se"] <= 0.1
        assert record["truth_start_error_um"] == pytest.approx(record["surface_error_um"], rel=0.05, abs=0.5)
        assert 0 < record["predicted_error_um"] < 10 * max(record["surface_error_um"], 1.0)
    assert summary.at_optimum == summary.certified == 2
    median = statistics.median(r["surface_error_um"] for r in records)
    predicted = statistics.median(r["predicted_error_um"] for r in records)
    said = done.stdout  # what it found, in a few lines, from its records
    assert f"{summary.within} of 2 seed(s) within {WITHIN_UM:g} um of the known surface" in said
    assert f"surface error median {median:.3g} um" in said
    assert f"predicted: the fits' covariance {predicted:.3g} um (median)" in said
    assert len([line for line in said.strip().splitlines() if not line.startswith("threads:")]) <= 4
    again = run_command(*arguments)
    assert again.returncode == 0
    assert "nothing to run" in again.stdout
    other_noise = run_command(*arguments, "--noise", "0.001")
    assert other_noise.returncode == 2
    assert "started with noise = 0.002, this command has noise = 0.001" in other_noise.stderr
    assert len(read_records(tmp_path / "c" / CLOSURE_FILE, check=check_closure)) == 2


def test_a_deformation_put_in_along_x_is_written_along_the_rows_of_the_surface_grid(tmp_path):
    """One coma (Zernike (3, 1), index 7 without the piston) in simulated maps: the written grid holds it as the
    model's aperture does (rows its x, the maps' v, as the header says), not transposed (the other coma)."""
    _, truth, setup = closure_maps.simulated_maps(5, npix=128, order=3)
    truth[: setup.basis.shape[0]] = 0.0
    truth[7] = 1.0
    beams = np.asarray(beam_maps(truth, setup))
    rows, cols = map_region(128, closure_maps.SHAPE)
    clean = beams[:, rows, cols] / beams[0].max() + 1e-3 * np.random.default_rng(1).standard_normal((3, 100, 100))
    observation = observation_of(closure_maps.SOURCE, clean, closure_maps.STEP).with_taper(closure_maps.TRUE_SIGMA)
    stages = fit_ladder(of(series.TORCH_ADJOINT), observation, (1, 2, 3), 128)
    residual = residual_maps(observation, stages[-1].x, 3, 128)
    surface.write_surface_files(tmp_path, observation, np.asarray(stages[-1].x), 3, 128, residual)
    written = np.loadtxt(tmp_path / f"surface-{SOURCES[0].name}.txt")
    expected, _ = surface_grid(truth, setup, SOURCES[0].wavelength)
    on = np.isfinite(expected)
    assert np.isfinite(written).sum() == on.sum()
    assert np.corrcoef(written[on], expected[on])[0, 1] > 0.95
    assert abs(np.corrcoef(written.T[on], expected[on])[0, 1]) < 0.3
    assert np.sqrt(np.mean(surface_error(truth, setup, SOURCES[0].wavelength) ** 2)) > 100


REFERENCE_CLOSURE = REFERENCE / "2026-12-05_vm_amd-epyc-2c-1thread_closure" / "closure" / CLOSURE_FILE


def point_reflected(phase):
    return phase[::-1, ::-1]


def pyoof_order(order, seconds, nfev, status, success, params):
    """One order of pyoof's fits as fit_with_pyoof returns it (no phase)."""
    return PyoofOrder("closure", order, seconds, nfev, status, success, "", 0.0, params)


def test_pyoof_on_the_closure_seeds_is_read_beside_ours_seed_by_seed(tmp_path):
    """pyoof's reductions of closure seeds are paired with ours by seed and grid (others are left out), its time set
    against ours per seed, and its phase read against the truth's under the closest convention: a phase that is the
    truth's point-reflected (and shifted) lies 0 rad from it."""
    ours = [json.loads(line) for line in REFERENCE_CLOSURE.read_text().splitlines()[:2]]
    folder = tmp_path / "closure"
    (folder / "pyoof").mkdir(parents=True)
    (folder / CLOSURE_FILE).write_text("".join(json.dumps(r) + "\n" for r in ours))
    fits = []
    for shift, record in enumerate(ours):
        truth = our_phase(record["truth"], record["orders"][-1], PHASE_PIXELS)
        np.savez(folder / "pyoof" / f"pyoof-phase-closure-{record['seed']}.npz", phase=point_reflected(truth) + shift)
        fits.append(pyoof_peer.closure_record(record["seed"], record["npix"], [
            pyoof_order(1, 4 * record["seconds"], 10, 0, False, [1.0]),
            pyoof_order(record["orders"][-1], 6 * record["seconds"], 20, 2, True, [1.0, 2.0])], "0.2.3"))
    fits.append(fits[0] | {"npix": ours[0]["npix"] // 2})  # another grid: other maps, not paired
    fits.append(fits[0] | {"seed": 999})  # a seed we did not reduce
    pyoof_file = folder / "pyoof" / PYOOF_CLOSURE_FILE
    for other_maps in ({"max_order": 3}, {"noise": closure_maps.NOISE / 2}):  # the same seeds' maps made otherwise
        pyoof_file.write_text("".join(json.dumps(f | other_maps | {"schema": 2}) + "\n" for f in fits))
        assert closure_summary(folder).pyoof is None
    pyoof_file.write_text("".join(json.dumps(f | {"schema": 2}) + "\n" for f in fits))
    peer = closure_summary(folder).pyoof
    assert (peer.seeds, peer.order, peer.version) == (2, ours[0]["orders"][-1], "0.2.3")
    assert peer.ratio == pytest.approx([10.0, 10.0])
    assert peer.seconds == pytest.approx(10 * statistics.median(r["seconds"] for r in ours))
    assert (peer.limited, peer.fitted_orders) == (2, 2 * ours[0]["orders"][-1])
    assert peer.closest == "point-reflected"
    assert peer.theirs_rad < 1e-6 < peer.ours_rad < peer.truth_rad
    assert (fits[0]["nfev"], fits[0]["limited"], fits[0]["success"]) == (30, [1], False)
    (folder / "pyoof" / f"pyoof-phase-closure-{ours[1]['seed']}.npz").unlink()
    with pytest.raises(RunError, match=f"seed {ours[1]['seed']} has no phase file of its own"):
        closure_summary(folder)


def test_the_pyoof_peer_refuses_a_closure_run_of_no_seeds_and_a_grid_without_one(capsys):
    from replication.studies.real_maps import pyoof_peer as real_maps_peer

    assert pyoof_peer.main(["--closure-seeds", "0", "--results", "nowhere"]) == 2
    assert capsys.readouterr().err.strip().endswith("--closure-seeds 0: give a positive number of seeds")
    for option in (["--npix", "128"], ["--noise", "0.001"]):  # the real maps' peer fits the maps as read
        with pytest.raises(SystemExit) as exit_status:
            real_maps_peer.main([*option, "--results", "nowhere"])
        assert exit_status.value.code == 2
        assert f"unrecognized arguments: {' '.join(option)}" in capsys.readouterr().err
    assert pyoof_peer.main(["--closure-seeds", "1", "--noise", "0", "--results", "nowhere"]) == 2
    assert "noise: must be a number between" in capsys.readouterr().err


def test_a_pyoof_closure_resume_under_other_settings_is_refused_naming_the_file(tmp_path, capsys):
    path = tmp_path / PYOOF_CLOSURE_FILE
    record = pyoof_peer.closure_record(0, 128, [pyoof_order(1, 1.0, 3, 2, True, [1.0])], "0.2.3")
    path.write_text(json.dumps(record | {"schema": 2}) + "\n")
    assert [r.seed for r in pyoof_peer.closure_records_like(path, 128, 1)] == [0]
    for npix, order, noise in ((256, 1, "0.002"), (128, 5, "0.002"), (128, 1, "0.001")):
        assert pyoof_peer.main(["--closure-seeds", "2", "--npix", str(npix), "--max-order", str(order),
                                "--noise", noise, "--results", str(tmp_path)]) == 2
        error = capsys.readouterr().err.strip()
        assert error.startswith(f"python -m replication.studies.closure.pyoof_peer: error: {path}: holds seeds "
                                "fitted at npix 128, n = 1..1, noise 0.002;")
        assert len(error.splitlines()) == 1


def test_a_closure_run_says_which_model_code_made_it():
    """A reference run of the closure test alone records its commit (closure/runs.jsonl), read as any other run's."""
    run = next(run for run in load_runs([]) if run.folder.name == REFERENCE_CLOSURE.parents[1].name)
    assert [environment.git_commit[:7] for environment in run_environments(run)] == ["faa3f6d"]


def closure_run(folder, records, created, own=False):
    (folder / "closure").mkdir(parents=True)
    (folder / "closure" / CLOSURE_FILE).write_text("".join(json.dumps(r) + "\n" for r in records))
    return SimpleNamespace(folder=folder, own=own, info=SimpleNamespace(created=created), title=folder.name,
                           appendix_name=folder.name)


def test_the_report_tells_the_closure_at_the_srt_noise_and_lists_every_level(tmp_path):
    """The closure told in full is the one at the SRT's noise even where a newer run is at another; each level is
    listed once (your own run's where you have one), the noisiest first, with whether it meets the goal."""
    ours = [json.loads(line) for line in REFERENCE_CLOSURE.read_text().splitlines()[:4]]
    quarter = [r | {"noise": closure_maps.NOISE / 4, "surface_error_um": 2.0} for r in ours]
    runs = [closure_run(tmp_path / "srt", ours, "2026-12-03"),
            closure_run(tmp_path / "quarter", quarter, "2026-12-04"),
            closure_run(tmp_path / "quarter-older", quarter[:2], "2026-12-02"),
            closure_run(tmp_path / "empty", [], "2026-12-05")]
    shown = closure_shown(closure_summaries(runs))
    assert (shown.title, shown.noise) == ("srt", closure_maps.NOISE)
    assert [(level.title, level.noise, level.meets_goal) for level in shown.levels] == [
        ("srt", closure_maps.NOISE, shown.within == 4), ("quarter", closure_maps.NOISE / 4, True)]
    mine = closure_run(tmp_path / "mine", quarter[:3], "2026-12-01", own=True)
    assert [level.title for level in closure_shown(closure_summaries([*runs, mine])).levels] == ["srt", "mine"]
    assert closure_shown(closure_summaries(runs[1:])).title == "quarter"
    assert closure_shown(closure_summaries(runs[3:])) is None


def beyond(record, seed, chosen, covered, **extra):
    """A closure record whose truth went beyond the fitted orders, with its coverage (closure.covered)."""
    return record | {"seed": seed, "chosen_order": chosen, "truncation_um": 30.0, "misfit_um": 40.0,
                     "predicted_error_um": 0.0, "covered_statistical": covered / 3, "covered_total": covered} | extra


def test_runs_whose_truths_go_beyond_the_fitted_orders_are_told_apart_with_their_coverage(tmp_path):
    """A closure run with panel pistons or a truth to a higher order is no noise level of the closure test: the
    report lists it apart, one per kind of truth (yours first, else the newest), with the orders the rule chose and
    how often, the stated total (the three parts in quadrature) and how many seeds it covers over COVERAGE_GOAL."""
    ours = [json.loads(line) for line in REFERENCE_CLOSURE.read_text().splitlines()[:3]]
    panels = [beyond(r, k, 8, c, panels_um=30.0, truth_order=5, predicted_error_um=120.0) for k, (r, c) in
              enumerate(zip(ours, (0.95, 0.85, 0.91), strict=True))]
    seventh = [beyond(r, k, 7 + (k == 2), 1.0, truth_order=7, truth=r["truth"] + [0.0] * 15)
               for k, r in enumerate(ours)]
    runs = [closure_run(tmp_path / "srt", ours, "2026-12-03"),
            closure_run(tmp_path / "panels", panels, "2026-12-06"),
            closure_run(tmp_path / "n7", seventh, "2026-12-06"),
            closure_run(tmp_path / "n7-older", seventh[:1], "2026-12-05")]
    assert [level.title for level in closure_shown(closure_summaries(runs)).levels] == ["srt"]
    found = closure_beyond(closure_summaries(runs))
    assert [(b.title, b.beyond) for b in found] == [("panels", 3), ("n7", 3)]
    assert found[0].covered_seeds == 2
    assert found[0].coverage_goal == COVERAGE_GOAL == 0.9
    assert found[0].stated_um == pytest.approx(130.0)  # sqrt(120^2 + 30^2 + 40^2)
    assert found[0].covered_total == pytest.approx(0.91)
    assert found[1].chosen_counts == [(7, 2), (8, 1)]
    assert found[1].stated_um == pytest.approx(50.0)
    mine = closure_run(tmp_path / "mine", seventh[:2], "2026-12-01", own=True)
    assert [b.title for b in closure_beyond(closure_summaries([*runs, mine]))] == ["panels", "mine"]
    assert closure_beyond(closure_summaries(runs[:1])) == []


@pytest.mark.parametrize("content", [b'{"npix": 256, "no', b"\xff\xfe not utf-8", b"[1, 2]"])
def test_a_damaged_settings_file_is_refused_in_one_line_naming_it(content, tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "settings.json").write_bytes(content)
    done = run_command("closure", "--bound", "--seeds", "1", "--results", folder, "--quiet")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{folder / 'settings.json'}: not" in done.stderr.strip().splitlines()[-1]
    assert {path.name for path in folder.iterdir()} - {".lock"} == {"settings.json"}  # nothing written

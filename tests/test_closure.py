"""The closure test of the real-maps reduction, and the written surface's orientation."""

import json
import statistics

import numpy as np
import pytest
from conftest import run_command

from reference_numpy import beam_maps
from replication.core import series
from replication.core.implementations import of
from replication.core.paths import REFERENCE
from replication.core.results import RunError, read_records
from replication.report.load import run_environments
from replication.report.render import load_runs
from replication.studies.real_maps import closure_maps, measure, pyoof_peer, surface
from replication.studies.real_maps.closure_read import closure_summary
from replication.studies.real_maps.pyoof_peer import PHASE_PIXELS
from replication.studies.real_maps.read import our_phase
from replication.studies.real_maps.records import CLOSURE_FILE, PYOOF_CLOSURE_FILE, WITHIN_UM, check_closure
from replication.studies.real_maps.sources import SOURCES, map_region, observation_of, surface_error, surface_grid


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
    assert summary["seeds"] == 2
    assert summary["within"] == sum(r["surface_error_um"] <= WITHIN_UM for r in records)
    for record in records:  # the cold start ends where a start at the truth does, with an error its fit predicts
        assert record["optimum_distance_se"] <= 0.1
        assert record["truth_start_error_um"] == pytest.approx(record["surface_error_um"], rel=0.05, abs=0.5)
        assert 0 < record["predicted_error_um"] < 10 * max(record["surface_error_um"], 1.0)
    assert summary["at_optimum"] == summary["certified"] == 2
    again = run_command(*arguments)
    assert again.returncode == 0
    assert "nothing to run" in again.stdout


def test_a_deformation_put_in_along_x_is_written_along_the_rows_of_the_surface_grid(tmp_path):
    """One coma (Zernike (3, 1), index 7 without the piston) in simulated maps: the written grid holds it as the
    model's aperture does (rows its x, the maps' v, as the header says), not transposed (the other coma)."""
    _, truth, setup = closure_maps.simulated_maps(5, npix=128, order=3)
    truth[: setup.basis.shape[0]] = 0.0
    truth[7] = 1.0
    beams = np.asarray(beam_maps(truth, setup))
    rows, cols = map_region(128, closure_maps.SHAPE)
    clean = beams[:, rows, cols] / beams[0].max() + 1e-3 * np.random.default_rng(1).standard_normal((3, 100, 100))
    observation = observation_of(SOURCES[0], clean, closure_maps.STEP).with_taper(closure_maps.TRUE_SIGMA)
    stages = measure.fit_ladder(of(series.TORCH_ADJOINT), observation, (1, 2, 3), 128)
    residual = measure.residual_maps(observation, stages[-1]["x"], 3, 128)
    surface.write_surface_files(tmp_path, observation, np.asarray(stages[-1]["x"]), 3, 128, residual)
    written = np.loadtxt(tmp_path / f"surface-{SOURCES[0].name}.txt")
    expected, _ = surface_grid(truth, setup, SOURCES[0].wavelength)
    on = np.isfinite(expected)
    assert np.isfinite(written).sum() == on.sum()
    assert np.corrcoef(written[on], expected[on])[0, 1] > 0.95
    assert abs(np.corrcoef(written.T[on], expected[on])[0, 1]) < 0.3
    assert np.sqrt(np.mean(surface_error(truth, setup, SOURCES[0].wavelength) ** 2)) > 100


REFERENCE_CLOSURE = REFERENCE / "2026-12-03_vm_amd-epyc-2c-1thread-3_closure" / "closure" / CLOSURE_FILE


def point_reflected(phase):
    return phase[::-1, ::-1]


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
            {"order": 1, "seconds": 4 * record["seconds"], "nfev": 10, "status": 0, "success": False, "params": [1.0]},
            {"order": 2, "seconds": 6 * record["seconds"], "nfev": 20, "status": 2, "success": True,
             "params": [1.0, 2.0]}], "0.2.3"))
    fits.append(fits[0] | {"npix": ours[0]["npix"] // 2})  # another grid: other maps, not paired
    fits.append(fits[0] | {"seed": 999})  # a seed we did not reduce
    (folder / "pyoof" / PYOOF_CLOSURE_FILE).write_text("".join(json.dumps(f | {"schema": 2}) + "\n" for f in fits))
    peer = closure_summary(folder)["pyoof"]
    assert (peer["seeds"], peer["order"], peer["version"]) == (2, 2, "0.2.3")
    assert peer["ratio"] == pytest.approx([10.0, 10.0])
    assert peer["seconds"] == pytest.approx(10 * statistics.median(r["seconds"] for r in ours))
    assert (peer["limited"], peer["fitted_orders"]) == (2, 4)
    assert peer["closest"] == "point-reflected"
    assert peer["theirs_rad"] < 1e-6 < peer["ours_rad"] < peer["truth_rad"]
    assert (fits[0]["nfev"], fits[0]["limited"], fits[0]["success"]) == (30, [1], False)
    (folder / "pyoof" / f"pyoof-phase-closure-{ours[1]['seed']}.npz").unlink()
    with pytest.raises(RunError, match=f"seed {ours[1]['seed']} has no phase file of its own"):
        closure_summary(folder)


def test_the_pyoof_peer_refuses_a_closure_run_of_no_seeds_and_a_grid_without_one(capsys):
    assert pyoof_peer.main(["--closure-seeds", "0", "--results", "nowhere"]) == 2
    assert capsys.readouterr().err.strip().endswith("--closure-seeds 0: give a positive number of seeds")
    assert pyoof_peer.main(["--npix", "128", "--results", "nowhere"]) == 2
    assert "--npix 128: applies to --closure-seeds only" in capsys.readouterr().err


def test_a_pyoof_closure_resume_under_other_settings_is_refused_naming_the_file(tmp_path, capsys):
    path = tmp_path / PYOOF_CLOSURE_FILE
    record = pyoof_peer.closure_record(0, 128, [{"order": 1, "seconds": 1.0, "nfev": 3, "status": 2, "success": True,
                                                 "params": [1.0]}], "0.2.3")
    path.write_text(json.dumps(record | {"schema": 2}) + "\n")
    assert [r["seed"] for r in pyoof_peer.closure_records_like(path, 128, 1)] == [0]
    for npix, order in ((256, 1), (128, 5)):
        assert pyoof_peer.main(["--closure-seeds", "2", "--npix", str(npix), "--max-order", str(order),
                                "--results", str(tmp_path)]) == 2
        error = capsys.readouterr().err.strip()
        assert error.startswith(f"python -m replication.studies.real_maps.pyoof_peer: error: {path}: holds seeds "
                                "fitted at npix 128, n = 1..1;")
        assert len(error.splitlines()) == 1


def test_a_closure_run_says_which_model_code_made_it():
    """A reference run of the closure test alone records its commit (closure/runs.jsonl), read as any other run's."""
    run = next(run for run in load_runs([]) if run.folder.name == REFERENCE_CLOSURE.parents[1].name)
    assert [environment["git_commit"][:7] for environment in run_environments(run)] == ["26d7367"]

"""What the closure test's maps allow at best (studies.closure.bound): the scan noise's whitening and correlation,
the Fisher predictions of one seed, the command that writes them and the report's reading of them."""

import dataclasses
import json
import math

import numpy as np
import pytest
from conftest import run_command
from test_closure import REFERENCE_CLOSURE

from replication.core.paths import REFERENCE
from replication.core.results import RunError
from replication.studies.closure import bound
from replication.studies.closure import maps as closure_maps
from replication.studies.closure.read import closure_noise, closure_summary, fisher_bound
from replication.studies.closure.records import BOUND_FILE, CLOSURE_FILE, WITHIN_UM, read_bound, read_closure


def test_prewhitening_along_the_scans_inverts_the_scan_noise_correlation():
    shape = (2, 7, 3)
    identity = np.eye(np.prod(shape))
    whitening = bound.scan_whitened(identity, shape)  # W: white = W noise
    correlation = bound.scan_correlated(identity, shape)  # Sigma
    np.testing.assert_allclose(whitening @ correlation @ whitening.T, identity, atol=1e-12)
    noise = closure_maps.scan_noise(np.random.default_rng(2), (3, 400, 40))
    white = bound.scan_whitened(noise.reshape(-1, 1), noise.shape).reshape(noise.shape)
    assert abs(np.corrcoef(white[:, 1:].ravel(), white[:, :-1].ravel())[0, 1]) < 0.03
    assert white.std() == pytest.approx(1.0, abs=0.03)


def test_a_seeds_predicted_error_scales_with_the_noise_and_the_bound_is_below_least_squares():
    srt = bound.seed_bound(1, 128, 2, closure_maps.NOISE)
    quarter = bound.seed_bound(1, 128, 2, closure_maps.NOISE / 4)
    for name in ("ls_rms_um", "bound_rms_um"):
        assert quarter[name] == pytest.approx(srt[name] / 4, rel=1e-6)
    assert 0 < srt["bound_rms_um"] < srt["ls_rms_um"]
    assert srt["ls_share"] <= srt["bound_share"] <= quarter["bound_share"]
    assert srt["parameters"] > 6


def test_the_bound_command_writes_each_seed_resumes_and_refuses_other_settings(tmp_path):
    arguments = ("closure", "--bound", "--seeds", 2, "--npix", 128, "--max-order", 2, "--results", tmp_path / "c",
                 "--quiet")
    done = run_command(*arguments)
    assert done.returncode == 0, done.stderr
    records = read_bound(tmp_path / "c" / BOUND_FILE, strict=True)
    assert [(r.seed, r.npix, r.order, r.noise) for r in records] == [(0, 128, 2, 0.002), (1, 128, 2, 0.002)]
    assert "0 seed(s) bounded" in run_command(*arguments).stdout
    other = run_command(*arguments, "--noise", "0.001")
    assert other.returncode == 2
    assert "started with noise = 0.002, this command has noise = 0.001" in other.stderr
    for lost in ("settings.json", "runs.jsonl"):
        (tmp_path / "c" / lost).unlink(missing_ok=True)
    lost = run_command(*arguments, "--noise", "0.001")  # the records themselves still say what they were made under
    assert lost.returncode == 2
    assert f"{BOUND_FILE}: line 1" in lost.stderr
    assert "noise = 0.002, this command has noise = 0.001" in lost.stderr
    assert len(read_bound(tmp_path / "c" / BOUND_FILE, strict=True)) == 2


def test_the_report_reads_the_bound_of_the_seeds_reduced_from_the_same_maps(tmp_path):
    ours = [json.loads(line) for line in REFERENCE_CLOSURE.read_text().splitlines()[:3]]
    (tmp_path / CLOSURE_FILE).write_text("".join(json.dumps(r) + "\n" for r in ours))
    fits = [{"seed": r["seed"], "npix": r["npix"], "noise": r["noise"], "order": r["orders"][-1], "parameters": 33,
             "ls_rms_um": 8.0 + index, "ls_share": 0.5, "bound_rms_um": 5.0, "bound_share": 0.9 + 0.05 * index}
            for index, r in enumerate(ours)]
    fits.append(fits[0] | {"seed": 999})  # a seed we did not reduce
    path = tmp_path / BOUND_FILE
    path.write_text("".join(json.dumps(f) + "\n" for f in fits))
    typed = read_closure(tmp_path / CLOSURE_FILE)
    read = fisher_bound(path, typed)
    reached = sum(r["surface_error_um"] <= WITHIN_UM for r in ours) / 3
    assert dataclasses.asdict(read) == pytest.approx({"seeds": 3, "reached": reached, "ls_share": 0.5,
                                                      "bound_share": 0.95, "ls_um": 9.0, "bound_um": 5.0})
    path.write_text("".join(json.dumps(f | {"noise": 0.001}) + "\n" for f in fits))  # other maps: not paired
    assert fisher_bound(path, typed) is None
    assert fisher_bound(tmp_path / "none.jsonl", typed) is None


@pytest.mark.parametrize("folder", sorted(path.parent for path in REFERENCE.glob(f"*/closure/{BOUND_FILE}")),
                         ids=lambda path: path.parent.name)
def test_the_fisher_prediction_of_the_reductions_estimator_matches_the_committed_runs(folder):
    """A physics check of the bound: the share within 10 um and the median error the Fisher information predicts for
    the reduction's own estimator (least squares prewhitened along the scans, the efficient one, where most of its
    seeds whitened; plain least squares in noise units where they did not) are those its 100 cold-start reductions
    reached (within the binomial error and 25%), so that what it predicts can be trusted as far."""
    summary = closure_summary(folder)
    fisher = summary.bound
    assert fisher.seeds == summary.seeds >= 100
    whitened = summary.whitened > summary.seeds / 2  # whiten "auto": a seed whose noise reads as white is not
    share, median_um = (fisher.bound_share, fisher.bound_um) if whitened else (fisher.ls_share, fisher.ls_um)
    spread = math.sqrt(share * (1 - share) / fisher.seeds) + 1 / fisher.seeds
    assert abs(fisher.reached - share) <= 3 * spread
    assert 0.8 <= summary.median_um / median_um <= 1.25
    assert fisher.bound_um < fisher.ls_um
    assert fisher.bound_share >= fisher.ls_share


def test_a_closure_folders_noise_is_read_from_its_settings_or_none(tmp_path):
    assert closure_noise(tmp_path) is None
    for text, noise in (('{"noise": 0.0005}', 0.0005), ('{"noise": "x"}', None), ("[1]", None), ("{", None)):
        (tmp_path / "settings.json").write_text(text)
        assert closure_noise(tmp_path) == noise


def test_two_different_bound_records_of_one_seed_are_refused_naming_both_lines(tmp_path):
    line = (REFERENCE_CLOSURE.parent / BOUND_FILE).read_text().splitlines()[0]
    other = json.loads(line) | {"ls_rms_um": 1.0}
    (tmp_path / BOUND_FILE).write_text(line + "\n" + json.dumps(other) + "\n")
    with pytest.raises(RunError, match=rf"{BOUND_FILE}: lines 1 and 2 hold two different records of one seed \(0\)"):
        read_bound(tmp_path / BOUND_FILE)

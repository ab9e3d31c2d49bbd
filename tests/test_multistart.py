"""The random starts that look for a real-maps source's global optimum (studies.real_maps.multistart): each start's
phase as stated and drawn again on a resume, ends grouped into minima by their surfaces, the starts read as disjoint
multi-starts, every start written as it ends and a resume under another count refused."""

import dataclasses
import json
from types import SimpleNamespace

import msgspec
import numpy as np
import pytest
from conftest import run_command
from test_beam_files import fake_source_folder, power  # noqa: F401 (power: the fixture the folder is made from)

import reference_numpy
from replication.core.reduction import sources as real_sources
from replication.core.results import RunError
from replication.studies.real_maps import measure as real_maps
from replication.studies.real_maps import multistart
from replication.studies.real_maps.findings import multistart_line
from replication.studies.real_maps.records import STARTS_FILE, MultiStart, read_real_maps, read_real_starts
from replication.studies.real_maps.whitened import Found


@pytest.fixture
def observation(tmp_path, power):  # noqa: F811
    folder, source = fake_source_folder(tmp_path, power)
    (found,) = real_sources.read_observations([source], folder, 32)
    return found.with_terms(dict.fromkeys(found.map_terms, False))  # npix 32 has too few dish pixels for them


def test_a_random_start_has_the_stated_phase_rms_and_is_drawn_again_on_a_resume(observation):
    setup = real_sources.setup_for(reference_numpy, observation, 3, 32)
    zernikes = setup.basis.shape[0]
    start = multistart.random_start(setup, observation, 5, scale=0.7)
    phase = start[:zernikes] @ np.asarray(setup.basis)
    assert np.sqrt(np.mean(phase**2)) == pytest.approx(0.7, rel=1e-12)
    np.testing.assert_array_equal(start, multistart.random_start(setup, observation, 5, scale=0.7))
    assert not np.allclose(start[:zernikes], multistart.random_start(setup, observation, 6, scale=0.7)[:zernikes])
    np.testing.assert_array_equal(start[zernikes:], real_sources.first_start(setup, observation)[zernikes:])


def synthetic_ends(observation, setup):
    """16 start records: indices 3 and 4 end at the best minimum (their surfaces 0.01 um apart), index 9 nowhere
    finite, the others at one minimum ~50 um away with a higher objective."""
    best = multistart.random_start(setup, observation, 0)
    near, far = best.copy(), best.copy()
    near[3] += 1e-5
    far[3] += 0.1
    records = []
    for index in range(16):
        fun, x = {3: (1.0, best), 4: (1.0 + 1e-9, near), 9: (None, [None] * best.size)}.get(index, (5.0, far))
        records.append(SimpleNamespace(index=index, scale=1.0, fun=fun, x=[v if v is None else float(v) for v in x],
                                       seconds=0.5 + index))
    return best, records


def test_ends_within_a_micrometre_are_one_minimum_and_disjoint_groups_read_as_multi_starts(observation):
    setup = real_sources.setup_for(reference_numpy, observation, 3, 32)
    best, records = synthetic_ends(observation, setup)
    found = multistart.basins(records[::-1], observation, 3, 32, Found(fun=1.0, x=list(best)), threads=2)
    assert found["best_fun"] == 1.0
    assert [b["count"] for b in found["basins"]] == [2, 13]
    assert found["basins"][1]["from_best_um"] > 10
    assert found["reached_best"] == 2
    assert (found["groups"], found["groups_reaching"]) == (2, 1)
    assert found["group_seconds"] == [sum(0.5 + k for k in range(8)), sum(0.5 + k for k in range(8, 16))]
    assert found["ladder_from_best_um"] == 0.0
    line = multistart_line("SRT", msgspec.convert(found, MultiStart))
    assert "of 16 random starts" in line
    assert "2 ended at the best minimum" in line
    assert "2 distinct minima" in line
    assert "1 of 2 reach it" in line
    nowhere = [SimpleNamespace(**vars(r) | {"fun": None}) for r in records]
    assert multistart.basins(nowhere, observation, 3, 32, Found(fun=1.0, x=list(best)), threads=2) is None


def test_every_start_is_written_as_it_ends_a_killed_run_resumes_and_another_count_is_refused(tmp_path, observation):
    folder = tmp_path / "real-maps"
    options = {"max_order": 2, "npix": 32, "repeats": 1, "threads": 1, "quiet": True}
    real_maps.run_real_maps(folder, [observation], starts=9, **options)
    starts = read_real_starts(folder)
    assert [r.index for r in starts] == list(range(9))
    (source,) = read_real_maps(folder)[1]
    assert source.multistart.starts == 9
    assert source.multistart.groups == 1
    assert source.multistart.reached_best >= 1
    lines = (folder / STARTS_FILE).read_text().splitlines()
    (folder / STARTS_FILE).write_text("\n".join(lines[:-1]) + "\n")  # killed during the last start
    (folder / "sources.jsonl").unlink()
    assert real_maps.run_real_maps(folder, [observation], starts=9, **options) == 1
    again = (folder / STARTS_FILE).read_text().splitlines()
    assert again[:-1] == lines[:-1]
    assert json.loads(again[-1])["index"] == 8
    before = {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    with pytest.raises(RunError, match="starts"):
        real_maps.run_real_maps(folder, [observation], starts=10, **options)
    assert {path: path.read_bytes() for path in folder.rglob("*") if path.is_file()} == before


def test_a_negative_count_of_starts_is_refused_naming_the_option(tmp_path):
    done = run_command("real-maps", "--starts", "-1", "--results", tmp_path / "r")
    assert done.returncode == 2
    assert "argument --starts: must be between 0" in done.stderr.strip().splitlines()[-1]  # after argparse's usage
    assert not (tmp_path / "r").exists()


def test_the_residuals_scale_is_their_robust_spread_in_noise_units_never_below_the_noise(observation):
    from replication.core.objectives import robust_sigma
    from replication.core.reduction.ladder import residual_maps, residual_width

    setup = real_sources.setup_for(reference_numpy, observation, 2, 32)
    start = real_sources.first_start(setup, observation)
    residual = residual_maps(observation, start, 2, 32)
    assert residual_width(observation, start, 2, 32) == max(1.0, robust_sigma(residual[np.isfinite(residual)]))
    wider = observation.with_width(3.0)
    assert wider.gamma == pytest.approx(3 * observation.gamma)
    flat = observation.with_width(1.0)
    quiet = dataclasses.replace(flat, maps=residual_model(observation, start, setup))
    assert residual_width(quiet, start, 2, 32) == 1.0  # maps the model holds exactly: the noise's own scale


def residual_model(observation, x, setup):
    """Maps that are exactly the model at x on the observation's pixels."""
    rows, cols = real_sources.map_region(32, observation.maps.shape[1:])
    return np.asarray(reference_numpy.beam_maps(x, setup))[:, rows, cols]

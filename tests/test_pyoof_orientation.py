"""Maps made by pyoof's own forward model (tests/data/pyoof-maps.npz: pyoof 0.2.3's radiation_pattern of a known
phase on the SRT's sky grid, made in pyoof's environment by `nox -s pyoof_maps`) reduced by this project: the
surface comes back as pyoof's phase of the truth rotated by 180 degrees and by no other convention, and the surface
files written in pyoof's orientation (real-maps --orientation pyoof) lie as pyoof's phase map does. That pyoof makes
the fixture again is `nox -s pyoof_maps`'s check (pyoof's environment has no torch to reduce them with)."""

import pathlib

import numpy as np
import pytest

from replication.core import series
from replication.core.implementations import of
from replication.core.reduction import pyoof_maps, surface
from replication.core.reduction.ladder import fit_ladder, residual_maps
from replication.core.reduction.phases import compare_phases, our_phase
from replication.core.reduction.sources import SOURCES, observation_of, setup_for, surface_grid

FIXTURE = pathlib.Path(__file__).parent / "data" / "pyoof-maps.npz"


@pytest.fixture(scope="module")
def reduced():
    """The fixture's maps reduced as the real maps are (orders 1..its order, torch's adjoint, npix 128), at the
    taper the maps were made with and on the dish pyoof made them with (no support legs): (the fixture, the
    observation, the parameters found)."""
    made = np.load(FIXTURE)
    observation = observation_of(SOURCES[0].without_legs(), made["maps"].astype(np.float64), float(made["step"]))
    observation = observation.with_taper(float(made["taper"]))
    order = int(made["order"])
    stages = fit_ladder(of(series.TORCH_ADJOINT), observation, tuple(range(1, order + 1)), 128)
    return made, observation, np.asarray(stages[-1].x)


def test_pyoofs_phase_of_the_truth_is_the_reduced_surface_rotated_by_180_degrees(reduced):
    made, _, x = reduced
    assert str(made["pyoof"]) == "0.2.3"
    differences = compare_phases(our_phase(x, int(made["order"]), made["phase"].shape[0]), made["phase"])
    closest = min(differences, key=differences.get)
    assert closest == "point-reflected"
    assert differences[closest] < 0.03  # radians rms over the dish, of a 0.5 rad rms phase
    assert all(value > 10 * differences[closest] for name, value in differences.items() if name != closest)


def test_a_surface_written_in_pyoofs_orientation_lies_as_pyoofs_phase_map(reduced, tmp_path):
    """real-maps --orientation pyoof: the text grid is this reduction's rotated by 180 degrees, its header says so;
    so it is in the FITS file, whose coordinate steps are negative (each pixel keeps its place on the dish)."""
    made, observation, x = reduced
    order = int(made["order"])
    residual = residual_maps(observation, x, order, 128)
    (tmp_path / "ours").mkdir()
    (tmp_path / "pyoof").mkdir()
    ours = surface.write_surface_files(tmp_path / "ours", observation, x, order, 128, residual)
    theirs = surface.write_surface_files(tmp_path / "pyoof", observation, x, order, 128, residual, "pyoof")
    assert (ours["orientation"], theirs["orientation"]) == ("ours", "pyoof")
    name = f"surface-{observation.source.name}.txt"
    plain, turned = (np.loadtxt(tmp_path / folder / name) for folder in ("ours", "pyoof"))
    np.testing.assert_array_equal(turned, plain[::-1, ::-1])
    setup = setup_for(of(series.NUMPY), observation, order, 128)
    np.testing.assert_allclose(plain, np.round(surface_grid(x, setup, observation.source.wavelength)[0], 3),
                               equal_nan=True)
    assert surface.ORIENTATIONS["pyoof"] in (tmp_path / "pyoof" / name).read_text().replace("\n# ", " ")
    with pytest.raises(ValueError, match="orientation"):
        surface.oriented(plain, "sideways")
    fits = pytest.importorskip("astropy.io.fits", reason="astropy (the fits extra) is not installed")
    with fits.open(tmp_path / "pyoof" / theirs["surface_fits"]) as hdus:
        header = hdus[0].header
        assert header["ORIENT"] == "pyoof"
        assert header["CDELT1"] < 0
        assert header["CDELT2"] < 0
        np.testing.assert_allclose(hdus[0].data, turned, atol=1e-3, equal_nan=True)



@pytest.mark.parametrize("content", [b"", b"not an archive", None])
def test_the_fixtures_check_refuses_a_damaged_file_in_one_line(tmp_path, capsys, content):
    path = tmp_path / "pyoof-maps.npz"
    if content is None:
        np.savez(path, maps=np.zeros(3))  # an archive without the coefficients and the phase
        path.with_name("link.npz").symlink_to(path)
        path = path.with_name("link.npz")
    else:
        path.write_bytes(content)
    with pytest.raises(SystemExit) as ended:
        pyoof_maps.main(["--check", "--output", str(path)])
    assert ended.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"python -m replication.core.reduction.pyoof_maps: error: {path}: ")

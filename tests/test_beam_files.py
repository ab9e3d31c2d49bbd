"""The readers of beam maps made by others: good files read as documented, each damaged file refused in one line
naming the file (and the line), through the library and the command line."""


import numpy as np
import pytest
from conftest import real_maps_folder, run_command

from replication.core.reduction import beam_files
from replication.core.reduction import sources as real_sources
from replication.core.results import RunError

DATA = real_maps_folder()
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"the SRT maps are absent ({DATA}); "
                                                          f"{real_sources.WHENCE}")


def srt_text(power, step=3.3e-5):
    """An SRT map file's text for a (rows = v, cols = u) power map: u in the outer loop, v fastest."""
    rows, cols = power.shape
    u = (np.arange(cols) - (cols - 1) / 2) * step
    v = (np.arange(rows) - (rows - 1) / 2) * step
    return "".join(f"{u[j]:.6f}\t{v[i]:.6f}\t{power[i, j]:.6f}\n" for j in range(cols) for i in range(rows))


def ticra_text(field, extent=1.4e-3):
    """A TICRA grid file's text for a (rows = v, cols = u) complex co-polar field (cross-polar 0)."""
    rows, cols = field.shape
    header = ["VERSION: TICRA-EM-FIELD-V0.1", "FREQUENCY: 26 GHz", "++++", "   1", "   1   3   2   1", "   0   0",
              f" {-extent:.10E} {-extent:.10E} {extent:.10E} {extent:.10E}", f" {cols} {rows}   0"]
    body = [f" {z.real:.10E} {z.imag:.10E} 0.0 0.0" for z in field.ravel()]
    return "\n".join(header + body) + "\n"


@pytest.fixture
def power():
    rows, cols = np.mgrid[0:12, 0:10]
    return 40.0 + 1000.0 * np.exp(-((rows - 6.0) ** 2 + (cols - 4.5) ** 2) / 8.0)


def test_an_srt_map_is_read_rows_along_v_columns_along_u(tmp_path, power):
    path = tmp_path / "map.txt"
    path.write_text(srt_text(power))
    beam = beam_files.read_srt_map(path)
    np.testing.assert_allclose(beam.power, power, atol=1e-6)
    assert beam.u.shape == (10,)
    assert beam.v.shape == (12,)
    assert beam.step == pytest.approx(3.3e-5, rel=1e-2)  # the file prints u and v to 1e-6 rad


def test_a_ticra_grid_is_read_as_co_polar_power(tmp_path):
    field = (np.arange(6 * 6).reshape(6, 6) + 1j * np.ones((6, 6))) * 1e3  # u fastest: along each row
    path = tmp_path / "map.grd"
    path.write_text(ticra_text(field, extent=1.4e-3))
    beam = beam_files.read_ticra_grid(path)
    np.testing.assert_allclose(beam.power, np.abs(field) ** 2, rtol=1e-9)
    assert beam.u[0] == pytest.approx(-1.4e-3)


def damage_srt(text, how):
    lines = text.splitlines(keepends=True)
    if how == "four columns":
        lines[6] = lines[6].rstrip("\n") + "\t1.0\n"
    elif how == "nan":
        lines[6] = lines[6].rsplit("\t", 1)[0] + "\tnan\n"
    elif how == "1e300":
        lines[6] = lines[6].rsplit("\t", 1)[0] + "\t1e300\n"
    elif how == "not a number":
        lines[6] = lines[6].rsplit("\t", 1)[0] + "\tabc\n"
    elif how == "underscored digits":
        lines[6] = lines[6].rsplit("\t", 1)[0] + "\t4_7.9\n"
    elif how == "other digits":
        lines[6] = lines[6].rsplit("\t", 1)[0] + "\t\u0664\u0667\n"  # Arabic-Indic 4 7
    elif how == "missing sample":
        del lines[6]
    elif how == "irregular grid":
        fields = lines[0].split("\t")
        lines[:12] = [f"{float(fields[0]) - 1.5e-5:.6f}\t" + line.split("\t", 1)[1] for line in lines[:12]]
    elif how == "out of order":
        lines[3], lines[4] = lines[4], lines[3]
    elif how == "empty":
        lines = []
    return "".join(lines)


SRT_DAMAGES = {"four columns": ":7: expected 3 numbers", "nan": ":7: a value is not finite",
               "1e300": ":7: a value beyond 1e+150",
               "not a number": ":7: not a number", "underscored digits": ":7: not a number",
               "other digits": ":7: not a number", "missing sample": "do not fill",
               "irregular grid": "not on a regular grid", "out of order": ":4: sample out of the grid's order",
               "empty": "holds no samples"}


@pytest.mark.parametrize("how", sorted(SRT_DAMAGES))
def test_a_damaged_srt_map_is_refused_naming_the_file_and_what(tmp_path, power, how):
    path = tmp_path / "map.txt"
    path.write_text(damage_srt(srt_text(power), how))
    with pytest.raises(beam_files.MapFileError) as error:
        beam_files.read_srt_map(path)
    message = str(error.value)
    assert message.startswith(str(path))
    assert SRT_DAMAGES[how] in message
    assert "\n" not in message


TICRA_DAMAGES = {"no marker": "no '++++' line", "two sets": "field set(s)", "short body": "rows of field values",
                 "fractional count": "not a count",
                 "nan": "a value is not finite", "three numbers": "expected 4 numbers", "truncated": "ends inside"}


@pytest.mark.parametrize("how", sorted(TICRA_DAMAGES))
def test_a_damaged_ticra_grid_is_refused_naming_the_file_and_what(tmp_path, how):
    lines = ticra_text(np.ones((4, 4), dtype=complex)).splitlines()
    if how == "no marker":
        lines.remove("++++")
    elif how == "two sets":
        lines[4] = "   2   3   2   1"
    elif how == "short body":
        lines = lines[:-1]
    elif how == "nan":
        lines[10] = " nan 0.0 0.0 0.0"
    elif how == "three numbers":
        lines[10] = " 1.0 0.0 0.0"
    elif how == "fractional count":
        lines[7] = " 4 3.7   0"
    elif how == "truncated":
        lines = lines[:5]
    path = tmp_path / "map.grd"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(beam_files.MapFileError) as error:
        beam_files.read_ticra_grid(path)
    assert str(error.value).startswith(str(path))
    assert TICRA_DAMAGES[how] in str(error.value)


def test_maps_on_different_grids_are_refused(tmp_path, power):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text(srt_text(power))
    second.write_text(srt_text(power, step=3.6e-5))
    maps = [beam_files.read_srt_map(first), beam_files.read_srt_map(second)]
    with pytest.raises(beam_files.MapFileError, match=f"^{second}: its u, v grid .* differs from that of {first}"):
        beam_files.same_grid(maps)


def test_a_missing_file_is_refused_in_one_line(tmp_path):
    with pytest.raises(beam_files.MapFileError, match="no such file"):
        beam_files.read_srt_map(tmp_path / "absent.txt")


def fake_source_folder(tmp_path, power, damaged=None):
    """A maps folder with the SRT source's three file names holding small synthetic maps, and the source (without
    its support legs, which at the small grids these maps are fitted on would leave too few dish pixels)."""
    source = real_sources.source_named("srt-2019-04-26").without_legs()
    folder = tmp_path / "maps"
    (folder / source.folder).mkdir(parents=True)
    for index, name in enumerate(source.files):
        text = srt_text(power * (1.0 - 0.2 * index))
        (folder / source.folder / name).write_text(damage_srt(text, damaged) if damaged and index == 2 else text)
    return folder, source


def test_the_command_without_the_maps_says_where_they_come_from(tmp_path):
    done = run_command("real-maps", "--maps", str(tmp_path / "nowhere"), "--results", str(tmp_path / "r"))
    status, err = done.returncode, done.stderr
    assert status == 2
    assert len(err.strip().splitlines()) == 1
    assert "pyoof-srt" in err
    assert not (tmp_path / "r").exists()


def test_the_command_refuses_a_damaged_map_in_one_line_before_writing(tmp_path, power):
    folder, source = fake_source_folder(tmp_path, power, damaged="nan")
    done = run_command("real-maps", "--maps", str(folder), "--source", source.name, "--results", str(tmp_path / "r"))
    status, err = done.returncode, done.stderr
    assert status == 2
    assert len(err.strip().splitlines()) == 1
    assert source.files[2] in err
    assert "a value is not finite" in err
    assert not (tmp_path / "r").exists()


def test_an_observation_is_scaled_and_its_baselines_and_noise_estimated(tmp_path):
    rows, cols = np.mgrid[0:40, 0:40]
    rng = np.random.default_rng(3)
    beam = 2000.0 * np.exp(-((rows - 20.0) ** 2 + (cols - 19.5) ** 2) / 18.0)
    folder, source = fake_source_folder(tmp_path, beam + 50.0 + 8.0 * rng.standard_normal(beam.shape))
    observation = real_sources.read_observation(source, folder)
    assert observation.scale == pytest.approx(2000.0, rel=0.02)
    np.testing.assert_allclose(np.array(observation.baselines) * observation.scale, 50.0 * np.array([1, 0.8, 0.6]),
                               rtol=0.05)
    np.testing.assert_allclose(np.array(observation.noise) * observation.scale, 8.0 * np.array([1, 0.8, 0.6]),
                               rtol=0.15)
    assert not observation.dropped.any()


@needs_data
def test_the_srt_and_grasp_maps_read_as_documented():
    for source in real_sources.SOURCES:
        observation = real_sources.read_observation(source, DATA)
        shape = (100, 100) if source.reader == "srt" else (101, 101)
        assert observation.maps.shape == (3, *shape)
        assert observation.dropped.sum() == (3 if source.reader == "srt" else 0)  # one dropped sample per SRT map
    srt = real_sources.read_observation(real_sources.SOURCES[0], DATA)
    assert srt.step == pytest.approx(3.2727e-5, rel=1e-4)
    assert srt.scale + srt.baselines[0] * srt.scale == pytest.approx(4529.81, rel=1e-6)  # the in-focus peak


@pytest.mark.parametrize("kind", ["constant", "no noise"])
def test_a_map_without_a_beam_or_without_noise_is_refused_in_one_line(tmp_path, power, kind):
    flat = np.full(power.shape, 7.0) if kind == "constant" else np.round(power)
    if kind == "no noise":
        flat[flat < flat.max() / 2] = 50.0  # edges exactly constant
    folder, source = fake_source_folder(tmp_path, flat)
    with pytest.raises(RunError, match="without a beam above its edges or without noise"):
        real_sources.read_observation(source, folder)


def test_real_maps_resumed_on_other_maps_are_refused_naming_them(tmp_path, power):
    from replication.core import measurement
    from replication.studies.real_maps import measure as real_maps

    first, source = fake_source_folder(tmp_path / "a", power)
    other, _ = fake_source_folder(tmp_path / "b", power * 1.01 + 3.0)
    folder = tmp_path / "real-maps"
    (before,) = real_sources.read_observations([source], first, 32)
    measurement.record_identity(folder, {f"maps_sha256_{source.name}": real_sources.maps_sha256(before)})
    (after,) = real_sources.read_observations([source], other, 32)
    with pytest.raises(RunError, match=f"maps_sha256_{source.name}"):
        real_maps.run_real_maps(folder, [after], max_order=1, npix=32, repeats=1, threads=1, quiet=True)
    assert sorted(p.name for p in folder.iterdir()) == ["settings.json"]


def test_real_maps_whose_settings_were_lost_still_refuse_other_maps_from_their_records(tmp_path, power):
    from replication.core.results import append_record
    from replication.studies.real_maps import measure as real_maps

    first, source = fake_source_folder(tmp_path / "a", power)
    other, _ = fake_source_folder(tmp_path / "b", power * 1.01 + 3.0)
    folder = tmp_path / "real-maps"
    folder.mkdir()
    (before,) = real_sources.read_observations([source], first, 32)
    stamp = {"maps_sha256_" + source.name: real_sources.maps_sha256(before)}
    append_record(folder / "tapers.jsonl", stamp | {"source": source.name, "sigma": 0.7, "profile": [[0.7, -1.0]]})
    (after,) = real_sources.read_observations([source], other, 32)
    with pytest.raises(RunError, match=f"tapers.jsonl: line 1: .*maps_sha256_{source.name}"):
        real_maps.run_real_maps(folder, [after], max_order=1, npix=32, repeats=1, threads=1, quiet=True)
    assert sorted(p.name for p in folder.iterdir()) == ["tapers.jsonl"]


def test_a_map_file_too_large_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "map.txt"
    path.write_text("0 0 1\n" * 1000)
    monkeypatch.setattr(beam_files, "MAX_MAP_BYTES", 1000)
    with pytest.raises(beam_files.MapFileError, match="larger than a beam map's"):
        beam_files.read_srt_map(path)

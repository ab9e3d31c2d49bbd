"""The telescope and observation of real maps as a TOML file: the shipped ones, and damaged ones refused in one line
naming the file and the key."""

import json
import os
import pathlib
import re
import shutil

import pytest
from conftest import real_maps_folder, run_command

from replication.core import measurement
from replication.core.paths import REFERENCE
from replication.core.reduction import configs, sources
from replication.core.reduction.sources import STAGES_FILE
from replication.core.results import RunError, append_record, writing_into
from replication.report.figures import draw_all
from replication.report.render import load_runs, render_all
from replication.studies.real_maps.measure import STAMPED, stamp_of

SRT = configs.SHIPPED / "srt-2019-04-26.toml"


def test_the_shipped_configurations_are_the_default_sources_with_the_srts_whole_blockage():
    assert [source.name for source in sources.SOURCES] == ["srt-2019-04-26", "grasp-26ghz"]
    for source in sources.SOURCES:
        telescope = source.telescope
        assert telescope.blockage == pytest.approx(3.953)  # the subreflector is 7.9 m across: 3.953 m its radius
        assert telescope.radius == pytest.approx(32.004)
        assert telescope.effective_focal_length == pytest.approx(149.76)
    assert sources.SOURCES[0].wavelength == pytest.approx(299_792_458.0 / 22.23e9)
    assert sources.SOURCES[1].files == ("ffmap_in.grd", "ffmap_-out.grd", "ffmap_+out.grd")


LEGS = "legs = 4\nleg_width = 1.2\nleg_angle = -45\nleg_start = 3.953\nblockage = 3.953 "
"""The SRT's configuration's blockage line with four support legs before it."""


def test_support_legs_in_a_configuration_reach_the_telescope(tmp_path):
    source = configs.read_config(edited(tmp_path, "blockage = 3.953 ", LEGS))
    telescope = source.telescope
    assert (telescope.legs, telescope.leg_width, telescope.leg_angle, telescope.leg_start) == (4, 1.2, -45.0, 3.953)
    assert telescope.leg_end is None  # to the rim
    with_end = LEGS.replace("blockage = 3.953 ", "leg_end = 17.5\nblockage = 3.953 ")
    ending = edited(tmp_path, "blockage = 3.953 ", with_end)
    assert configs.read_config(ending).telescope.leg_end == 17.5
    legless = configs.read_config(edited(tmp_path, "", ""))
    assert "legs" not in legless.dish.given()  # a dish without legs records none: its identity unchanged
    assert legless == sources.SOURCES[0].without_legs()
    shipped = sources.SOURCES[0].telescope  # the SRT's quadrupod, as pyoof-srt's telescope geometry draws it
    assert (shipped.legs, shipped.leg_width, shipped.leg_angle, shipped.leg_start, shipped.leg_end) == (
        4, 0.5, 45.0, 3.953, 17.5)


def without_legs(text: str) -> str:
    """A configuration's text without its support legs' lines."""
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(("legs", "leg_")))


def edited(tmp_path, old, new):
    """The SRT's shipped configuration without its support legs, with one piece of text replaced, written to a file
    of its own."""
    text = without_legs(SRT.read_text())
    assert old in text
    path = tmp_path / "edited.toml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(("old", "new", "words"), [
    ("blockage = 3.953 ", "", "key 'telescope.blockage' is missing"),
    ("blockage = 3.953 ", "blockage = -3.953 ", "key 'telescope.blockage': expected a positive finite number"),
    ("blockage = 3.953 ", "blockage = 40.0 ", "must be smaller than the dish's"),
    ("blockage = 3.953 ", "blockage = \"3.953\" ", "key 'telescope.blockage': expected float"),
    ("blockage = 3.953 ", "blockage = true ", "key 'telescope.blockage': expected float"),
    ("blockage = 3.953 ", "blockage = nan ", "key 'telescope.blockage': expected a positive finite number"),
    ("blockage = 3.953 ", "feet = 4\nblockage = 3.953 ", "key 'telescope.feet' is not known"),
    ("blockage = 3.953 ", "legs = 4\nblockage = 3.953 ", "key 'telescope.leg_width' is missing; support legs take"),
    ("blockage = 3.953 ", LEGS.replace("legs = 4", "legs = -1"), "key 'telescope.legs': must be an integer in [0, 12]"),
    ("blockage = 3.953 ", LEGS.replace("legs = 4", "legs = 4.0"), "key 'telescope.legs': expected int"),
    ("blockage = 3.953 ", LEGS.replace("leg_width = 1.2", "leg_width = 0"), "key 'telescope.leg_width': expected a "
                                                                           "positive finite number"),
    ("blockage = 3.953 ", LEGS.replace("leg_start = 3.953", "leg_start = 33.0"),
     "key 'telescope.leg_start': must be a number in [0, radius = 32.004) metres"),
    ("blockage = 3.953 ", LEGS.replace("leg_angle = -45", "leg_angle = inf"), "key 'telescope.leg_angle': expected "
                                                                             "a finite number"),
    ("blockage = 3.953 ", LEGS.replace("leg_start = 3.953", "leg_start = 3.953\nleg_end = 2.0"),
     "key 'telescope.leg_end': must be a finite number of metres beyond leg_start = 3.953"),
    ("blockage = 3.953 ", "leg_end = 17.5\nblockage = 3.953 ", "key 'telescope.leg_end' without legs"),
    ("dz = 0.027", "dz = 0", "key 'observation.dz': expected a positive finite number"),
    ('date = "2019-04-26"', 'date = "26/04/2019"', "key 'observation.date': a date YYYY-MM-DD"),
    ('date = "2019-04-26"', 'date = "2019-04-26"\nelevation = 95.0', "key 'observation.elevation': degrees in (0, 90]"),
    ('date = "2019-04-26"', 'date = "2019-04-26"\nelevation = 0', "key 'observation.elevation': expected a positive"),
    ('date = "2019-04-26"', 'date = "2019-04-26"\nplus_dz = "up"', "key 'observation.plus_dz': one of lengthens, "
                                                                      "shortens"),
    ("dz = 0.027", "dz = " + "9" * 400, "key 'observation.dz': expected a positive finite number"),
    ('format = "srt"', 'format = "fits"', "key 'observation.format': one of srt, ticra"),
    ('folder = "observed"', 'folder = "../elsewhere"', "key 'observation.folder': a path inside the maps folder"),
    ('folder = "observed"', 'folder = "/etc"', "key 'observation.folder': a path inside the maps folder"),
    ('name = "srt-2019-04-26"', 'name = "srt 2019/04"', "key 'observation.name': letters, digits"),
    ('files = ["20190426-101052-S0000-MAPPA_IN.txt",    # in focus', 'files = [',
     "key 'observation.files': three file names"),
    ("[observation]", "[observations]", "table [observations] is not known"),
    ('title = "SRT observed', 'title = SRT observed', "not TOML"),
])
def test_a_damaged_configuration_is_refused_naming_the_key(tmp_path, old, new, words):
    with pytest.raises(RunError, match=re.escape(words)) as caught:
        configs.read_config(edited(tmp_path, old, new))
    assert "\n" not in str(caught.value)
    assert str(tmp_path / "edited.toml") in str(caught.value)


def test_a_config_that_is_a_link_a_fifo_a_folder_or_too_large_is_refused_before_it_is_read(tmp_path):
    link = tmp_path / "link.toml"
    link.symlink_to(SRT)
    with pytest.raises(RunError, match="a link"):
        configs.read_config(link)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(RunError, match="not a regular file"):
        configs.read_config(fifo)  # never opened: reading a FIFO would wait for a writer
    with pytest.raises(RunError, match="not a regular file"):
        configs.read_config(tmp_path)
    with pytest.raises(RunError, match="no such file"):
        configs.read_config(tmp_path / "absent.toml")
    large = tmp_path / "large.toml"
    large.write_bytes(b"#" * (configs.MAX_CONFIG_BYTES + 1))
    with pytest.raises(RunError, match="bytes of TOML"):
        configs.read_config(large)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(RunError, match="not UTF-8"):
        configs.read_config(binary)


def test_the_command_line_refuses_a_damaged_config_in_one_line_with_status_2(tmp_path):
    path = edited(tmp_path, "dz = 0.027", "dz = -1")
    result = run_command("real-maps", "--config", path, "--run", tmp_path / "run")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "key 'observation.dz'" in result.stderr
    assert not (tmp_path / "run").exists()


def test_a_config_and_a_source_of_the_same_name_are_refused(tmp_path):
    result = run_command("real-maps", "--config", SRT, "--source", "srt-2019-04-26", "--run", tmp_path / "run")
    assert result.returncode == 2
    assert "named twice" in result.stderr


@pytest.mark.skipif(not (real_maps_folder() / "observed").is_dir(), reason="the SRT maps are not here")
def test_a_copied_config_reads_the_same_maps_as_the_shipped_source(tmp_path):
    copy = edited(tmp_path, 'name = "srt-2019-04-26"', 'name = "my-copy"')
    mine = sources.read_observation(configs.read_config(copy), real_maps_folder())
    shipped = sources.read_observation(sources.SOURCES[0], real_maps_folder())
    assert (mine.maps == shipped.maps).all()
    assert pathlib.Path(copy).name == "edited.toml"


def test_a_record_of_fits_made_before_the_configurations_is_refused_naming_what_to_do(tmp_path):
    """Fits made before each record carried its telescope's configuration were of another model of the SRT (half
    its blockage, the surface at normal incidence): their records are refused in one line, not read as today's."""
    from replication.studies.real_maps.records import check_real_stage

    record = {"source": "srt-2019-04-26", "order": 1, "maps_sha256_srt-2019-04-26": "abc"}
    with pytest.raises(RunError, match=r"stages.jsonl: line 3: written by older code \(no key "
                                       r"'config_srt-2019-04-26'\).*make the run again \(real-maps --new-run\)"):
        check_real_stage("stages.jsonl", 3, record)


def test_a_resume_with_another_dish_is_refused_by_the_records_themselves_once_the_settings_are_lost(tmp_path):
    """Every record of a source carries its configuration (stamp_of), so a folder whose settings.json and runs.jsonl
    were lost still refuses stage 2 with another dish than stage 1's."""
    dish = {"radius": 32.0}
    identity = {"maps_sha256_srt": "abc", "config_srt": {"dish": dish}} | {key: 1 for key in STAMPED}
    stamp = stamp_of(identity, "srt", "run-1")
    assert stamp["config_srt"] == {"dish": dish}
    append_record(tmp_path / STAGES_FILE, stamp | {"source": "srt", "order": 1})
    measurement.check_identity(tmp_path, identity, records=(STAGES_FILE,))  # the same dish: resumed
    other = identity | {"config_srt": {"dish": {"radius": 16.0}}}
    with pytest.raises(RunError, match=rf"{STAGES_FILE}: line 1: recorded under other settings.*config_srt"):
        measurement.check_identity(tmp_path, other, records=(STAGES_FILE,))


def test_a_config_that_takes_a_shipped_name_with_other_content_is_refused(tmp_path):
    path = edited(tmp_path, "dz = 0.027", "dz = 0.03")
    result = run_command("real-maps", "--config", path, "--run", tmp_path / "run")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith(
        "key 'observation.name': 'srt-2019-04-26' is a shipped source's name and this configuration differs from it; "
        "give it a name of its own")
    assert not (tmp_path / "run").exists()


def test_a_run_of_a_config_source_is_drawn_and_reported_under_its_own_names(tmp_path):
    """figures and the report read a source's title, short name, wavelength and dish from its records, so a source
    of a user's configuration (no shipped source of its name) is drawn and shown as its records say."""
    run = tmp_path / "runs" / "2026-12-09_lab"
    shutil.copytree(REFERENCE / "2026-12-06_vm_amd-epyc-2c_real-maps", run)
    folder = run / "real-maps"
    renamed = {"srt-2019-04-26": "my-dish", "grasp-26ghz": "my-other-dish"}
    for name in ("stages.jsonl", "sources.jsonl", "tapers.jsonl", "starts.jsonl"):
        if (folder / name).exists():
            text = (folder / name).read_text()
            for old, new in renamed.items():
                text = text.replace(f'"{old}"', f'"{new}"').replace(f"_{old}", f"_{new}")
                text = text.replace(f"-{old}.", f"-{new}.")
            (folder / name).write_text(text)
    records = [json.loads(line) for line in (folder / "sources.jsonl").read_text().splitlines()]
    for record in records:
        record |= {"title": f"{record['source']} of a lab", "short": record["source"].upper()}
    (folder / "sources.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    for old, new in renamed.items():
        for path in folder.glob(f"*-{old}.*"):
            path.rename(path.with_name(path.name.replace(old, new)))
    if (run / "pyoof").exists():
        shutil.rmtree(run / "pyoof")
    all_runs = load_runs([run], tmp_path / "no-references")
    with writing_into(tmp_path / "drawn"):
        drawn = draw_all(all_runs, tmp_path / "drawn")
    assert {path.name for path in drawn} >= {"fig9_real_maps_surface.png", "fig10_real_maps_residuals.png"}
    text = render_all([run], tmp_path / "no-references", output=tmp_path / "out", figures=tmp_path / "out" / "figures")
    assert "my-dish of a lab" in "".join(text.values())
    assert "SRT observed, 2019-04-26" not in "".join(text.values())

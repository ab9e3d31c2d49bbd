"""The telescope and observation of a set of real maps, as a TOML file a person writes: the dish, the wavelength,
the defocus, the map files and their format. The shipped examples (configs/*.toml beside this module) are the
SRT's observed maps and its GRASP simulation; `real-maps --config FILE` fits any other. A damaged file is refused in
one line naming the file, and the key or the line."""

from __future__ import annotations

import dataclasses
import math
import os
import pathlib
import re
import stat

import reference_numpy
from oof_common.validation import check_legs
from replication.core.results import RunError

try:
    import tomllib
except ImportError:  # Python 3.10: no TOML reader in the standard library
    tomllib = None

SHIPPED = pathlib.Path(__file__).resolve().parent / "configs"
"""The folder of the shipped configurations, one file a source."""
TELESCOPE = {"name": str, "radius": float, "focal_length": float, "blockage": float}
TELESCOPE_OPTIONAL = {"effective_focal_length": float}
LEGS = {"legs": int, "leg_width": float, "leg_angle": float, "leg_start": float}
"""The support legs' keys of [telescope] (telescope.Telescope's fields: their count, full width in metres, the first
one's angle in degrees from the aperture's x axis towards y, where their shadow starts in metres from the centre):
all four or none; none is a dish without legs."""
LEGS_OPTIONAL = {"leg_end": float}
"""Where the legs' shadow ends (metres from the centre; absent: the rim), with the four LEGS."""
SIGNED = {"leg_angle"}
NON_NEGATIVE = {"leg_start"}
"""Numbers that may be negative (an angle), or zero (where the legs' shadow starts); every other one is positive."""
OBSERVATION = {"name": str, "title": str, "short": str, "frequency": float, "dz": float, "format": str,
               "folder": str, "files": list}
"""The keys of each table, with their types (a float may be written as an integer)."""
OBSERVATION_OPTIONAL = {"date": str, "elevation": float, "plus_dz": str}
"""What an observation may also say, for the surface's FITS header: the date (YYYY-MM-DD), the mean elevation
(degrees), and how the +dz map's feed offset changes the path at the dish's centre ("lengthens" or "shortens"):
the sign of the surface follows from it (surface.sign_words)."""
PLUS_DZ = ("lengthens", "shortens")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
FIT = {"pointing": bool, "defocus_scale": bool, "gains": bool}
"""The optional [fit] table: which per-map terms of the model the fits include (make_setup's switches: each
out-of-focus map's pointing and gain, a scale on the feed's offset), each true where the table or the key is
absent (MAP_TERMS)."""
MAP_TERMS = {"pointing": True, "defocus_scale": True, "gains": True}
"""The per-map terms a real observation is fitted with unless its configuration says otherwise: on the SRT's maps
they lower the objective by far more than their count (the report's real-maps findings give each run's)."""
FORMATS = ("srt", "ticra")
"""The map formats read: pyoof-srt's text maps, GRASP's .grd grids (beam_files)."""
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
"""What a source's name may be: it names its records and files."""
MAX_CONFIG_BYTES = 2**20
"""Largest configuration file read: a page of text, not a data file named by mistake."""


SPEED_OF_LIGHT = 299_792_458.0
"""Metres per second."""


@dataclasses.dataclass(frozen=True)
class Dish:
    """The dish as a configuration's [telescope] table gives it, in metres (telescope.Telescope's fields without the
    observation's wavelength and dz): the primary's radius, focal length and central blockage, the system's
    effective focal length (None: prime focus), the support legs (legs = 0: none; LEGS)."""

    radius: float
    focal_length: float
    blockage: float
    effective_focal_length: float | None = None
    legs: int = 0
    leg_width: float = 0.0
    leg_angle: float = 0.0
    leg_start: float = 0.0
    leg_end: float | None = None

    def given(self) -> dict:
        """The dish as records hold it: the primary and the effective focal length, the legs' keys only where the
        dish has legs (a legless dish's records are as before legs were modelled)."""
        values = dataclasses.asdict(self)
        primary = {key: values[key] for key in ("radius", "focal_length", "blockage", "effective_focal_length")}
        legs = {key: values[key] for key in LEGS} | ({} if self.leg_end is None else {"leg_end": self.leg_end})
        return primary | (legs if self.legs else {})

    def without_legs(self) -> Dish:
        return Dish(self.radius, self.focal_length, self.blockage, self.effective_focal_length)


@dataclasses.dataclass(frozen=True)
class About:
    """What an observation's configuration may also say (OBSERVATION_OPTIONAL), for the surface's FITS header: the
    date (YYYY-MM-DD), the mean elevation (degrees), how the +dz map's offset changes the path (PLUS_DZ); None where
    not said."""

    date: str | None = None
    elevation: float | None = None
    plus_dz: str | None = None

    def given(self) -> dict:
        """The keys said, as records hold them."""
        return {key: value for key, value in dataclasses.asdict(self).items() if value is not None}


@dataclasses.dataclass(frozen=True)
class Source:
    """One set of three maps, as its configuration describes them: name (used in records), title and short (for
    people), folder (under the maps folder), files (in focus, -dz, +dz), reader ("srt" text or "ticra" grid),
    frequency (Hz), dz (metres), dish (Dish), the telescope's name, terms (the per-map terms fitted: make_setup's
    pointing, defocus_scale and gains switches) and what else the configuration says of the observation (About)."""

    name: str
    title: str
    short: str
    folder: str
    files: tuple[str, str, str]
    reader: str
    frequency: float
    dz: float
    dish: Dish = dataclasses.field(hash=False, compare=False)
    telescope_name: str = ""
    terms: dict = dataclasses.field(default_factory=lambda: dict(MAP_TERMS), hash=False, compare=False)
    about: About = dataclasses.field(default_factory=About, hash=False, compare=False)

    @property
    def wavelength(self) -> float:
        return SPEED_OF_LIGHT / self.frequency

    @property
    def telescope(self) -> reference_numpy.Telescope:
        """The dish and the observation as the model takes them."""
        return reference_numpy.Telescope(**dataclasses.asdict(self.dish), wavelength=self.wavelength, dz=self.dz)

    def without_legs(self) -> Source:
        """The same source on a dish without support legs (as pyoof fits the SRT: its block_srt_wo_legs)."""
        return dataclasses.replace(self, dish=self.dish.without_legs())


def config_text(path: pathlib.Path) -> str:
    """The text of a configuration file: a regular file, not a link, of at most MAX_CONFIG_BYTES."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        raise RunError(f"--config {path}: no such file") from None
    except OSError as error:
        raise RunError(f"--config {path}: cannot be read ({error.strerror})") from None
    if stat.S_ISLNK(status.st_mode):
        raise RunError(f"--config {path}: a link; name the file itself")
    if not stat.S_ISREG(status.st_mode):
        raise RunError(f"--config {path}: not a regular file (a folder, a FIFO or a device)")
    if status.st_size > MAX_CONFIG_BYTES:
        raise RunError(f"--config {path}: {status.st_size} bytes; a configuration is at most "
                       f"{MAX_CONFIG_BYTES} bytes of TOML")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise RunError(f"--config {path}: not UTF-8 text (byte {error.start})") from None


def parsed(path: pathlib.Path) -> dict:
    """The TOML tables of a configuration file, or a RunError naming the file and the line."""
    if tomllib is None:
        raise RunError("--config: reading TOML needs Python 3.11 or later (tomllib)")
    try:
        return tomllib.loads(config_text(path))
    except tomllib.TOMLDecodeError as error:
        raise RunError(f"--config {path}: not TOML: {error}") from None


def finite_float(value) -> bool:
    """Whether a TOML number is a finite float (an integer of 400 digits is not: it overflows a float)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def checked_table(path, content, table, required, optional=None):
    """One table of the file, every key present, of its type and known; numbers finite and positive."""
    values = content.get(table)
    if not isinstance(values, dict):
        raise RunError(f"--config {path}: no [{table}] table")
    known = required | (optional or {})
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise RunError(f"--config {path}: key '{table}.{unknown[0]}' is not known; [{table}] takes "
                       f"{', '.join(known)}")
    for key in required:
        if key not in values:
            raise RunError(f"--config {path}: key '{table}.{key}' is missing")
    for key, value in values.items():
        kind = known[key]
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        integer = isinstance(value, int) and not isinstance(value, bool)
        if not (number if kind is float else integer if kind is int else isinstance(value, kind)):
            raise RunError(f"--config {path}: key '{table}.{key}': expected {kind.__name__}, got {value!r}"[:200])
        if kind is float and not (finite_float(value) and (key in SIGNED or value > 0 or (
                key in NON_NEGATIVE and value == 0))):
            least = "a finite number" if key in SIGNED else "a finite number >= 0" if key in NON_NEGATIVE else \
                "a positive finite number"
            raise RunError(f"--config {path}: key '{table}.{key}': expected {least}, got {repr(value)[:40]}")
        if kind is str and not value.strip():
            raise RunError(f"--config {path}: key '{table}.{key}' is empty")
    return {key: float(value) if known[key] is float else value for key, value in values.items()}


def relative_path(path, key, value):
    """A path inside the maps folder: relative, without '..', as written."""
    parts = pathlib.PurePosixPath(value).parts
    if not parts or value.startswith(("/", "\\")) or ".." in parts or "\\" in value or ":" in value:
        raise RunError(f"--config {path}: key '{key}': a path inside the maps folder (relative, no '..'), got "
                       f"{value!r}"[:200])
    return value


def read_config(path):
    """The Source a configuration file describes, every key checked."""
    path = pathlib.Path(path)
    content = parsed(path)
    extra = sorted(set(content) - {"telescope", "observation", "fit"})
    if extra:
        raise RunError(f"--config {path}: table [{extra[0]}] is not known; a configuration has [telescope], "
                       "[observation] and, optionally, [fit]")
    terms = MAP_TERMS | (checked_table(path, content, "fit", {}, FIT) if "fit" in content else {})
    table = checked_table(path, content, "telescope", TELESCOPE, TELESCOPE_OPTIONAL | LEGS | LEGS_OPTIONAL)
    telescope_name = table.pop("name")
    dish = checked_dish(path, table)
    observation = checked_observation(path, checked_table(path, content, "observation", OBSERVATION,
                                                          OBSERVATION_OPTIONAL))
    return Source(name=observation.name, title=observation.title, short=observation.short, folder=observation.folder,
                  files=observation.files, reader=observation.format, frequency=observation.frequency,
                  dz=observation.dz, dish=dish, telescope_name=telescope_name, terms=terms, about=observation.about)


@dataclasses.dataclass(frozen=True)
class ObservationTable:
    """A configuration's [observation] table, checked (OBSERVATION, OBSERVATION_OPTIONAL)."""

    name: str
    title: str
    short: str
    frequency: float
    dz: float
    format: str
    folder: str
    files: tuple[str, str, str]
    about: About


def checked_observation(path, table: dict) -> ObservationTable:
    """The [observation] table, typed: a name for files, a known format, three relative file names."""
    about = checked_about(path, About(**{key: table.pop(key) for key in OBSERVATION_OPTIONAL if key in table}))
    observation = ObservationTable(**table | {"files": tuple(table["files"])}, about=about)
    if not NAME.fullmatch(observation.name):
        raise RunError(f"--config {path}: key 'observation.name': letters, digits, '.', '_' and '-' (at most 64), "
                       f"got {observation.name!r}"[:200])
    if observation.format not in FORMATS:
        raise RunError(f"--config {path}: key 'observation.format': one of {', '.join(FORMATS)}, got "
                       f"{observation.format!r}"[:200])
    if len(observation.files) != 3 or not all(isinstance(name, str) for name in observation.files):
        raise RunError(f"--config {path}: key 'observation.files': three file names (in focus, -dz, +dz), got "
                       f"{list(observation.files)!r}"[:200])
    return dataclasses.replace(
        observation, folder=relative_path(path, "observation.folder", observation.folder),
        files=tuple(relative_path(path, "observation.files", name) for name in observation.files))


def checked_about(path, about: About) -> About:
    """The optional keys of [observation] (OBSERVATION_OPTIONAL), checked."""
    if about.date is not None and not DATE.fullmatch(about.date):
        raise RunError(f"--config {path}: key 'observation.date': a date YYYY-MM-DD, got {about.date!r}"[:200])
    if about.elevation is not None and not about.elevation <= 90:
        raise RunError(f"--config {path}: key 'observation.elevation': degrees in (0, 90], got {about.elevation!r}")
    if about.plus_dz is not None and about.plus_dz not in PLUS_DZ:
        raise RunError(f"--config {path}: key 'observation.plus_dz': one of {', '.join(PLUS_DZ)}, got "
                       f"{about.plus_dz!r}"[:200])
    return about


def checked_dish(path, table: dict) -> Dish:
    """The [telescope] table's dish: its blockage inside its rim, its support legs (LEGS) all four or none, checked as
    the model checks a telescope."""
    given = [key for key in LEGS if key in table]
    if not given and "leg_end" in table:
        raise RunError(f"--config {path}: key 'telescope.leg_end' without legs; support legs take {', '.join(LEGS)}")
    missing = [key for key in LEGS if key not in table]
    if given and missing:
        raise RunError(f"--config {path}: key 'telescope.{missing[0]}' is missing; support legs take "
                       f"{', '.join(LEGS)}")
    dish = Dish(**table)
    if dish.blockage >= dish.radius:
        raise RunError(f"--config {path}: key 'telescope.blockage': the blockage's radius ({dish.blockage:g} m) "
                       f"must be smaller than the dish's ({dish.radius:g} m)")
    try:
        check_legs(dataclasses.asdict(dish))
    except ValueError as error:
        raise RunError(f"--config {path}: key 'telescope.{error}".replace(" must ", "': must ", 1)) from None
    return dish


def shipped_configs() -> list[pathlib.Path]:
    """The shipped configuration files, by name."""
    return sorted(SHIPPED.glob("*.toml"))

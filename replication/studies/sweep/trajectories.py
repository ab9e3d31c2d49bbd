"""Every timed fit's trajectory, kept beside its point: what a time to target and an end distance are recomputed from.

A sweep point's fits are written, before the point's record, to `<sweep folder>/trajectories/<point>.npz`: a NumPy
archive (a zip of .npy arrays; `numpy.load(path, allow_pickle=False)` opens it, as can any zip reader) holding, for
each repeat r in the order timed, `seconds_r` (seconds since that fit started, one per objective evaluation, float64),
`evaluations_r` (evaluations so far, int64) and `params_r` (the parameters evaluated, (evaluations, P) float64). The
point's record names the file and its SHA-256 (key "trajectories"). `python -m replication audit --run DIR`
recomputes every time to target and end distance from these files and the sweep's optima.
"""

from __future__ import annotations

import hashlib
import io
import pathlib
import zipfile

import numpy as np

from replication.core.results import RunError, write_atomically
from replication.studies.sweep.records import Trajectories

FOLDER = "trajectories"
"""The folder of a sweep that holds its points' trajectories."""
FIELDS = ("seconds", "evaluations", "params")
"""The arrays of one fit's trajectory, in the order of optimum.time_to_target's input."""


def file_name(key: tuple) -> str:
    """The file of a point's trajectories: its key (impl, dtype, gradient, minimizer, npix, nzern) joined by '_'."""
    impl, dtype, gradient, minimizer, npix, nzern = key
    return f"{impl}_{dtype}_{gradient}_{minimizer}_npix{npix}_n{nzern}.npz"


def archive_bytes(trajectories: list[dict]) -> bytes:
    """The .npz archive of a point's trajectories (one dict of FIELDS per repeat), compressed."""
    arrays = {f"{field}_{r}": np.asarray(trajectory[field]) for r, trajectory in enumerate(trajectories)
              for field in FIELDS}
    stream = io.BytesIO()
    np.savez_compressed(stream, **arrays)
    return stream.getvalue()


def write_trajectories(sweep_folder: pathlib.Path, key: tuple, trajectories: list[dict]) -> dict:
    """Write a point's trajectories (atomically: a temporary file renamed over the target) and return what its
    record says of them: {"file": path relative to the sweep folder, "sha256", "repeats"}."""
    relative = pathlib.PurePosixPath(FOLDER) / file_name(key)
    content = archive_bytes(trajectories)
    write_atomically(pathlib.Path(sweep_folder) / relative, content)
    return {"file": str(relative), "sha256": hashlib.sha256(content).hexdigest(), "repeats": len(trajectories)}


def read_trajectories(sweep_folder: pathlib.Path, entry: Trajectories, nparams: int) -> list[dict]:
    """The trajectories a point's record names (entry: its "trajectories"), checked against the recorded SHA-256
    and shapes; a RunError naming the file where it is missing, altered or malformed."""
    relative = pathlib.PurePosixPath(entry.file)
    if relative.is_absolute() or ".." in relative.parts or relative.parts[:1] != (FOLDER,):
        raise RunError(f"{sweep_folder}: a trajectories file outside its {FOLDER}/ folder ({entry.file!r})")
    path = pathlib.Path(sweep_folder) / relative
    if path.is_symlink() or not path.is_file():
        raise RunError(f"{path}: missing or not a regular file (a point's trajectories)")
    content = path.read_bytes()
    if hashlib.sha256(content).hexdigest() != entry.sha256:
        raise RunError(f"{path}: its SHA-256 is not the one its point recorded: the file was altered")
    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as archive:
            found = [{field: archive[f"{field}_{r}"] for field in FIELDS} for r in range(entry.repeats)]
    except (KeyError, ValueError, OSError, zipfile.BadZipFile) as error:
        raise RunError(f"{path}: not the trajectories of {entry.repeats} repeat(s) ({error})") from None
    for r, trajectory in enumerate(found):
        count = len(trajectory["seconds"]) if trajectory["seconds"].ndim == 1 else -1
        shapes = {field: trajectory[field].shape for field in FIELDS}
        if count < 0 or shapes != {"seconds": (count,), "evaluations": (count,), "params": (count, nparams)} or any(
                trajectory[field].dtype.kind not in "iuf" for field in FIELDS):
            raise RunError(f"{path}: repeat {r}: expected arrays of numbers, {max(count, 0)} evaluations of {nparams} "
                           f"parameters (seconds and evaluations one per evaluation), got "
                           + ", ".join(f"{field} {shape}" for field, shape in shapes.items()))
    return found

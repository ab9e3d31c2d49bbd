"""Maps made by pyoof's own forward model (pyoof 0.2.3: aperture.radiation_pattern, its Gaussian illumination, its
Gregorian path difference and blockage) for a known aperture phase, on the sky grid of the SRT's maps: what checks
the reduction against another package's conventions (which way u and v run, what a positive phase is) rather than
against its own. Runs in pyoof's environment (`nox -s pyoof_maps`), which has no torch; the reduction of the maps
it writes runs in the project's (tests/test_pyoof_orientation.py).

pyoof's grid is made to fall on the maps' own: its sky step, 1 / (resolution x its aperture-plane step) wavelengths,
is the SRT maps' step, and the maps are the rows x cols pixels around its beam axis (its pixel resolution / 2), which
the model puts at the maps' (rows // 2, cols // 2); nothing is interpolated."""

from __future__ import annotations

import argparse
import math
import pathlib
import sys

import numpy as np

from replication.core.records import load_arrays
from replication.core.reduction.pyoof_fit import pyoof_phase
from replication.core.reduction.sources import SOURCES
from replication.core.results import RunError, atomic_stream

RESOLUTION = 1024
"""pyoof's FFT grid (pixels a side): its aperture plane then spans the dish at about 0.4 m a pixel."""
ORDER = 4
"""The known phase's highest Zernike order."""
PHASE_RMS = 0.5
"""The known phase's rms over the dish (radians), tilts removed."""
TAPER = 0.73
"""The Gaussian illumination's width (dish radii), as the closure's maps."""
NOISE = 1e-3
"""White noise of each map, a fraction of the in-focus peak."""
SHAPE = (100, 100)
"""The maps' pixels (rows: v, columns: u), as the SRT's."""
STEP = 3.273e-5
"""The maps' sky step (radians), the SRT's."""


def known_coefficients(seed: int, order: int = ORDER) -> np.ndarray:
    """pyoof's K coefficients ((order + 1)(order + 2) / 2, its order) of a phase of PHASE_RMS radians rms over the
    dish: normal draws, piston and tilts zero, scaled by pyoof's own phase map."""
    coefficients = np.random.default_rng(seed).normal(size=(order + 1) * (order + 2) // 2)
    coefficients[:3] = 0.0
    phase = pyoof_phase(coefficients, SOURCES[0].telescope.radius)
    return coefficients * PHASE_RMS / float(np.sqrt(np.nanmean((phase - np.nanmean(phase)) ** 2)))


def pyoof_telescope(source):
    """pyoof's telgeo list for a source's dish: its blockage (no legs) and Gregorian path difference."""
    from pyoof import telgeometry

    dish = source.telescope
    return [telgeometry.block_manual(pr=dish.radius, sr=dish.blockage, a=0.0, L=0.0),
            telgeometry.opd_manual(Fp=dish.focal_length, F=dish.effective_focal_length), float(dish.radius)]


def pyoof_maps(coefficients: np.ndarray, seed: int, source=SOURCES[0], shape=SHAPE, step: float = STEP,
               noise: float = NOISE) -> np.ndarray:
    """The three maps (in focus, -dz, +dz; rows along v, columns along u) pyoof's radiation_pattern makes of the
    phase `coefficients` with the feed at 0, -dz, +dz, each |F|^2 on pyoof's grid cut to shape around its beam
    axis, divided by the in-focus peak, with white noise of `noise` (a fraction of that peak) drawn from seed."""
    from pyoof import aperture

    radius = float(source.telescope.radius)
    half_box = source.wavelength * (RESOLUTION - 1) / (2 * step * RESOLUTION)  # pyoof's sky step is then `step`
    sigma_db = 20 * math.log10(TAPER)  # pyoof's illum_gauss: a width 10^(dB / 20) primary radii
    centre = RESOLUTION // 2
    rows, cols = shape
    maps = []
    for offset in (0.0, -source.dz, source.dz):
        u, v, field = aperture.radiation_pattern(K_coeff=coefficients, I_coeff=[1.0, sigma_db, 0.0, 0.0], d_z=offset,
                                                 wavel=source.wavelength, illum_func=aperture.illum_gauss,
                                                 telgeo=pyoof_telescope(source), resolution=RESOLUTION,
                                                 box_factor=half_box / radius)
        if u[centre] != 0.0 or v[centre] != 0.0 or abs((u[1] - u[0]) * source.wavelength - step) > 1e-9 * step:
            raise ValueError(f"pyoof's grid does not fall on the maps': step {(u[1] - u[0]) * source.wavelength}")
        power = np.abs(field) ** 2
        maps.append(power[centre - rows // 2:centre - rows // 2 + rows, centre - cols // 2:centre - cols // 2 + cols])
    maps = np.array(maps) / np.max(maps[0])
    return maps + noise * np.random.default_rng(seed + 1).standard_normal(maps.shape)


def write_pyoof_maps(path: pathlib.Path, seed: int = 0) -> pathlib.Path:
    """The maps of seed's known phase, its coefficients, pyoof's own phase map of them (phases.PHASE_PIXELS across
    the dish, rows along v, columns along u, radians) and what made them, as one .npz."""
    import pyoof

    coefficients = known_coefficients(seed)
    maps = pyoof_maps(coefficients, seed)
    phase = pyoof_phase(coefficients, SOURCES[0].telescope.radius)
    with atomic_stream(path) as stream:  # whole or not at all; never through a link
        np.savez_compressed(stream, maps=maps.astype(np.float32), step=STEP, coefficients=coefficients, phase=phase,
                            order=ORDER, taper=TAPER, noise=NOISE, seed=seed, source=SOURCES[0].name,
                            pyoof=pyoof.__version__)
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m replication.core.reduction.pyoof_maps",
                                     description="Maps made by pyoof's forward model for a known phase (.npz).")
    parser.add_argument("--output", type=pathlib.Path, required=True, help="the .npz file to write")
    parser.add_argument("--seed", type=int, default=0, help="the known phase's and the noise's seed (default 0)")
    parser.add_argument("--check", action="store_true",
                        help="make the maps again and compare them with those in --output instead of writing")
    args = parser.parse_args(argv)
    try:
        if args.check:
            return check_pyoof_maps(args.output, args.seed)
        print(write_pyoof_maps(args.output, args.seed))
    except RunError as error:
        parser.error(str(error))  # one line, exit status 2
    return 0


def check_pyoof_maps(path: pathlib.Path, seed: int) -> int:
    """0 where pyoof makes the maps, coefficients and phase in path again (the maps to float32), else 1, saying
    which differ."""
    made = load_arrays(path)
    coefficients = known_coefficients(seed)
    again = {"coefficients": coefficients, "maps": pyoof_maps(coefficients, seed).astype(np.float32),
             "phase": pyoof_phase(coefficients, SOURCES[0].telescope.radius)}
    differ = [name for name, value in again.items()
              if name not in made or not np.array_equal(value, made[name], equal_nan=True)]
    print(f"{path}: {'differs in ' + ', '.join(differ) if differ else 'pyoof makes it again'}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

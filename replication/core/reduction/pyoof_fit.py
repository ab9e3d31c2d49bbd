"""pyoof (the OOF holography package, PyPI 0.2.3) fitting a source's three maps: its own model and fit (nonlinear
least squares, scipy's TRF with a finite-difference Jacobian, orders 1..n each from the last), timed, with its
retrieved phase: what the real maps' and the closure test's pyoof peers run.

pyoof runs in an environment of its own (`nox -s pyoof`: it needs astropy 5.3.4 and numpy 1.26.4) and is imported
where it is used. pyoof 0.2.3 needs three things done from outside to run here: yaml.load without a Loader (PyYAML 6
refuses it), a float phase resolution (numpy's linspace refuses it), and its plots switched off (its style asks for
LaTeX).
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys
import time

import numpy as np

from replication.core.records import Count, Number, Order, Record, Seconds, Vector, as_typed, check_vectors, read_typed
from replication.core.reduction import sources as real_sources
from replication.core.results import RunError

PYOOF_ILLUMINATION = "illum_pedestal"
"""pyoof's parabolic-taper illumination (its default), the taper fitted as the maps' configuration asks
(pyoof_opt_vars.yaml: amplitude and offsets fixed)."""
RESOLUTION, BOX_FACTOR = 2**8, 5
"""pyoof's FFT grid and its extent in primary radii, as pyoof-srt fitted these maps."""
PHASE_PIXELS = 64
"""Pixels across the dish of the phase maps compared."""


def pyoof_fits_file(observation: real_sources.Observation, path: pathlib.Path):
    """The three maps as pyoof's FITS input: baselines subtracted, dropped samples left out, in pyoof's order
    (minus, zero, plus)."""
    from astropy.io import fits

    rows, cols = observation.maps.shape[1:]
    step = observation.step
    u = (np.arange(cols) - (cols - 1) / 2) * step
    v = (np.arange(rows) - (rows - 1) / 2) * step
    uu, vv = np.meshgrid(u, v)  # rows along v, columns along u, as the maps
    header = fits.Header()
    header["FREQ"], header["WAVEL"] = observation.source.frequency, observation.source.wavelength
    header["MEANEL"], header["OBJECT"], header["DATE_OBS"] = 0.0, observation.source.name, observation.source.name
    tables = [fits.PrimaryHDU(header=header)]
    for index, name, sign in ((1, "MINUS OOF", -1), (0, "ZERO OOF", 0), (2, "PLUS OOF", 1)):
        keep = ~observation.dropped[index]
        beam = (observation.maps[index] - observation.baselines[index]) * observation.scale
        table = fits.BinTableHDU.from_columns([fits.Column(name="U", format="E", array=uu[keep]),
                                               fits.Column(name="V", format="E", array=vv[keep]),
                                               fits.Column(name="BEAM", format="E", array=beam[keep])])
        table.name = name
        table.header["DZ"] = sign * observation.source.dz
        tables.append(table)
    fits.HDUList(tables).writeto(path, overwrite=True)


class TimedLeastSquares:
    """scipy.optimize as pyoof's fit_beam sees it, with least_squares timed and counted call by call (one per
    order)."""

    def __init__(self, optimize):
        self.optimize, self.calls = optimize, []

    def __getattr__(self, name):
        return getattr(self.optimize, name)

    def least_squares(self, *args, **kwargs):
        start = time.perf_counter()
        result = self.optimize.least_squares(*args, **kwargs)
        self.calls.append({"seconds": time.perf_counter() - start, "nfev": int(result.nfev),
                           "status": int(result.status), "success": bool(result.success),
                           "message": str(result.message), "cost": float(result.cost)})
        return result


def patched_pyoof():
    """pyoof's fit_beam module with the three fixes applied from outside, and the timed least squares."""
    import matplotlib

    matplotlib.use("Agg")
    import importlib

    import yaml
    from pyoof import aperture

    module = importlib.import_module("pyoof.fit_beam")  # the module, which pyoof's namespace shadows by its function

    class SafeYaml:
        def __getattr__(self, name):
            return getattr(yaml, name)

        @staticmethod
        def load(stream, Loader=yaml.SafeLoader):
            return yaml.load(stream, Loader=Loader)

    module.yaml = SafeYaml()
    module.phase = lambda K_coeff, notilt, pr, resolution=1000: aperture.phase(K_coeff, notilt, pr, int(resolution))
    matplotlib.rcParams["text.usetex"] = False
    module.optimize = TimedLeastSquares(module.optimize)
    return module


def pyoof_phase(coefficients, radius):
    """pyoof's phase (radians, tilts removed) on a PHASE_PIXELS grid across the dish (rows along v, columns along
    u), NaN off the dish."""
    from pyoof import aperture

    x, y, phi = aperture.phase(np.asarray(coefficients), True, radius, PHASE_PIXELS)
    xx, yy = np.meshgrid(x, y)
    return np.where(np.hypot(xx, yy) <= radius, phi, np.nan)


@dataclasses.dataclass(frozen=True)
class PyoofOrder:
    """One order of pyoof's fits of one source: its time (s), evaluations, how scipy's least squares ended (status 0:
    at its evaluation limit), its cost, the parameters pyoof wrote and its phase map (PHASE_PIXELS a side, rad)."""

    source: str
    order: int
    seconds: float
    nfev: int
    status: int
    success: bool
    message: str
    cost: float
    params: list[float]
    phase: np.ndarray | None = None

    def record(self) -> dict:
        """The order as its record holds it (the phase goes to an .npz of its own)."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self) if field.name != "phase"}


def fit_with_pyoof(observation: real_sources.Observation, max_order: int, work: pathlib.Path,
                   config: pathlib.Path | None) -> list[PyoofOrder]:
    """pyoof's fits of one source, orders 1..max_order, each a PyoofOrder; config: the pyoof_opt_vars.yaml saying
    what it fits (None: pyoof's defaults)."""
    from astropy.io import ascii
    from pyoof import aperture, extract_data_pyoof, telgeometry

    module = patched_pyoof()
    path = work / f"{observation.source.name}.fits"
    pyoof_fits_file(observation, path)
    data_info, data_obs = extract_data_pyoof(str(path))
    dish = observation.source.dish
    telescope = [telgeometry.block_manual(pr=dish.radius, sr=dish.blockage, a=0.0, L=0.0),
                 telgeometry.opd_manual(Fp=dish.focal_length, F=dish.effective_focal_length),
                 float(dish.radius), "SRT"]
    module.fit_beam(data_info=data_info, data_obs=data_obs, method="trf", order_max=max_order,
                    illum_func=getattr(aperture, PYOOF_ILLUMINATION), telescope=telescope, resolution=RESOLUTION,
                    box_factor=BOX_FACTOR, fit_previous=True,
                    config_params_file=None if config is None else str(config), make_plots=False, verbose=0)
    output = sorted((work / "pyoof_out").glob(f"{observation.source.name}-*"))[-1]
    records = []
    for order, call in zip(range(1, max_order + 1), module.optimize.calls, strict=True):
        table = ascii.read(str(output / f"fitpar_n{order}.csv"))
        params = np.array(table["parfit"], dtype=float)
        records.append(PyoofOrder(source=observation.source.name, order=order, **call,
                                  params=[float(v) for v in params], phase=pyoof_phase(params[4:], dish.radius)))
    return records


def options_file(maps: pathlib.Path) -> pathlib.Path | None:
    """The maps folder's pyoof_opt_vars.yaml (what pyoof fits, as pyoof-srt fitted these maps), None where absent."""
    path = maps / "pyoof_opt_vars.yaml"
    return path if path.is_file() else None


def peer_parser(prog: str, description: str) -> argparse.ArgumentParser:
    """A pyoof peer's command line: the maps' folder, where to write, the highest order."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--maps", type=pathlib.Path, default=None, help="the maps' folder (as real-maps --maps)")
    parser.add_argument("--results", type=pathlib.Path, required=True, help="the folder to write into")
    parser.add_argument("--max-order", type=int, default=real_sources.ORDERS[-1])
    return parser


def exit_status(parser: argparse.ArgumentParser, fitting) -> int:
    """fitting() run: 0, or, where it refuses (RunError, ValueError, OSError), its one line after the command's name on
    stderr and 2."""
    try:
        fitting()
    except (RunError, ValueError, OSError) as error:
        print(f"{parser.prog}: error: {error}", file=sys.stderr)
        return 2
    return 0


class PyoofFit(Record):
    """One order of pyoof's fits of one source of real maps as its record holds it (PyoofOrder.record and pyoof's
    version: replication.studies.real_maps.pyoof_peer writes them)."""

    source: str
    order: Order
    seconds: Seconds
    nfev: Count
    status: int
    success: bool
    message: str
    cost: Number
    params: Vector
    pyoof: str


def check_pyoof_fit(path: pathlib.Path, number: int, record: dict) -> PyoofFit:
    """A pyoof fit record as read, typed and validated."""
    fit = as_typed(path, number, record, PyoofFit)
    check_vectors(path, number, {"params": fit.params}, len(fit.params))
    return fit


def read_pyoof(path: pathlib.Path, strict: bool = False) -> list[PyoofFit]:
    """pyoof's fits of the real maps, one per source and order, validated and typed."""
    return read_typed(path, check_pyoof_fit, lambda fit: (fit.source, fit.order), "source and order", False, strict)

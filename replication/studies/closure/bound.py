"""What the closure test's maps allow at best: for each seed, the surface error the Fisher information at its truth
predicts for the reduction's estimator (least squares in noise units with white weights, under the maps' noise
correlated along the scans: the sandwich covariance) and for the efficient one (least squares prewhitened along the
scans, whose covariance is the Cramer-Rao bound), each as the share of draws of that Gaussian error of the Zernike
terms that lie within WITHIN_UM. The per-map terms, offsets and illumination are fitted nuisances; the taper is
held at the truth's, which can only make the prediction better than any reduction that fits it. Untimed: torch's
forward-mode Jacobian of the maps at the truth."""

from __future__ import annotations

import math
import pathlib
import warnings

import numpy as np
import torch
from tqdm import tqdm

import reference_numpy
import torch_impl
from replication.core import measurement
from replication.core.environment import git_commit, thread_limits
from replication.core.records import as_written
from replication.core.reduction.sources import map_region, surface_error
from replication.core.results import append_record
from replication.studies.closure.maps import SCAN_CORRELATION, SOURCE, check_noise, check_seeds, simulated_maps
from replication.studies.closure.records import BOUND_FILE, CLOSURE_FILE, WITHIN_UM, check_bound, read_bound
from torch_impl.beams import from_fft_order, model_power

DRAWS = 20_000
"""Draws of the predicted Gaussian error per seed and estimator (the share's Monte Carlo error is below 0.004)."""


def maps_jacobian(truth, setup, shape) -> np.ndarray:
    """d(maps)/d(parameters) at the truth, (pixels of the three maps, parameters), in units of the in-focus peak: the
    model's pixels where the maps lie, by forward-mode autograd through the torch tree."""
    tsetup = torch_impl.make_setup(setup.npix, setup.nzern, telescope=setup.telescope, sigma=setup.sigma,
                                   offsets=True, oversamp=setup.oversamp, pointing=True, defocus_scale=True,
                                   gains=True)
    rows, cols = map_region(setup.npix, shape[1:])
    peak = float(np.asarray(reference_numpy.beam_maps(truth, setup))[0].max())

    def maps(params):
        return (from_fft_order(model_power(params, tsetup))[:, rows, cols] / peak).reshape(-1)

    with warnings.catch_warnings():  # forward mode's first use scripts torch's own decompositions (torch 2.13)
        warnings.filterwarnings("ignore", message="`torch.jit.script` is deprecated", category=DeprecationWarning)
        return torch.func.jacfwd(maps)(torch.as_tensor(truth, dtype=torch.float64)).numpy()


def scan_whitened(columns, shape) -> np.ndarray:
    """Each column (a map's derivative) prewhitened along the scans (axis 1 of (3, rows, cols)): the AR(1) noise of
    maps.scan_noise becomes white of unit variance."""
    grid = columns.reshape(*shape, -1)
    white = np.empty_like(grid)
    white[:, 0] = grid[:, 0]
    white[:, 1:] = (grid[:, 1:] - SCAN_CORRELATION * grid[:, :-1]) / math.sqrt(1 - SCAN_CORRELATION**2)
    return white.reshape(columns.shape)


def scan_correlated(columns, shape) -> np.ndarray:
    """The noise's correlation matrix along the scans (SCAN_CORRELATION^|i - j|) times each column."""
    lag = np.arange(shape[1])
    correlation = SCAN_CORRELATION ** np.abs(lag[:, None] - lag[None, :])
    return np.einsum("ij,mjcp->micp", correlation, columns.reshape(*shape, -1)).reshape(columns.shape)


def surface_gram(setup, nparams) -> np.ndarray:
    """G with rms(surface error)^2 = z G z for Zernike errors z (micrometres^2 per unit coefficient^2): the surface
    error (sources.surface_error: along the normal, tilts and piston removed) is linear in the coefficients."""
    wavelength = SOURCE.wavelength
    zero = surface_error(np.zeros(nparams), setup, wavelength)
    per_term = np.array([surface_error(np.eye(nparams)[k], setup, wavelength) - zero
                         for k in range(setup.basis.shape[0])])
    return per_term @ per_term.T / per_term.shape[1]


def predicted_errors(covariance, gram, rng) -> tuple[float, float]:
    """(rms surface error in micrometres, the share of DRAWS within WITHIN_UM) of Zernike errors ~ N(0, covariance)."""
    draws = rng.multivariate_normal(np.zeros(len(covariance)), covariance, size=DRAWS, method="eigh")
    errors = np.sqrt(np.einsum("di,ij,dj->d", draws, gram, draws))
    return float(math.sqrt(np.trace(gram @ covariance))), float(np.mean(errors <= WITHIN_UM))


def seed_bound(seed, npix, order, noise) -> dict:
    """One seed's record: the predicted rms error and share within WITHIN_UM of both estimators at its truth."""
    maps, truth, setup = simulated_maps(seed, npix, order, noise)
    jacobian = maps_jacobian(truth, setup, maps.shape)
    kept = np.flatnonzero(np.abs(jacobian).sum(axis=0) > 0)  # piston and the like move no pixel
    jacobian = jacobian[:, kept]
    inverse = np.linalg.inv(jacobian.T @ jacobian)
    sandwich = noise**2 * inverse @ (jacobian.T @ scan_correlated(jacobian, maps.shape)) @ inverse
    whitened = scan_whitened(jacobian, maps.shape)
    efficient = noise**2 * np.linalg.inv(whitened.T @ whitened)
    zernike = [i for i, k in enumerate(kept) if k < setup.basis.shape[0]]
    gram = surface_gram(setup, len(truth))[np.ix_(kept[zernike], kept[zernike])]
    rng = np.random.default_rng(seed)
    ls_um, ls_share = predicted_errors(sandwich[np.ix_(zernike, zernike)], gram, rng)
    bound_um, bound_share = predicted_errors(efficient[np.ix_(zernike, zernike)], gram, rng)
    return {"seed": seed, "npix": npix, "noise": noise, "order": order, "parameters": len(kept),
            "ls_rms_um": ls_um, "ls_share": ls_share, "bound_rms_um": bound_um, "bound_share": bound_share}


def run_bound(folder: pathlib.Path, seeds: int, identity: dict, threads: int = 2, quiet: bool = False) -> int:
    """The bound of seeds 0..seeds-1 not yet in folder's BOUND_FILE, each written as it ends with the commit that
    made it, under the closure folder's identity (a folder holds one set of settings); returns how many now."""
    noise = check_noise(identity["noise"])
    measurement.check_identity(folder, identity, records=(BOUND_FILE, CLOSURE_FILE))  # records hold noise, npix
    path = folder / BOUND_FILE
    done = {record.seed for record in read_bound(path, repair=True)} if path.is_file() else set()
    todo = [seed for seed in range(check_seeds(seeds)) if seed not in done]
    measurement.record_identity(folder, identity)
    commit = git_commit()
    with thread_limits(threads):
        for seed in tqdm(todo, disable=quiet, unit="seed", desc="closure bound"):
            record = seed_bound(seed, identity["npix"], identity["orders"][-1], noise) | {"git_commit": commit}
            append_record(path, as_written(path, 0, record, check_bound))
    return len(todo)

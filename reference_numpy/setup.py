"""Everything about one problem that does not depend on the fitted parameters, computed once."""

from __future__ import annotations

import dataclasses

import numpy as np

from oof_common.constants import DIFF, MAP_POINTED, N_ILLUMINATION, N_MAPS, OVERSAMP, RHO, SIGMA
from oof_common.limits import ILLUMINATION_REACH
from oof_common.telescope import AUTHOR_TELESCOPE, Telescope
from oof_common.validation import (
    check_coverage,
    check_finite_values,
    check_flag,
    check_grid_holds_dish,
    check_grid_size,
    check_identifiable,
    check_memory,
    check_positive,
    check_telescope,
)

from .aperture import aperture_grid, defocus_screens, dish_mask, map_phase_terms
from .zernike import zernike_basis, zernike_indices


@dataclasses.dataclass(frozen=True, eq=False)
class Setup:
    """Precomputed constants of one OOF problem.

    Arrays hold only the pixels on the dish. `index` places them into the flattened `box`, the smallest
    rows x cols block of the grid that holds the dish; the model puts that block in the grid's corner
    (a circular shift of the centred dish, which leaves the power beams unchanged) so that the inverse
    FFT need only transform the columns the dish occupies (see beams.far_field).

    Fields: npix (pixels per side); nzern (Zernike order n_max); x, y (dish pixels' coordinates, dish radii);
    box (rows, cols of the block holding the dish); index (flat indices of the dish pixels in the box); basis
    (Zernike terms 1..N-1 on the dish, dimensionless, piston left out); screens (3 defocus phase screens,
    radians); phase_terms (the per-map phase terms fitted, aperture.map_phase_terms: (Q, 3, dish pixels), Q = 0
    where none); n_gains (2 where the out-of-focus maps' gains are fitted, else 0); n_offsets (3 where the maps'
    baseline offsets are fitted, else 0); sigma (illumination width, dish radii); rho, diff (fixed illumination
    shape terms); oversamp, dz
    (metres), wavelength (metres), focal_length (metres), radius (metres): the settings it was made with; device
    and dtype: where and in which precision the model runs (the CPU and float64, the NumPy reference's only ones).
    """

    npix: int
    nzern: int
    x: np.ndarray = dataclasses.field(repr=False)
    y: np.ndarray = dataclasses.field(repr=False)
    box: tuple
    index: np.ndarray = dataclasses.field(repr=False)
    basis: np.ndarray = dataclasses.field(repr=False)
    screens: np.ndarray = dataclasses.field(repr=False)
    phase_terms: np.ndarray = dataclasses.field(repr=False)
    sigma: float
    rho: float
    diff: float
    oversamp: float
    dz: float
    wavelength: float
    focal_length: float
    radius: float
    telescope: Telescope
    n_gains: int
    n_offsets: int
    device: str = "cpu"
    dtype: type = np.float64

    @property
    def nparams(self):
        """Length of the parameter vector: Zernike coefficients 1..N-1, then x0, y0, amp, then the per-map phase
        terms, the out-of-focus maps' gains and the maps' baseline offsets, each where fitted."""
        return self.basis.shape[0] + N_ILLUMINATION + self.phase_terms.shape[0] + self.n_gains + self.n_offsets

    @property
    def amp_index(self):
        """Where amp sits in the parameter vector."""
        return self.basis.shape[0] + N_ILLUMINATION - 1


def parameter_parts(params, setup):
    """(Zernike coefficients, x0, y0, amp, baseline offsets) of a parameter vector; the offsets are empty where
    the setup fits none."""
    zernikes = setup.basis.shape[0]
    x0, y0, amp = params[zernikes:zernikes + N_ILLUMINATION]
    return params[:zernikes], x0, y0, amp, params[setup.nparams - setup.n_offsets:]


def map_terms(params, setup):
    """(per-map phase terms (Q,), the out-of-focus maps' gains (n_gains,)) of a parameter vector, each empty where
    the setup fits none."""
    first = setup.basis.shape[0] + N_ILLUMINATION
    middle = first + setup.phase_terms.shape[0]
    return params[first:middle], params[middle:middle + setup.n_gains]


def map_gains(gains, setup):
    """Each map's gain factor (3,): 1 for the in-focus map (the illumination's amp is its gain), 1 + g_k for the
    out-of-focus maps where fitted; None where the setup fits no gains."""
    if not setup.n_gains:
        return None
    return np.concatenate([np.ones(N_MAPS - len(MAP_POINTED), dtype=gains.dtype), 1 + gains])


def dish_box(x, y):
    """The coordinates x, y cut down to the smallest block of rows and columns that holds the dish."""
    rows, cols = (np.flatnonzero(dish_mask(x, y).any(axis)) for axis in (1, 0))
    return x[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1], y[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]


def design_rank(x, y, basis, sigma):
    """Numerical rank of the dish-sampled design: the Zernike terms on the dish pixels (they move the phase)
    plus that of the illumination's derivatives at its nominal centre (x g, y g and g, g the Gaussian taper; they
    move the amplitude, independently of the phase). Below the parameter count some combination of parameters
    changes no pixel's field to first order (npix 32, n = 8: 52 dish pixels on 7 radii)."""
    taper = np.exp(-(x**2 + y**2) / (2 * sigma**2))
    illumination = np.stack([x * taper, y * taper, taper])
    return int(np.linalg.matrix_rank(basis)) + int(np.linalg.matrix_rank(illumination))


def make_setup(npix: int, nzern: int, *, oversamp: float = OVERSAMP, dz: float | None = None,
               wavelength: float | None = None, focal_length: float | None = None, radius: float | None = None,
               sigma: float = SIGMA, telescope: Telescope = AUTHOR_TELESCOPE, offsets: bool = False,
               gains: bool = False, pointing: bool = False, defocus_scale: bool = False) -> Setup:
    """Precompute the grid, dish, Zernike basis and defocus screens of an npix x npix problem.

    telescope (telescope.Telescope, the paper's by default) gives the dish and the observation; dz, wavelength,
    focal_length and radius, where given, replace its values. offsets=True also fits each map's baseline offset
    (beam-power units, added to every pixel of that map): three more parameters, at the end. The per-map terms of a
    real observation, each a switch: pointing=True fits each out-of-focus map's own pointing (a phase tilt along x
    and y, radians per dish radius: four parameters), defocus_scale=True a factor 1 + d on the feed's offsets (one),
    gains=True each out-of-focus map's gain 1 + g against the in-focus map (two); they sit after amp, in that order,
    before the offsets, and start at 0 for "as the telescope says".
    """
    check_grid_size(npix, nzern)
    telescope = check_telescope(telescope, Telescope, {"dz": dz, "wavelength": wavelength, "focal_length": focal_length,
                                                      "radius": radius})
    settings = {name: check_positive(name, value) for name, value in
                {"oversamp": oversamp, "dz": telescope.dz, "wavelength": telescope.wavelength,
                 "focal_length": telescope.focal_length, "radius": telescope.radius, "sigma": sigma}.items()}
    check_grid_holds_dish(settings["oversamp"])
    check_memory(npix, nzern, settings["oversamp"])
    x, y = aperture_grid(npix, settings["oversamp"])
    n_offsets = N_MAPS if check_flag("offsets", offsets) else 0
    n_gains = len(MAP_POINTED) if check_flag("gains", gains) else 0
    pointing, defocus_scale = check_flag("pointing", pointing), check_flag("defocus_scale", defocus_scale)
    n_terms = n_offsets + n_gains + 2 * len(MAP_POINTED) * pointing + defocus_scale
    nparams = len(zernike_indices(nzern)) - 1 + N_ILLUMINATION + n_terms
    check_coverage(f"npix={npix} with oversamp={oversamp}", int(dish_mask(x, y).sum()), nparams)
    x, y = dish_box(x, y)
    blockage = telescope.blockage / telescope.radius
    box, index = tuple(x.shape), np.flatnonzero(dish_mask(x, y, blockage, telescope.leg_shadows()).reshape(-1))
    x, y = x.reshape(-1)[index], y.reshape(-1)[index]
    check_coverage(f"sigma={sigma}", int((np.hypot(x, y) < settings["sigma"] * ILLUMINATION_REACH).sum()), nparams)
    basis = zernike_basis(nzern, x, y)[1:]
    check_identifiable(npix, nzern, design_rank(x, y, basis, settings["sigma"]) + n_terms, nparams)
    screens = defocus_screens(x, y, settings["dz"], settings["wavelength"], settings["focal_length"],
                              settings["radius"], telescope.effective_focal_length)
    check_finite_values("the defocus screens", bool(np.isfinite(screens).all()))
    phase_terms = map_phase_terms(x, y, screens, pointing, defocus_scale)
    return Setup(npix=npix, nzern=nzern, x=x, y=y, box=box, index=index, basis=basis, screens=screens,
                 phase_terms=phase_terms, rho=RHO, diff=DIFF, **settings, telescope=telescope, n_gains=n_gains,
                 n_offsets=n_offsets)


def check_setup(setup):
    """The setup, or a ValueError when it was not made by this package's make_setup."""
    if not isinstance(setup, Setup):
        raise ValueError(f"setup must be made by {__package__}.make_setup, got {type(setup).__module__}."
                         f"{type(setup).__qualname__}")
    return setup

"""Checks at the public boundary: bad input raises ValueError naming the argument, before any work."""

import dataclasses
import math
import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike  # noqa: F401 (the public API's input type)

from .limits import MAX_NPIX, MAX_NZERN, MAX_SETUP_BYTES, MIN_NPIX


def check_grid_size(npix, nzern):
    """Reject grid sizes and Zernike orders the model cannot use."""
    if isinstance(npix, bool) or not isinstance(npix, numbers.Integral):
        raise ValueError(f"npix must be an integer, got {npix!r}")
    if not MIN_NPIX <= npix <= MAX_NPIX:
        raise ValueError(f"npix must lie in [{MIN_NPIX}, {MAX_NPIX}], got {npix}")
    if isinstance(nzern, bool) or not isinstance(nzern, numbers.Integral):
        raise ValueError(f"nzern must be an integer, got {nzern!r}")
    if not 0 <= nzern <= MAX_NZERN:
        raise ValueError(f"nzern must lie in [0, {MAX_NZERN}], got {nzern}")


def check_grid_holds_dish(oversamp):
    """Reject a grid narrower than the dish: it spans +-2 oversamp dish radii."""
    if oversamp < 0.5:
        raise ValueError(f"oversamp must be at least 0.5 so that the grid (+-2 oversamp dish radii) holds the "
                         f"whole dish, got {oversamp!r}")


class NotIdentifiable(ValueError):
    """A setup whose dish pixels cannot tell every parameter apart: some combination of the parameters leaves
    every pixel's field unchanged to first order, so no fit of it has a unique answer. rank: the design's rank,
    or (exact False) the usable pixels, which bound it."""

    def __init__(self, message, rank, nparams, exact=True):
        super().__init__(message)
        self.rank, self.nparams, self.exact = rank, nparams, exact


def check_coverage(name, pixels, nparams):
    """Reject a setup with fewer usable dish pixels than fitted parameters: every fit of it is degenerate."""
    if pixels < nparams:
        raise NotIdentifiable(f"{name}: only {pixels} dish pixel(s) usable, fewer than the {nparams} fitted "
                              "parameters; use a larger npix, a smaller nzern or a wider illumination", pixels, nparams,
                              exact=False)


def check_identifiable(npix, nzern, rank, nparams):
    """Reject a setup whose dish-sampled design (setup.design_rank) has rank below the parameter count."""
    if rank < nparams:
        raise NotIdentifiable(f"npix={npix}, nzern={nzern}: not identifiable: the dish pixels give the Zernike "
                              f"terms and the illumination a design of rank {rank}, fewer than the {nparams} fitted "
                              "parameters; use a larger npix or a smaller nzern", rank, nparams)


def check_memory(npix, nzern, oversamp):
    """Reject a setup whose estimated memory exceeds MAX_SETUP_BYTES, before anything is allocated: the
    Zernike basis on the dish pixels (float64) and about eight complex128 grids of three maps per evaluation."""
    dish = math.pi * ((npix - 1) / (4 * oversamp)) ** 2
    nparams = (nzern + 1) * (nzern + 2) // 2 + 2
    estimate = 8 * nparams * dish + 8 * 3 * 16 * npix**2
    if estimate > MAX_SETUP_BYTES:
        raise ValueError(f"npix={npix}, nzern={nzern}: a setup would need about {estimate / 2**30:.1f} GiB, more than "
                         f"the {MAX_SETUP_BYTES / 2**30:.0f} GiB limit (limits.MAX_SETUP_BYTES); use a smaller npix "
                         "or nzern")


def check_start(p0, amp_index=-1):
    """Reject a start from which no fit can move: amplitude 0 makes every beam zero and every gradient zero."""
    if p0[amp_index] == 0:
        raise ValueError(f"p0: the amplitude (entry {amp_index % len(p0)}) is 0, so every model beam and every "
                         "gradient is zero and no fit can leave the start; start from a positive amplitude")
    return p0


def check_flag(name, value):
    """Reject a switch that is not True or False."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return value


TELESCOPE_LENGTHS = ("radius", "focal_length", "wavelength", "dz")
"""The telescope's lengths that must be finite and positive (metres)."""


def check_telescope(telescope, kind, overrides):
    """The telescope as this tree's `kind` (a Telescope of either tree is accepted), with the settings in overrides
    that are not None replacing its own, every length checked."""
    names = [field.name for field in dataclasses.fields(kind)]
    if not dataclasses.is_dataclass(telescope) or [f.name for f in dataclasses.fields(telescope)] != names:
        raise ValueError(f"telescope must be a Telescope (fields {', '.join(names)}), got {type(telescope).__name__}")
    values = {name: getattr(telescope, name) for name in names}
    values |= {name: value for name, value in overrides.items() if value is not None}
    for name in TELESCOPE_LENGTHS:
        check_positive(name, values[name])
    if values["effective_focal_length"] is not None:
        check_positive("effective_focal_length", values["effective_focal_length"])
    blockage = values["blockage"]
    if isinstance(blockage, bool) or not isinstance(blockage, numbers.Real) or not 0 <= blockage < values["radius"]:
        raise ValueError(f"blockage must be a number in [0, radius = {values['radius']}) metres, got {blockage!r}")
    check_legs(values)
    return kind(**values)


MAX_LEGS = 12
"""The most support legs a telescope may have."""


def check_legs(values):
    """The support legs' settings of a telescope (its fields as a dict): a count in [0, MAX_LEGS], a width in
    [0, radius) metres (positive where there are legs), a finite angle (degrees), a start in [0, radius) metres, an
    end (None: the rim) a finite number of metres beyond the start."""
    legs = values["legs"]
    if isinstance(legs, bool) or not isinstance(legs, numbers.Integral) or not 0 <= legs <= MAX_LEGS:
        raise ValueError(f"legs must be an integer in [0, {MAX_LEGS}], got {legs!r}")
    for name in ("leg_width", "leg_start"):
        value = values[name]
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < values["radius"]:
            raise ValueError(f"{name} must be a number in [0, radius = {values['radius']}) metres, got {value!r}")
    angle = values["leg_angle"]
    if isinstance(angle, bool) or not isinstance(angle, numbers.Real) or not math.isfinite(angle):
        raise ValueError(f"leg_angle must be a finite number of degrees, got {angle!r}")
    if legs and values["leg_width"] == 0:
        raise ValueError(f"leg_width must be positive where there are legs (legs = {legs}), got 0")
    end = values.get("leg_end")
    if end is not None and (isinstance(end, bool) or not isinstance(end, numbers.Real) or not math.isfinite(end)
                            or not end > values["leg_start"]):
        raise ValueError(f"leg_end must be a finite number of metres beyond leg_start = {values['leg_start']}, or "
                         f"None (to the rim), got {end!r}")


def check_finite_values(name, finite):
    """Reject a setup quantity that came out non-finite (finite: whether every value of it is finite)."""
    if not finite:
        raise ValueError(f"{name} came out non-finite for these physical settings; check dz, wavelength, "
                         "focal_length, radius and sigma for values far out of range")


def check_matrix(name, matrix, size=None):
    """A float64 copy of a square 2-D matrix of finite numbers (size x size where size is given)."""
    values = real_array(matrix, name, "a square 2-D array of numbers")
    if values.ndim != 2 or values.shape[0] != values.shape[1] or (size is not None and len(values) != size):
        wanted = f"({size}, {size})" if size is not None else "square and 2-D"
        raise ValueError(f"{name} must be {wanted}, got shape {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite (an objective that is not finite near the point gives none)")
    return values


def check_choice(name, value, choices):
    """Reject a setting that is not one of choices."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


RENAMED_GRADIENTS = {"analytic": "adjoint"}
"""Gradient names of earlier versions, still accepted with a DeprecationWarning (the adjoint was "analytic" until
2026-12-01)."""


def check_gradient(gradient, choices):
    """The gradient asked for under its current name (an earlier name warns), or a ValueError naming the choices."""
    if isinstance(gradient, str) and gradient in RENAMED_GRADIENTS:
        current = RENAMED_GRADIENTS[gradient]
        warnings.warn(f"gradient={gradient!r} is deprecated and will be removed; use gradient={current!r}",
                      DeprecationWarning, stacklevel=3)
        gradient = current
    return check_choice("gradient", gradient, choices)


def check_positive(name, value):
    """Reject a scalar setting that is not a finite positive number (an integer too large for a float included)."""
    try:
        number = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
    except OverflowError:
        number = math.inf
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{name} must be a finite positive number, got {repr(value)[:40]}")
    return number


def real_array(values, name, what, copy=True):
    """Real numbers as float64, copied unless copy=False; complex or boolean values are refused, never silently
    converted.

    A tensor (which may require grad or live on a GPU) gives its values only: detached, copied to the host.
    """
    if hasattr(values, "detach"):
        try:
            values = values.detach().cpu()
        except (NotImplementedError, RuntimeError) as error:  # e.g. a tensor on the meta device holds no values
            raise ValueError(f"{name} must be {what} with values, got a tensor on {values.device}: {error}") from None
    try:
        raw = np.asarray(values)
    except (TypeError, ValueError, RuntimeError) as error:
        raise ValueError(f"{name} must be {what}: {error}") from None
    if raw.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be {what} (real numbers), got dtype {raw.dtype}")
    return raw.astype(np.float64, copy=copy)


def check_params(params, nparams, name="params"):
    """A float64 copy of a 1-D parameter vector of length nparams with finite entries."""
    values = real_array(params, name, "a 1-D array of numbers")
    if values.shape != (nparams,):
        raise ValueError(f"{name} must have shape ({nparams},), got {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} must be finite, got {values}")
    return values


def check_mask(mask, shape):
    """A boolean mask of the data's shape (True: a pixel left out)."""
    values = np.asarray(mask)
    if values.dtype != bool or values.shape != shape:
        raise ValueError(f"mask must be a boolean array of the data's shape {shape}, got {values.dtype} {values.shape}")
    return values


def check_map_weights(map_weights):
    """Each map's weight as a float64 array of three finite positive numbers (in focus, -dz, +dz), or None."""
    if map_weights is None:
        return None
    values = real_array(map_weights, "map_weights", "three positive numbers")
    if values.shape != (3,) or not np.all(np.isfinite(values) & (values > 0)):
        raise ValueError(f"map_weights must be three finite positive numbers (in focus, -dz, +dz), got "
                         f"{np.array2string(values.reshape(-1)[:6], precision=4)} of shape {values.shape}")
    return values


def map_scale(weights, map_weights, npix):
    """Each compared pixel's multiplier of its excess where map weights are given: its map's weight on the pixels
    weights compares (all where weights is None), 0 elsewhere, as a (3, npix, npix) float64 array; None where no
    map weights are given. A map of weight w is compared as if its noise were 1 / w times the others' at w = 1."""
    map_weights = check_map_weights(map_weights)
    if map_weights is None:
        return None
    compared = np.ones((3, npix, npix)) if weights is None else weights
    return compared * map_weights[:, None, None]


def check_data(data, npix, mask=None, smaller=False):
    """The observed beam maps as a float64 (3, npix, npix) array and the weights of its pixels: None where every
    pixel is compared with the model, else a (3, npix, npix) array of 1 (compared) and 0 (left out).

    With smaller=True, maps smaller than the grid, (3, rows, cols), are placed with their pixel (rows // 2,
    cols // 2) on the grid's centre and compared on their own pixels only (without it, maps of another size are
    refused: maps of the wrong size are more often a mistake than a choice). A mask (True: left out, e.g. a dropped
    sample), given or carried by a NumPy masked array, leaves pixels out; a left-out pixel's value is never read. Not
    copied where already float64, complete and unmasked (the callers' reorder into FFT order copies them).
    """
    hidden = np.ma.getmaskarray(data) if np.ma.isMaskedArray(data) else None
    values = real_array(np.ma.getdata(data) if hidden is not None else data, "data", "an array of numbers", copy=False)
    if values.ndim != 3 or values.shape[0] != 3 or not (1 <= values.shape[1] <= npix and 1 <= values.shape[2] <= npix):
        raise ValueError(f"data must have shape (3, {npix}, {npix}), or (3, rows, cols) with rows, cols <= {npix} "
                         f"for maps smaller than the grid, got {values.shape}")
    if values.shape[1:] != (npix, npix) and not smaller:
        raise ValueError(f"data must have shape (3, {npix}, {npix}), got {values.shape}; maps smaller than the grid "
                         "are compared on their own pixels where asked: prepare_data(data, setup, smaller=True)")
    values = np.ascontiguousarray(values)  # a view with negative strides (np.flip) is taken as any other array
    if mask is not None:
        mask = check_mask(mask, values.shape)
        hidden = mask if hidden is None else hidden | mask
    if hidden is not None and not hidden.any():
        hidden = None
    if not np.all(np.isfinite(values) if hidden is None else np.isfinite(values) | hidden):
        raise ValueError("data must be finite: it holds NaN or infinite values (mask them to leave them out)")
    if values.shape == (3, npix, npix) and hidden is None:
        return values, None
    if hidden is not None and hidden.all():
        raise ValueError("data: every pixel is masked, none is left to compare with the model")
    full, weights = np.zeros((3, npix, npix)), np.zeros((3, npix, npix))
    rows, cols = values.shape[1:]
    place = (slice(None), slice(npix // 2 - rows // 2, npix // 2 - rows // 2 + rows),
             slice(npix // 2 - cols // 2, npix // 2 - cols // 2 + cols))
    full[place] = values if hidden is None else np.where(hidden, 0.0, values)
    weights[place] = 1.0 if hidden is None else ~hidden
    return full, weights

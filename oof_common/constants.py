"""Constants of the OOF problem, with their units: the telescope, the observation and the model's fixed terms; values
from the paper's code (bnikolic/oof, oofpy). The software's own settings and limits are in limits.py.

Both implementation trees import them from here, so that both fit the identical model.
"""

OVERSAMP = 2.0
"""Oversampling of the aperture grid: it spans [-2*OVERSAMP, 2*OVERSAMP] dish radii."""
DZ = 0.05
"""Axial defocus of the feed for the two out-of-focus maps, metres."""
WAVELENGTH = 1.1e-3
"""Observing wavelength, metres."""
FOCAL_LENGTH = 14.4
"""Focal length of the primary reflector, metres."""
RADIUS = 2.8
"""Illuminated radius of the dish, metres (the unit of the aperture grid)."""
SIGMA = 0.72
"""Standard deviation of the Gaussian illumination, dish radii (fixed, not fitted)."""
RHO = 0.0
"""Cross term rho*dx*dy of the illumination, dimensionless (fixed at 0)."""
DIFF = 0.0
"""Ellipticity term diff*(dx^2 - dy^2) of the illumination, dimensionless (fixed at 0)."""
GAMMA = 1e-4
"""Width of the Cauchy likelihood, beam-power units (the beams' own units)."""
DEFOCUS_ORDER = (0.0, -1.0, 1.0)
"""The three maps' feed offsets in units of DZ: in focus, then -DZ, then +DZ."""

N_ILLUMINATION = 3
"""Fitted illumination parameters, after the Zernike coefficients in the parameter vector: x0, y0 (dish radii), amp."""
N_MAPS = 3
"""Beam maps of one observation: in focus, -dz, +dz (DEFOCUS_ORDER)."""
MAP_POINTED = (1, 2)
"""The maps whose own pointing and gain a setup may fit (make_setup's pointing, gains): the out-of-focus ones; the
in-focus map's are the Zernike tilts and the illumination's amplitude."""


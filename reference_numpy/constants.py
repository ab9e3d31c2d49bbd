"""Constants of the OOF problem, with their units; values from the paper's code (bnikolic/oof, oofpy).

The same file stands in both implementation trees, so that both fit the identical model.
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
OBJECTIVES = ("cauchy", "least-squares", "gaussian")
"""The objectives a fit can minimise: the Cauchy negative log-likelihood (the default); the plain sum of squared
residuals (beam-power units squared) that the author's timing code fitted; or least squares in units of the noise,
S / (2 gamma^2) with gamma the noise's standard deviation, the Gaussian negative log-likelihood without its
constant."""
FORWARD_DIFFERENCE_STEP = 1.4901161193847656e-08
"""Step of two-point differences in float64: sqrt(eps), the step scipy takes by default (parameter units);
backend.difference_step gives each setup's precision its own."""
TOL = 1e-8
"""BFGS tolerance of the paper's timing sweep."""
DEFOCUS_ORDER = (0.0, -1.0, 1.0)
"""The three maps' feed offsets in units of DZ: in focus, then -DZ, then +DZ."""
MIN_NPIX = 8
"""Smallest grid accepted: below it the dish covers almost no pixel."""
MAX_NPIX = 8192
"""Largest grid accepted: three complex 8192^2 maps already take 3 GiB."""
MAX_NZERN = 20
"""Largest Zernike order accepted: the factorials of the radial terms lose precision beyond it."""
MAX_SETUP_BYTES = 8 * 2**30
"""Largest memory a setup and one evaluation may need (make_setup estimates it before allocating anything)."""

ILLUMINATION_REACH = 13.0
"""Distance from the illumination's centre, in units of sigma, beyond which exp(-r^2 / 2 sigma^2) underflows in
float32 (exp(-84.5), near the smallest normal float32): a setup needs enough dish pixels within it."""
N_ILLUMINATION = 3
"""Fitted illumination parameters, after the Zernike coefficients in the parameter vector: x0, y0 (dish radii), amp."""
N_MAPS = 3
"""Beam maps of one observation: in focus, -dz, +dz (DEFOCUS_ORDER)."""

WINDOW_POWER_LOSS = 0.01
"""Largest fraction of any map's model power left outside the sky window on which the Gauss-Newton matrix is
summed (gauss_newton.beam_window): the beams fill a fixed patch of sky (about 64 x 64 pixels at the paper's
oversampling, whatever npix), so the window is 1-2% of a 512 x 512 grid and the matrix costs about one evaluation."""

"""The software's settings and limits, apart from the physics (constants.py): the minimizer's tolerance and
difference step, the sizes a setup accepts, and the numerical reach of the model's approximations.

Both implementation trees import them from here.
"""

TOL = 1e-8
"""BFGS tolerance of the paper's timing sweep."""
FORWARD_DIFFERENCE_STEP = 1.4901161193847656e-08
"""Step of two-point differences in float64: sqrt(eps), the step scipy takes by default (parameter units);
each tree's backend.difference_step gives each setup's precision its own."""
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
WINDOW_POWER_LOSS = 0.01
"""Largest fraction of any map's model power left outside the sky window on which the Gauss-Newton matrix is
summed (each tree's gauss_newton.beam_window): the beams fill a fixed patch of sky (about 64 x 64 pixels at the paper's
oversampling, whatever npix), so the window is 1-2% of a 512 x 512 grid and the matrix costs about one evaluation."""

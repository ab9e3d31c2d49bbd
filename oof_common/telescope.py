"""The telescope and its OOF observation as data: dish, optics, wavelength and defocus, in metres.

Both implementation trees import it from here (no array library is used). The default is the paper's small
telescope; a real telescope's values come from its documentation (the real-maps study's configurations).
"""

from __future__ import annotations

import dataclasses
import math

from .constants import DZ, FOCAL_LENGTH, RADIUS, WAVELENGTH


@dataclasses.dataclass(frozen=True)
class Telescope:
    """A dish and its out-of-focus observation (all lengths in metres).

    radius: illuminated radius of the primary (the unit of the aperture grid); focal_length: the primary's;
    effective_focal_length: the whole system's for a two-mirror (Cassegrain or Gregorian) telescope, None for a
    prime-focus one; blockage: radius of the central blockage (subreflector), 0 for none; wavelength; dz: the axial
    feed offset of the two out-of-focus maps (they are taken at -dz and +dz).

    The support legs' shadows on the aperture, where legs > 0: `legs` straight strips of full width leg_width,
    evenly spaced in angle, the first at leg_angle degrees from the aperture's x axis towards its y axis (the
    model's own axes, Setup.x and Setup.y), each running radially outward from leg_start (its distance from the
    dish's centre) to leg_end (None: to the rim): the shadow a plane wave casts of legs that meet above the centre
    (a spherical wave's shadow widens outward; a strip is its first approximation); legs that meet the primary inside
    its rim end their plane-wave shadow there. No pixel inside a shadow is part of the dish.
    """

    radius: float = RADIUS
    focal_length: float = FOCAL_LENGTH
    effective_focal_length: float | None = None
    blockage: float = 0.0
    wavelength: float = WAVELENGTH
    dz: float = DZ
    legs: int = 0
    leg_width: float = 0.0
    leg_angle: float = 0.0
    leg_start: float = 0.0
    leg_end: float | None = None

    def oversamp_for_sky_step(self, npix, sky_step):
        """The grid oversampling whose beam pixels are sky_step radians apart at npix: the aperture grid then
        spans wavelength / sky_step metres (npix pixels of wavelength / (npix sky_step)), so that the model's
        beams fall on a map's own u, v pixels."""
        return self.wavelength * (npix - 1) / (4 * self.radius * sky_step * npix)

    def leg_shadows(self):
        """(count, full width, angle (radians), start, end) of the legs' shadows in dish radii, as
        aperture.dish_mask takes them (end infinite: to the rim)."""
        end = math.inf if self.leg_end is None else self.leg_end / self.radius
        return (self.legs, self.leg_width / self.radius, math.radians(self.leg_angle), self.leg_start / self.radius,
                end)

    def beam_pixel(self, npix, oversamp):
        """The angle between neighbouring beam pixels (radians) of an npix grid with this oversampling."""
        return self.wavelength * (npix - 1) / (4 * self.radius * oversamp * npix)


AUTHOR_TELESCOPE = Telescope()
"""The paper's telescope (constants.py): prime focus, no blockage, 1.1 mm, dz = 50 mm."""


def defocus_path_factor(a, b):
    """The defocus path difference per metre of feed offset at radius r, with a = r / (2 F_primary) and
    b = r / (2 F_effective) (b None for prime focus): (1 - a^2)/(1 + a^2), plus (1 - b^2)/(1 + b^2) for a two-mirror
    telescope (the formula pyoof uses). Works on floats and on either library's arrays."""
    factor = (1 - a**2) / (1 + a**2)
    return factor if b is None else factor + (1 - b**2) / (1 + b**2)

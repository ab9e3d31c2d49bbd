"""What a cold-start retrieval measures: its profiles (truths, aberration sizes, seeds), the fits it makes and
the fit that judges them."""

import dataclasses

from replication.core.series import NUMPY, TORCH_ADJOINT, TORCH_CPU, TORCH_ON_DEVICE
from replication.studies.retrieval.records import FROM_TRUTH, PLAIN, STAGED


@dataclasses.dataclass(frozen=True)
class RetrievalProfile:
    """The truths of a retrieval run: (npix, nzern) points, rms phase errors over the dish (radians) of the random
    aberrations, and the seeds (each seed draws one aberration pattern and the noise of its maps)."""

    points: tuple
    rms: tuple
    seeds: tuple

    def truths(self):
        """Every (npix, nzern, rms, seed), smallest grid first."""
        return [(npix, nzern, rms, seed) for npix, nzern in self.points for rms in self.rms for seed in self.seeds]


RETRIEVAL_PROFILES = {
    "smoke": RetrievalProfile(points=((32, 2), (32, 3)), rms=(0.5, 4.0), seeds=(1,)),
    "quick": RetrievalProfile(points=((128, 2), (128, 4), (128, 6), (128, 8), (256, 4)),
                              rms=(0.5, 1.0, 1.25, 1.5, 1.75, 2.0, 3.0), seeds=tuple(range(1, 11))),
    "full": RetrievalProfile(points=tuple((npix, nzern) for npix in (128, 256, 512) for nzern in (2, 4, 6, 8)),
                             rms=(0.25, 0.5, 1.0, 1.25, 1.5, 1.75, 2.0, 3.0, 4.0), seeds=tuple(range(1, 21))),
}
"""Ten seeds or more per (point, rms), so that each success rate carries a binomial interval; the rms grid is finer
between 1 and 2 radians, where the share of cold starts that find the global optimum falls (earlier runs); the
quick profile's npix 128 has C4's orders 2, 4, 6, 8."""


METHODS = ((NUMPY, PLAIN), (TORCH_CPU, PLAIN), (TORCH_ADJOINT, PLAIN), (TORCH_ON_DEVICE, PLAIN),
           (TORCH_ADJOINT, STAGED))
"""(series, start) of every cold-start fit, in the report's order; the judge is TORCH_ADJOINT from the truth."""


JUDGE = (TORCH_ADJOINT, FROM_TRUTH)

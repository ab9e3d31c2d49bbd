"""A setup whose dish pixels cannot tell every parameter apart is refused, never timed, and counts for no verdict."""

import msgspec
import numpy as np
import pytest

import reference_numpy
import torch_impl
from oof_common.validation import NotIdentifiable
from replication.core import point_times
from replication.core.implementations import Implementation
from replication.core.objectives import CAUCHY
from replication.core.series import NUMPY
from replication.core.simulation import identifiable
from replication.studies.sweep import measure as sweep
from replication.studies.sweep import read as sweep_read


@pytest.mark.parametrize(("package", "error"), [(reference_numpy, NotIdentifiable),
                                                (torch_impl, NotIdentifiable)])
def test_npix_32_cannot_carry_order_8_and_says_why(package, error):
    """52 dish pixels on 7 distinct radii: the 44 Zernike terms of n <= 8 have rank 43 there."""
    with pytest.raises(error, match=r"npix=32, nzern=8: not identifiable: .* rank 46, fewer than the 47") as caught:
        package.make_setup(32, 8)
    assert (caught.value.rank, caught.value.nparams) == (46, 47)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("package", [reference_numpy, torch_impl])
def test_npix_64_carries_order_8_with_a_well_conditioned_basis(package):
    setup = package.make_setup(64, 8)
    basis = np.asarray(setup.basis)
    singular = np.linalg.svd(basis, compute_uv=False)
    assert singular[-1] > 0
    assert singular[0] / singular[-1] < 10


def test_both_trees_agree_on_the_rank_everywhere_the_profiles_go():
    from reference_numpy.setup import design_rank as numpy_rank
    from torch_impl.setup import design_rank as torch_rank

    for npix in (32, 64):
        for nzern in range(2, 10):
            if 3 * npix < (nzern + 1) * (nzern + 2):
                continue
            try:
                setup = reference_numpy.make_setup(npix, nzern)
            except NotIdentifiable:
                continue
            tsetup = torch_impl.make_setup(npix, nzern)
            assert numpy_rank(setup.x, setup.y, setup.basis, setup.sigma) == torch_rank(
                tsetup.x, tsetup.y, tsetup.basis, tsetup.sigma) == setup.nparams


def test_the_profiles_never_time_an_unidentifiable_point():
    impl = Implementation("numpy")
    quick = sweep.PROFILES["quick"]
    assert (32, 8) not in quick.points(impl, CAUCHY)
    assert (64, 8) in quick.points(impl, CAUCHY)
    assert quick.unidentifiable() == [(32, 8)]
    assert (32, 9) in sweep.PROFILES["paper"].unidentifiable()


def test_a_record_of_an_unidentifiable_point_counts_for_no_verdict():
    assert not identifiable(32, 8)
    from replication.core.paths import REFERENCE
    from replication.studies.sweep.records import read_points

    first = read_points(REFERENCE / "2026-12-05_vm_amd-epyc-2c-3" / "sweep-quick" / "points.jsonl")[0]
    record = msgspec.structs.replace(first, npix=32, nzern=8)  # at the optimum, but of a rank-deficient design
    assert point_times.how_it_ended(record).startswith("not identifiable")
    assert sweep_read.endings({NUMPY: {(32, 8): record}}) == []

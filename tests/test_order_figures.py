"""A source's fit drawn order by order into its run folder: one figure per order, its residuals those the reduction
records (ladder.residual_maps), written where the run's files are."""

from types import SimpleNamespace

import numpy as np
import pytest
from test_beam_files import fake_source_folder, power  # noqa: F401 (power: the fixture the folder is made from)

import reference_numpy
from replication.core.reduction import sources as real_sources
from replication.core.reduction.ladder import residual_maps
from replication.studies.real_maps.order_figures import draw_orders, order_maps
from replication.studies.real_maps.whitened import Found


@pytest.fixture
def observation(tmp_path, power):  # noqa: F811
    folder, source = fake_source_folder(tmp_path, power)
    (found,) = real_sources.read_observations([source], folder, 32)
    return found.with_terms(dict.fromkeys(found.map_terms, False))


def test_each_order_is_drawn_with_the_residuals_the_reduction_records(observation, tmp_path):
    stages = []
    for order in (2, 1):
        setup = real_sources.setup_for(reference_numpy, observation, order, 32)
        stages.append(SimpleNamespace(source=observation.source.name, order=order,
                                      optimum=Found(x=list(real_sources.first_start(setup, observation)), fun=None)))
    model, residual = order_maps(observation, stages[0].optimum.x, 2, 32)
    np.testing.assert_array_equal(residual, residual_maps(observation, stages[0].optimum.x, 2, 32))
    assert model.shape == observation.maps.shape
    paths = draw_orders(tmp_path / "run", observation, stages, 32)
    folder = tmp_path / "run" / f"orders-{observation.source.name}"
    assert sorted(path.name for path in paths) == ["n1.png", "n1.svg", "n2.png", "n2.svg"]
    assert all(path.parent == folder and path.stat().st_size > 1000 for path in paths)

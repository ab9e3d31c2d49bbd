"""paper/MODEL.md is the written contract: it names every option of make_setup and fit in both trees."""

import inspect
import re

import pytest

import reference_numpy
import torch_impl
from replication.core.paths import PAPER


@pytest.mark.parametrize("function", [reference_numpy.make_setup, torch_impl.make_setup, reference_numpy.fit,
                                      torch_impl.fit, reference_numpy.standard_errors, torch_impl.standard_errors,
                                      reference_numpy.score_covariance, torch_impl.score_covariance])
def test_model_md_names_every_option(function):
    text = (PAPER / "MODEL.md").read_text()
    spans = re.findall(r"`[^`]*`", text)
    missing = [name for name in inspect.signature(function).parameters
               if not any(re.search(rf"\b{name}\b", span) for span in spans)]
    assert not missing, f"{function.__module__}.{function.__name__}: MODEL.md does not name {missing}"


def test_model_md_names_the_minimizers_and_gradients():
    text = (PAPER / "MODEL.md").read_text()
    for choice in (*torch_impl.fitting.MINIMIZERS, *torch_impl.fitting.GRADIENTS):
        assert f'"{choice}"' in text, choice

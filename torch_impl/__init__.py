"""PyTorch implementation of the OOF phase-retrieval model (paper/MODEL.md): autograd gradient, any device."""

from .backend import keep_freed_memory
from .beams import beam_maps
from .fit import batched_value_and_grad, fit, value_and_grad
from .gauss_newton import gauss_newton_matrix
from .likelihood import ObservedMaps, negative_log_likelihood, prepare_data
from .setup import Setup, make_setup
from .telescope import AUTHOR_TELESCOPE, Telescope
from .uncertainty import hessian, score_covariance, standard_errors
from .zernike import zernike_basis

__all__ = ["Setup", "beam_maps", "fit", "make_setup", "negative_log_likelihood", "zernike_basis"]
__all__ += ["ObservedMaps", "hessian", "prepare_data", "score_covariance", "standard_errors", "value_and_grad"]
__all__ += ["AUTHOR_TELESCOPE", "Telescope", "batched_value_and_grad", "gauss_newton_matrix"]
__all__ += ["keep_freed_memory"]

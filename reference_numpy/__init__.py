"""NumPy reference implementation of the OOF phase-retrieval model (paper/MODEL.md), as in the paper."""

from oof_common.bfgs import FitStatus
from oof_common.telescope import AUTHOR_TELESCOPE, Telescope

from . import losses
from .backend import keep_freed_memory
from .beams import beam_maps
from .fitting import batched_value_and_grad, fit, value_and_grad
from .gauss_newton import gauss_newton_matrix
from .likelihood import ObservedMaps, negative_log_likelihood, prepare_data
from .setup import Setup, make_setup
from .uncertainty import hessian, score_covariance, standard_errors
from .zernike import zernike_basis

__all__ = ["Setup", "beam_maps", "fit", "make_setup", "negative_log_likelihood", "zernike_basis"]
__all__ += ["ObservedMaps", "hessian", "prepare_data", "score_covariance", "standard_errors", "value_and_grad"]
__all__ += ["AUTHOR_TELESCOPE", "Telescope", "batched_value_and_grad", "gauss_newton_matrix"]
__all__ += ["FitStatus", "keep_freed_memory", "losses"]

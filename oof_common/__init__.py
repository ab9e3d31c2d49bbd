"""What the two implementation trees share because it cannot differ between them: the model's constants and the
software's limits, the telescope, the checks at the public boundary, each loss's rule (its name, scale and
constant) and the glue around scipy's BFGS. No array library's arithmetic lives here: reference_numpy and
torch_impl import it, so `diff -r reference_numpy torch_impl` shows only what the library changes.

Needs numpy and scipy only, as the NumPy tree does.
"""

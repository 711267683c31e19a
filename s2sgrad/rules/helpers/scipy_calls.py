"""Rules of the helpers of s2sgrad/runtime/scipy_calls.py: the scipy functions' own rules for
``signal_convolve``, ``sylvester`` and ``solve_triangular`` (rules/linalg.py), a convolution mode's
window of the full result and its transpose (each the other's adjoint), a triangle of a matrix
(its own adjoint), solve_banded's band read as a dense matrix and back (each the other's
adjoint), and the trans flag of a triangular solve's adjoint (no derivative)."""

from ..table import defvjp

RULES = (
    defvjp("s2sgrad.runtime.signal_window(value, shape1, shape2, mode='full')", linear=("value",),
           constant_in=("shape1", "shape2", "mode"), value="s2s.signal_embed(g, shape1, shape2, mode)"),
    defvjp("s2sgrad.runtime.signal_embed(value, shape1, shape2, mode='full')", linear=("value",),
           constant_in=("shape1", "shape2", "mode"), value="s2s.signal_window(g, shape1, shape2, mode)"),
    defvjp("s2sgrad.runtime.triangle_part(x, lower=False, unit_diagonal=False)", linear=("x",),
           constant_in=("lower", "unit_diagonal"), x="s2s.triangle_part(g, lower, unit_diagonal)"),
    # solve_banded's storage read as a dense matrix, and its transpose: each the other's adjoint
    defvjp("s2sgrad.runtime.banded_dense(l_and_u, ab)", linear=("ab",), constant_in=("l_and_u",),
           ab="s2s.dense_band(l_and_u, g)"),
    defvjp("s2sgrad.runtime.dense_band(l_and_u, a)", linear=("a",), constant_in=("l_and_u",),
           a="s2s.banded_dense(l_and_u, g)"),
)

NONDIFF = ("s2sgrad.runtime.adjoint_trans",)

"""Cases for the rules of the helpers of s2sgrad/runtime/rows.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import uniform

R = "s2sgrad.runtime."


def _out(y):
    """A scalar of a helper's output that sees its second-order terms."""
    return np.sum(np.sin(y) * np.cos(np.arange(np.size(y)).reshape(np.shape(y)) + 0.5))


def h_rows_matmul_vjp_a(g, a, b): return _out(s2s.rows_matmul_vjp_a(g, a, 3, b))
def h_rows_matmul_vjp_b(g, a, b): return _out(s2s.rows_matmul_vjp_b(g, a, 3, b))
def h_rows_rmatmul_vjp_a(g, a, b): return _out(s2s.rows_rmatmul_vjp_a(g, a, 3, b))
def h_rows_rmatmul_vjp_b(g, a, b): return _out(s2s.rows_rmatmul_vjp_b(g, a, 3, b))
def h_rows_dot_vjp_a(g, a, b): return _out(s2s.rows_dot_vjp_a(g, a, 3, b))
def h_rows_dot_vjp_b(g, a, b): return _out(s2s.rows_dot_vjp_b(g, a, 3, b))
def h_rows_rdot_vjp_a(g, a, b): return _out(s2s.rows_rdot_vjp_a(g, a, 3, b))
def h_rows_rdot_vjp_b(g, a, b): return _out(s2s.rows_rdot_vjp_b(g, a, 3, b))


# a loop of 3 steps over the tails x[t + 1:] of a 5-row x: 4 entries each, those before t padded
PAD = np.tri(3, 4, k=-1, dtype=bool)


def _steps(y, rank):
    """``y``'s entries of each step's tail (the padded ones 0: the batched loop reads no other)."""
    return np.where(PAD.reshape(PAD.shape + (1,) * (rank - 1)), 0, y)


def h_tails(x): return _out(_steps(s2s.tails(x, 1, PAD), np.ndim(x)))
def h_tails_vjp(g, x): return _out(s2s.tails_vjp(g, x, 1, PAD))


def _u(*shapes):
    return tuple(uniform(s) for s in shapes)


# (g, a, b): a has 4 rows, 3 of them used; one product, and row by row (a batched b)
LEFT = [((3, 2), (4, 3), (3, 2)), ((3, 2, 2), (4, 2, 3), (3, 2)), ((3,), (4, 3), (3,)),
        ((3, 2), (4, 2, 3), (3,)), ((3, 5, 2, 2), (4, 2, 3), (5, 3, 2))]
RIGHT = [((3, 2), (4, 3), (2, 3)), ((3, 5, 2), (4, 3, 2), (5, 3)), ((3,), (4, 3), (3,)),
         ((3, 2), (4, 3, 2), (3,))]
DOT_LEFT = LEFT[:4] + [((3, 2, 5, 2), (4, 2, 3), (5, 3, 2))]

CASES = [
    *((R + "rows_matmul_vjp_a", h_rows_matmul_vjp_a, _u(*s), None, 1e-5) for s in LEFT),
    *((R + "rows_matmul_vjp_b", h_rows_matmul_vjp_b, _u(*s), None, 1e-5) for s in LEFT),
    *((R + "rows_rmatmul_vjp_a", h_rows_rmatmul_vjp_a, _u(*s), None, 1e-5) for s in RIGHT),
    *((R + "rows_rmatmul_vjp_b", h_rows_rmatmul_vjp_b, _u(*s), None, 1e-5) for s in RIGHT),
    *((R + "rows_dot_vjp_a", h_rows_dot_vjp_a, _u(*s), None, 1e-5) for s in DOT_LEFT),
    *((R + "rows_dot_vjp_b", h_rows_dot_vjp_b, _u(*s), None, 1e-5) for s in DOT_LEFT),
    *((R + "rows_rdot_vjp_a", h_rows_rdot_vjp_a, _u(*s), None, 1e-5) for s in RIGHT),
    *((R + "rows_rdot_vjp_b", h_rows_rdot_vjp_b, _u(*s), None, 1e-5) for s in RIGHT),
    *((R + "tails", h_tails, _u(s), None, 1e-5) for s in ((5,), (5, 2), (5, 2, 3))),
    *((R + "tails_vjp", h_tails_vjp, _u((3, 4) + s, (5,) + s), None, 1e-5) for s in ((), (2,), (2, 3))),
]

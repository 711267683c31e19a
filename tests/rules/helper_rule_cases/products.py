"""Cases for the rules of the helpers of s2sgrad/runtime/products.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import uniform

def h_convolve_vjp(value, other, a): return np.sum(np.sin(s2s.convolve_vjp(value, other, a, 1)))
def h_convolve_vjp_full(value, other, a): return np.sum(np.sin(s2s.convolve_vjp(value, other, a, 0)) ** 2)


R = "s2sgrad.runtime."


def _out(y):
    """A scalar of a helper's output that sees its second-order terms."""
    return np.sum(np.sin(y) * np.cos(np.arange(np.size(y)).reshape(np.shape(y)) + 0.5))


def h_cross_vjp_a(g, a, b): return _out(s2s.cross_vjp_a(g, a, b))
def h_cross_vjp_a_axes(g, a, b): return _out(s2s.cross_vjp_a(g, a, b, axisa=0, axisc=0))
def h_cross_vjp_b(g, a, b): return _out(s2s.cross_vjp_b(g, a, b))
def h_cross_vjp_b_axis(g, a, b): return _out(s2s.cross_vjp_b(g, a, b, axis=0))
def h_matmul_vjp_a(g, a, b): return _out(s2s.matmul_vjp_a(g, a, b))
def h_matmul_vjp_b(g, a, b): return _out(s2s.matmul_vjp_b(g, a, b))
def h_dot_vjp_a(g, a, b): return _out(s2s.dot_vjp_a(g, a, b))
def h_dot_vjp_b(g, a, b): return _out(s2s.dot_vjp_b(g, a, b))
def h_inner_vjp_a(g, a, b): return _out(s2s.inner_vjp_a(g, a, b))
def h_inner_vjp_b(g, a, b): return _out(s2s.inner_vjp_b(g, a, b))
def h_tensordot_vjp_a(g, a, b): return _out(s2s.tensordot_vjp_a(g, a, b, ([1, 2], [0, 1])))
def h_tensordot_vjp_b(g, a, b): return _out(s2s.tensordot_vjp_b(g, a, b, ([1, 2], [0, 1])))
def h_tensordot_vjp_a1(g, a, b): return _out(s2s.tensordot_vjp_a(g, a, b, 1))
def h_tensordot_vjp_b1(g, a, b): return _out(s2s.tensordot_vjp_b(g, a, b, 1))
def h_tensordot_vjp_a2(g, a, b): return _out(s2s.tensordot_vjp_a(g, a, b))
def h_tensordot_vjp_b2(g, a, b): return _out(s2s.tensordot_vjp_b(g, a, b))
def h_tensordot_vjp_a0(g, a, b): return _out(s2s.tensordot_vjp_a(g, a, b, 0))
def h_tensordot_vjp_b0(g, a, b): return _out(s2s.tensordot_vjp_b(g, a, b, 0))


def h_kron(g, a, b):
    bars = s2s.kron_vjp(g, a, b)  # generated code indexes the pair (the rule of np.kron)
    return _out(bars[0]) + _out(bars[1]) * 0.7


def h_kron_a(g, a, b): return _out(s2s.kron_vjp(g, a, b)[0])


def h_matmul_vjp_b_sum(g0, g1, a0, a1, b): return _out(s2s.matmul_vjp_b_sum([g0, g1], [a0, a1], b))
def h_matmul_vjp_a_sum(g0, g1, r0, r1, a): return _out(s2s.matmul_vjp_a_sum([g0, g1], a, [r0, r1]))
def h_dot_vjp_b_sum(g0, g1, a0, a1, b): return _out(s2s.dot_vjp_b_sum([g0, g1], [a0, a1], b))
def h_dot_vjp_a_sum(g0, g1, r0, r1, a): return _out(s2s.dot_vjp_a_sum([g0, g1], a, [r0, r1]))


def _u(*shapes):
    return tuple(uniform(s) for s in shapes)


# (g, a, b) shapes of a @ b, with 1-D operands and broadcast batches
MATMUL = [((3, 4), (3, 2), (2, 4)), ((4,), (2,), (2, 4)), ((3,), (3, 2), (2,)), (None, (3,), (3,)),
          ((2, 3, 4), (2, 3, 5), (5, 4)), ((2, 3, 4), (3, 5), (2, 5, 4)), ((2, 3, 1), (3, 4), (2, 4, 1)),
          ((2, 4), (3,), (2, 3, 4))]
# np.dot: numbers, vectors, matrices and stacks (a's last axis with b's second to last)
DOT = [((3, 4), (3, 2), (2, 4)), ((4,), (2,), (2, 4)), ((3,), (3, 2), (2,)), ((3, 4), None, (3, 4)),
       ((3, 4), (3, 4), None), ((2, 3, 4, 5), (2, 3, 2), (4, 2, 5)), (None, (3,), (3,))]
INNER = [((3, 4), (3, 2), (4, 2)), ((3,), (3, 2), (2,)), ((2, 3), None, (2, 3)), ((2, 4, 3), (2, 5), (4, 3, 5))]


CASES = [
    *((R + "matmul_vjp_a", h_matmul_vjp_a, _u(*s), None, 1e-5) for s in MATMUL),
    *((R + "matmul_vjp_b", h_matmul_vjp_b, _u(*s), None, 1e-5) for s in MATMUL),
    *((R + "dot_vjp_a", h_dot_vjp_a, _u(*s), None, 1e-5) for s in DOT),
    *((R + "dot_vjp_b", h_dot_vjp_b, _u(*s), None, 1e-5) for s in DOT),
    *((R + "inner_vjp_a", h_inner_vjp_a, _u(*s), None, 1e-5) for s in INNER),
    *((R + "inner_vjp_b", h_inner_vjp_b, _u(*s), None, 1e-5) for s in INNER),
    (R + "tensordot_vjp_a", h_tensordot_vjp_a, _u((2, 5), (2, 3, 4), (3, 4, 5)), None, 1e-5),
    (R + "tensordot_vjp_b", h_tensordot_vjp_b, _u((2, 5), (2, 3, 4), (3, 4, 5)), None, 1e-5),
    (R + "tensordot_vjp_a", h_tensordot_vjp_a1, _u((2, 5), (2, 3), (3, 5)), None, 1e-5),
    (R + "tensordot_vjp_b", h_tensordot_vjp_b1, _u((2, 5), (2, 3), (3, 5)), None, 1e-5),
    (R + "tensordot_vjp_a", h_tensordot_vjp_a2, _u((2, 5), (2, 3, 4), (3, 4, 5)), None, 1e-5),
    (R + "tensordot_vjp_b", h_tensordot_vjp_b2, _u((2, 5), (2, 3, 4), (3, 4, 5)), None, 1e-5),
    (R + "tensordot_vjp_a", h_tensordot_vjp_a0, _u((2, 3, 4), (2, 3), (4,)), None, 1e-5),
    (R + "tensordot_vjp_b", h_tensordot_vjp_b0, _u((2, 3, 4), (2, 3), (4,)), None, 1e-5),
    (R + "kron_vjp", h_kron, _u((6, 6), (2, 3), (3, 2)), None, 1e-5),
    (R + "kron_vjp", h_kron, _u((2, 6), (3,), (2, 2)), None, 1e-5),
    (R + "kron_vjp", h_kron_a, _u((6, 6), (2, 3), (3, 2)), None, 1e-5),
    # a backward loop's lists: vectors (one product), matrices, and shapes that differ
    (R + "matmul_vjp_b_sum", h_matmul_vjp_b_sum, _u((4,), (4,), (3,), (3,), (3, 4)), None, 1e-5),
    (R + "matmul_vjp_b_sum", h_matmul_vjp_b_sum, _u((2, 4), (2, 4), (2, 3), (2, 3), (3, 4)), None, 1e-5),
    (R + "matmul_vjp_b_sum", h_matmul_vjp_b_sum, _u((4,), (2, 4), (3,), (2, 3), (3, 4)), None, 1e-5),
    (R + "matmul_vjp_a_sum", h_matmul_vjp_a_sum, _u((3,), (3,), (4,), (4,), (3, 4)), None, 1e-5),
    (R + "matmul_vjp_a_sum", h_matmul_vjp_a_sum, _u((3, 2), (3, 2), (4, 2), (4, 2), (3, 4)), None, 1e-5),
    (R + "matmul_vjp_a_sum", h_matmul_vjp_a_sum, _u((3,), (3, 2), (4,), (4, 2), (3, 4)), None, 1e-5),
    (R + "dot_vjp_b_sum", h_dot_vjp_b_sum, _u((4,), (4,), (3,), (3,), (3, 4)), None, 1e-5),
    (R + "dot_vjp_b_sum", h_dot_vjp_b_sum, _u((4,), (2, 4), (3,), (2, 3), (3, 4)), None, 1e-5),
    (R + "dot_vjp_a_sum", h_dot_vjp_a_sum, _u((3,), (3,), (4,), (4,), (3, 4)), None, 1e-5),
    (R + "dot_vjp_a_sum", h_dot_vjp_a_sum, _u((3, 2), (3,), (4, 2), (4,), (3, 4)), None, 1e-5),
    # np.cross's adjoints: 3-vectors, 2-vectors, axis keywords, broadcast operands
    (R + "cross_vjp_a", h_cross_vjp_a, _u((4, 3), (4, 3), (4, 3)), (0, 2), 1e-5),
    (R + "cross_vjp_a", h_cross_vjp_a_axes, _u((3, 4), (3, 4), (4, 2)), (0, 2), 1e-5),
    (R + "cross_vjp_a", h_cross_vjp_a, _u((4,), (4, 2), (2,)), (0, 2), 1e-5),
    (R + "cross_vjp_b", h_cross_vjp_b, _u((4, 3), (4, 3), (3,)), (0, 1), 1e-5),
    (R + "cross_vjp_b", h_cross_vjp_b_axis, _u((3, 4), (3, 4), (3, 4)), (0, 1), 1e-5),
    # np.convolve's adjoint: a window of the full result (start 1, 5 of 7) and the full one
    (R + "convolve_vjp", h_convolve_vjp, _u((5,), (3,), (5,)), (0, 1), 1e-5),
    (R + "convolve_vjp", h_convolve_vjp_full, _u((6,), (4,), (3,)), (0, 1), 1e-5),
]

"""Cases for the rules of the helpers of s2sgrad/runtime/batching.py (see __init__.py): each
helper called on a stack of ``N`` rows (and on its other array arguments), in both modes."""

import numpy as np

from s2sgrad import runtime as s2s

from . import uniform

R = "s2sgrad.runtime."
N = 3  # rows of a stack


def _out(y):
    """A scalar of a helper's output that sees its second-order terms."""
    return np.sum(np.sin(y) * np.cos(np.arange(np.size(y)).reshape(np.shape(y)) + 0.5))


def _u(*shapes):
    return tuple(uniform(s) for s in shapes)


def _s(*shapes):
    """Stacks of ``N`` rows of the given shapes."""
    return tuple(uniform((N,) + s) for s in shapes)


X24 = uniform((2, 4))
X45 = uniform((4, 5))
IDX = np.array([0, 2, 0])  # repeats add up


def h_batch_lead(t, x): return _out(s2s.lead(t, x) * x)
def h_batch_lead_none(t, x): return _out(s2s.lead(t, 2.0, x[0]) * x[0])
def h_batch_constant(v, t): return _out(s2s.batch_constant(v, t) * 1.5)


def h_batch_sum(t): return _out(s2s.batch_sum(t))
def h_batch_sum_axis(t): return _out(s2s.batch_sum(t, 1))
def h_batch_sum_axes(t): return _out(s2s.batch_sum(t, (0, -1), None, True))
def h_batch_mean(t): return _out(s2s.batch_mean(t))
def h_batch_mean_axis(t): return _out(s2s.batch_mean(t, -1, None, True))
def h_batch_sum_vjp(t): return _out(s2s.batch_sum_vjp(t, X24))
def h_batch_sum_vjp_axis(t): return _out(s2s.batch_sum_vjp(t, X24, 0))
def h_batch_sum_vjp_keep(t): return _out(s2s.batch_sum_vjp(t, X24, 1, True))
def h_batch_sum_vjp_axes(t): return _out(s2s.batch_sum_vjp(t, X24, (0, 1)))
def h_batch_mean_vjp(t): return _out(s2s.batch_mean_vjp(t, X24))
def h_batch_mean_vjp_axis(t): return _out(s2s.batch_mean_vjp(t, X24, -1))


def h_batch_getitem_slice(t): return _out(s2s.batch_getitem(t, (slice(1, None), 2)))
def h_batch_getitem_ints(t): return _out(s2s.batch_getitem(t, IDX))
def h_batch_getitem_apart(t): return _out(s2s.batch_getitem(t, (IDX[:2], slice(None), IDX[1:])))
def h_batch_getitem_vjp_slice(t): return _out(s2s.batch_getitem_vjp(t, X45, (slice(1, 3),)))
def h_batch_getitem_vjp_ints(t): return _out(s2s.batch_getitem_vjp(t, X45, IDX))
def h_batch_setitem(t, v): return _out(s2s.batch_setitem(t, (1, slice(None)), v))
def h_batch_setitem_ints(t, v): return _out(s2s.batch_setitem(t, IDX, v))
def h_batch_setitem_value(x, t): return _out(s2s.batch_setitem_value(x, (slice(1, 3),), t))
def h_batch_setitem_value_ints(x, t): return _out(s2s.batch_setitem_value(x, IDX, t))
def h_batch_setitem_value_vjp(t): return _out(s2s.batch_setitem_value_vjp(t, (slice(1, 3),), X45[:1]))
def h_batch_setitem_value_vjp_ints(t): return _out(s2s.batch_setitem_value_vjp(t, IDX, X45[0]))


def h_batch_reshape(t): return _out(s2s.batch_reshape(t, (3, 4)))
def h_batch_reshape_f(t): return _out(s2s.batch_reshape(t, (4, 3), "F"))
def h_batch_reshape_star(t): return _out(s2s.batch_reshape(t, ((12,),)))
def h_batch_transpose(t): return _out(s2s.batch_transpose(t))
def h_batch_transpose_axes(t): return _out(s2s.batch_transpose(t, (1, 2, 0)))
def h_batch_transpose_negative(t): return _out(s2s.batch_transpose(t, ((-1, 0, 1),)))
def h_batch_transpose_vjp(t): return _out(s2s.batch_transpose_vjp(t, (2, 0, 1)))
def h_batch_transpose_vjp_all(t): return _out(s2s.batch_transpose_vjp(t))
def h_batch_broadcast(t): return _out(s2s.batch_broadcast(t, (2, 3, 4)))
def h_batch_unbroadcast(t): return _out(s2s.batch_unbroadcast(t, X24[0]))
def h_batch_unbroadcast_shape(t): return _out(s2s.batch_unbroadcast(t, (1, 4)))
def h_batch_like(t): return _out(s2s.batch_like(t, X24))
def h_batch_like_float(t): return _out(s2s.batch_like(t, 1.5))
def h_batch_like_sum(t): return _out(s2s.batch_like(t, X24[0]))
def h_batch_like_spread(t): return _out(s2s.batch_like(t, X24))
def h_batch_fit(t): return _out(s2s.batch_fit(t, (4,)))
def h_batch_fit_spread(t): return _out(s2s.batch_fit(t, X24))


def h_batch_matmul(t, b): return _out(s2s.batch_matmul(t, b))
def h_batch_rmatmul(a, t): return _out(s2s.batch_rmatmul(a, t))
def h_batch_matmul_vjp_a(t, a, b): return _out(s2s.batch_matmul_vjp_a(t, a, b))
def h_batch_matmul_vjp_b(t, a, b): return _out(s2s.batch_matmul_vjp_b(t, a, b))
def h_batch_matmul_vjp_a_b(g, a, t): return _out(s2s.batch_matmul_vjp_a_b(g, a, t))
def h_batch_matmul_vjp_b_a(g, t, b): return _out(s2s.batch_matmul_vjp_b_a(g, t, b))
def h_batch_matmul_sum(s, t): return _out(s2s.batch_matmul_sum(s, t))
def h_batch_matmul_vjp_a_sum(g, a, t): return _out(s2s.batch_matmul_vjp_a_sum(g, a, t))
def h_batch_matmul_vjp_b_sum(g, t, b): return _out(s2s.batch_matmul_vjp_b_sum(g, t, b))
def h_batch_dot(t, b): return _out(s2s.batch_dot(t, b))
def h_batch_rdot(a, t): return _out(s2s.batch_rdot(a, t))
def h_batch_dot_vjp_a(t, a, b): return _out(s2s.batch_dot_vjp_a(t, a, b))
def h_batch_dot_vjp_b(t, a, b): return _out(s2s.batch_dot_vjp_b(t, a, b))
def h_batch_dot_vjp_a_b(g, a, t): return _out(s2s.batch_dot_vjp_a_b(g, a, t))
def h_batch_dot_vjp_b_a(g, t, b): return _out(s2s.batch_dot_vjp_b_a(g, t, b))
def h_batch_dot_sum(s, t): return _out(s2s.batch_dot_sum(s, t))
def h_batch_dot_vjp_a_sum(g, a, t): return _out(s2s.batch_dot_vjp_a_sum(g, a, t))
def h_batch_dot_vjp_b_sum(g, t, b): return _out(s2s.batch_dot_vjp_b_sum(g, t, b))


# unit rows (a Hessian's seeds) as the stacked factor: the products' fast path, and its adjoint
def h_batch_unit_matmul(b): return _out(s2s.batch_matmul(s2s.unit_rows(1, 4, (4,)), b))
def h_batch_unit_rmatmul(a): return _out(s2s.batch_rmatmul(a, s2s.unit_rows(0, 3, (4,))))


# (a, b) shapes of a @ b: vectors, matrices, stacks broadcast against each other
MATMUL = [((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((3, 4), (4, 5)), ((2, 3, 4), (4, 5)),
          ((3, 4), (2, 4, 5)), ((4,), (2, 4, 5)), ((2, 3, 4), (4,))]
# np.dot: numbers, vectors, matrices, and stacks (a's last axis with b's second to last)
DOT = [((4,), (4,)), ((4,), (4, 5)), ((3, 4), (4,)), ((3, 4), (4, 5)), ((), (4,)), ((3, 4), ()),
       ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5))]


def _product_cases(name, shapes, product):
    out = []
    for a_shape, b_shape in shapes:
        c = np.shape(product(np.ones(a_shape), np.ones(b_shape)))
        (a, b, g), (sa, sb, sg) = _u(a_shape, b_shape, c), _s(a_shape, b_shape, c)
        r = R + "batch_" + name
        out += [
            (r, globals()[f"h_batch_{name}"], (sa, b), None, 1e-5),
            (R + "batch_r" + name, globals()[f"h_batch_r{name}"], (a, sb), None, 1e-5),
            (r + "_vjp_a", globals()[f"h_batch_{name}_vjp_a"], (sg, a, b), (0, 2), 1e-5),
            (r + "_vjp_b", globals()[f"h_batch_{name}_vjp_b"], (sg, a, b), (0, 1), 1e-5),
            (r + "_vjp_a_b", globals()[f"h_batch_{name}_vjp_a_b"], (g, a, sb), (0, 2), 1e-5),
            (r + "_vjp_b_a", globals()[f"h_batch_{name}_vjp_b_a"], (g, sa, b), (0, 1), 1e-5),
            (r + "_sum", globals()[f"h_batch_{name}_sum"], (sa, sb), None, 1e-5),
            (r + "_vjp_a_sum", globals()[f"h_batch_{name}_vjp_a_sum"], (sg, a, sb), (0, 2), 1e-5),
            (r + "_vjp_b_sum", globals()[f"h_batch_{name}_vjp_b_sum"], (sg, sa, b), (0, 1), 1e-5),
        ]
    return out


CASES = [
    (R + "lead", h_batch_lead, _s((4,)) + _u((2, 4)), None, 1e-5),
    (R + "lead", h_batch_lead_none, _s((2, 4)) + _u((2, 4)), None, 1e-5),
    (R + "batch_constant", h_batch_constant, _u((4,)) + _s((4,)), (0,), 1e-5),
    (R + "batch_constant", h_batch_constant, (uniform(None),) + _s((2, 4)), (0,), 1e-5),
    (R + "batch_sum", h_batch_sum, _s((2, 4)), None, 1e-5),
    (R + "batch_sum", h_batch_sum_axis, _s((2, 4)), None, 1e-5),
    (R + "batch_sum", h_batch_sum_axes, _s((2, 3, 4)), None, 1e-5),
    (R + "batch_mean", h_batch_mean, _s((2, 4)), None, 1e-5),
    (R + "batch_mean", h_batch_mean_axis, _s((2, 4)), None, 1e-5),
    (R + "batch_sum_vjp", h_batch_sum_vjp, _s(()), None, 1e-5),
    (R + "batch_sum_vjp", h_batch_sum_vjp_axis, _s((4,)), None, 1e-5),
    (R + "batch_sum_vjp", h_batch_sum_vjp_axis, _s((1,)), None, 1e-5),  # a broadcast row
    (R + "batch_sum_vjp", h_batch_sum_vjp_keep, _s((2, 1)), None, 1e-5),
    (R + "batch_sum_vjp", h_batch_sum_vjp_axes, _s(()), None, 1e-5),
    (R + "batch_mean_vjp", h_batch_mean_vjp, _s(()), None, 1e-5),
    (R + "batch_mean_vjp", h_batch_mean_vjp_axis, _s((2,)), None, 1e-5),
    (R + "batch_getitem", h_batch_getitem_slice, _s((3, 4)), None, 1e-5),
    (R + "batch_getitem", h_batch_getitem_ints, _s((3, 4)), None, 1e-5),
    (R + "batch_getitem", h_batch_getitem_apart, _s((3, 2, 3)), None, 1e-5),  # row by row
    (R + "batch_getitem_vjp", h_batch_getitem_vjp_slice, _s((2, 5)), None, 1e-5),
    (R + "batch_getitem_vjp", h_batch_getitem_vjp_slice, _s((5,)), None, 1e-5),  # a broadcast row
    (R + "batch_getitem_vjp", h_batch_getitem_vjp_ints, _s((3, 5)), None, 1e-5),
    (R + "batch_setitem", h_batch_setitem, _s((3, 4)) + _u((4,)), None, 1e-5),
    (R + "batch_setitem", h_batch_setitem, _s((3, 4)) + (uniform(None),), None, 1e-5),
    (R + "batch_setitem", h_batch_setitem_ints, _s((3, 4)) + _u((4,)), None, 1e-5),  # the last write stays
    (R + "batch_setitem_value", h_batch_setitem_value, _u((4, 5)) + _s((2, 5)), None, 1e-5),
    (R + "batch_setitem_value", h_batch_setitem_value, _u((4, 5)) + _s((5,)), None, 1e-5),
    (R + "batch_setitem_value", h_batch_setitem_value_ints, _u((4, 5)) + _s((3, 5)), None, 1e-5),
    (R + "batch_setitem_value_vjp", h_batch_setitem_value_vjp, _s((4, 5)), None, 1e-5),
    (R + "batch_setitem_value_vjp", h_batch_setitem_value_vjp_ints, _s((4, 5)), None, 1e-5),
    (R + "batch_reshape", h_batch_reshape, _s((2, 6)), None, 1e-5),
    (R + "batch_reshape", h_batch_reshape_f, _s((2, 6)), None, 1e-5),
    (R + "batch_reshape", h_batch_reshape_star, _s((3, 4)), None, 1e-5),
    (R + "batch_transpose", h_batch_transpose, _s((2, 3, 4)), None, 1e-5),
    (R + "batch_transpose", h_batch_transpose_axes, _s((2, 3, 4)), None, 1e-5),
    (R + "batch_transpose", h_batch_transpose_negative, _s((2, 3, 4)), None, 1e-5),
    (R + "batch_transpose_vjp", h_batch_transpose_vjp, _s((2, 3, 4)), None, 1e-5),
    (R + "batch_transpose_vjp", h_batch_transpose_vjp_all, _s((2, 3)), None, 1e-5),
    (R + "batch_broadcast", h_batch_broadcast, _s((4,)), None, 1e-5),
    (R + "batch_broadcast", h_batch_broadcast, _s((3, 1)), None, 1e-5),
    (R + "batch_unbroadcast", h_batch_unbroadcast, _s((3, 4)), None, 1e-5),
    (R + "batch_unbroadcast", h_batch_unbroadcast_shape, _s((2, 3, 4)), None, 1e-5),
    (R + "batch_like", h_batch_like, _s((2, 4)), None, 1e-5),
    (R + "batch_like", h_batch_like_float, _s((2, 4)), None, 1e-5),
    (R + "batch_like", h_batch_like_sum, _s((3, 4)), None, 1e-5),
    (R + "batch_like", h_batch_like_spread, _s(()), None, 1e-5),
    (R + "batch_fit", h_batch_fit, _s((3, 4)), None, 1e-5),
    (R + "batch_fit", h_batch_fit_spread, _s((1, 4)), None, 1e-5),
    *_product_cases("matmul", MATMUL, np.matmul),
    *_product_cases("dot", DOT, np.dot),
    (R + "batch_matmul", h_batch_unit_matmul, _u((4, 5)), None, 1e-5),
    (R + "batch_rmatmul", h_batch_unit_rmatmul, _u((3, 4)), None, 1e-5),
]

"""Cases for the rules of the helpers of s2sgrad/runtime/indexing.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import V4, W, uniform

X4 = uniform((4,))
X34 = uniform((3, 4))
X234 = uniform((2, 3, 4))
IDX = np.array([0, 2, 2, 1])  # repeats add up
MASK = X34 > 0.0
ROWS = [uniform((4,)), uniform((4,))]  # two rows of a (3, 4) array, last visited first


def h_getitem_slice(g): return np.sum(np.sin(s2s.getitem_vjp(g, X4, (slice(None, -1, None),))) * V4)
def h_getitem_int(g): return np.sum(np.sin(s2s.getitem_vjp(g, X34, 1)) * W)
def h_getitem_ints(g): return np.sum(np.sin(s2s.getitem_vjp(g, X4, IDX)) * V4)
def h_getitem_mask(g): return np.sum(np.sin(s2s.getitem_vjp(g, X34, MASK)) * W)
def h_getitem_tuple(g, x): return np.sum(np.sin(s2s.getitem_vjp(g, x, (slice(1, None), IDX))) * W)
def h_getitem_scalar(g): return np.sum(np.sin(s2s.getitem_vjp(g, X34, (0, 2))) * W)
def h_getitem_broadcast(g): return np.sum(np.sin(s2s.getitem_vjp(g, X34, (slice(None), 1))) * W)
NEWAXIS = (Ellipsis, None, slice(None, None, -2))


def h_getitem_newaxis(g): return np.sum(np.sin(s2s.getitem_vjp(g, X34, NEWAXIS)) * W)
def h_getitem_grid(g): return np.sum(np.sin(s2s.getitem_vjp(g, X34, (IDX[:3, None], IDX[None, :]))) * W)
def h_getitem_list(g): return np.sum(np.sin(s2s.getitem_vjp(g, [X4, X4 * 2.0], 1)[1]) * V4)
def h_stack_rows(r0, r1, r2): return np.sum(np.sin(s2s.stack_rows([r0, r1, r2], (3, 4))) * W)
def h_stack_rows_part(r0, r1): return np.sum(np.sin(s2s.stack_rows([r0, r1], (3, 4))) * W)


def h_unstack_rows(g):
    parts = s2s.unstack_rows(g, ROWS)
    return np.sum(np.sin(parts[0]) * V4) + np.sum(np.cos(parts[1]) * V4)


def h_take(g): return np.sum(np.sin(s2s.take_vjp(g, X34, IDX)) * W)
def h_take_axis(g): return np.sum(np.sin(s2s.take_vjp(g, X34, IDX, 1)) * W)
def h_take_along(g): return np.sum(np.sin(s2s.take_along_axis_vjp(g, X34, np.argsort(X34, 1), 1)) * W)
def h_take_along_flat(g): return np.sum(np.sin(s2s.take_along_axis_vjp(g, X34, IDX, None)) * W)
def h_sort(g, a): return np.sum(np.sin(s2s.sort_vjp(g, a)) * W)
def h_sort_axis0(g, a): return np.sum(np.sin(s2s.sort_vjp(g, a, axis=0)) * W)
def h_sort_flat(g, a): return np.sum(np.sin(s2s.sort_vjp(g, a, axis=None)) * W)
def h_diag_vector(g): return np.sum(np.sin(s2s.diag_vjp(g, X4)) * V4)
def h_diag_offset(g): return np.sum(np.sin(s2s.diag_vjp(g, X4, 1)) * V4)
def h_diag_matrix(g): return np.sum(np.sin(s2s.diag_vjp(g, X34, -1)) * W)
def h_diagonal(g): return np.sum(np.sin(s2s.diagonal_vjp(g, X34)) * W)
def h_diagonal_offset(g): return np.sum(np.sin(s2s.diagonal_vjp(g, X34, 1)) * W)
def h_diagonal_axes(g): return np.sum(np.sin(s2s.diagonal_vjp(g, X234, 0, axis1=1, axis2=2)) * X234)
def h_pad(g): return np.sum(np.sin(s2s.pad_vjp(g, X4, (1, 2))) * V4)
def h_pad_edge(g): return np.sum(np.sin(s2s.pad_vjp(g, X34, ((1, 0), (2, 1)), "edge")) * W)
def h_pad_reflect(g): return np.sum(np.sin(s2s.pad_vjp(g, X4, 2, "reflect")) * V4)
def h_pad_wrap(g): return np.sum(np.sin(s2s.pad_vjp(g, X34, 1, mode="wrap")) * W)


GI = "s2sgrad.runtime.getitem_vjp"
# (rules, function, args, argnums or None for every float argument, rtol)
CASES = [
    (GI, h_getitem_slice, (uniform((3,)),), None, 1e-5),
    (GI, h_getitem_int, (uniform((4,)),), None, 1e-5),
    (GI, h_getitem_ints, (uniform((4,)),), None, 1e-5),
    (GI, h_getitem_mask, (uniform((int(MASK.sum()),)),), None, 1e-5),
    (GI, h_getitem_tuple, (uniform((2, 4)), uniform((3, 4))), None, 1e-5),
    (GI, h_getitem_scalar, (uniform(None),), None, 1e-5),
    (GI, h_getitem_broadcast, (uniform(()),), None, 1e-5),
    (GI, h_getitem_newaxis, (uniform((3, 1, 2)),), None, 1e-5),
    (GI, h_getitem_grid, (uniform((3, 4)),), None, 1e-5),
    (GI, h_getitem_list, (uniform((4,)),), None, 1e-5),
    ("s2sgrad.runtime.stack_rows", h_stack_rows, (uniform((4,)), uniform((4,)), uniform((4,))),
     None, 1e-5),
    ("s2sgrad.runtime.stack_rows", h_stack_rows_part, (uniform((4,)), uniform((4,))), None, 1e-5),
    ("s2sgrad.runtime.unstack_rows", h_unstack_rows, (uniform((3, 4)),), None, 1e-5),
    ("s2sgrad.runtime.take_vjp", h_take, (uniform((4,)),), None, 1e-5),
    ("s2sgrad.runtime.take_vjp", h_take_axis, (uniform((3, 4)),), None, 1e-5),
    ("s2sgrad.runtime.take_along_axis_vjp", h_take_along, (uniform((3, 4)),), None, 1e-5),
    ("s2sgrad.runtime.take_along_axis_vjp", h_take_along_flat, (uniform((4,)),), None, 1e-5),
    ("s2sgrad.runtime.sort_vjp", h_sort, (uniform((3, 4)), uniform((3, 4))), None, 1e-5),
    ("s2sgrad.runtime.sort_vjp", h_sort_axis0, (uniform((3, 4)), uniform((3, 4))), None, 1e-5),
    ("s2sgrad.runtime.sort_vjp", h_sort_flat, (uniform((12,)), uniform((3, 4))), None, 1e-5),
    ("s2sgrad.runtime.diag_vjp", h_diag_vector, (uniform((4, 4)),), None, 1e-5),
    ("s2sgrad.runtime.diag_vjp", h_diag_offset, (uniform((5, 5)),), None, 1e-5),
    ("s2sgrad.runtime.diag_vjp", h_diag_matrix, (uniform((2,)),), None, 1e-5),
    ("s2sgrad.runtime.diagonal_vjp", h_diagonal, (uniform((3,)),), None, 1e-5),
    ("s2sgrad.runtime.diagonal_vjp", h_diagonal_offset, (uniform((3,)),), None, 1e-5),
    ("s2sgrad.runtime.diagonal_vjp", h_diagonal_axes, (uniform((2, 3)),), None, 1e-5),
    ("s2sgrad.runtime.pad_vjp", h_pad, (uniform((7,)),), None, 1e-5),
    ("s2sgrad.runtime.pad_vjp", h_pad_edge, (uniform((4, 7)),), None, 1e-5),
    ("s2sgrad.runtime.pad_vjp", h_pad_reflect, (uniform((8,)),), None, 1e-5),
    ("s2sgrad.runtime.pad_vjp", h_pad_wrap, (uniform((5, 6)),), None, 1e-5),
]


def h_select_vjp(g):
    parts = s2s.select_vjp(g, [X34 > 0.3, X34 < -0.2], [X34, V4])
    return np.sum(np.sin(parts[0]) * W) + np.sum(np.cos(parts[1]) * V4)


CASES.append(("s2sgrad.runtime.select_vjp", h_select_vjp, (uniform((3, 4)),), None, 1e-5))


ORDER = np.argsort(X34, axis=0)


def h_permuted(x): return np.sum(np.sin(s2s.permuted(x, ORDER, 0)) * W) + np.sum(s2s.permuted(x, np.argsort(X34, axis=1)) ** 3)
def h_permuted_vjp(g): return np.sum(np.sin(s2s.permuted_vjp(g, ORDER, 0)) * W)


CASES.append(("s2sgrad.runtime.permuted", h_permuted, (uniform((3, 4)),), None, 1e-5))
CASES.append(("s2sgrad.runtime.permuted_vjp", h_permuted_vjp, (uniform((3, 4)),), None, 1e-5))

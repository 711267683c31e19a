"""Cases for the rules of the helpers of s2sgrad/runtime/shapes.py (see __init__.py). A split_*
helper's result is one adjoint per input; the cases index it, as generated code does
(``a_bar = arrays_bar[0]``): forward mode refuses unpacking a call's result for now."""

import numpy as np

from s2sgrad import runtime as s2s

from . import V3, V4, W, uniform

X3 = uniform((3,))
X4 = uniform((4,))
X32 = uniform((3, 2))
X34 = uniform((3, 4))
X14 = uniform((1, 4))
X234 = uniform((2, 3, 4))
W32 = uniform((3, 2), -1.0, 1.0)
W14 = uniform((1, 4), -1.0, 1.0)


def _two(parts, w0, w1):
    """A scalar that reads both adjoints, nonlinearly."""
    return np.sum(np.sin(parts[0]) * w0) + np.sum(np.cos(parts[1]) * w1)


def h_split_concatenate(g): return _two(s2s.split_concatenate(g, [X4, X3]), V4, V3)
def h_split_concatenate_axis(g): return _two(s2s.split_concatenate(g, [X34, X32], 1), W, W32)
def h_split_concatenate_flat(g): return _two(s2s.split_concatenate(g, [X34, X3], None), W, V3)
def h_split_stack(g): return _two(s2s.split_stack(g, [X4, X4]), V4, V4)
def h_split_stack_axis(g): return _two(s2s.split_stack(g, [X34, X34], axis=-1), W, W)
def h_transpose(g): return np.sum(np.sin(s2s.transpose_vjp(g)) * W)
def h_transpose_axes(g): return np.sum(np.sin(s2s.transpose_vjp(g, (1, 2, 0))) * X234)
def h_transpose_tuple(g): return np.sum(np.sin(s2s.transpose_vjp(g, ((1, 0),))) * W)
def h_transpose_empty(g): return np.sum(np.sin(s2s.transpose_vjp(g, ())) * W)
def h_transpose_by(g): return np.sum(np.sin(s2s.transpose_by(g, (2, 0, 1))) * X234)
def h_transpose_by_none(g): return np.sum(np.sin(s2s.transpose_by(g, (None,))) * W)
def h_tile(g): return np.sum(np.sin(s2s.tile_vjp(g, X3, 2)) * V3)
def h_tile_reps(g): return np.sum(np.sin(s2s.tile_vjp(g, X32, (2, 1, 2))) * W32)
def h_repeat(g): return np.sum(np.sin(s2s.repeat_vjp(g, X34, 2)) * W)
def h_repeat_axis(g): return np.sum(np.sin(s2s.repeat_vjp(g, X34, [1, 2, 0], 0)) * W)
def h_rollaxis(g): return np.sum(np.sin(s2s.rollaxis_vjp(g, X234, 2)) * X234)
def h_rollaxis_start(g): return np.sum(np.sin(s2s.rollaxis_vjp(g, X234, 0, start=3)) * X234)
def h_split_hstack(g): return _two(s2s.split_hstack(g, [X4, X3]), V4, V3)
def h_split_hstack_2d(g): return _two(s2s.split_hstack(g, [X34, X32]), W, W32)
def h_split_vstack(g): return _two(s2s.split_vstack(g, [X4, X4]), V4, V4)
def h_split_vstack_2d(g): return _two(s2s.split_vstack(g, [X34, X14]), W, W14)
def h_split_dstack(g): return _two(s2s.split_dstack(g, [X34, X34]), W, W)
def h_split_column_stack(g): return _two(s2s.split_column_stack(g, [X3, X32]), V3, W32)
def h_split_join_r(g): return _two(s2s.split_join_r(g, [X3, 0.5]), V3, 1.5)
def h_split_join_c(g): return _two(s2s.split_join_c(g, [X3, X32]), V3, W32)
def h_split_append(g): return _two(s2s.split_append(g, X4, X3), V4, V3)
def h_split_append_axis(g): return _two(s2s.split_append(g, X34, X14, 0), W, W14)
def h_linspace(g): return _two(s2s.linspace_vjp(g, 0.5, 2.0, 5), 1.0, 1.0)
def h_linspace_arrays(g): return _two(s2s.linspace_vjp(g, X3, X3, 4), V3, V3)
def h_linspace_axis(g): return _two(s2s.linspace_vjp(g, X3, 1.0, 4, endpoint=False, axis=-1), V3, 1.0)



# (rules, function, args, argnums or None for every float argument, rtol)
CASES = [
    ("s2sgrad.runtime.split_concatenate", h_split_concatenate, (uniform((7,)),), None, 1e-5),
    ("s2sgrad.runtime.split_concatenate", h_split_concatenate_axis, (uniform((3, 6)),), None, 1e-5),
    ("s2sgrad.runtime.split_concatenate", h_split_concatenate_flat, (uniform((15,)),), None, 1e-5),
    ("s2sgrad.runtime.split_stack", h_split_stack, (uniform((2, 4)),), None, 1e-5),
    ("s2sgrad.runtime.split_stack", h_split_stack_axis, (uniform((3, 4, 2)),), None, 1e-5),
    ("s2sgrad.runtime.transpose_vjp", h_transpose, (uniform((4, 3)),), None, 1e-5),
    ("s2sgrad.runtime.transpose_vjp", h_transpose_axes, (uniform((3, 4, 2)),), None, 1e-5),
    ("s2sgrad.runtime.transpose_vjp", h_transpose_tuple, (uniform((4, 3)),), None, 1e-5),
    ("s2sgrad.runtime.transpose_vjp", h_transpose_empty, (uniform((4, 3)),), None, 1e-5),
    ("s2sgrad.runtime.transpose_by", h_transpose_by, (uniform((3, 4, 2)),), None, 1e-5),
    ("s2sgrad.runtime.transpose_by", h_transpose_by_none, (uniform((4, 3)),), None, 1e-5),
    ("s2sgrad.runtime.tile_vjp", h_tile, (uniform((6,)),), None, 1e-5),
    ("s2sgrad.runtime.tile_vjp", h_tile_reps, (uniform((2, 3, 4)),), None, 1e-5),
    ("s2sgrad.runtime.repeat_vjp", h_repeat, (uniform((24,)),), None, 1e-5),
    ("s2sgrad.runtime.repeat_vjp", h_repeat_axis, (uniform((3, 4)),), None, 1e-5),
    ("s2sgrad.runtime.rollaxis_vjp", h_rollaxis, (uniform((4, 2, 3)),), None, 1e-5),
    ("s2sgrad.runtime.rollaxis_vjp", h_rollaxis_start, (uniform((3, 4, 2)),), None, 1e-5),
    ("s2sgrad.runtime.split_hstack", h_split_hstack, (uniform((7,)),), None, 1e-5),
    ("s2sgrad.runtime.split_hstack", h_split_hstack_2d, (uniform((3, 6)),), None, 1e-5),
    ("s2sgrad.runtime.split_vstack", h_split_vstack, (uniform((2, 4)),), None, 1e-5),
    ("s2sgrad.runtime.split_vstack", h_split_vstack_2d, (uniform((4, 4)),), None, 1e-5),
    ("s2sgrad.runtime.split_dstack", h_split_dstack, (uniform((3, 4, 2)),), None, 1e-5),
    ("s2sgrad.runtime.split_column_stack", h_split_column_stack, (uniform((3, 3)),), None, 1e-5),
    ("s2sgrad.runtime.split_join_r", h_split_join_r, (uniform((4,)),), None, 1e-5),
    ("s2sgrad.runtime.split_join_c", h_split_join_c, (uniform((3, 3)),), None, 1e-5),
    ("s2sgrad.runtime.split_append", h_split_append, (uniform((7,)),), None, 1e-5),
    ("s2sgrad.runtime.split_append", h_split_append_axis, (uniform((4, 4)),), None, 1e-5),
    ("s2sgrad.runtime.linspace_vjp", h_linspace, (uniform((5,)),), None, 1e-5),
    ("s2sgrad.runtime.linspace_vjp", h_linspace_arrays, (uniform((4, 3)),), None, 1e-5),
    ("s2sgrad.runtime.linspace_vjp", h_linspace_axis, (uniform((3, 4)),), None, 1e-5),
]

"""Cases for the rules of the helpers of s2sgrad/runtime/jacobians.py (see __init__.py): Jacobian
blocks joined from columns, rows or chunks of rows, their transposes, and JAX's layout of blocks
per input."""

import numpy as np

from s2sgrad import runtime as s2s

from . import V4, W, uniform

X3 = uniform((3,))
X4 = uniform((4,))
W32 = uniform((3, 2), -1.0, 1.0)


def _two(parts, w0, w1):
    """A scalar that reads both parts, nonlinearly."""
    return np.sum(np.sin(parts[0]) * w0) + np.sum(np.cos(parts[1]) * w1)


def h_columns_block(c0, c1, c2): return np.sum(np.sin(s2s.columns_block([c0, c1, c2], (3,))) * W.T)
def h_columns_block_2d(c0, c1): return np.sum(np.sin(s2s.columns_block([c0, c1], (1, 2))) * W32[:, None])
def h_rows_block(r0, r1, r2): return np.sum(np.sin(s2s.rows_block([r0, r1, r2], (3,))) * W)
def h_rows_block_2d(r0, r1): return np.sum(np.sin(s2s.rows_block([r0, r1], (2, 1))) * W32.T[:, None])
def h_block_columns(g): return _two(s2s.block_columns(g, [V4, V4, V4], (3,)), V4, V4)
def h_block_rows(g): return _two(s2s.block_rows(g, [V4, V4, V4], (3,)), V4, V4)
def h_chunks_block(c0, c1): return np.sum(np.sin(s2s.chunks_block([c0, c1], X3)) * W.T)
def h_chunks_block_2d(c0): return np.sum(np.sin(s2s.chunks_block([c0], W32)) * W32[:, :, None, None])
def h_block_chunks(g): return _two(s2s.block_chunks(g, [W32[:2], W32[2:]], X3), W32[:2], W32[2:])
def h_row_chunks_block(c0, c1): return np.sum(np.sin(s2s.row_chunks_block([c0, c1], (3,), X4)) * W)
def h_row_chunks_block_2d(c0): return np.sum(np.sin(s2s.row_chunks_block([c0], (2, 1), X3)) * W32.T[:, None])
def h_block_row_chunks(g): return _two(s2s.block_row_chunks(g, [W32[:2], W32[2:]], (3,)), W32[:2], W32[2:])
def h_outputs_outermost(a, b): return _two(s2s.outputs_outermost((a * 2.0, b)), V4, X3)
def h_inputs_outermost(a, b): return _two(s2s.inputs_outermost((a, b * b), (V4, X3)), V4, X3)


# (rules, function, args, argnums or None for every float argument, rtol)
CASES = [
    ("s2sgrad.runtime.columns_block", h_columns_block, (X4, X4 * 2.0, X4 - 1.0), None, 1e-5),
    ("s2sgrad.runtime.columns_block", h_columns_block_2d, (X3, X3 * 2.0), None, 1e-5),
    ("s2sgrad.runtime.rows_block", h_rows_block, (uniform((4,)), uniform((4,)), uniform((4,))),
     None, 1e-5),
    ("s2sgrad.runtime.rows_block", h_rows_block_2d, (X3, X3 * 2.0), None, 1e-5),
    ("s2sgrad.runtime.block_columns", h_block_columns, (uniform((4, 3)),), None, 1e-5),
    ("s2sgrad.runtime.block_rows", h_block_rows, (uniform((3, 4)),), None, 1e-5),
    ("s2sgrad.runtime.chunks_block", h_chunks_block, (uniform((2, 4)), uniform((1, 4))), None, 1e-5),
    ("s2sgrad.runtime.chunks_block", h_chunks_block_2d, (uniform((6, 3, 2)),), None, 1e-5),
    ("s2sgrad.runtime.block_chunks", h_block_chunks, (uniform((2, 3)),), None, 1e-5),
    ("s2sgrad.runtime.row_chunks_block", h_row_chunks_block, (uniform((2, 4)), uniform((1, 4))), None,
     1e-5),
    ("s2sgrad.runtime.row_chunks_block", h_row_chunks_block_2d, (uniform((2, 3)),), None, 1e-5),
    ("s2sgrad.runtime.block_row_chunks", h_block_row_chunks, (uniform((3, 2)),), None, 1e-5),
    ("s2sgrad.runtime.outputs_outermost", h_outputs_outermost, (uniform((4,)), uniform((3,))),
     None, 1e-5),
    ("s2sgrad.runtime.inputs_outermost", h_inputs_outermost, (uniform((4,)), uniform((3,))),
     None, 1e-5),
]

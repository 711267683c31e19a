"""Batched tangents (numpy only): helpers for code that carries many tangents at once.

A batched tangent is the tangents of one value along several directions, stacked on a new
leading axis: ``t[k]`` is the tangent along direction ``k``. The batched tangent code of a
Hessian (differentiate/batching.py) computes every column in one sweep by calling these where
plain numpy would misread the leading axis. Each helper ``batch_<f>(t, ...)`` returns, stacked,
what ``f`` returns for each ``t[k]`` with the other arguments as given (unbatched); ``columns``
is that definition itself, the general path of a helper whose fast paths do not apply.

Each helper is linear in its stacked argument (the products bilinear in it and their other array
argument), so its derivatives are helpers of this module again (rules/helpers/batching.py): the
transposes need, besides the stacked ones, the sums over the stack of a product of two stacks
(``batch_matmul_sum``: ``sum_k s[k] @ t[k]``) or of a product's adjoint with its adjoint and its
other factor stacked (``batch_matmul_vjp_a_sum``, ``batch_matmul_vjp_b_sum``), and ``batch_fit``
and ``batch_transpose_vjp``, the stacked transposes of ``like`` and of a transpose.
"""

from __future__ import annotations

import math
import operator
import weakref

import numpy as np

from .broadcasting import _ndarray, _to_numpy, like
from .containers import _write_positions, setitem, setitem_value_vjp
from .indexing import _is_basic, getitem_vjp
from .products import dot_vjp_a, dot_vjp_b, matmul_vjp_a, matmul_vjp_b
from .reductions import _count

__all__ = [
    "unit_rows",
    "lead",
    "columns",
    "batch_constant",
    "batch_axis",
    "batch_sum",
    "batch_mean",
    "batch_getitem",
    "batch_matmul",
    "batch_rmatmul",
    "batch_dot",
    "batch_rdot",
    "batch_matmul_vjp_a",
    "batch_matmul_vjp_b",
    "batch_dot_vjp_a",
    "batch_dot_vjp_b",
    "batch_matmul_vjp_a_b",
    "batch_matmul_vjp_b_a",
    "batch_dot_vjp_a_b",
    "batch_dot_vjp_b_a",
    "batch_like",
    "batch_broadcast",
    "batch_unbroadcast",
    "batch_sum_vjp",
    "batch_mean_vjp",
    "batch_getitem_vjp",
    "batch_setitem",
    "batch_setitem_value",
    "batch_setitem_value_vjp",
    "batch_reshape",
    "batch_transpose",
    "batch_transpose_vjp",
    "batch_fit",
    "batch_matmul_sum",
    "batch_dot_sum",
    "batch_matmul_vjp_a_sum",
    "batch_matmul_vjp_b_sum",
    "batch_dot_vjp_a_sum",
    "batch_dot_vjp_b_sum",
]


# Arrays made by unit_rows: id -> (a weak reference to it, the index of its first row's 1).
_UNIT_ROWS: dict = {}


def _numpy(v):
    """``v`` as a numpy array (batched tangents are numpy's; another library's array is computed,
    with a ComputeWarning)."""
    return v if type(v) is _ndarray else _to_numpy(v, "batched tangents (jacfwd, jacrev, hessian)")


def unit_rows(first, stop, shape, dtype=np.float64):
    """Read-only stacked tangents of ``shape`` whose row ``k`` is zero but for a 1 at flat index
    ``first + k`` (``k < stop - first``): the seeds of a Hessian's columns. A batched product
    knows them as such and picks the rows or columns they select instead of multiplying."""
    t = np.eye(stop - first, math.prod(shape), first, dtype).reshape((stop - first,) + tuple(shape))
    t.flags.writeable = False
    key = id(t)
    _UNIT_ROWS[key] = (weakref.ref(t, lambda _, key=key: _UNIT_ROWS.pop(key, None)), first)
    return t


def _first_unit(t):
    """The index of the 1 in row 0 of ``t`` when unit_rows made it (unchanged: read-only)."""
    entry = _UNIT_ROWS.get(id(t))
    return entry[1] if entry is not None and entry[0]() is t else None


def lead(t, *operands):
    """Batched ``t`` with axes of length one after its leading axis, so that it broadcasts
    against the unbatched ``operands`` as each of its columns does."""
    need = 0
    for o in operands:  # a loop, not max(): this runs once per operator of the batched code
        rank = o.ndim if type(o) is _ndarray else (0 if type(o) is float else np.ndim(o))
        if rank > need:
            need = rank
    return _lead_to(t, need)


def _lead_to(t, need):
    """Batched ``t`` whose columns have at least ``need`` axes (length one first)."""
    t = t if type(t) is _ndarray else _numpy(t)
    rank = t.ndim - 1
    if need <= rank:
        return t
    return t.reshape(t.shape[:1] + (1,) * (need - rank) + t.shape[1:])


def columns(fn, t, *args, **kwargs):
    """``fn(t[k], *args, **kwargs)`` for every ``k``, stacked on a leading axis."""
    return np.stack([_numpy(fn(column, *args, **kwargs)) for column in t])


def batch_constant(value, rows):
    """``value`` for every row of the stack ``rows``: a tangent that does not vary with them (of
    a tuple or list, each item's)."""
    if isinstance(value, (tuple, list)):
        return type(value)(batch_constant(item, rows) for item in value)
    value = _numpy(value)
    return np.broadcast_to(value, (len(rows),) + value.shape)


def batch_axis(axis, t):
    """An ``axis`` argument (None, an int or a tuple) of one column, for batched ``t``."""
    if axis is None:
        return tuple(range(1, np.ndim(t)))
    if isinstance(axis, (tuple, list)):
        return tuple(batch_axis(a, t) for a in axis)
    axis = operator.index(axis)
    return axis + 1 if axis >= 0 else axis


def batch_sum(t, axis=None, dtype=None, keepdims=False):
    if axis is None and dtype is None and not keepdims and type(t) is _ndarray and t.ndim:
        return np.add.reduce(t.reshape(len(t), -1), axis=1)  # each row to one number
    return np.sum(t, axis=batch_axis(axis, t), dtype=dtype, keepdims=keepdims)


def batch_mean(t, axis=None, dtype=None, keepdims=False):
    return np.mean(t, axis=batch_axis(axis, t), dtype=dtype, keepdims=keepdims)


def batch_getitem(t, index):
    """``t[k][index]``, stacked: ``t[:, *index]`` where numpy places the indexed axes alike (the
    array indices side by side, or one), else row by row."""
    index = index if type(index) is tuple else (index,)
    placed = [n for n, i in enumerate(index) if not (i is None or i is Ellipsis or type(i) is slice)]
    if _is_basic(index) or len(placed) == 1 or placed[-1] - placed[0] + 1 == len(placed):
        return t[(slice(None),) + index]
    return np.stack([row[index] for row in t])


def batch_matmul(t, b):
    """``t[k] @ b``, stacked."""
    t = _numpy(t)
    rank, b_nd = t.ndim - 1, np.ndim(b)
    first = _first_unit(t)
    if first is not None and rank == 1 and b_nd in (1, 2):
        return np.array(_numpy(b)[first:first + len(t)])  # e_i @ b: row i of b
    if (rank == 1 and b_nd <= 2) or (rank >= 2 and b_nd <= rank):
        return np.matmul(t, b)
    if rank == 1:  # a vector times a stack of matrices
        rows = t.reshape(t.shape[:1] + (1,) * (b_nd - 2) + (1, t.shape[1]))
        return np.matmul(rows, b)[..., 0, :]
    return np.matmul(lead(t, b), b)


def batch_rmatmul(a, t):
    """``a @ t[k]``, stacked."""
    t = _numpy(t)
    rank, a_nd = t.ndim - 1, np.ndim(a)
    first = _first_unit(t)
    if first is not None and rank == 1 and a_nd in (1, 2):
        return np.array(_numpy(a)[..., first:first + len(t)].T, order="C")  # column i of a, a copy
    if rank == 1:
        if a_nd <= 2:
            return np.matmul(t, np.transpose(a))  # (a @ v)[i] = (v @ a.T)[i]: one product
        cols = t.reshape(t.shape[:1] + (1,) * (a_nd - 2) + (t.shape[1], 1))
        return np.matmul(a, cols)[..., 0]
    if a_nd <= rank:
        return np.matmul(a, t)
    return np.matmul(a, lead(t, a))


def _matrix_ranks(a, t) -> bool:
    return np.ndim(a) in (1, 2) and np.ndim(t) - 1 in (1, 2)


def batch_dot(t, b):
    """``np.dot(t[k], b)``, stacked."""
    if _matrix_ranks(b, t):
        return batch_matmul(t, b)  # np.dot is the matrix product here
    if np.ndim(b) == 0 or np.ndim(t) == 1:
        return lead(t, b) * b
    return columns(np.dot, t, b)


def batch_rdot(a, t):
    """``np.dot(a, t[k])``, stacked."""
    if _matrix_ranks(a, t):
        return batch_rmatmul(a, t)
    if np.ndim(a) == 0 or np.ndim(t) == 1:
        return a * lead(t, a)
    return columns(lambda column: np.dot(a, column), t)


def batch_unbroadcast(t, x):
    """``unbroadcast(t[k], x)``, stacked: each column summed down to ``x``'s shape (or to
    ``x`` itself, a tuple)."""
    shape = x if type(x) is tuple else np.shape(x)
    t = _lead_to(t, len(shape))
    extra = t.ndim - 1 - len(shape)
    if extra > 0:
        t = np.sum(t, axis=tuple(range(1, 1 + extra)))
    axes = tuple(i + 1 for i, n in enumerate(shape) if n == 1 and t.shape[i + 1] != 1)
    return np.sum(t, axis=axes, keepdims=True) if axes else t


def batch_broadcast(t, shape):
    """``broadcast(t[k], shape)``, stacked."""
    shape = tuple(shape)
    t = _lead_to(t, len(shape))
    return np.broadcast_to(t, t.shape[:1] + shape)


def batch_like(t, x):
    """``like(t[k], x)``, stacked: each column as the gradient of ``x``."""
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        t = np.real(_numpy(t))
        return np.sum(t.reshape(len(t), -1), axis=1).astype(np.float64)
    if type(x) is not _ndarray:
        return columns(like, t, x)
    x_dtype = x.dtype if x.dtype.kind in "fc" else np.dtype(np.float64)
    t = _numpy(t)
    if t.dtype == x_dtype and t.shape[1:] == x.shape and t.flags.writeable:
        return t  # already stacked gradients of x (like's own fast path, per row)
    if t.dtype.kind == "c" and x_dtype.kind != "c":
        t = t.real
    out = np.empty(t.shape[:1] + x.shape, x_dtype)
    out[...] = batch_unbroadcast(t, x)
    return out


def batch_matmul_vjp_a(t, a, b):
    """``matmul_vjp_a(t[k], a, b)``, stacked."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    t = _numpy(t)
    if b_nd == 2 and a_nd in (1, 2) and t.ndim == a_nd + 1:
        return np.matmul(t, np.transpose(b))
    if b_nd == 1:
        return batch_unbroadcast(t[..., None] * b, a)
    if a_nd == 1:
        return batch_unbroadcast(np.matmul(t[..., None, :], np.swapaxes(b, -1, -2))[..., 0, :], a)
    return batch_unbroadcast(np.matmul(t, np.swapaxes(b, -1, -2)), a)


def batch_matmul_vjp_b(t, a, b):
    """``matmul_vjp_b(t[k], a, b)``, stacked."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    t = _numpy(t)
    if a_nd == 2 and b_nd == 1 and t.ndim == 2:
        return np.matmul(t, a)
    if a_nd == 1:
        if b_nd == 1:
            return t[..., None] * _numpy(a)
        return batch_unbroadcast(_numpy(a)[:, None] * t[..., None, :], b)
    if b_nd == 1:
        return batch_unbroadcast(np.matmul(np.swapaxes(a, -1, -2), t[..., None])[..., 0], b)
    return batch_unbroadcast(np.matmul(np.swapaxes(a, -1, -2), t), b)


def batch_dot_vjp_a(t, a, b):
    """``dot_vjp_a(t[k], a, b)``, stacked."""
    if np.ndim(a) in (1, 2) and np.ndim(b) in (1, 2):
        return batch_matmul_vjp_a(t, a, b)
    return columns(dot_vjp_a, t, a, b)


def batch_dot_vjp_b(t, a, b):
    """``dot_vjp_b(t[k], a, b)``, stacked."""
    if np.ndim(a) in (1, 2) and np.ndim(b) in (1, 2):
        return batch_matmul_vjp_b(t, a, b)
    return columns(dot_vjp_b, t, a, b)


def batch_matmul_vjp_a_b(g, a, t):
    """``matmul_vjp_a(g, a, t[k])``, stacked: the adjoint's other factor batched."""
    a_nd, b_nd = np.ndim(a), np.ndim(t) - 1
    g = _numpy(g)
    if b_nd == 1:
        if a_nd == 1:
            return g * t
        return batch_unbroadcast(g[..., None] * lead(t, g[..., None]), a)
    if a_nd == 1:
        return batch_unbroadcast(np.matmul(g[..., None, :], np.swapaxes(t, -1, -2))[..., 0, :], a)
    return batch_unbroadcast(np.matmul(g, np.swapaxes(lead(t, g), -1, -2)), a)


def batch_matmul_vjp_b_a(g, t, b):
    """``matmul_vjp_b(g, t[k], b)``, stacked: the adjoint's other factor batched."""
    a_nd, b_nd = np.ndim(t) - 1, np.ndim(b)
    g = _numpy(g)
    if a_nd == 1:
        if b_nd == 1:
            return g * t
        column = _numpy(t)[..., None]
        return batch_unbroadcast(lead(column, g[..., None, :]) * g[..., None, :], b)
    if b_nd == 1:
        return batch_unbroadcast(np.matmul(np.swapaxes(t, -1, -2), g[..., None])[..., 0], b)
    return batch_unbroadcast(np.matmul(np.swapaxes(lead(t, g), -1, -2), g), b)


def batch_dot_vjp_a_b(g, a, t):
    """``dot_vjp_a(g, a, t[k])``, stacked."""
    if np.ndim(a) in (1, 2) and np.ndim(t) - 1 in (1, 2):
        return batch_matmul_vjp_a_b(g, a, t)
    return columns(lambda column: dot_vjp_a(g, a, column), t)


def batch_dot_vjp_b_a(g, t, b):
    """``dot_vjp_b(g, t[k], b)``, stacked."""
    if np.ndim(t) - 1 in (1, 2) and np.ndim(b) in (1, 2):
        return batch_matmul_vjp_b_a(g, t, b)
    return columns(lambda column: dot_vjp_b(g, column, b), t)


def batch_sum_vjp(t, x, axis=None, keepdims=False):
    """``sum_vjp(t[k], x, axis, keepdims)``, stacked: each row spread over ``x``'s shape."""
    shape = np.shape(x)
    t = _numpy(t)
    if axis is None:
        t = t.reshape(t.shape[:1] + (1,) * len(shape))
    elif not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        t = np.expand_dims(_lead_to(t, len(shape) - len(axes)),
                           tuple(a % len(shape) + 1 for a in axes))
    return np.broadcast_to(_lead_to(t, len(shape)), t.shape[:1] + shape)


def batch_mean_vjp(t, x, axis=None, keepdims=False):
    """``mean_vjp(t[k], x, axis, keepdims)``, stacked."""
    return batch_sum_vjp(t, x, axis, keepdims) / _count(x, axis)


def _rows_index(index) -> tuple:
    return (slice(None),) + (index if type(index) is tuple else (index,))


def batch_getitem_vjp(t, x, index):
    """``getitem_vjp(t[k], x, index)``, stacked: each row scattered into zeros like ``x``."""
    if type(x) is not _ndarray or not _is_basic(index):
        return columns(getitem_vjp, t, x, index)
    t = _numpy(t)
    out = np.zeros(t.shape[:1] + x.shape, dtype=np.result_type(t, x))
    out[_rows_index(index)] = _lead_to(t, out[0][index].ndim)
    return out


def batch_setitem(t, index, value):
    """``setitem(t[k], index, value)``, stacked: a copy of the rows with ``value`` written."""
    if type(t) is not _ndarray or not _is_basic(index):
        return columns(setitem, t, index, value)
    out = np.array(t, copy=True)
    out[_rows_index(index)] = value
    return out


def batch_setitem_value(x, index, t):
    """``setitem(x, index, t[k])``, stacked: ``x`` with each row written into it."""
    t = _numpy(t)
    if type(x) is not _ndarray or not _is_basic(index):
        return columns(lambda row: setitem(x, index, row), t)
    out = np.empty(t.shape[:1] + x.shape, dtype=np.result_type(t, x))
    out[...] = x
    out[_rows_index(index)] = _lead_to(t, out[0][index].ndim)
    return out


def batch_setitem_value_vjp(t, index, value):
    """``setitem_value_vjp(t[k], index, value)``, stacked: each row read at ``index``, summed to
    ``value``'s shape (row by row where an integer array index may repeat a position)."""
    t = _numpy(t)
    if _write_positions(t.shape[1:], index) is not None:
        return columns(setitem_value_vjp, t, index, value)
    return batch_unbroadcast(batch_getitem(t, index), value)


def batch_reshape(t, shape, order="C"):
    """``np.reshape(t[k], shape, order=order)``, stacked (``shape`` also as a method's
    ``*shape``: a tuple holding the shape)."""
    if isinstance(shape, tuple) and len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (operator.index(shape),)
    t = _numpy(t)
    if order == "C":
        return t.reshape(t.shape[:1] + shape)
    return columns(np.reshape, t, shape, order=order)


def batch_transpose(t, axes=None):
    """``np.transpose(t[k], axes)``, stacked (``axes`` also as a method's ``*axes``)."""
    t = _numpy(t)
    if isinstance(axes, tuple) and len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    if axes is None or axes == ():
        return np.transpose(t, (0,) + tuple(range(t.ndim - 1, 0, -1)))
    return np.transpose(t, (0,) + tuple(batch_axis(a, t) for a in axes))



def batch_transpose_vjp(t, axes=None):
    """``transpose_vjp(t[k], axes)``, stacked: each row transposed back (``axes`` as
    batch_transpose reads them)."""
    t = _numpy(t)
    if isinstance(axes, tuple) and len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = axes[0]
    if axes is None or axes == ():
        return np.transpose(t, (0,) + tuple(range(t.ndim - 1, 0, -1)))
    rank = t.ndim - 1
    inverse = np.argsort([operator.index(a) % rank for a in axes])
    return np.transpose(t, (0,) + tuple(int(a) + 1 for a in inverse))


def batch_fit(t, x):
    """``fit(t[k], x)``, stacked: each row spread to ``x``'s shape (``x`` itself when a tuple)
    where it broadcasts to it, else summed down to it (batch_like's transpose)."""
    shape = x if type(x) is tuple else np.shape(x)
    t = _numpy(t)
    if t.shape[1:] == shape:
        return t
    try:
        spreads = np.broadcast_shapes(t.shape[1:], shape) == shape
    except ValueError:
        spreads = False
    return batch_broadcast(t, shape) if spreads else batch_unbroadcast(t, shape)


def _pair_sum(fn, left, right, other=None):
    """``sum_k fn(left[k], right[k])`` over two stacks (``fn(left[k], other, right[k])`` with
    an unbatched middle argument ``other``)."""
    total = None
    for a, b in zip(left, right):
        term = fn(a, b) if other is None else fn(a, other, b)
        total = term if total is None else total + term
    return total


def _small(*ranks) -> bool:
    return all(r in (1, 2) for r in ranks)


def _product_sum(s, t, product):
    s, t = _numpy(s), _numpy(t)
    if _small(s.ndim - 1, t.ndim - 1) and len(s) == len(t):
        if s.shape[-1] == t.shape[1]:  # the rows and the product's axis contracted at once
            return np.tensordot(s, t, ([0, s.ndim - 1], [0, 1]))
    return _pair_sum(product, s, t)


def batch_matmul_sum(s, t):
    """``sum_k s[k] @ t[k]`` over two stacks of the same length."""
    return _product_sum(s, t, np.matmul)


def batch_dot_sum(s, t):
    """``sum_k np.dot(s[k], t[k])`` over two stacks of the same length."""
    return _product_sum(s, t, np.dot)


def _out_shape(a_shape, b_shape):
    """The shape of ``a @ b`` for operands of one or two axes."""
    return a_shape[:-1] + b_shape[1:]


def _vjp_a_sum(g, a, t, vjp):
    g, t = _numpy(g), _numpy(t)
    a_shape, b_shape = np.shape(a), t.shape[1:]
    if _small(len(a_shape), len(b_shape)) and g.shape[1:] == _out_shape(a_shape, b_shape) and \
            a_shape[-1] == b_shape[0] and len(g) == len(t):
        # sum_k g[k] @ t[k].T (a vector's sides alike): the rows and the output's last axis
        axes = ([0, g.ndim - 1], [0, 2]) if len(b_shape) == 2 else ([0], [0])
        return np.tensordot(g, t, axes)
    return _pair_sum(vjp, g, t, other=a)


def _vjp_b_sum(g, t, b, vjp):
    g, t = _numpy(g), _numpy(t)
    a_shape, b_shape = t.shape[1:], np.shape(b)
    if _small(len(a_shape), len(b_shape)) and g.shape[1:] == _out_shape(a_shape, b_shape) and \
            a_shape[-1] == b_shape[0] and len(g) == len(t):
        # sum_k t[k].T @ g[k]: the rows and the output's first axis (a matrix's)
        axes = ([0, 1], [0, 1]) if len(a_shape) == 2 else ([0], [0])
        return np.tensordot(t, g, axes)
    return _pair_sum(lambda gk, tk: vjp(gk, tk, b), g, t)


def batch_matmul_vjp_a_sum(g, a, t):
    """``sum_k matmul_vjp_a(g[k], a, t[k])``: the adjoint of ``a`` in ``batch_rmatmul(a, t)``."""
    return _vjp_a_sum(g, a, t, matmul_vjp_a)


def batch_matmul_vjp_b_sum(g, t, b):
    """``sum_k matmul_vjp_b(g[k], t[k], b)``: the adjoint of ``b`` in ``batch_matmul(t, b)``."""
    return _vjp_b_sum(g, t, b, matmul_vjp_b)


def batch_dot_vjp_a_sum(g, a, t):
    """``sum_k dot_vjp_a(g[k], a, t[k])``: the adjoint of ``a`` in ``batch_rdot(a, t)``."""
    return _vjp_a_sum(g, a, t, dot_vjp_a)


def batch_dot_vjp_b_sum(g, t, b):
    """``sum_k dot_vjp_b(g[k], t[k], b)``: the adjoint of ``b`` in ``batch_dot(t, b)``."""
    return _vjp_b_sum(g, t, b, dot_vjp_b)

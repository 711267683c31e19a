"""Adjoints of reading elements (numpy only): ``x[index]`` (``s2s.getitem_vjp``), a backward
loop's rows stacked (``s2s.stack_rows``), ``np.take``, ``np.take_along_axis``, ``np.sort``,
``np.diag``, ``np.diagonal`` and ``np.pad``: ``g`` scattered back where each element came from."""

from __future__ import annotations

import math

import numpy as np

from ..errors import GradientError
from .broadcasting import _foreign, _ndarray, _own_type, unbroadcast
from .containers import Parts, list_getitem_vjp

__all__ = [
    "permutation_indices",
    "permuted",
    "permuted_vjp",
    "select_vjp",
    "getitem_vjp",
    "stack_rows",
    "rows_shape",
    "size",
    "take_vjp",
    "take_along_axis_vjp",
    "sort_vjp",
    "diag_vjp",
    "diagonal_vjp",
    "pad_vjp",
    "unstack_rows",
]


_BOOL = np.dtype(bool)
_ARRAY_OR_NUMBER = frozenset({_ndarray, float, int, np.float64, np.float32})  # rows stacked as they are


def _is_basic(index):
    """Whether ``index`` holds only ints, slices, None and Ellipsis (a view, no repeats)."""
    if type(index) is slice or type(index) is int:
        return True
    parts = index if isinstance(index, tuple) else (index,)
    for p in parts:  # a loop, not all(genexpr): generated code asks this every step
        if type(p) is slice or type(p) is int or p is None or p is Ellipsis:
            continue
        if not isinstance(p, (slice, int, np.integer)):
            return False
    return True


def getitem_vjp(g, x, index):
    """Adjoint of ``x[index]``: ``g`` scattered into zeros shaped like ``x`` (repeats add up)."""
    if type(x) is _ndarray:
        dtype = x.dtype
        if type(g) is not _ndarray or g.dtype is not dtype:
            dtype = np.result_type(g, x)
        if _foreign(g):  # a numpy array's adjoint in another library (a lazy dask one): of its type
            out = np.zeros_like(g, dtype=dtype, shape=x.shape)
        else:
            out = np.zeros(x.shape, dtype=dtype)
    elif isinstance(x, (tuple, list, dict)):
        return list_getitem_vjp(g, x, index)  # a sequence passed where an array could be
    elif _own_type(x):  # a subclass, another library's array: of its type
        out = np.zeros_like(x, dtype=np.result_type(g, x))
    else:
        out = np.zeros(np.shape(x), dtype=np.result_type(g, np.float64 if not hasattr(x, "dtype") else x))
    for part in (index if type(index) is tuple else (index,)):
        if type(part) is not slice and type(part) is not int:
            basic = _is_basic(index)
            break
    else:
        basic = True  # slices and ints only (the common case)
    if basic:
        out[index] = g
    elif type(index) is _ndarray and index.dtype is _BOOL and index.shape == out.shape and \
            type(g) is _ndarray and g.dtype is out.dtype and g.dtype.kind == "f":
        out[index] = g + 0.0  # a mask has no repeats; ``0.0 + g`` is what np.add.at stores
    elif _foreign(out):
        try:
            np.add.at(out, index, g)
        except TypeError as error:  # dask's arrays do not implement np.add.at
            raise GradientError(
                "s2sgrad's adjoint of an integer-array or boolean-mask index adds into zeros with "
                f"np.add.at, which {type(out).__module__}.{type(out).__name__} does not implement; "
                "it does not convert the array to a numpy array (that would pull it into memory): "
                "index with slices there, or compute the array where you mean to") from error
    else:
        np.add.at(out, index, g)
    return out


def size(x):
    """``np.size(x)`` from its shape, without converting ``x`` (what a forward sweep records of a
    value that may not be numpy's: dask's arrays do not implement ``np.size``, whose fallback
    would compute the whole array)."""
    if type(x) is _ndarray:
        return x.size
    return math.prod(np.shape(x))


def rows_shape(xs):
    """What a forward sweep records of a sequence a backward loop stacks the row adjoints of:
    its shape, or ``(len(xs), None)`` where its items do not stack into one array (a list of
    tuples of arrays of several shapes)."""
    try:
        return np.shape(xs)
    except ValueError:
        return (len(xs), None)


def stack_rows(rows, shape):
    """The adjoint of an array whose rows ``0, 1, ...`` a backward loop visited last to first:
    ``rows`` (in that visiting order) stacked, zeros for rows never read. Rows that are adjoints
    of containers (a list of tuples or dicts, read where its kind was not known), or rows that do
    not stack (``rows_shape``'s None), give one adjoint per row (a Parts, 0.0 for a row never
    read)."""
    plain = shape[1:2] != (None,) and set(map(type, rows)) <= _ARRAY_OR_NUMBER  # (the common rows)
    if not plain and (shape[1:2] == (None,) or any(isinstance(row, (list, tuple, dict)) for row in rows)):
        return Parts(rows[::-1] + [0.0] * (shape[0] - len(rows)))
    if not plain and any(_foreign(row) for row in rows):  # another library's rows: stacked by it
        stacked = np.stack(rows[::-1])
        if len(rows) == shape[0]:
            return stacked
        return np.concatenate([stacked, np.zeros_like(stacked, shape=(shape[0] - len(rows),) +
                                                      stacked.shape[1:])])
    if rows and len(rows) == shape[0]:
        return np.array(rows[::-1])
    first = np.asarray(rows[0]) if rows else None
    out = np.zeros(shape, dtype=first.dtype if first is not None and first.dtype.kind in "fc"
                   else np.float64)
    if rows:
        out[:len(rows)] = rows[::-1]
    return out


def take_vjp(g, a, indices, axis=None):
    """Adjoint of ``np.take(a, indices, axis)`` (repeated indices add up)."""
    shape = np.shape(a)
    out = np.zeros(shape, dtype=np.result_type(g, np.float64))
    if axis is None:
        flat = out.reshape(-1)
        np.add.at(flat, np.asarray(indices), g)
        return out
    axis = axis % len(shape)
    index = (slice(None),) * axis + (np.asarray(indices),)
    np.add.at(out, index, g)
    return out


def take_along_axis_vjp(g, arr, indices, axis):
    """Adjoint of ``np.take_along_axis(arr, indices, axis)`` (repeated indices add up)."""
    shape = np.shape(arr)
    out = np.zeros(shape, dtype=np.result_type(g, np.float64))
    if axis is None:
        np.add.at(out.reshape(-1), indices, g)
        return out
    indices = np.asarray(indices)
    axis = axis % len(shape)
    index = []
    for d in range(len(shape)):
        if d == axis:
            index.append(indices)
        else:
            view = [1] * len(shape)
            view[d] = indices.shape[d]
            index.append(np.arange(indices.shape[d]).reshape(view))
    np.add.at(out, tuple(index), g)
    return out


def sort_vjp(g, a, axis=-1):
    """Adjoint of ``np.sort(a, axis)``: ``g`` put back where each sorted element came from."""
    a = np.asarray(a)
    if axis is None:
        return sort_vjp(g, a.ravel(), 0).reshape(a.shape)
    order = np.argsort(a, axis=axis, kind="stable")
    out = np.zeros(a.shape, dtype=np.result_type(g, np.float64))
    np.put_along_axis(out, order, g, axis=axis)
    return out


def permutation_indices(a, out, axis=-1):
    """The indices ``i`` with ``np.take_along_axis(a, i, axis) == out``, for ``out`` a
    permutation of ``a`` along ``axis`` (what ``np.partition`` returned): each position of ``out``
    names the element of ``a`` it holds (of equal elements, each taken once). Flattened for
    ``axis`` None."""
    a, out = np.asarray(a), np.asarray(out)
    if axis is None:
        return permutation_indices(a.ravel(), out.ravel(), 0)
    from_a = np.argsort(a, axis=axis, kind="stable")
    from_out = np.argsort(out, axis=axis, kind="stable")
    indices = np.empty_like(from_a)
    np.put_along_axis(indices, from_out, from_a, axis=axis)
    return indices


def permuted(value, indices, axis=-1):
    """``value``'s elements in the order ``indices`` names along ``axis`` (flattened for None):
    ``np.take_along_axis``, with np.partition's default axis (linear in ``value``)."""
    return np.take_along_axis(np.asarray(value), indices, axis)


def permuted_vjp(value, indices, axis=-1):
    """The transpose of ``permuted``: each element of ``value`` put back where ``indices`` took it
    from (a permutation: no position twice)."""
    value = np.asarray(value)
    out = np.zeros(np.shape(indices) if axis is not None else np.size(indices), dtype=value.dtype)
    np.put_along_axis(out, indices, value, axis)
    return out


def select_vjp(value, condlist, choicelist):
    """The adjoints of ``np.select(condlist, choicelist, default)``'s choices from its output's
    ``value``: where the first true condition picks choice ``i``, its adjoint is ``value``, summed
    to the choice's shape (a Parts, one per choice)."""
    zero = np.zeros_like(np.asarray(value))
    parts = []
    for i, choice in enumerate(choicelist):
        picked = np.select(condlist, [value if j == i else zero for j in range(len(choicelist))], 0.0)
        parts.append(unbroadcast(picked, choice))
    return Parts(parts)


def diag_vjp(g, v, k=0):
    """Adjoint of ``np.diag(v, k)``: a diagonal taken from ``g``, or ``g`` put on a diagonal."""
    g = np.asarray(g)
    if np.ndim(v) == 1:
        return np.diagonal(g, k).copy()
    return diagonal_vjp(g, v, k, 0, 1)


def diagonal_vjp(g, a, offset=0, axis1=0, axis2=1):
    """Adjoint of ``np.diagonal(a, offset, axis1, axis2)`` (the diagonal is its last axis)."""
    a_shape = np.shape(a)
    ndim = len(a_shape)
    axis1, axis2 = axis1 % ndim, axis2 % ndim
    out = np.zeros(a_shape, dtype=np.result_type(g, np.float64))
    if ndim == 2 and (axis1, axis2) == (0, 1) and np.ndim(g) == 1:  # a matrix: one strided write
        cols = a_shape[1]
        start = offset if offset >= 0 else -offset * cols
        out.reshape(-1)[start::cols + 1][:np.shape(g)[0]] = g
        return out
    moved = np.moveaxis(out, (axis1, axis2), (-2, -1))  # a view: writing it fills ``out``
    n = np.shape(g)[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    moved[..., rows, cols] = g
    return out


def pad_vjp(g, array, pad_width, mode="constant"):
    """Adjoint of ``np.pad`` for the modes that copy elements (constant, edge, reflect, ...)."""
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"the gradient of np.pad with mode={mode!r} is not supported")
    shape = np.shape(array)
    source = np.arange(int(np.prod(shape))).reshape(shape)
    if mode == "constant":
        where = np.pad(source, pad_width, mode="constant", constant_values=-1)
    else:
        where = np.pad(source, pad_width, mode=mode)
    g = np.ravel(g)
    kept = np.ravel(where) >= 0
    out = np.zeros(source.size, dtype=np.result_type(g, np.float64))
    np.add.at(out, np.ravel(where)[kept], g[kept])
    return out.reshape(shape)


def unstack_rows(value, rows):
    """The adjoint of ``stack_rows(rows, shape)``: row ``len(rows) - 1 - k`` of ``value`` for
    ``rows[k]`` (one per row, a Parts), summed to that row's shape."""
    from .containers import Parts

    last = len(rows) - 1
    return Parts(unbroadcast(value[last - k], row) for k, row in enumerate(rows))

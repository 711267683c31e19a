"""Adjoints of functions that join, split or rearrange arrays (numpy only): concatenations and
stacks (``s2s.split_concatenate``, ``s2s.split_hstack``, ...), ``np.append``, transposes,
``np.tile``, ``np.repeat``, ``np.rollaxis`` and ``np.linspace``."""

from __future__ import annotations

import numpy as np

from .broadcasting import _operand, unbroadcast
from .containers import Parts

__all__ = [
    "join_r",
    "join_c",
    "split_join_r",
    "split_join_c",
    "split_concatenate",
    "split_stack",
    "transpose_vjp",
    "tile_vjp",
    "repeat_vjp",
    "rollaxis_vjp",
    "split_hstack",
    "split_vstack",
    "split_dstack",
    "split_column_stack",
    "split_append",
    "linspace_vjp",
    "transpose_by",
]


def split_concatenate(g, arrays, axis=0):
    """Adjoints of each input of ``np.concatenate(arrays, axis)``."""
    g = _operand(g)
    if axis is None:
        sizes = [int(np.prod(np.shape(a), dtype=int)) for a in arrays]
        g = np.reshape(g, (-1,))
        return Parts(p.reshape(np.shape(a)) for p, a in zip(_split(g, sizes, 0), arrays))
    return Parts(_split(g, [np.shape(a)[axis] for a in arrays], axis))


def _split(g, sizes, axis):
    """``g`` cut along ``axis`` into pieces of ``sizes``: slices, so that another library's array
    (dask's has no ``np.split``) is cut by its own indexing, not converted."""
    axis = axis % np.ndim(g)
    head = (slice(None),) * axis
    pieces, start = [], 0
    for size in sizes:
        end = start + int(size)
        pieces.append(g[head + (slice(start, end),)])
        start = end
    return pieces


def split_stack(g, arrays, axis=0):
    """Adjoints of each input of ``np.stack(arrays, axis)``: each its slice of ``g``, an array
    nothing else holds (for a numpy ``g``: the slices of one copy of it, made at once, disjoint;
    another library's: ``np.take``'s copies)."""
    g = _operand(g)
    if type(g) is np.ndarray:
        whole = np.moveaxis(np.array(g), axis, 0)
        if len(whole) == len(arrays):
            return Parts(whole)
    return Parts(np.take(g, i, axis=axis) for i in range(len(arrays)))


def transpose_vjp(g, axes=None):
    """Adjoint of a transpose by ``axes`` (``None`` or ``()`` reverse all axes)."""
    if axes is not None and len(axes) == 1 and np.ndim(axes[0]) == 1:
        axes = tuple(axes[0])  # x.transpose((1, 0)) passes one tuple
    if axes is None or len(axes) == 0 or (len(axes) == 1 and axes[0] is None):
        return np.transpose(g)
    return np.transpose(g, np.argsort(axes))


def transpose_by(value, axes=None):
    """``value`` transposed by ``axes`` as ``transpose_vjp`` reads them (transpose_vjp's transpose)."""
    if axes is not None and len(axes) == 1 and np.ndim(axes[0]) == 1:
        axes = tuple(axes[0])
    if axes is None or len(axes) == 0 or (len(axes) == 1 and axes[0] is None):
        return np.transpose(value)
    return np.transpose(value, axes)


def tile_vjp(g, a, reps):
    """Adjoint of ``np.tile(a, reps)``: the tiles summed."""
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    shape = np.shape(a)
    ndim = max(len(shape), len(reps))
    full = (1,) * (ndim - len(shape)) + tuple(shape)
    reps = (1,) * (ndim - len(reps)) + reps
    split = []
    for r, n in zip(reps, full):
        split.extend((r, n))
    summed = np.reshape(g, split).sum(axis=tuple(range(0, 2 * ndim, 2)))
    return summed.reshape(shape)


def repeat_vjp(g, a, repeats, axis=None):
    """Adjoint of ``np.repeat(a, repeats, axis)``: the copies of each element summed."""
    shape = np.shape(a)
    g = np.asarray(g)
    if axis is None:
        return repeat_vjp(g, np.ravel(a), repeats, 0).reshape(shape)
    axis = axis % len(shape)
    owner = np.repeat(np.arange(shape[axis]), repeats)
    moved = np.moveaxis(g, axis, 0)
    out = np.zeros((shape[axis],) + moved.shape[1:], dtype=np.result_type(g, np.float64))
    np.add.at(out, owner, moved)
    return np.moveaxis(out, 0, axis)


def rollaxis_vjp(g, a, axis, start=0):
    """Adjoint of ``np.rollaxis(a, axis, start)``."""
    ndim = np.ndim(a)
    axis = axis % ndim
    start = start + ndim if start < 0 else start
    if axis < start:
        start -= 1
    order = [i for i in range(ndim) if i != axis]
    order.insert(start, axis)
    return np.transpose(g, np.argsort(order))


def _split_along(g, arrays, axis, shapes):
    sizes = [s[axis] for s in shapes]
    pieces = np.split(np.asarray(g), np.cumsum(sizes)[:-1], axis=axis)
    return Parts(np.reshape(p, np.shape(a)) for p, a in zip(pieces, arrays))


def split_hstack(g, arrays):
    shapes = [np.shape(np.atleast_1d(a)) for a in arrays]
    return _split_along(g, arrays, 0 if len(shapes[0]) == 1 else 1, shapes)


def split_vstack(g, arrays):
    return _split_along(g, arrays, 0, [np.shape(np.atleast_2d(a)) for a in arrays])


def split_dstack(g, arrays):
    return _split_along(g, arrays, 2, [np.shape(np.atleast_3d(a)) for a in arrays])


def split_column_stack(g, arrays):
    shapes = [(np.size(a), 1) if np.ndim(a) < 2 else np.shape(a) for a in arrays]
    return _split_along(g, arrays, 1, shapes)


def join_r(arrays):
    """``np.r_[a, b, ...]`` of arrays and numbers (no directive strings; the lowering writes a
    slice item as ``np.r_[1:10]``): each item at least 1-D, joined on the first axis."""
    return np.r_[tuple(arrays)]


def join_c(arrays):
    """``np.c_[a, b, ...]`` of arrays and numbers: each item at least 2-D, a 1-D one (a number) a
    column, joined on the last axis."""
    return np.c_[tuple(arrays)]


def split_join_r(g, arrays):
    """The adjoints of the items of ``join_r(arrays)``, ``g`` its result's."""
    return _split_along(g, arrays, 0, [np.shape(np.atleast_1d(a)) for a in arrays])


def split_join_c(g, arrays):
    """The adjoints of the items of ``join_c(arrays)``, ``g`` its result's."""
    shapes = [(np.size(a), 1) if np.ndim(a) < 2 else np.shape(a) for a in arrays]
    return _split_along(g, arrays, -1, shapes)


def split_append(g, arr, values, axis=None):
    """Adjoints of ``arr`` and ``values`` in ``np.append(arr, values, axis)``."""
    if axis is None:
        g = np.ravel(g)
        return [g[:np.size(arr)].reshape(np.shape(arr)), g[np.size(arr):].reshape(np.shape(values))]
    return _split_along(g, [arr, values], axis, [np.shape(arr), np.shape(values)])


def linspace_vjp(g, start, stop, num=50, endpoint=True, axis=0):
    """Adjoints of ``start`` and ``stop`` in ``np.linspace(start, stop, num, endpoint, axis=axis)``."""
    g = np.asarray(g)
    div = (num - 1) if endpoint else num
    t = np.arange(num) / div if div > 0 else np.zeros(num)
    if endpoint and num == 1:
        t = np.zeros(1)
    axis = axis % g.ndim
    view = [1] * g.ndim
    view[axis] = num
    t = t.reshape(view)
    start_bar = np.sum(g * (1.0 - t), axis=axis)
    stop_bar = np.sum(g * t, axis=axis)
    return [unbroadcast(start_bar, start), unbroadcast(stop_bar, stop)]

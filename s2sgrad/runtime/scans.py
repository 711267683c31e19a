"""Adjoints of running sums and products and of differences along an axis (numpy only):
``np.cumsum``, ``np.cumprod``, ``np.nancumsum``, ``np.diff`` (``s2s.cumsum_vjp``, ...) and
``np.gradient`` (``s2s.gradient_vjp``)."""

from __future__ import annotations

import numpy as np

from .broadcasting import _ndarray, _numpy_only, _operand
from .reductions import _finite_mask

__all__ = [
    "cumsum_vjp",
    "cumprod_vjp",
    "nancumsum_vjp",
    "split_diff",
    "join_diff",
    "diff_parts",
    "gradient_vjp",
]


def cumsum_vjp(g, x, axis=None):
    g = _operand(g)  # an array keeps its type (a subclass, CuPy's, dask's)
    if axis is None:
        return np.flip(np.cumsum(np.flip(g))).reshape(np.shape(x))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def cumprod_vjp(g, ans, x, axis=None):
    """Adjoint of ``np.cumprod(x, axis)``; exact also where ``x`` has zeros (numpy arrays only:
    it branches on the values and writes into a numpy array)."""
    if type(x) is _ndarray and type(g) is _ndarray and type(axis) is int and x.ndim and x.all():
        # the common call: no zero in x; the running sums backwards along the axis, as slices
        backwards = (slice(None),) * (axis % x.ndim) + (slice(None, None, -1),)
        return np.cumsum((g * ans)[backwards], axis)[backwards] / x
    x = np.asarray(_numpy_only(x, "adjoint of np.cumprod"))
    g = np.asarray(g)
    if axis is None:
        return cumprod_vjp(g, ans, x.ravel(), 0).reshape(x.shape)
    axis = axis % x.ndim
    if np.all(x != 0):
        return np.flip(np.cumsum(np.flip(g * ans, axis), axis), axis) / x
    # d ans[j] / d x[i] = prod(x[k] for k <= j, k != i) for j >= i: one cumprod per position.
    moved_x = np.moveaxis(x, axis, -1)
    moved_g = np.moveaxis(g, axis, -1)
    out = np.empty(moved_x.shape, dtype=np.result_type(moved_x, moved_g, np.float64))
    for i in range(moved_x.shape[-1]):
        others = moved_x[..., i:].copy()
        others[..., 0] = 1.0
        prods = np.cumprod(others, axis=-1) * (np.prod(moved_x[..., :i], axis=-1)[..., None])
        out[..., i] = np.sum(moved_g[..., i:] * prods, axis=-1)
    return np.moveaxis(out, -1, axis)


def nancumsum_vjp(g, x, axis=None):
    return cumsum_vjp(g, x, axis) * _finite_mask(x)


def split_diff(g, x, n=1, axis=-1, prepend=None, append=None):
    """Adjoints of ``prepend``, ``x`` and ``append`` in ``np.diff(x, n, axis, prepend, append)``."""
    x = np.asarray(x)
    axis = axis % x.ndim
    g = np.asarray(g)
    before = 0 if prepend is None else (1 if np.ndim(prepend) == 0 else np.shape(prepend)[axis])
    after = before + x.shape[axis]
    total = after + (0 if append is None else (1 if np.ndim(append) == 0 else np.shape(append)[axis]))
    if g.shape[axis] == 0:  # n at least the joined length: an empty output, a zero gradient
        g = np.zeros(g.shape[:axis] + (total,) + g.shape[axis + 1:], np.result_type(g, 1.0))
        n = 0
    zero_shape = g.shape[:axis] + (1,) + g.shape[axis + 1:]
    for _ in range(n):
        zero = np.zeros(zero_shape, g.dtype)
        g = np.concatenate([zero, g], axis=axis) - np.concatenate([g, zero], axis=axis)
    parts = [None, np.take(g, range(before, after), axis=axis), None]
    for k, (extra, piece) in enumerate(((prepend, range(0, before)), (append, range(after, g.shape[axis])))):
        if extra is not None:
            part = np.take(g, piece, axis=axis)
            parts[2 * k] = np.sum(part) if np.ndim(extra) == 0 else part
    return parts


def join_diff(parts, n=1, axis=-1, prepend=None, append=None):
    """``np.diff`` of ``parts`` (split_diff's adjoints of prepend, x, append) joined along
    ``axis``, leaving out a part whose ``prepend`` or ``append`` is None: split_diff's transpose."""
    before = None if prepend is None else parts[0]
    after = None if append is None else parts[2]
    return np.diff(parts[1], n, axis, **_extras(before, after))


def _extras(prepend, append):
    """np.diff's prepend and append keywords, those that are given."""
    out = {}
    if prepend is not None:
        out["prepend"] = prepend
    if append is not None:
        out["append"] = append
    return out


def diff_parts(g, parts, n=1, axis=-1, prepend=None, append=None):
    """join_diff's transpose: split_diff's adjoints of ``parts``, zeros (shaped like the part)
    for a part left out (its ``prepend`` or ``append`` is None)."""
    out = split_diff(g, parts[1], n, axis, prepend, append)
    return [np.zeros_like(part, dtype=np.result_type(part, 1.0)) if piece is None else piece
            for part, piece in zip(parts, out)]


def gradient_vjp(value, f, varargs=(), axis=None, edge_order=1):
    """Adjoint of ``f`` in ``np.gradient(f, *varargs, axis=axis, edge_order=edge_order)``:
    ``value`` is the adjoint of its one array, or the sequence of adjoints of its arrays (one
    per axis). Each axis's stencil reaches at most two points away, so numpy's own gradient of
    five combs (ones at every fifth point) gives each coefficient, at any spacing; the adjoint
    is that band transposed, summed over the axes."""
    f = np.asarray(f)
    axes = _axes(axis, f.ndim)
    spacings = _spacings(varargs, len(axes))
    parts = [value] if len(axes) == 1 else list(value)
    if len(parts) != len(axes):
        raise ValueError(f"np.gradient's adjoint: {len(parts)} adjoints for {len(axes)} axes")
    out = np.zeros(f.shape, dtype=np.result_type(f, *parts, float))
    for ax, spacing, g in zip(axes, spacings, parts):
        out += np.moveaxis(_band_transpose(np.moveaxis(np.asarray(g), ax, -1), f.shape[ax], spacing,
                                           edge_order), -1, ax)
    return out


def _axes(axis, ndim):
    """The axes ``np.gradient`` differentiates along, in order, as non-negative numbers."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis))


def _spacings(varargs, count):
    """One spacing per axis (a number or coordinates), as numpy reads ``*varargs``."""
    if len(varargs) == 0:
        return [1.0] * count
    if len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        return [varargs[0]] * count
    return list(varargs)


def _band_transpose(g, n, spacing, edge_order):
    """``D.T`` applied along the last axis of ``g``, where ``D`` is np.gradient's ``n``-point
    stencil (``D[i, k]`` is 0 unless ``|i - k| <= 2``)."""
    combs = [np.gradient((np.arange(n) % 5 == r).astype(float), spacing, edge_order=edge_order)
             for r in range(5)]
    out = np.zeros_like(g, dtype=np.result_type(g, float))
    for k_res in range(5):  # D[i, k] = combs[k % 5][i]
        coef = combs[k_res]
        for d in range(-2, 3):  # i = k + d
            k = np.arange(n)
            mine = (k % 5 == k_res) & (k + d >= 0) & (k + d < n)
            ks = k[mine]
            out[..., ks] += coef[ks + d] * g[..., ks + d]
    return out

"""Adjoints of reductions (numpy only): sums, means, variances, extrema, products, weighted
averages, their NaN-ignoring forms and logsumexp (``s2s.sum_vjp``, ``s2s.extremum_vjp``, ...),
each the reduced adjoint broadcast back over the input (``_expand``, shared with linalg's norms)."""

from __future__ import annotations

import functools
import math

import numpy as np

from .broadcasting import _F64, _float64, _foreign, _ndarray, _operand, _scalar_view, unbroadcast
from .complex import _conj

_TWO = np.float64(2.0)

__all__ = [
    "sum_vjp",
    "mean_vjp",
    "var_vjp",
    "std_vjp",
    "extremum_vjp",
    "extremum_jvp",
    "prod_vjp",
    "average_vjp_a",
    "average_vjp_weights",
    "spread_weights",
    "gather_weights",
    "weight_sum",
    "nansum_vjp",
    "nanmean_vjp",
    "nanvar_vjp",
    "nanstd_vjp",
    "nanprod_vjp",
    "ptp_vjp",
    "logsumexp_vjp",
    "logsumexp_vjp_b",
    "nonzero_factor",
]


_INF = float("inf")


@functools.lru_cache(maxsize=1024)
def _reduced_shapes(shape, axis):
    """(keepdims shape, reduced shape) of reducing ``shape`` over ``axis`` (an int or a tuple)."""
    ndim = len(shape)
    axes = {a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis)}
    kshape = tuple(1 if i in axes else n for i, n in enumerate(shape))
    rshape = tuple(n for i, n in enumerate(shape) if i not in axes)
    return kshape, rshape


def _kept(a, shape, axis, keepdims):
    """A reduction's result or adjoint ``a`` as an array of the keepdims shape, or ``None`` when
    it is not exactly of the reduced (or keepdims) shape."""
    try:
        kshape, rshape = _reduced_shapes(shape, axis)
    except (TypeError, ZeroDivisionError):  # unhashable axis (a list), 0-d x: the general path
        return None
    if type(a) is not _ndarray:
        a = _operand(a)  # an array keeps its type (a subclass, CuPy's, dask's)
    a_shape = np.shape(a)
    if keepdims:
        return a if a_shape == kshape else None
    return a.reshape(kshape) if a_shape == rshape else None


def _expand(g, x, axis, keepdims):
    """Broadcast a reduction's adjoint ``g`` back over ``x``'s shape."""
    shape = x.shape if type(x) is _ndarray else np.shape(x)
    if axis is None:
        view = _scalar_view(g, shape)
        if view is not None:
            return view
    else:
        g_k = _kept(g, shape, axis, keepdims)
        if g_k is not None and type(g_k) is _ndarray and g_k.flags.c_contiguous and \
                g_k.dtype.kind in "biufc":
            strides = tuple(0 if k == 1 else s for k, s in zip(g_k.shape, g_k.strides))
            view = _ndarray(shape, g_k.dtype, g_k, 0, strides)
            view.flags.writeable = False
            return view
    g = _operand(g)
    if axis is None:
        return np.broadcast_to(g.reshape((1,) * len(shape)) if np.ndim(g) else g, shape)
    if not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        axes = tuple(a % len(shape) for a in axes)
        g = np.expand_dims(g, tuple(sorted(axes)))
    return np.broadcast_to(g, shape)


def _count(x, axis):
    shape = np.shape(x)
    if axis is None:
        return int(np.prod(shape))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return int(np.prod([shape[a] for a in axes]))


def sum_vjp(g, x, axis=None, keepdims=False):
    if axis is None and type(x) is _ndarray:
        view = _scalar_view(g, x.shape)
        if view is not None:
            return view
    return _expand(g, x, axis, keepdims)


def mean_vjp(g, x, axis=None, keepdims=False):
    if axis is None and type(x) is _ndarray and x.size and x.ndim:
        tg = type(g)
        if tg is float or tg is _float64 or (tg is _ndarray and g.ndim == 0):
            # The same value everywhere: divide once, then fill (a fresh writable array, as before).
            q = g / x.size
            out = np.empty(x.shape, _F64 if type(q) is float else q.dtype)
            out.fill(q)
            return out
    return _expand(g / _count(x, axis), x, axis, keepdims)  # divided before it is broadcast


def var_vjp(g, x, axis=None, ddof=0, keepdims=False):
    x = _operand(x)
    n = _count(x, axis)
    centered = _conj(x - np.mean(x, axis=axis, keepdims=True))
    # the factor on g, before it is broadcast (np.float64: n == ddof divides as arrays do)
    return _expand(np.real(g) * (_TWO / (n - ddof)), x, axis, keepdims) * centered


def std_vjp(g, ans, x, axis=None, ddof=0, keepdims=False):
    """0 where one value is reduced (autograd's convention: its std is 0 whatever the value)."""
    x = _operand(x)
    n = _count(x, axis)
    if n <= 1:
        return np.zeros_like(x, dtype=np.result_type(x, np.real(g), 1.0))
    centered = _conj(x - np.mean(x, axis=axis, keepdims=True))
    return _expand(np.real(g) / ans, x, axis, keepdims) * centered / (n - ddof)


def extremum_vjp(g, ans, x, axis=None, keepdims=False):
    """max/min: the adjoint is shared equally among the positions that attain the extremum."""
    if type(x) is not _ndarray:
        x = _operand(x)
    if x.ndim and not _foreign(x):  # (its fast path reads values: a dask array would compute)
        out = _extremum_fast(g, ans, x, axis, keepdims)
        if out is not None:
            return out
    ans_full = _expand(ans, x, axis, keepdims)
    hits = x == ans_full
    counts = np.sum(hits, axis=axis, keepdims=True)
    return _expand(g, x, axis, keepdims) * hits / counts


def extremum_jvp(t, ans, x, axis=None, keepdims=False):
    """max/min in forward mode: the mean of the tangents at the positions that attain the
    extremum (the reverse rule shares an adjoint among them equally: the same derivative)."""
    if type(x) is not _ndarray:
        x = _operand(x)
    hits = x == _expand(ans, x, axis, keepdims)
    total = np.sum(np.where(hits, t, 0.0), axis=axis, keepdims=keepdims)
    return total / np.sum(hits, axis=axis, keepdims=keepdims)


def _extremum_fast(g, ans, x, axis, keepdims):
    """extremum_vjp for a float64 adjoint, value for value what the general formula
    ``g * hits / counts`` gives; ``None`` when a case is left to it."""
    if axis is None:
        tg = type(g)
        if tg is _ndarray and g.size == 1 and g.dtype is _F64:
            g = g.item()
        elif tg is not float and tg is not _float64:
            return None
        hits = x == ans
        if hits.shape != x.shape:
            return None
        n = np.count_nonzero(hits)
        if n == 1 and -_INF < g < _INF:
            # One position attains it: zeros (of the sign ``g * 0`` has) and ``g`` there.
            if math.copysign(1.0, g) > 0:
                out = np.zeros(x.shape)
            else:
                out = np.empty(x.shape)
                out.fill(-0.0)
            (out if out.ndim == 1 else out.reshape(-1))[hits.argmax()] = g
            return out
        if n == 0:
            return None  # NaN extremum: the general formula's 0 / 0
        # Ties share ``g``: ``hits * (g / n)`` is ``g * hits / n`` value for value (and sign).
        return hits * (g / n)
    g_k = _kept(g, x.shape, axis, keepdims)
    ans_k = _kept(ans, x.shape, axis, keepdims)
    if g_k is None or ans_k is None:
        return None
    hits = x == ans_k
    if g_k.dtype is _F64 and np.count_nonzero(hits) == ans_k.size and (
            ans_k.dtype.kind not in "fc" or not np.count_nonzero(np.isnan(ans_k))):
        # No NaN extremum, so every slice has a hit; as many hits as slices: no ties, counts of 1.
        return hits * g_k
    return hits * (g_k / np.sum(hits, axis=axis, keepdims=True))


def prod_vjp(g, ans, x, axis=None, keepdims=False):
    x = _operand(x)
    if not _foreign(x) and np.all(x != 0):  # a branch on values: not for a lazy (dask) array
        return _expand(g, x, axis, keepdims) * _expand(ans, x, axis, keepdims) / x
    # With zeros (or another library's array): product of the others, computed by moving the
    # axis and using cumprods.
    if axis is None:
        flat = np.ravel(x)
        out = _others_product(flat[None, :], 1)[0].reshape(x.shape)
        return _operand(g) * out
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    if len(axes) != 1:
        moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0)))
        merged = moved.reshape(moved.shape[: -len(axes)] + (-1,))
        others = _others_product(merged, merged.ndim - 1).reshape(moved.shape)
        others = np.moveaxis(others, tuple(range(-len(axes), 0)), axes)
    else:
        others = _others_product(x, axes[0] % x.ndim)
    return _expand(g, x, axis, keepdims) * others


def nonzero_factor(x):
    """``x``, checked to hold no zero: the second derivatives of products divide by it (they are
    not written where a factor is 0, so this raises there rather than give wrong values)."""
    if np.any(_operand(x) == 0):
        raise ValueError("second derivatives of a product with a zero factor are not supported")
    return x


def _others_product(x, axis):
    first_n = (slice(None),) * axis + (slice(0, x.shape[axis]),)  # slices: any array library's
    before = np.cumprod(np.concatenate([np.ones_like(np.take(x, [0], axis=axis)), x], axis=axis),
                        axis=axis)
    before = before[first_n]
    flipped = np.flip(x, axis=axis)
    after = np.cumprod(np.concatenate([np.ones_like(np.take(flipped, [0], axis=axis)), flipped],
                                      axis=axis), axis=axis)
    after = np.flip(after[first_n], axis=axis)
    return before * after


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis))


def average_vjp_a(g, a, axis=None, weights=None, keepdims=False):
    """Adjoint of ``a`` in ``np.average(a, axis, weights)``."""
    a = _operand(a)
    if weights is None:
        return mean_vjp(g, a, axis, keepdims)
    w = _average_weights(a, axis, weights)
    return _expand(g, a, axis, keepdims) * w / np.sum(w, axis=axis, keepdims=True)


def average_vjp_weights(g, ans, a, axis=None, weights=None, keepdims=False):
    """Adjoint of ``weights`` in ``np.average(a, axis, weights)``."""
    a = _operand(a)
    w = _average_weights(a, axis, weights)
    ans_full = _expand(ans, a, axis, keepdims)
    total = np.sum(w, axis=axis, keepdims=True)
    full = _expand(g, a, axis, keepdims) * (a - ans_full) / total
    if np.ndim(weights) == a.ndim:
        return full
    # 1-D weights along one axis: sum over the other axes.
    ax = _axes(axis, a.ndim)[0]
    return np.sum(np.moveaxis(full, ax, -1).reshape(-1, a.shape[ax]), axis=0)


def _average_weights(a, axis, weights):
    w = _operand(weights)
    if w.ndim == a.ndim:
        return w
    ax = _axes(axis, a.ndim)[0]
    shape = [1] * a.ndim
    shape[ax] = a.shape[ax]
    return w.reshape(shape)


def spread_weights(a, axis=None, weights=None):
    """``np.average``'s weights as an array of ``a``'s shape (1-D weights along ``axis``)."""
    a = _operand(a)
    return np.broadcast_to(_average_weights(a, axis, weights), a.shape)


def gather_weights(g, a, axis=None, weights=None):
    """spread_weights' transpose: ``g`` (``a``'s shape) summed to the shape of ``weights``."""
    a = _operand(a)
    g = _operand(g)
    if np.ndim(weights) == a.ndim:
        return unbroadcast(g, weights)
    ax = _axes(axis, a.ndim)[0]
    return np.sum(np.moveaxis(g, ax, -1).reshape(-1, a.shape[ax]), axis=0)


def weight_sum(a, axis=None, weights=None):
    """The total of ``np.average``'s weights over the axes, of ``a``'s shape with 1 there."""
    return np.sum(spread_weights(a, axis, weights), axis=axis, keepdims=True)


def _finite_mask(x):
    return ~np.isnan(x)


def nansum_vjp(g, x, axis=None, keepdims=False):
    return _expand(g, x, axis, keepdims) * _finite_mask(x)


def nanmean_vjp(g, x, axis=None, keepdims=False):
    kept = _finite_mask(x)
    return _expand(g, x, axis, keepdims) * kept / np.sum(kept, axis=axis, keepdims=True)


def nanvar_vjp(g, x, axis=None, ddof=0, keepdims=False):
    x = _operand(x)
    kept = _finite_mask(x)
    count = np.sum(kept, axis=axis, keepdims=True)
    centered = _conj(np.where(kept, x - np.nanmean(x, axis=axis, keepdims=True), 0.0))
    return 2.0 * _expand(np.real(g), x, axis, keepdims) * centered / (count - ddof)


def nanstd_vjp(g, ans, x, axis=None, ddof=0, keepdims=False):
    return nanvar_vjp(_operand(g) / (2.0 * _operand(ans)), x, axis, ddof, keepdims)


def nanprod_vjp(g, ans, x, axis=None, keepdims=False):
    x = _operand(x)
    kept = _finite_mask(x)
    return prod_vjp(g, ans, np.where(kept, x, 1.0), axis, keepdims) * kept


def ptp_vjp(g, x, axis=None, keepdims=False):
    """Adjoint of ``np.ptp`` (max minus min; ties share the adjoint)."""
    x = _operand(x)
    high = np.max(x, axis=axis, keepdims=keepdims)
    low = np.min(x, axis=axis, keepdims=keepdims)
    return extremum_vjp(g, high, x, axis, keepdims) - extremum_vjp(g, low, x, axis, keepdims)


def logsumexp_vjp(g, ans, a, axis=None, b=None, keepdims=False):
    """Adjoint of ``a`` in ``scipy.special.logsumexp(a, axis, b, keepdims)``."""
    a = _operand(a)
    weights = np.exp(a - _expand(ans, a, axis, keepdims))
    if b is not None:
        weights = weights * b
    return _expand(g, a, axis, keepdims) * weights


def logsumexp_vjp_b(g, ans, a, axis=None, b=None, keepdims=False):
    """Adjoint of ``b`` in ``scipy.special.logsumexp(a, axis, b, keepdims)``."""
    a = _operand(a)
    full = _expand(g, np.broadcast_to(a, np.broadcast_shapes(a.shape, np.shape(b))), axis, keepdims)
    return unbroadcast(full * np.exp(a - _expand(ans, full, axis, keepdims)), b)

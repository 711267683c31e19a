"""The few helpers generated gradients call. Numpy only: importing this never imports libcst or black.

Generated code reads ``s2s.<helper>``; each helper is a plain function of arrays.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .runtime_complex import (  # noqa: F401 (re-exported)
    abs_slope, abs_slope_vjp, angle_slope, angle_slope_vjp, match_complex,
)
from .runtime_contract import einsum_vjp, einsum_vjps  # noqa: F401 (re-exported)

_ndarray = np.ndarray
_float64 = np.float64
_F64 = np.dtype(np.float64)
_INF = float("inf")
_add_reduce = np.add.reduce
_BOOL = np.dtype(bool)


def _shape(v):
    """``np.shape(v)`` without its ``np.asarray`` for arrays, floats and ints (the common cases)."""
    tv = type(v)
    if tv is _ndarray:
        return v.shape
    if tv is float or tv is _float64 or tv is int:
        return ()
    return np.shape(v)


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x``, or to ``x`` itself when it is a shape (a tuple):
    this undoes numpy broadcasting."""
    shape = x if type(x) is tuple else _shape(x)
    if _shape(g) == shape:
        return g
    if type(g) is not _ndarray:
        g = np.asarray(g)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = _add_reduce(g, tuple(range(extra)))  # what g.sum(axis=...) calls
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = _add_reduce(g, axes, None, None, True)
    return g


def broadcast(g, shape):
    """One number ``g`` as a (read-only) array of ``shape``: the adjoint of a full sum's operand."""
    view = _scalar_view(g, shape)
    return view if view is not None else np.broadcast_to(g, shape)


def like(g, x):
    """``g`` as the gradient of ``x``: same shape, ``x``'s float dtype; a Python float for a float."""
    if type(g) is _ndarray and type(x) is _ndarray:
        x_dtype = x.dtype
        if g.dtype is x_dtype and g.shape == x.shape and x_dtype.kind in "fc" and g.flags.writeable:
            return g  # already the gradient of x: what the general path returns too
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        if isinstance(g, float):  # a Python float or a numpy float64 scalar
            return float(g)
        g = np.real(g)  # the gradient of a real number is real (runtime_complex)
        return float(np.sum(g)) if np.ndim(g) else float(g)
    x_dtype = np.result_type(x)
    if not np.issubdtype(x_dtype, np.inexact):
        x_dtype = np.dtype(np.float64)
    g = np.asarray(g)
    if g.dtype.kind == "c" and x_dtype.kind != "c":
        g = g.real
    if g.shape != np.shape(x) or not g.flags.writeable:
        out = np.empty(np.shape(x), x_dtype)  # a fresh array the caller may write to
        out[...] = unbroadcast(g, x)
        return out
    if g.dtype != x_dtype:
        g = g.astype(x_dtype)
    return g


def zeros_like(x):
    """The zero gradient of ``x`` (a float 0.0 for a Python number)."""
    if type(x) is _ndarray and x.dtype.kind in "fc":
        return np.zeros(x.shape, dtype=x.dtype)
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        return 0.0
    if isinstance(x, (tuple, list, dict)):  # a sequence passed where an array could be
        return list_zeros(x)
    dtype = np.result_type(x)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    return np.zeros(np.shape(x), dtype=dtype)


def check_scalar(value, name):
    """Raise when ``grad`` is asked for the gradient of a non-scalar output."""
    if isinstance(value, (float, np.floating)):  # Python float, numpy real scalars: fine
        return
    if type(value) is _ndarray and value.ndim == 0 and value.dtype.kind != "c":
        return
    if np.ndim(value) != 0 or np.iscomplexobj(value):
        from .errors import GradientError

        raise GradientError(
            f"grad requires {name} to return a real scalar, got shape {np.shape(value)}; "
            "use vjp for non-scalar outputs, or reduce the output (e.g. np.sum)"
        )


# ----- reductions ------------------------------------------------------------------------------


def _scalar_view(g, shape):
    """``np.broadcast_to(g, shape)`` for a ``g`` of one value, without its Python-level cost: a
    read-only view with every stride 0. ``None`` when ``g`` is not a float or a one-value array."""
    tg = type(g)
    if tg is _float64:  # a numpy scalar lends a read-only buffer: the view is read-only too
        return _ndarray(shape, _F64, g, 0, (0,) * len(shape))
    if tg is float:
        return _ndarray(shape, _F64, _float64(g), 0, (0,) * len(shape))
    if tg is _ndarray and g.size == 1 and g.ndim <= len(shape) and g.dtype.kind in "biufc":
        view = _ndarray(shape, g.dtype, g, 0, (0,) * len(shape))
        view.flags.writeable = False
        return view
    return None


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
        a = np.asarray(a)
    if keepdims:
        return a if a.shape == kshape else None
    return a.reshape(kshape) if a.shape == rshape else None


def _expand(g, x, axis, keepdims):
    """Broadcast a reduction's adjoint ``g`` back over ``x``'s shape."""
    shape = x.shape if type(x) is _ndarray else np.shape(x)
    if axis is None:
        view = _scalar_view(g, shape)
        if view is not None:
            return view
    else:
        g_k = _kept(g, shape, axis, keepdims)
        if g_k is not None and g_k.flags.c_contiguous and g_k.dtype.kind in "biufc":
            strides = tuple(0 if k == 1 else s for k, s in zip(g_k.shape, g_k.strides))
            view = _ndarray(shape, g_k.dtype, g_k, 0, strides)
            view.flags.writeable = False
            return view
    g = np.asarray(g)
    if axis is None:
        return np.broadcast_to(g.reshape((1,) * len(shape)) if g.ndim else g, shape)
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
    return _expand(g, x, axis, keepdims) / _count(x, axis)


def var_vjp(g, x, axis=None, ddof=0, keepdims=False):
    x = np.asarray(x)
    n = _count(x, axis)
    centered = _conj(x - np.mean(x, axis=axis, keepdims=True))
    return 2.0 * _expand(np.real(g), x, axis, keepdims) * centered / (n - ddof)


def std_vjp(g, ans, x, axis=None, ddof=0, keepdims=False):
    """0 where one value is reduced (autograd's convention: its std is 0 whatever the value)."""
    x = np.asarray(x)
    n = _count(x, axis)
    if n <= 1:
        return np.zeros(x.shape, np.result_type(x, np.real(g), 1.0))
    centered = _conj(x - np.mean(x, axis=axis, keepdims=True))
    return _expand(np.real(g) / ans, x, axis, keepdims) * centered / (n - ddof)


def _conj(x):
    """``np.conj(x)`` for a complex array (the adjoints of real functions of it), ``x`` else."""
    return np.conj(x) if x.dtype.kind == "c" else x


def extremum_vjp(g, ans, x, axis=None, keepdims=False):
    """max/min: the adjoint is shared equally among the positions that attain the extremum."""
    if type(x) is not _ndarray:
        x = np.asarray(x)
    if x.ndim:
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
        x = np.asarray(x)
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
    x = np.asarray(x)
    if np.all(x != 0):
        return _expand(g, x, axis, keepdims) * _expand(ans, x, axis, keepdims) / x
    # With zeros: product of the others, computed by moving the axis and using cumprods.
    if axis is None:
        flat = x.ravel()
        out = _others_product(flat[None, :], 1)[0].reshape(x.shape)
        return np.asarray(g) * out
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    if len(axes) != 1:
        moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0)))
        merged = moved.reshape(moved.shape[: -len(axes)] + (-1,))
        others = _others_product(merged, merged.ndim - 1).reshape(moved.shape)
        others = np.moveaxis(others, tuple(range(-len(axes), 0)), axes)
    else:
        others = _others_product(x, axes[0] % x.ndim)
    return _expand(g, x, axis, keepdims) * others


def _others_product(x, axis):
    before = np.cumprod(np.concatenate([np.ones_like(np.take(x, [0], axis=axis)), x], axis=axis),
                        axis=axis)
    before = np.take(before, range(x.shape[axis]), axis=axis)
    flipped = np.flip(x, axis=axis)
    after = np.cumprod(np.concatenate([np.ones_like(np.take(flipped, [0], axis=axis)), flipped],
                                      axis=axis), axis=axis)
    after = np.flip(np.take(after, range(x.shape[axis]), axis=axis), axis=axis)
    return before * after


def cumsum_vjp(g, x, axis=None):
    g = np.asarray(g)
    if axis is None:
        return np.flip(np.cumsum(np.flip(g))).reshape(np.shape(x))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


# ----- indexing and shapes ---------------------------------------------------------------------


def _is_basic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (slice, int, np.integer)) for p in parts)


def getitem_vjp(g, x, index):
    """Adjoint of ``x[index]``: ``g`` scattered into zeros shaped like ``x`` (repeats add up)."""
    if type(x) is _ndarray:
        dtype = x.dtype
        if type(g) is not _ndarray or g.dtype is not dtype:
            dtype = np.result_type(g, x)
        out = np.zeros(x.shape, dtype=dtype)
    elif isinstance(x, (tuple, list, dict)):
        return list_getitem_vjp(g, x, index)  # a sequence passed where an array could be
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
    else:
        np.add.at(out, index, g)
    return out


def split_concatenate(g, arrays, axis=0):
    """Adjoints of each input of ``np.concatenate(arrays, axis)``."""
    if axis is None:
        sizes = [np.size(a) for a in arrays]
        pieces = np.split(np.asarray(g), np.cumsum(sizes)[:-1])
        return [p.reshape(np.shape(a)) for p, a in zip(pieces, arrays)]
    sizes = [np.shape(a)[axis] for a in arrays]
    return np.split(np.asarray(g), np.cumsum(sizes)[:-1], axis=axis)


def split_stack(g, arrays, axis=0):
    """Adjoints of each input of ``np.stack(arrays, axis)``."""
    g = np.asarray(g)
    return [np.take(g, i, axis=axis) for i in range(len(arrays))]


def transpose_vjp(g, axes=None):
    """Adjoint of a transpose by ``axes`` (``None`` or ``()`` reverse all axes)."""
    if axes is not None and len(axes) == 1 and np.ndim(axes[0]) == 1:
        axes = tuple(axes[0])  # x.transpose((1, 0)) passes one tuple
    if axes is None or len(axes) == 0 or (len(axes) == 1 and axes[0] is None):
        return np.transpose(g)
    return np.transpose(g, np.argsort(axes))


# ----- products --------------------------------------------------------------------------------


def matmul_vjp_a(g, a, b):
    """Adjoint of ``a`` in ``a @ b`` (1-D and batched operands included)."""
    if type(g) is _ndarray and type(a) is _ndarray and type(b) is _ndarray:
        # Plain matrix/vector operands: the general path's products, without its overhead.
        a_nd, b_nd, g_nd = a.ndim, b.ndim, g.ndim
        if b_nd == 2:
            if a_nd == 2 and g_nd == 2 and g.shape[0] == a.shape[0]:
                return g @ b.T
            if a_nd == 1 and g_nd == 1:
                return g @ b.T
        elif b_nd == 1 and a_nd == 2 and g_nd == 1:
            return g[:, None] * b
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    g = np.asarray(g)
    if b_nd == 1:
        if a_nd == 1:
            return g * np.asarray(b)
        return unbroadcast(g[..., None] * b, a)
    if a_nd == 1:
        return unbroadcast(np.matmul(g[..., None, :], np.swapaxes(b, -1, -2))[..., 0, :], a)
    return unbroadcast(np.matmul(g, np.swapaxes(b, -1, -2)), a)


def _one_product(a, b) -> bool:
    """Whether ``a[:n] @ b`` gives the rows ``a[t] @ b`` (a stack of vectors or matrices times
    one vector or matrix)."""
    return type(a) is _ndarray and type(b) is _ndarray and a.ndim >= 2 and 1 <= b.ndim <= 2


def rows_matmul(a, n, b):
    """``a[t] @ b`` for every ``t < n``, stacked: ``a[:n] @ b`` in one product where that gives
    the same rows, else the products one by one (a loop's per-step products, hoisted)."""
    if _one_product(a, b):
        return a[:n] @ b
    rows = [a[t] @ b for t in range(min(n, len(a)))]
    return np.array(rows) if rows else np.empty((0,))


def rows_matmul_vjp_a(g, a, n, b):
    out = zeros_like(a)
    if _one_product(a, b):
        out[:n] = matmul_vjp_a(g, a[:n], b)
        return out
    for t in range(len(g)):
        out[t] += matmul_vjp_a(g[t], a[t], b)
    return out


def rows_matmul_vjp_b(g, a, n, b):
    if _one_product(a, b):
        return matmul_vjp_b(g, a[:n], b)
    total = zeros_like(b)
    for t in range(len(g)):
        total = total + matmul_vjp_b(g[t], a[t], b)
    return total


def stack_rows(rows, shape):
    """The adjoint of an array whose rows ``0, 1, ...`` a backward loop visited last to first:
    ``rows`` (in that visiting order) stacked, zeros for rows never read."""
    if rows and len(rows) == shape[0]:
        return np.array(rows[::-1])
    first = np.asarray(rows[0]) if rows else None
    out = np.zeros(shape, dtype=first.dtype if first is not None and first.dtype.kind in "fc"
                   else np.float64)
    if rows:
        out[:len(rows)] = rows[::-1]
    return out


def matmul_vjp_b_sum(gs, lefts, b):
    """The sum of ``matmul_vjp_b(g, a, b)`` over the pairs of ``gs`` and ``lefts`` (a loop's
    contributions, collected per iteration): one matrix product when every ``a`` and ``g`` is a
    vector (or every one a matrix) of one shape, the sum of the products otherwise.

    Consumes the two lists (the backward sweep collected them for this call alone): each is
    emptied once stacked, so its arrays are freed before the next stack is built."""
    if not gs:
        return zeros_like(b)
    a0, g0 = lefts[0], gs[0]
    if type(b) is _ndarray and b.ndim == 2 and type(a0) is _ndarray and type(g0) is _ndarray and \
            a0.ndim == g0.ndim and a0.ndim in (1, 2):
        A = _stacked(lefts, a0.ndim)
        if A is not None and A.ndim == 2 and A.dtype.kind in "fc" and A.shape[1] == b.shape[0]:
            blocks = [len(a) for a in lefts] if a0.ndim == 2 else None
            lefts.clear()
            G = _stacked(gs, g0.ndim)
            if G is not None and G.ndim == 2 and G.dtype.kind in "fc" and \
                    G.shape == (A.shape[0], b.shape[1]):
                gs.clear()
                return A.T @ G
            # shapes differ between iterations: the left operands back from their stack
            lefts[:] = list(A) if blocks is None else np.split(A, np.cumsum(blocks)[:-1])
    total = matmul_vjp_b(gs[0], lefts[0], b)
    for g, a in zip(gs[1:], lefts[1:]):
        total = total + matmul_vjp_b(g, a, b)
    return total


def _stacked(arrays, ndim):
    """Vectors as the rows of a matrix, matrices one above the other; None when shapes differ."""
    try:
        return np.array(arrays) if ndim == 1 else np.concatenate(arrays)
    except ValueError:
        return None


def matmul_vjp_b(g, a, b):
    """Adjoint of ``b`` in ``a @ b``."""
    if type(g) is _ndarray and type(a) is _ndarray and type(b) is _ndarray:
        a_nd, b_nd, g_nd = a.ndim, b.ndim, g.ndim
        if a_nd == 2:
            if b_nd == 2 and g_nd == 2 and g.shape[1] == b.shape[1]:
                return a.T @ g
            if b_nd == 1 and g_nd == 1:
                return np.matmul(a.T, g[:, None])[:, 0]
        elif a_nd == 1 and b_nd == 2 and g_nd == 1:
            return a[:, None] * g[None, :]
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    g = np.asarray(g)
    if a_nd == 1:
        if b_nd == 1:
            return g * np.asarray(a)
        return unbroadcast(np.asarray(a)[:, None] * g[..., None, :], b)
    if b_nd == 1:
        return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), g[..., None])[..., 0], b)
    return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), g), b)


def dot_vjp_a(g, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a) if np.ndim(a) == 0 else g * b
    if np.ndim(b) <= 2 and np.ndim(a) <= 2:
        return matmul_vjp_a(g, a, b)
    return tensordot_vjp_a(g, a, b, ([np.ndim(a) - 1], [max(np.ndim(b) - 2, 0)]))


def dot_vjp_b(g, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b) if np.ndim(b) == 0 else g * a
    if np.ndim(b) <= 2 and np.ndim(a) <= 2:
        return matmul_vjp_b(g, a, b)
    return tensordot_vjp_b(g, a, b, ([np.ndim(a) - 1], [max(np.ndim(b) - 2, 0)]))


def inner_vjp_a(g, a, b):
    """Adjoint of ``a`` in ``np.inner(a, b)``: over the last axes, or a product with a number."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return dot_vjp_a(g, a, b)
    return tensordot_vjp_a(g, a, b, ([-1], [-1]))


def inner_vjp_b(g, a, b):
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return dot_vjp_b(g, a, b)
    return tensordot_vjp_b(g, a, b, ([-1], [-1]))


def _tensordot_axes(a_nd, b_nd, axes):
    if np.ndim(axes) == 0:
        axes = int(axes)
        return list(range(a_nd - axes, a_nd)), list(range(axes))
    a_ax, b_ax = axes
    a_ax = [a_ax] if np.ndim(a_ax) == 0 else list(a_ax)
    b_ax = [b_ax] if np.ndim(b_ax) == 0 else list(b_ax)
    return [x % a_nd for x in a_ax], [x % b_nd for x in b_ax]


def tensordot_vjp_a(g, a, b, axes=2):
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    a_ax, b_ax = _tensordot_axes(a_nd, b_nd, axes)
    a_free = [i for i in range(a_nd) if i not in a_ax]
    b_free = [i for i in range(b_nd) if i not in b_ax]
    g = np.asarray(g)
    n_free_a = len(a_free)
    # g has axes a_free + b_free; contract g's b_free axes with b's free axes.
    out = np.tensordot(g, b, (list(range(n_free_a, g.ndim)), b_free))
    # out axes: a_free, then b_ax (in b order) which map to a_ax.
    order = a_free + [a_ax[b_ax.index(j)] for j in sorted(b_ax)]
    return np.transpose(out, np.argsort(order))


def tensordot_vjp_b(g, a, b, axes=2):
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    a_ax, b_ax = _tensordot_axes(a_nd, b_nd, axes)
    a_free = [i for i in range(a_nd) if i not in a_ax]
    b_free = [i for i in range(b_nd) if i not in b_ax]
    g = np.asarray(g)
    n_free_a = len(a_free)
    out = np.tensordot(a, g, (a_free, list(range(n_free_a))))
    # out axes: a's contracted axes (in a order) mapping to b_ax, then b_free.
    order = [b_ax[a_ax.index(i)] for i in sorted(a_ax)] + b_free
    return np.transpose(out, np.argsort(order))


def norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):
    """Adjoint of ``np.linalg.norm``: vector norms, and matrix norms over two axes."""
    x = np.asarray(x)
    if axis is None and x.ndim == 2 and ord is not None:
        return matrix_norm_vjp(g, ans, x, ord, (0, 1), keepdims)
    if axis is not None and np.ndim(axis) == 1 and len(axis) == 2:
        return matrix_norm_vjp(g, ans, x, ord, tuple(a % x.ndim for a in axis), keepdims)
    return vector_norm_vjp(g, ans, x, ord, axis, keepdims)


# ----- elementwise helpers ---------------------------------------------------------------------


def balanced_eq(x, z, y):
    """1 where x wins a max/min, 0.5 on ties (autograd's convention)."""
    return (x == z) / (1.0 + (x == y))


def safe_power_base(x2):
    """The exponent in d/dx x**y = y * x**(y-1), safe where y == 0."""
    return np.where(x2, x2 - 1, 1.0) if np.ndim(x2) else (x2 - 1 if x2 != 0 else 1.0)


def safe_log_base(x1):
    """log(x) with x == 0 replaced by 1, so that d/dy x**y at x == 0 is 0, not NaN."""
    return np.log(np.where(x1 == 0, 1.0, x1)) if np.ndim(x1) else np.log(x1 if x1 != 0 else 1.0)


def inside(a, a_min=None, a_max=None):
    """1.0 where ``a`` lies inside the clip interval (its gradient passes), 0.0 where clipped."""
    mask = np.ones(np.shape(a), dtype=bool)
    if a_min is not None:
        mask &= np.asarray(a) >= a_min
    if a_max is not None:
        mask &= np.asarray(a) <= a_max
    return mask


def trace_vjp(g, a, offset=0, axis1=0, axis2=1):
    a = np.asarray(a)
    eye = np.eye(a.shape[axis1], a.shape[axis2], k=offset)
    eye = np.moveaxis(eye.reshape(eye.shape + (1,) * (a.ndim - 2)), (0, 1), (axis1, axis2))
    g = np.asarray(g)
    g = np.expand_dims(g, (axis1, axis2)) if g.ndim else g
    return eye * g


# ----- more elementwise, reductions and scans --------------------------------------------------


def log_vjp(g, x, base=None):
    """Adjoint of ``math.log(x, base)``."""
    return g / x if base is None else g / (x * np.log(base))


def sinc_slope(x):
    """d/dx sinc(x) = (cos(pi x) - sinc(x)) / x, and 0 at x == 0."""
    x = np.asarray(x)
    safe = np.where(x == 0, 1.0, x)
    return np.where(x == 0, 0.0, (np.cos(np.pi * safe) - np.sinc(safe)) / safe)


def cumprod_vjp(g, ans, x, axis=None):
    """Adjoint of ``np.cumprod(x, axis)``; exact also where ``x`` has zeros."""
    x = np.asarray(x)
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


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    return tuple(a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis))


def average_vjp_a(g, a, axis=None, weights=None, keepdims=False):
    """Adjoint of ``a`` in ``np.average(a, axis, weights)``."""
    a = np.asarray(a)
    if weights is None:
        return mean_vjp(g, a, axis, keepdims)
    w = _average_weights(a, axis, weights)
    return _expand(g, a, axis, keepdims) * w / np.sum(w, axis=axis, keepdims=True)


def average_vjp_weights(g, ans, a, axis=None, weights=None, keepdims=False):
    """Adjoint of ``weights`` in ``np.average(a, axis, weights)``."""
    a = np.asarray(a)
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
    w = np.asarray(weights)
    if w.ndim == a.ndim:
        return w
    ax = _axes(axis, a.ndim)[0]
    shape = [1] * a.ndim
    shape[ax] = a.shape[ax]
    return w.reshape(shape)


def _finite_mask(x):
    return ~np.isnan(x)


def nansum_vjp(g, x, axis=None, keepdims=False):
    return _expand(g, x, axis, keepdims) * _finite_mask(x)


def nanmean_vjp(g, x, axis=None, keepdims=False):
    kept = _finite_mask(x)
    return _expand(g, x, axis, keepdims) * kept / np.sum(kept, axis=axis, keepdims=True)


def nanvar_vjp(g, x, axis=None, ddof=0, keepdims=False):
    x = np.asarray(x)
    kept = _finite_mask(x)
    count = np.sum(kept, axis=axis, keepdims=True)
    centered = _conj(np.where(kept, x - np.nanmean(x, axis=axis, keepdims=True), 0.0))
    return 2.0 * _expand(np.real(g), x, axis, keepdims) * centered / (count - ddof)


def nanstd_vjp(g, ans, x, axis=None, ddof=0, keepdims=False):
    return nanvar_vjp(np.asarray(g) / (2.0 * np.asarray(ans)), x, axis, ddof, keepdims)


def nanprod_vjp(g, ans, x, axis=None, keepdims=False):
    x = np.asarray(x)
    kept = _finite_mask(x)
    return prod_vjp(g, ans, np.where(kept, x, 1.0), axis, keepdims) * kept


def nancumsum_vjp(g, x, axis=None):
    return cumsum_vjp(g, x, axis) * _finite_mask(x)


def ptp_vjp(g, x, axis=None, keepdims=False):
    """Adjoint of ``np.ptp`` (max minus min; ties share the adjoint)."""
    x = np.asarray(x)
    high = np.max(x, axis=axis, keepdims=keepdims)
    low = np.min(x, axis=axis, keepdims=keepdims)
    return extremum_vjp(g, high, x, axis, keepdims) - extremum_vjp(g, low, x, axis, keepdims)


def logsumexp_vjp(g, ans, a, axis=None, b=None, keepdims=False):
    """Adjoint of ``a`` in ``scipy.special.logsumexp(a, axis, b, keepdims)``."""
    a = np.asarray(a)
    weights = np.exp(a - _expand(ans, a, axis, keepdims))
    if b is not None:
        weights = weights * b
    return _expand(g, a, axis, keepdims) * weights


def logsumexp_vjp_b(g, ans, a, axis=None, b=None, keepdims=False):
    """Adjoint of ``b`` in ``scipy.special.logsumexp(a, axis, b, keepdims)``."""
    a = np.asarray(a)
    full = _expand(g, np.broadcast_to(a, np.broadcast_shapes(a.shape, np.shape(b))), axis, keepdims)
    return unbroadcast(full * np.exp(a - _expand(ans, full, axis, keepdims)), b)


def vector_norm_vjp(g, ans, x, ord, axis, keepdims):
    x = np.asarray(x)
    g = np.real(g)  # a norm is real; its adjoint at a complex x is conjugated (runtime_complex)
    if ord is None or ord == 2:
        return _expand(g / ans, x, axis, keepdims) * _conj(x)
    if ord == 1:
        return _expand(g, x, axis, keepdims) * abs_slope(x)
    if ord in (np.inf, -np.inf):
        return extremum_vjp(g, ans, np.abs(x), axis, keepdims) * abs_slope(x)
    if ord == 0:
        return np.zeros(x.shape, dtype=np.result_type(x, np.float64))
    return _expand(g * ans ** (1.0 - ord), x, axis, keepdims) * np.abs(x) ** (ord - 1) * abs_slope(x)


def matrix_norm_vjp(g, ans, x, ord, axes, keepdims):
    """Matrix norms over the two ``axes`` (Frobenius, nuclear, 1, -1, inf, -inf, 2, -2)."""
    x = np.asarray(x)
    g = np.real(g)
    if ord is None or ord == "fro":
        return _expand(g / ans, x, axes, keepdims) * _conj(x)
    g_full = _expand(g, x, axes, keepdims)
    moved = np.moveaxis(x, axes, (-2, -1))
    g_m = np.moveaxis(g_full, axes, (-2, -1))[..., :1, :1]
    if ord in ("nuc", 2, -2):
        u, s, vt = np.linalg.svd(moved, full_matrices=False)
        if ord == "nuc":
            out = u @ vt
        else:
            k = 0 if ord == 2 else -1
            out = u[..., :, k:k + 1 if k == 0 else None] @ vt[..., k:k + 1 if k == 0 else None, :]
        out = _conj(out)
    elif ord in (1, -1, np.inf, -np.inf):
        line_axis = -2 if ord in (1, -1) else -1  # 1: column sums (sum over rows)
        sums = np.sum(np.abs(moved), axis=line_axis, keepdims=True)
        best = np.max(sums, axis=-1 if line_axis == -2 else -2, keepdims=True) if ord > 0 else \
            np.min(sums, axis=-1 if line_axis == -2 else -2, keepdims=True)
        hits = sums == best
        out = abs_slope(moved) * hits / np.sum(hits, axis=(-2, -1), keepdims=True)
    else:
        raise NotImplementedError(f"the gradient of np.linalg.norm with ord={ord!r} is not supported")
    return np.moveaxis(g_m * out, (-2, -1), axes)


# ----- more shapes and indexing ----------------------------------------------------------------


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
    moved = np.moveaxis(out, (axis1, axis2), (-2, -1))  # a view: writing it fills ``out``
    n = np.shape(g)[-1]
    rows = np.arange(n) + max(-offset, 0)
    cols = np.arange(n) + max(offset, 0)
    moved[..., rows, cols] = g
    return out


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
    return [np.reshape(p, np.shape(a)) for p, a in zip(pieces, arrays)]


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


def split_append(g, arr, values, axis=None):
    """Adjoints of ``arr`` and ``values`` in ``np.append(arr, values, axis)``."""
    if axis is None:
        g = np.ravel(g)
        return [g[:np.size(arr)].reshape(np.shape(arr)), g[np.size(arr):].reshape(np.shape(values))]
    return _split_along(g, [arr, values], axis, [np.shape(arr), np.shape(values)])


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


def sort_vjp(g, a, axis=-1):
    """Adjoint of ``np.sort(a, axis)``: ``g`` put back where each sorted element came from."""
    a = np.asarray(a)
    if axis is None:
        return sort_vjp(g, a.ravel(), 0).reshape(a.shape)
    order = np.argsort(a, axis=axis, kind="stable")
    out = np.zeros(a.shape, dtype=np.result_type(g, np.float64))
    np.put_along_axis(out, order, g, axis=axis)
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


# ----- more linear algebra ---------------------------------------------------------------------


def _mT(x):
    return np.swapaxes(x, -1, -2)


def kron_vjp(g, a, b):
    """Adjoints of ``a`` and ``b`` in ``np.kron(a, b)``."""
    a = np.asarray(a)
    b = np.asarray(b)
    ndim = max(a.ndim, b.ndim)
    a_full = a.reshape((1,) * (ndim - a.ndim) + a.shape)
    b_full = b.reshape((1,) * (ndim - b.ndim) + b.shape)
    split = []
    for n, m in zip(a_full.shape, b_full.shape):
        split.extend((n, m))
    blocks = np.reshape(g, split)  # axes: a0, b0, a1, b1, ...
    a_axes = tuple(range(0, 2 * ndim, 2))
    b_axes = tuple(range(1, 2 * ndim, 2))
    b_view = b_full.reshape(tuple(1 if i % 2 == 0 else b_full.shape[i // 2] for i in range(2 * ndim)))
    a_view = a_full.reshape(tuple(1 if i % 2 == 1 else a_full.shape[i // 2] for i in range(2 * ndim)))
    a_bar = np.sum(blocks * b_view, axis=b_axes).reshape(a.shape)
    b_bar = np.sum(blocks * a_view, axis=a_axes).reshape(b.shape)
    return [a_bar, b_bar]


def solve_vjp_b(g, a, b):
    """Adjoint of ``b`` in ``np.linalg.solve(a, b)``."""
    g = np.asarray(g)
    if np.ndim(b) == 1:
        return unbroadcast(np.linalg.solve(_mT(a), g[..., None])[..., 0], b)
    return unbroadcast(np.linalg.solve(_mT(a), g), b)


def solve_vjp_a(g, ans, a, b):
    """Adjoint of ``a`` in ``np.linalg.solve(a, b)``: -b_bar ans^T."""
    g = np.asarray(g)
    if np.ndim(b) == 1:
        b_bar = np.linalg.solve(_mT(a), g[..., None])
        return unbroadcast(-b_bar * np.asarray(ans)[..., None, :], a)
    b_bar = np.linalg.solve(_mT(a), g)
    return unbroadcast(-b_bar @ _mT(ans), a)


def cholesky_vjp(g, ans, upper=False):
    """Adjoint of ``np.linalg.cholesky`` (symmetric; Murray 2016, eq. 10)."""
    low = _mT(ans) if upper else np.asarray(ans)
    g = _mT(g) if upper else np.asarray(g)
    phi = np.tril(_mT(low) @ g)
    phi = phi - 0.5 * np.eye(low.shape[-1]) * phi  # halve the diagonal
    inv_low = np.linalg.inv(low)
    s = _mT(inv_low) @ phi @ inv_low
    return 0.5 * (s + _mT(s))


def eigvalsh_vjp(g, a, UPLO="L"):
    """Adjoint of ``np.linalg.eigvalsh(a)``: V diag(g) V^T (symmetric)."""
    _, v = np.linalg.eigh(a, UPLO=UPLO)
    return (v * np.asarray(g)[..., None, :]) @ _mT(v)


def svdvals_vjp(g, a):
    """Adjoint of ``np.linalg.svdvals(a)``: U diag(g) V^T."""
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    return (u * np.asarray(g)[..., None, :]) @ vt


def pinv_vjp(g, ans, a):
    """Adjoint of ``np.linalg.pinv(a)`` for a matrix of constant rank (Golub and Pereyra)."""
    p = np.asarray(ans)
    a = np.asarray(a)
    g = np.asarray(g)
    left = np.eye(a.shape[-2]) - a @ p
    right = np.eye(a.shape[-1]) - p @ a
    return -_mT(p) @ g @ _mT(p) + left @ _mT(g) @ p @ _mT(p) + _mT(p) @ p @ _mT(g) @ right


def matrix_power_vjp(g, a, n):
    """Adjoint of ``np.linalg.matrix_power(a, n)`` for n >= 0 (inverse first for n < 0)."""
    a = np.asarray(a)
    if n < 0:
        inv = np.linalg.inv(a)
        inner = matrix_power_vjp(g, inv, -n)
        return -_mT(inv) @ inner @ _mT(inv)
    at = _mT(a)
    powers = [np.broadcast_to(np.eye(a.shape[-1]), a.shape)]
    for _ in range(1, n):
        powers.append(powers[-1] @ at)
    out = np.zeros(a.shape, dtype=np.result_type(a, g, np.float64))
    for k in range(n):
        out = out + powers[k] @ g @ powers[n - 1 - k]
    return out


# ----- custom gradients ------------------------------------------------------------------------


def custom_result(name, grads, primals, params):
    """The gradients a custom_gradient ``grad_fn`` returned, one per positional parameter of ``name``:
    ``None`` becomes zeros, a gradient that broadcasts to its parameter is summed down to it, a
    wrong count or shape raises GradientError naming the function, the parameter and the shapes."""
    from .errors import GradientError

    if len(params) == 1 and not (isinstance(grads, (tuple, list)) and len(grads) == 1):
        if isinstance(grads, (tuple, list)) and not isinstance(primals[0], (tuple, list)):
            raise GradientError(
                f"custom_gradient {name}: grad_fn returned {len(grads)} gradients, but {name} has "
                f"1 positional parameter ({params[0]}); return one gradient")
        grads = (grads,)
    if not isinstance(grads, (tuple, list)):
        raise GradientError(
            f"custom_gradient {name}: grad_fn returned 1 gradient, but {name} has "
            f"{len(params)} positional parameters ({', '.join(params)}); return a tuple")
    if len(grads) != len(params):
        raise GradientError(
            f"custom_gradient {name}: grad_fn returned {len(grads)} gradients, but {name} has "
            f"{len(params)} positional parameter{'s' if len(params) != 1 else ''} "
            f"({', '.join(params)})")
    out = []
    for g, x, p in zip(grads, primals, params):
        if g is None:
            out.append(zeros_like(x))
            continue
        g_shape, x_shape = np.shape(g), np.shape(x)
        if g_shape != x_shape:
            try:
                fits = np.broadcast_shapes(x_shape, g_shape) == g_shape
            except ValueError:
                fits = False
            if not fits:
                raise GradientError(
                    f"custom_gradient {name}: the gradient for parameter `{p}` has shape "
                    f"{g_shape}, but `{p}` has shape {x_shape}")
            g = unbroadcast(g, x)
        out.append(g)
    return tuple(out)


# ----- lists and index writes --------------------------------------------------------------


def setitem(x, index, value):
    """A copy of ``x`` with ``x[index] = value`` (the input is left as it was)."""
    out = np.array(x, copy=True)
    out[index] = value
    return out


def add(a, b):
    """``a + b`` for adjoints; for lists and dicts (their adjoints), element by element."""
    if isinstance(a, dict):
        return {k: a[k] + b[k] for k in a}
    if isinstance(a, list) or isinstance(b, list):
        return Parts(add(p, q) for p, q in zip(a, b))
    return a + b


class Parts(list):
    """The adjoint of a list or tuple: one adjoint per element, and ``+`` adds element by
    element (so an adjoint accumulated with ``+`` where the value's type was not known adds up
    instead of concatenating)."""

    def __add__(self, other):
        return Parts(add(p, q) for p, q in zip(self, other))

    __radd__ = __add__

    def __getitem__(self, index):
        item = list.__getitem__(self, index)
        return Parts(item) if isinstance(index, slice) else item


def list_zeros(xs):
    """The zero adjoint of a list (or tuple, or dict): one zero per element."""
    if isinstance(xs, dict):
        return {k: zeros_like(v) for k, v in xs.items()}
    return Parts(zeros_like(x) for x in xs)


def leaves(value):
    """The leaves of a custom gradient's output adjoint, in grad_fn's order: a dict's by sorted
    key, a tuple's or list's in order."""
    if isinstance(value, dict):
        return tuple(value[k] for k in sorted(value))
    return tuple(value)


def list_getitem_vjp(g, xs, index):
    """Adjoint of ``xs[index]`` for a list ``xs``: zeros, with ``g`` at ``index``."""
    out = list_zeros(xs)
    if isinstance(xs, dict):
        out[index] = out[index] + g
        return out
    if isinstance(index, slice):
        for position, item in zip(range(*index.indices(len(xs))), g):
            out[position] = out[position] + item
    else:
        out[index] = out[index] + g
    return out


def sum_list_vjp(g, xs):
    """Adjoint of the elements of ``sum(xs)``: ``g`` for each, summed to its shape."""
    return [unbroadcast(g, x) for x in xs]


# Every public function above is a helper generated code may call.
__all__ = sorted(name for name, value in list(globals().items())
                 if callable(value) and not name.startswith("_")
                 and getattr(value, "__module__", None) == __name__)


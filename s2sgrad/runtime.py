"""The few helpers generated gradients call. Numpy only: importing this never imports libcst or black.

Generated code reads ``s2s.<helper>``; each helper is a plain function of arrays.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "unbroadcast",
    "like",
    "zeros_like",
    "check_scalar",
    "sum_vjp",
    "mean_vjp",
    "var_vjp",
    "std_vjp",
    "extremum_vjp",
    "prod_vjp",
    "getitem_vjp",
    "split_concatenate",
    "split_stack",
    "matmul_vjp_a",
    "matmul_vjp_b",
    "dot_vjp_a",
    "dot_vjp_b",
    "einsum_vjp",
    "norm_vjp",
    "balanced_eq",
    "transpose_vjp",
    "expand_dims_vjp",
    "safe_power_base",
    "safe_log_base",
    "squeeze_vjp",
    "tensordot_vjp_a",
    "tensordot_vjp_b",
    "cumsum_vjp",
    "einsum_vjps",
    "inside",
    "trace_vjp",
]


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x`` (undoing numpy broadcasting)."""
    shape = np.shape(x)
    g_shape = np.shape(g)
    if g_shape == shape:
        return g
    g = np.asarray(g)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def like(g, x):
    """``g`` as the gradient of ``x``: same shape, ``x``'s float dtype; a Python float for a float."""
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        return float(np.sum(g)) if np.ndim(g) else float(g)
    x_dtype = np.result_type(x)
    if not np.issubdtype(x_dtype, np.inexact):
        x_dtype = np.dtype(np.float64)
    g = np.asarray(g)
    if g.shape != np.shape(x):
        g = np.broadcast_to(unbroadcast(g, x), np.shape(x))
    if g.dtype != x_dtype:
        g = g.astype(x_dtype)
    return g


def zeros_like(x):
    """The zero gradient of ``x`` (a float 0.0 for a Python number)."""
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        return 0.0
    dtype = np.result_type(x)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    return np.zeros(np.shape(x), dtype=dtype)


def check_scalar(value, name):
    """Raise when ``grad`` is asked for the gradient of a non-scalar output."""
    if np.ndim(value) != 0 or np.iscomplexobj(value):
        from .errors import GradientError

        raise GradientError(
            f"grad requires {name} to return a real scalar, got shape {np.shape(value)}; "
            "use vjp for non-scalar outputs, or reduce the output (e.g. np.sum)"
        )


# ----- reductions ------------------------------------------------------------------------------


def _expand(g, x, axis, keepdims):
    """Broadcast a reduction's adjoint ``g`` back over ``x``'s shape."""
    shape = np.shape(x)
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
    return _expand(g, x, axis, keepdims)


def mean_vjp(g, x, axis=None, keepdims=False):
    return _expand(g, x, axis, keepdims) / _count(x, axis)


def var_vjp(g, x, axis=None, ddof=0, keepdims=False):
    x = np.asarray(x)
    n = _count(x, axis)
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return 2.0 * _expand(g, x, axis, keepdims) * centered / (n - ddof)


def std_vjp(g, ans, x, axis=None, ddof=0, keepdims=False):
    x = np.asarray(x)
    n = _count(x, axis)
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return _expand(g / ans, x, axis, keepdims) * centered / (n - ddof)


def extremum_vjp(g, ans, x, axis=None, keepdims=False):
    """max/min: the adjoint is shared equally among the positions that attain the extremum."""
    x = np.asarray(x)
    ans_full = _expand(ans, x, axis, keepdims)
    hits = x == ans_full
    counts = np.sum(hits, axis=axis, keepdims=True)
    return _expand(g, x, axis, keepdims) * hits / counts


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
    out = np.zeros(np.shape(x), dtype=np.result_type(g, np.float64 if not hasattr(x, "dtype") else x))
    if _is_basic(index):
        out[index] = g
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


def expand_dims_vjp(g, x):
    return np.reshape(g, np.shape(x))


def squeeze_vjp(g, x):
    return np.reshape(g, np.shape(x))


# ----- products --------------------------------------------------------------------------------


def matmul_vjp_a(g, a, b):
    """Adjoint of ``a`` in ``a @ b`` (1-D and batched operands included)."""
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    g = np.asarray(g)
    if b_nd == 1:
        if a_nd == 1:
            return g * np.asarray(b)
        return unbroadcast(g[..., None] * b, a)
    if a_nd == 1:
        return unbroadcast(np.matmul(g[..., None, :], np.swapaxes(b, -1, -2))[..., 0, :], a)
    return unbroadcast(np.matmul(g, np.swapaxes(b, -1, -2)), a)


def matmul_vjp_b(g, a, b):
    """Adjoint of ``b`` in ``a @ b``."""
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


def einsum_vjp(g, subscripts, operands, index):
    """Adjoint of ``operands[index]`` in ``np.einsum(subscripts, *operands)`` (explicit ``->``)."""
    if "->" not in subscripts:
        inputs = subscripts.replace(" ", "")
        letters = sorted(c for c in inputs if c.isalpha() and inputs.count(c) == 1)
        subscripts = inputs + "->" + "".join(letters)
    lhs, out = subscripts.replace(" ", "").split("->")
    ins = lhs.split(",")
    if any("." in s for s in ins):
        raise NotImplementedError("einsum with '...' is not differentiable by s2sgrad yet")
    target = ins[index]
    others = [s for i, s in enumerate(ins) if i != index]
    other_ops = [o for i, o in enumerate(operands) if i != index]
    x = operands[index]
    # Letters of the target missing from the output and other inputs are broadcast (summed) dims.
    available = set(out) | set("".join(others))
    kept = "".join(c for c in target if c in available)
    spec = ",".join([out] + others) + "->" + _dedupe(kept)
    partial = np.einsum(spec, g, *other_ops)
    if len(set(target)) != len(target):
        raise NotImplementedError("einsum with a repeated index in one operand is not supported")
    letters = _dedupe(kept)
    expanded = partial
    for ax, c in enumerate(target):
        if c not in letters:
            expanded = np.expand_dims(expanded, ax)
    return np.broadcast_to(expanded, np.shape(x))


def _dedupe(s):
    out = ""
    for c in s:
        if c not in out:
            out += c
    return out


def norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):
    """Adjoint of ``np.linalg.norm`` for vector norms and the Frobenius norm."""
    x = np.asarray(x)
    if ord in (None, "fro", 2) and (axis is None or np.ndim(axis) == 0 or ord != 2):
        if axis is None and x.ndim == 2 and ord == 2:
            raise NotImplementedError("the gradient of the matrix 2-norm is not supported")
        return _expand(g / ans, x, axis, keepdims) * x
    if ord == 1:
        return _expand(g, x, axis, keepdims) * np.sign(x)
    if ord in (np.inf, -np.inf):
        return extremum_vjp(g, ans, np.abs(x), axis, keepdims) * np.sign(x)
    if isinstance(ord, (int, float)) and ord not in ("nuc",):
        return _expand(g * ans ** (1.0 - ord), x, axis, keepdims) * np.abs(x) ** (ord - 1) * np.sign(x)
    raise NotImplementedError(f"the gradient of np.linalg.norm with ord={ord!r} is not supported")


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


def einsum_vjps(g, subscripts, operands):
    """Adjoints of every operand of ``np.einsum(subscripts, *operands)``."""
    return [einsum_vjp(g, subscripts, operands, i) for i in range(len(operands))]


def inside(a, a_min, a_max):
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

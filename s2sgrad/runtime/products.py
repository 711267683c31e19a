"""Adjoints of products (numpy only): ``@``, ``np.dot``, ``np.inner``, ``np.tensordot`` and
``np.kron`` (``s2s.matmul_vjp_a``, ...), ``np.cross`` with its axis keywords, ``np.convolve``
and ``np.correlate`` (``s2s.convolve_vjp``, ``s2s.convolve_start``, ``s2s.correlate_start``), and the sums of a
backward loop's per-step contributions to a product's loop-invariant factor in one product
(``s2s.matmul_vjp_b_sum``, ...)."""

from __future__ import annotations

import numpy as np

from .broadcasting import _ndarray, _operand, unbroadcast
from .containers import Parts, zeros_like

__all__ = [
    "matmul_vjp_a",
    "matmul_vjp_b_sum",
    "dot_vjp_b_sum",
    "matmul_vjp_a_sum",
    "dot_vjp_a_sum",
    "matmul_vjp_b",
    "dot_vjp_a",
    "dot_vjp_b",
    "inner_vjp_a",
    "inner_vjp_b",
    "tensordot_vjp_a",
    "tensordot_vjp_b",
    "kron_vjp",
    "kron_vjp_tangent",
    "product_sum_vjp_gs",
    "product_sum_vjp_others",
    "cross_vjp_a",
    "cross_vjp_b",
    "convolve_vjp",
    "convolve_start",
    "correlate_start",
]


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
    g = _operand(g)  # an array keeps its type (a subclass, CuPy's, dask's)
    if b_nd == 1:
        if a_nd == 1:
            return g * _operand(b)
        return unbroadcast(g[..., None] * b, a)
    if a_nd == 1:
        return unbroadcast(np.matmul(g[..., None, :], np.swapaxes(b, -1, -2))[..., 0, :], a)
    return unbroadcast(np.matmul(g, np.swapaxes(b, -1, -2)), a)


def matmul_vjp_b_sum(gs, lefts, b):
    """The sum of ``matmul_vjp_b(g, a, b)`` over the pairs of ``gs`` and ``lefts`` (a loop's
    contributions, collected per iteration): one matrix product when every ``a`` and ``g`` is a
    vector (or every one a matrix) of one shape, the sum of the products otherwise.

    Consumes the two lists (the backward sweep collected them for this call alone): each is
    emptied once stacked, so its arrays are freed before the next stack is built."""
    return _product_sum_b(gs, lefts, b, matmul_vjp_b)


def dot_vjp_b_sum(gs, lefts, b):
    """The sum of ``dot_vjp_b(g, a, b)`` over the pairs (np.dot is the matrix product for
    operands of one or two axes: the same single product then)."""
    return _product_sum_b(gs, lefts, b, dot_vjp_b)


def matmul_vjp_a_sum(gs, a, rights):
    """The sum of ``matmul_vjp_a(g, a, r)`` over the pairs of ``gs`` and ``rights``: one matrix
    product when ``a`` is a matrix and every ``r`` and ``g`` a vector (or every one a matrix) of
    one shape, the sum of the products otherwise. Consumes the two lists."""
    return _product_sum_a(gs, a, rights, matmul_vjp_a)


def dot_vjp_a_sum(gs, a, rights):
    """The sum of ``dot_vjp_a(g, a, r)`` over the pairs (see dot_vjp_b_sum)."""
    return _product_sum_a(gs, a, rights, dot_vjp_a)


def _product_sum_a(gs, a, rights, vjp):
    if not gs:
        return zeros_like(a)
    r0, g0 = rights[0], gs[0]
    if type(a) is _ndarray and a.ndim == 2 and type(r0) is _ndarray and type(g0) is _ndarray and \
            r0.ndim == g0.ndim and r0.ndim in (1, 2):
        # sum_t g_t r_t^T: the pairs side by side, as the columns of two matrices
        R = _side_by_side(rights, r0.ndim)
        if R is not None and R.dtype.kind in "fc" and R.shape[0] == a.shape[1]:
            G = _side_by_side(gs, g0.ndim)
            if G is not None and G.dtype.kind in "fc" and G.shape == (a.shape[0], R.shape[1]):
                rights.clear()
                gs.clear()
                return G @ R.T
    total = vjp(gs[0], a, rights[0])
    for g, r in zip(gs[1:], rights[1:]):
        total = total + vjp(g, a, r)
    return total


def _side_by_side(arrays, ndim):
    """Vectors as the columns of a matrix, matrices side by side; None when shapes differ."""
    try:
        return np.array(arrays).T if ndim == 1 else np.concatenate(arrays, axis=1)
    except ValueError:
        return None


def _product_sum_b(gs, lefts, b, vjp):
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
    total = vjp(gs[0], lefts[0], b)
    for g, a in zip(gs[1:], lefts[1:]):
        total = total + vjp(g, a, b)
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
                return a.T @ g
        elif a_nd == 1 and b_nd == 2 and g_nd == 1:
            return a[:, None] * g[None, :]
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    g = _operand(g)  # an array keeps its type (a subclass, CuPy's, dask's)
    if a_nd == 1:
        if b_nd == 1:
            return g * _operand(a)
        return unbroadcast(_operand(a)[:, None] * g[..., None, :], b)
    if b_nd == 1:
        return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), g[..., None])[..., 0], b)
    return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), g), b)


def _ndims(a, b) -> tuple:
    return (a.ndim if type(a) is _ndarray else np.ndim(a)), (b.ndim if type(b) is _ndarray else np.ndim(b))


def dot_vjp_a(g, a, b):
    a_nd, b_nd = _ndims(a, b)
    if a_nd == 0 or b_nd == 0:
        return unbroadcast(g * b, a) if a_nd == 0 else g * b
    if a_nd <= 2 and b_nd <= 2:
        return matmul_vjp_a(g, a, b)  # np.dot is the matrix product here
    return tensordot_vjp_a(g, a, b, ([a_nd - 1], [max(b_nd - 2, 0)]))


def dot_vjp_b(g, a, b):
    a_nd, b_nd = _ndims(a, b)
    if a_nd == 0 or b_nd == 0:
        return unbroadcast(g * a, b) if b_nd == 0 else g * a
    if a_nd <= 2 and b_nd <= 2:
        return matmul_vjp_b(g, a, b)  # np.dot is the matrix product here
    return tensordot_vjp_b(g, a, b, ([a_nd - 1], [max(b_nd - 2, 0)]))


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
    g = _operand(g)
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
    g = _operand(g)
    n_free_a = len(a_free)
    out = np.tensordot(a, g, (a_free, list(range(n_free_a))))
    # out axes: a's contracted axes (in a order) mapping to b_ax, then b_free.
    order = [b_ax[a_ax.index(i)] for i in sorted(a_ax)] + b_free
    return np.transpose(out, np.argsort(order))


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


def _pair_product(kind, a, b):
    return np.dot(a, b) if kind == "dot" else np.matmul(a, b)


def product_sum_vjp_gs(g, gs, others, kind, left):
    """The adjoint of the list ``gs`` in ``matmul_vjp_b_sum(gs, others, b)`` (``left``: the
    others are the left factors) or ``matmul_vjp_a_sum(gs, a, others)``, ``g`` the adjoint of
    the sum: per pair, the product with the varied factor replaced by ``g`` (``kind``: "matmul"
    or "dot")."""
    return Parts(unbroadcast(_pair_product(kind, o, g) if left else _pair_product(kind, g, o), gi)
                 for gi, o in zip(gs, others))


def product_sum_vjp_others(g, gs, others, kind, left):
    """The adjoint of the list ``others`` there: per pair, the other factor's adjoint in the
    product with the summed factor replaced by ``g``."""
    if left:
        vjp = dot_vjp_a if kind == "dot" else matmul_vjp_a
        return Parts(vjp(gi, o, g) for gi, o in zip(gs, others))
    vjp = dot_vjp_b if kind == "dot" else matmul_vjp_b
    return Parts(vjp(gi, g, o) for gi, o in zip(gs, others))


def kron_vjp_tangent(value, a, b, t, index):
    """The tangent of ``kron_vjp(value, a, b)`` along ``t``, the tangent of ``a`` (``index`` 0)
    or ``b`` (1): only the other operand's adjoint changes."""
    if index == 0:
        a_bar, b_bar = kron_vjp(value, t, b)
        return Parts([zeros_like(a_bar), b_bar])
    a_bar, b_bar = kron_vjp(value, a, t)
    return Parts([a_bar, zeros_like(b_bar)])


def _factor(env, name):
    """A word's factor: ``env["X"]`` for "X", its transpose (last two axes) for "X'"."""
    x = np.asarray(env[name[0]])
    return np.swapaxes(x, -1, -2) if name.endswith("'") else x


def _chain(mats):
    out = mats[0]
    for m in mats[1:]:
        out = out @ m
    return out


def _word_adjoints(words, env, g):
    """The adjoints of the matrices of ``env`` in ``sum sign * X1 @ X2 @ ...`` over ``words``
    (``(sign, factors)``; runtime/linalg.py's pinv_vjp), ``g`` that of the sum."""
    bars = {k: 0.0 for k in env}
    for sign, word in words:
        mats = [_factor(env, f) for f in word]
        for i, f in enumerate(word):
            part = g if i == 0 else np.swapaxes(_chain(mats[:i]), -1, -2) @ g
            part = part if i == len(word) - 1 else part @ np.swapaxes(_chain(mats[i + 1:]), -1, -2)
            bars[f[0]] = bars[f[0]] + sign * (np.swapaxes(part, -1, -2) if f.endswith("'") else part)
    return bars


def _word_tangent(words, env, which, t):
    """The tangent of that sum along ``t``, the tangent of ``env[which]``."""
    total = 0.0
    for sign, word in words:
        for i, f in enumerate(word):
            if f[0] == which:
                mats = [_factor(env, h) for h in word]
                mats[i] = _factor({which: t}, f)
                total = total + sign * _chain(mats)
    return total


def _powers(c, top):
    out = [np.broadcast_to(np.eye(c.shape[-1]), c.shape)]
    for _ in range(top):
        out.append(out[-1] @ c)
    return out


def _power_sum_adjoint(c, pairs, v, g):
    """The adjoint of ``c`` in ``sum of c^p v c^q`` over ``pairs``, ``g`` that of the sum."""
    pw = _powers(c, max((p + q for p, q in pairs), default=0) + 1)
    c_bar = np.zeros(np.shape(c), np.result_type(c, g, v, 1.0))
    for p, q in pairs:
        for i in range(p):
            c_bar = c_bar + np.swapaxes(pw[i], -1, -2) @ g @ np.swapaxes(pw[p - 1 - i] @ v @ pw[q], -1, -2)
        for j in range(q):
            c_bar = c_bar + np.swapaxes(pw[p] @ v @ pw[j], -1, -2) @ g @ np.swapaxes(pw[q - 1 - j], -1, -2)
    return c_bar


def _power_sum_tangent(c, pairs, v, dc):
    """The tangent of that sum along ``dc``, the tangent of ``c``."""
    pw = _powers(c, max((p + q for p, q in pairs), default=0) + 1)
    out = np.zeros(np.broadcast_shapes(np.shape(c), np.shape(dc)), np.result_type(c, dc, v, 1.0))
    for p, q in pairs:
        for i in range(p):
            out = out + pw[i] @ dc @ pw[p - 1 - i] @ v @ pw[q]
        for j in range(q):
            out = out + pw[p] @ v @ pw[j] @ dc @ pw[q - 1 - j]
    return out


def _cross_axes(axisa, axisb, axisc, axis):
    return (axis, axis, axis) if axis is not None else (axisa, axisb, axisc)


def _cross_adjoint(g, x, other, x_first, axisa, axisb, axisc, axis):
    """The adjoint of ``x`` in ``np.cross(x, other)`` (``x_first``) or ``np.cross(other, x)``."""
    ax_x, ax_o, ax_c = _cross_axes(axisa, axisb, axisc, axis)
    if not x_first:
        ax_x, ax_o = ax_o, ax_x
    x_arr = np.moveaxis(np.asarray(x), ax_x, -1)
    o_arr = np.moveaxis(np.asarray(other), ax_o, -1)
    g = np.asarray(g)
    if x_arr.shape[-1] == 2 and o_arr.shape[-1] == 2:  # the z component only: a scalar per pair
        g3 = np.stack([np.zeros_like(g), np.zeros_like(g), g], axis=-1)
    else:
        g3 = np.moveaxis(g, ax_c, -1)
    o3 = o_arr if o_arr.shape[-1] == 3 else np.concatenate(
        [o_arr, np.zeros(o_arr.shape[:-1] + (1,), dtype=o_arr.dtype)], axis=-1)
    # <g, x cross o> = <o cross g, x>; <g, o cross x> = <g cross o, x>
    adjoint = np.cross(o3, g3) if x_first else np.cross(g3, o3)
    adjoint = adjoint[..., :x_arr.shape[-1]]
    return np.moveaxis(unbroadcast(adjoint, x_arr), -1, ax_x)


def cross_vjp_a(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Adjoint of ``a`` in ``np.cross(a, b, axisa, axisb, axisc, axis)`` (2- and 3-vectors)."""
    return _cross_adjoint(g, a, b, True, axisa, axisb, axisc, axis)


def cross_vjp_b(g, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Adjoint of ``b`` in ``np.cross(a, b, axisa, axisb, axisc, axis)`` (2- and 3-vectors)."""
    return _cross_adjoint(g, b, a, False, axisa, axisb, axisc, axis)


def convolve_start(a, v, mode="full"):
    """Where the result of ``np.convolve(a, v, mode)`` starts in the full one: 0 for ``"full"``,
    the shorter length less one for ``"valid"``, half the lengths' difference (rounded down)
    for ``"same"``."""
    return _window_start(np.size(a), np.size(v), mode, False)


def correlate_start(a, v, mode="valid"):
    """Where the result of ``np.correlate(a, v, mode)`` starts in the full one: as for
    convolve, except that numpy rounds the ``"same"`` start up when ``a`` is the shorter."""
    n, m = np.size(a), np.size(v)
    return _window_start(n, m, mode, n < m)


def _window_start(n, m, mode, round_up):
    if mode == "full":
        return 0
    if mode == "valid":
        return min(n, m) - 1
    if mode != "same":
        raise ValueError(f"mode must be 'full', 'same' or 'valid', not {mode!r}")
    return min(n, m) // 2 if round_up else (min(n, m) - 1) // 2


def convolve_vjp(value, other, a, start):
    """Adjoint of ``a`` in the window of ``np.convolve(a, other)`` (the full result) that starts
    at ``start`` and is as long as the upstream ``value``: ``value`` placed there in zeros, then
    correlated with ``other`` (``a``: read for its length)."""
    value, other = np.asarray(value), np.asarray(other)
    full = np.zeros(np.size(a) + other.size - 1, dtype=np.result_type(value, other))
    full[start:start + value.size] = value
    return np.convolve(full, other[::-1], "valid")

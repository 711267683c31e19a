"""Adjoints of linear algebra (numpy only): ``np.linalg.solve``, ``cholesky``, ``eigvalsh``,
``svdvals``, ``pinv``, ``matrix_power``, ``norm`` (vector and matrix norms) and ``np.trace``
(``s2s.solve_vjp_a``, ``s2s.norm_vjp``, ...)."""

from __future__ import annotations

import numpy as np

from .broadcasting import unbroadcast
from .complex import _conj, abs_slope
from .containers import zeros_like
from .reductions import _expand, extremum_vjp

__all__ = [
    "solve_vjp_b",
    "solve_vjp_a",
    "cholesky_vjp",
    "eigvalsh_vjp",
    "svdvals_vjp",
    "pinv_vjp",
    "matrix_power_vjp",
    "trace_vjp",
    "norm_vjp",
    "vector_norm_vjp",
    "matrix_norm_vjp",
    "solve_vjp_b_tangent",
    "solve_vjp_a_adjoints",
    "solve_vjp_a_tangent",
    "cholesky_vjp_adjoints",
    "cholesky_vjp_tangent",
    "eigvalsh_vjp_adjoints",
    "eigvalsh_vjp_tangent",
    "matrix_power_vjp_adjoints",
    "matrix_power_vjp_tangent",
    "pinv_vjp_adjoints",
    "pinv_vjp_tangent",
    "svdvals_vjp_adjoints",
    "svdvals_vjp_tangent",
    "norm_vjp_adjoint",
    "norm_vjp_tangent",
]


def _mT(x):
    return np.swapaxes(x, -1, -2)


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


def trace_vjp(g, a, offset=0, axis1=0, axis2=1):
    a = np.asarray(a)
    eye = np.eye(a.shape[axis1], a.shape[axis2], k=offset)
    eye = np.moveaxis(eye.reshape(eye.shape + (1,) * (a.ndim - 2)), (0, 1), (axis1, axis2))
    g = np.asarray(g)
    g = np.expand_dims(g, (axis1, axis2)) if g.ndim else g
    return eye * g


def norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):
    """Adjoint of ``np.linalg.norm``: vector norms, and matrix norms over two axes."""
    x = np.asarray(x)
    if axis is None and x.ndim == 2 and ord is not None:
        return matrix_norm_vjp(g, ans, x, ord, (0, 1), keepdims)
    if axis is not None and np.ndim(axis) == 1 and len(axis) == 2:
        return matrix_norm_vjp(g, ans, x, ord, tuple(a % x.ndim for a in axis), keepdims)
    return vector_norm_vjp(g, ans, x, ord, axis, keepdims)


def vector_norm_vjp(g, ans, x, ord, axis, keepdims):
    x = np.asarray(x)
    g = np.real(g)  # a norm is real; its adjoint at a complex x is conjugated (complex.py)
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


# ---- the derivatives of the adjoints above (their rules: rules/helpers/linalg.py) ----------

def _as_matrix(x, vec):
    return np.asarray(x)[..., None] if vec else np.asarray(x)


def _as_given(x, vec, like):
    return unbroadcast(x[..., 0] if vec else x, like)


def solve_vjp_b_tangent(value, a, b, t):
    """The tangent of ``solve_vjp_b(value, a, b)`` along ``t``, the tangent of ``a``:
    ``-solve(a^T, t^T y)`` with ``y = solve(a^T, value)``."""
    vec = np.ndim(b) == 1
    y = np.linalg.solve(_mT(a), _as_matrix(value, vec))
    return _as_given(-np.linalg.solve(_mT(a), _mT(t) @ y), vec, b)


def solve_vjp_a_adjoints(g, value, result, a, b):
    """The adjoints of ``value``, ``result`` and ``a`` in ``solve_vjp_a(value, result, a, b) =
    -x result^T`` (``x = solve(a^T, value)``), ``g`` that of its output."""
    vec = np.ndim(b) == 1
    at = _mT(a)
    x = np.linalg.solve(at, _as_matrix(value, vec))
    r = _as_matrix(result, vec)
    w = np.linalg.solve(a, g @ r)
    return (_as_given(-w, vec, value), _as_given(-_mT(g) @ x, vec, result),
            unbroadcast(x @ _mT(w), a))


def solve_vjp_a_tangent(value, result, a, b, t):
    """The tangent of ``solve_vjp_a(value, result, a, b)`` along ``t``, the tangent of ``a``."""
    vec = np.ndim(b) == 1
    at = _mT(a)
    x = np.linalg.solve(at, _as_matrix(value, vec))
    return unbroadcast(np.linalg.solve(at, _mT(t) @ x) @ _mT(_as_matrix(result, vec)), a)


def _phi(x):
    """The lower triangle with its diagonal halved (Murray's Phi)."""
    low = np.tril(x)
    return low - 0.5 * np.eye(x.shape[-1]) * low


def _sym(x):
    return 0.5 * (x + _mT(x))


def cholesky_vjp_adjoints(g, value, result, upper=False):
    """The adjoints of ``value`` and ``result`` (the factor) in ``cholesky_vjp(value, result,
    upper)``, ``g`` that of its output: the first is the factor's tangent along sym(g)."""
    low = _mT(result) if upper else np.asarray(result)
    gl = _mT(value) if upper else np.asarray(value)
    inv = np.linalg.inv(low)
    k = inv @ _sym(g) @ _mT(inv)
    p = _phi(_mT(low) @ gl)
    value_bar = low @ _phi(k)
    result_bar = gl @ _mT(_phi(k)) - _mT(inv) @ (p + _mT(p)) @ k
    if upper:
        return _mT(value_bar), _mT(result_bar)
    return value_bar, result_bar


def cholesky_vjp_tangent(value, result, upper, t):
    """The tangent of ``cholesky_vjp(value, result, upper)`` along ``t``, the factor's tangent."""
    low = _mT(result) if upper else np.asarray(result)
    gl = _mT(value) if upper else np.asarray(value)
    dl = _mT(t) if upper else np.asarray(t)
    inv = np.linalg.inv(low)
    d_inv = -inv @ dl @ inv
    p = _phi(_mT(low) @ gl)
    ds = _mT(d_inv) @ p @ inv + _mT(inv) @ _phi(_mT(dl) @ gl) @ inv + _mT(inv) @ p @ d_inv
    return _sym(ds)


def _eigh_parts(value, a, UPLO):
    lam, v = np.linalg.eigh(a, UPLO=UPLO)
    g = np.asarray(value)
    dg = g[..., None, :] - g[..., :, None]  # g_j - g_i
    dl = lam[..., None, :] - lam[..., :, None]
    e = np.where(dl == 0, 0.0, dg / np.where(dl == 0, 1.0, dl))
    return v, e


def _triangle(x, UPLO):
    """The adjoint of reading a symmetric matrix from one triangle (``UPLO``) of its argument."""
    if UPLO.upper() == "L":
        return np.tril(x) + np.tril(_mT(x), -1)
    return np.triu(x) + np.triu(_mT(x), 1)


def _symmetric_read(t, UPLO):
    """The symmetric matrix eigh reads from one triangle of ``t``."""
    if UPLO.upper() == "L":
        return np.tril(t) + _mT(np.tril(t, -1))
    return np.triu(t) + _mT(np.triu(t, 1))


def eigvalsh_vjp_adjoints(g, value, a, UPLO="L"):
    """The adjoints of ``value`` and ``a`` in ``eigvalsh_vjp(value, a, UPLO) = V diag(value)
    V^T``, ``g`` that of its output (divided differences of value over the eigenvalues)."""
    v, e = _eigh_parts(value, a, UPLO)
    c = _mT(v) @ np.asarray(g) @ v
    value_bar = np.diagonal(c, axis1=-2, axis2=-1)
    return value_bar, _triangle(v @ (e * c) @ _mT(v), UPLO)


def eigvalsh_vjp_tangent(value, a, UPLO, t):
    """The tangent of ``eigvalsh_vjp(value, a, UPLO)`` along ``t``, the tangent of ``a``."""
    v, e = _eigh_parts(value, a, UPLO)
    return v @ (e * (_mT(v) @ _symmetric_read(t, UPLO) @ v)) @ _mT(v)


def _power_words(a, n):
    """``(c, C, pairs)``: ``matrix_power_vjp(g, a, n) = c * sum of C^p g C^q over pairs``."""
    if n >= 0:
        return 1.0, _mT(a), [(k, n - 1 - k) for k in range(n)]
    return -1.0, _mT(np.linalg.inv(a)), [(k + 1, -n - k) for k in range(-n)]


def _powers(c, top):
    out = [np.broadcast_to(np.eye(c.shape[-1]), c.shape)]
    for _ in range(top):
        out.append(out[-1] @ c)
    return out


def matrix_power_vjp_adjoints(g, value, a, n):
    """The adjoints of ``value`` and ``a`` in ``matrix_power_vjp(value, a, n)``, ``g`` that of
    its output (the first is the power's tangent along ``g``)."""
    a = np.asarray(a)
    sign, c, pairs = _power_words(a, n)
    pw = _powers(c, abs(n) + 1)
    v = np.asarray(value)
    c_bar = np.zeros(a.shape, np.result_type(a, g, v, 1.0))
    for p, q in pairs:
        for i in range(p):
            c_bar = c_bar + _mT(pw[i]) @ g @ _mT(pw[p - 1 - i] @ v @ pw[q])
        for j in range(q):
            c_bar = c_bar + _mT(pw[p] @ v @ pw[j]) @ g @ _mT(pw[q - 1 - j])
    c_bar = sign * c_bar
    a_bar = _mT(c_bar) if n >= 0 else -c @ _mT(c_bar) @ c
    return matrix_power_vjp(g, _mT(a), n), a_bar


def matrix_power_vjp_tangent(value, a, n, t):
    """The tangent of ``matrix_power_vjp(value, a, n)`` along ``t``, the tangent of ``a``."""
    a = np.asarray(a)
    sign, c, pairs = _power_words(a, n)
    dc = _mT(t) if n >= 0 else -c @ _mT(t) @ c
    pw = _powers(c, abs(n) + 1)
    v = np.asarray(value)
    out = np.zeros(np.broadcast_shapes(a.shape, np.shape(t)), np.result_type(a, t, v, 1.0))
    for p, q in pairs:
        for i in range(p):
            out = out + pw[i] @ dc @ pw[p - 1 - i] @ v @ pw[q]
        for j in range(q):
            out = out + pw[p] @ v @ pw[j] @ dc @ pw[q - 1 - j]
    return sign * out


# pinv_vjp(G, P, A) as a sum of products: (sign, factors), a factor "X" or its transpose "X'"
_PINV_WORDS = ((-1.0, ("P'", "G", "P'")), (1.0, ("G'", "P", "P'")), (-1.0, ("A", "P", "G'", "P", "P'")),
               (1.0, ("P'", "P", "G'")), (-1.0, ("P'", "P", "G'", "P", "A")))


def _chain(mats):
    out = mats[0] if mats else None
    for m in mats[1:]:
        out = out @ m
    return out


def _factor(env, f):
    return _mT(env[f[0]]) if f.endswith("'") else env[f[0]]


def pinv_vjp_adjoints(g, value, result, a):
    """The adjoints of ``value``, ``result`` and ``a`` in ``pinv_vjp(value, result, a)`` (a sum
    of matrix products), ``g`` that of its output."""
    env = {"G": np.asarray(value), "P": np.asarray(result), "A": np.asarray(a)}
    bars = {k: 0.0 for k in env}
    for sign, word in _PINV_WORDS:
        mats = [_factor(env, f) for f in word]
        for i, f in enumerate(word):
            left, right = _chain(mats[:i]), _chain(mats[i + 1:])
            part = g if left is None else _mT(left) @ g
            part = part if right is None else part @ _mT(right)
            bars[f[0]] = bars[f[0]] + sign * (_mT(part) if f.endswith("'") else part)
    return bars["G"], bars["P"], bars["A"]


def pinv_vjp_tangent(value, result, a, t, which):
    """The tangent of ``pinv_vjp(value, result, a)`` along ``t``, the tangent of ``value``
    (``which`` "G"), ``result`` ("P") or ``a`` ("A")."""
    env = {"G": np.asarray(value), "P": np.asarray(result), "A": np.asarray(a)}
    total = 0.0
    for sign, word in _PINV_WORDS:
        for i, f in enumerate(word):
            if f[0] == which:
                mats = [_factor(env, h) for h in word]
                mats[i] = _mT(t) if f.endswith("'") else np.asarray(t)
                total = total + sign * _chain(mats)
    return total


def _svd_parts(value, a):
    """The thin SVD of ``a`` (``u, s, vt``) with ``value`` and the matrices of the derivative of
    ``u diag(value) vt``: ``f`` = 1/(s_j^2 - s_i^2), ``alpha`` = s_j g_j - s_i g_i, ``beta`` =
    s_i g_j - s_j g_i (0 where singular values repeat)."""
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    g = np.asarray(value)
    d = s[..., None, :] ** 2 - s[..., :, None] ** 2
    f = np.where(d == 0, 0.0, 1.0 / np.where(d == 0, 1.0, d))
    sg = s * g
    alpha = sg[..., None, :] - sg[..., :, None]
    beta = s[..., :, None] * g[..., None, :] - s[..., None, :] * g[..., :, None]
    rest = np.eye(a.shape[-2]) - u @ _mT(u)  # the projection off u's columns
    w = (_mT(vt) * (g / s)[..., None, :]) @ vt
    return u, vt, f, alpha, beta, rest, w


def svdvals_vjp_adjoints(g, value, a):
    """The adjoints of ``value`` and ``a`` in ``svdvals_vjp(value, a) = U diag(value) V^T``,
    ``g`` that of its output (distinct nonzero singular values)."""
    a = np.asarray(a)
    if a.shape[-2] < a.shape[-1]:
        value_bar, a_bar = svdvals_vjp_adjoints(_mT(g), value, _mT(a))
        return value_bar, _mT(a_bar)
    u, vt, f, alpha, beta, rest, w = _svd_parts(value, a)
    k = _mT(u) @ g @ _mT(vt)
    z = k * f * alpha + _mT(k * f * beta)
    return np.diagonal(k, axis1=-2, axis2=-1), u @ z @ vt + rest @ g @ w


def svdvals_vjp_tangent(value, a, t):
    """The tangent of ``svdvals_vjp(value, a)`` along ``t``, the tangent of ``a``."""
    a = np.asarray(a)
    if a.shape[-2] < a.shape[-1]:
        return _mT(svdvals_vjp_tangent(value, _mT(a), _mT(t)))
    u, vt, f, alpha, beta, rest, w = _svd_parts(value, a)
    dp = _mT(u) @ t @ _mT(vt)
    m = f * (dp * alpha + _mT(dp) * beta)
    return u @ m @ vt + rest @ t @ w


def _norm_kind(x, ord, axis, kind):
    """``(kind, axis)``: "matrix" and its two axes, or "vector", as norm_vjp dispatches."""
    if kind is None:
        if axis is None and np.ndim(x) == 2 and ord is not None:
            return "matrix", (0, 1)
        if axis is not None and np.ndim(axis) == 1 and len(axis) == 2:
            return "matrix", tuple(a % np.ndim(x) for a in axis)
        return "vector", axis
    return kind, axis


def _norm_power(ord, kind):
    """p of a norm whose adjoint is smooth in x (2 for Frobenius), "svd" for the spectral ones,
    None for those whose adjoint is piecewise constant in x (1, inf, 0) and reads no result."""
    if kind == "matrix":
        return 2.0 if ord in (None, "fro") else "svd" if ord in ("nuc", 2, -2) else None
    return 2.0 if ord is None else None if ord in (0, 1, np.inf, -np.inf) else float(ord)


def _spectral(value, x, ord, axes, keepdims):
    """The matrix axes moved last, the per-matrix adjoint and the weights of the singular values."""
    moved = np.moveaxis(x, axes, (-2, -1))
    g_m = np.moveaxis(_expand(value, x, axes, keepdims), axes, (-2, -1))[..., :1, :1]
    k = min(moved.shape[-2:])
    w = np.ones(k) if ord == "nuc" else np.eye(k)[0 if ord == 2 else -1]
    return moved, g_m, w


def norm_vjp_adjoint(wrt, g, value, result, x, ord=None, axis=None, keepdims=False, kind=None):
    """The adjoint of ``value``, ``result`` or ``x`` (``wrt``) in ``norm_vjp(value, result, x,
    ord, axis, keepdims)``, ``g`` that of its output; ``kind``: "vector" or "matrix" for
    vector_norm_vjp and matrix_norm_vjp (``axis``: their axis or axes)."""
    x = np.asarray(x)
    kind, axis = _norm_kind(x, ord, axis, kind)
    vjp = matrix_norm_vjp if kind == "matrix" else vector_norm_vjp
    if wrt == "value":  # the output is value (spread over x) times the norm's slope
        return np.sum(g * vjp(np.ones(np.shape(result)), result, x, ord, axis, keepdims), axis, keepdims=keepdims)
    p = _norm_power(ord, kind)
    if p is None or (p == "svd" and wrt == "result"):
        return zeros_like(result if wrt == "result" else x)
    if p == "svd":
        moved, g_m, w = _spectral(value, x, ord, axis, keepdims)
        return np.moveaxis(svdvals_vjp_adjoints(g_m * np.moveaxis(g, axis, (-2, -1)), w, moved)[1], (-2, -1), axis)
    ax, sign = np.abs(x), np.sign(x)
    if wrt == "result":
        return (1 - p) * result ** (-p) * value * np.sum(g * ax ** (p - 1) * sign, axis, keepdims=keepdims)
    return _expand(value * result ** (1 - p), x, axis, keepdims) * (p - 1) * ax ** (p - 2) * g


def norm_vjp_tangent(wrt, value, result, x, t, ord=None, axis=None, keepdims=False, kind=None):
    """The tangent of ``norm_vjp(value, result, x, ord, axis, keepdims)`` along ``t``, the
    tangent of ``value``, ``result`` or ``x`` (``wrt``; ``kind``: norm_vjp_adjoint)."""
    x = np.asarray(x)
    kind, axis = _norm_kind(x, ord, axis, kind)
    if wrt == "value":
        return (matrix_norm_vjp if kind == "matrix" else vector_norm_vjp)(t, result, x, ord, axis, keepdims)
    p = _norm_power(ord, kind)
    if p is None or (p == "svd" and wrt == "result"):
        return zeros_like(x)
    if p == "svd":
        moved, g_m, w = _spectral(value, x, ord, axis, keepdims)
        return np.moveaxis(g_m * svdvals_vjp_tangent(w, moved, np.moveaxis(t, axis, (-2, -1))), (-2, -1), axis)
    ax, sign = np.abs(x), np.sign(x)
    if wrt == "result":
        return _expand(value * (1 - p) * result ** (-p) * t, x, axis, keepdims) * ax ** (p - 1) * sign
    return _expand(value * result ** (1 - p), x, axis, keepdims) * (p - 1) * ax ** (p - 2) * t

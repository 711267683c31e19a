"""Adjoints of linear algebra (numpy only): ``np.linalg.solve``, ``cholesky``, ``eigvalsh``,
``svdvals``, ``pinv``, ``matrix_power``, ``norm`` (vector and matrix norms) and ``np.trace``
(``s2s.solve_vjp_a``, ``s2s.norm_vjp``, ...); the pieces the templates of ``eigh``, ``svd`` and
``qr`` are written with (``eigh_gaps``, ``triangle_symmetric``, ``triangle_fold``, ``svd_thin``)."""

from __future__ import annotations

import functools

import numpy as np

from ..errors import GradientError
from .broadcasting import _operand, unbroadcast
from .complex import _conj, abs_slope
from .containers import zeros_like
from .elementwise import _power_or_zero
from .products import _power_sum_adjoint, _power_sum_tangent, _word_adjoints, _word_tangent
from .reductions import _expand, extremum_vjp

__all__ = [
    "phase_free",
    "svd_phase_free",
    "eig_similar",
    "solve_vjp_b",
    "solve_vjp_a",
    "solve_vjps",
    "solve_vjps_by_inverse",
    "cholesky_vjp",
    "cholesky_vjp_by_inverse",
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
    "solve_vjps_adjoints",
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
    "eigh_gaps",
    "triangle_symmetric",
    "triangle_fold",
    "svd_thin",
    "real_only",
]


def _mT(x):
    return np.swapaxes(x, -1, -2)


def _transposed_solve(a, g):
    """``solve(a^T, g)`` (``g`` a stack of matrices): where ``g`` has at least as many columns
    as ``a`` (right-hand sides as unknowns), the transposed inverse times ``g``: numpy's solve
    runs two triangular solves over every column, which for these sizes cost more than an
    inverse and one matrix product (d = 20, 200 columns: 52 us against 23 us). Its error
    against exact rational solutions, condition numbers 1e2 to 1e13, measured 1-5x the solve's
    (tests/runtime/test_linalg_adjoints.py allows 20x, to 1e12)."""
    shape = np.shape(a)
    if np.shape(g)[-1] >= shape[-1] and len(shape) == np.ndim(g):
        return _mT(np.linalg.inv(a)) @ g
    return np.linalg.solve(_mT(a), g)


def solve_vjp_b(g, a, b):
    """Adjoint of ``b`` in ``np.linalg.solve(a, b)``."""
    g = _operand(g)
    if np.ndim(b) == 1:
        return unbroadcast(np.linalg.solve(_mT(a), g[..., None])[..., 0], b)
    return unbroadcast(_transposed_solve(a, g), b)


def solve_vjp_a(g, ans, a, b):
    """Adjoint of ``a`` in ``np.linalg.solve(a, b)``: -b_bar ans^T."""
    g = _operand(g)
    if np.ndim(b) == 1:
        b_bar = np.linalg.solve(_mT(a), g[..., None])
        return unbroadcast(-b_bar * _operand(ans)[..., None, :], a)
    b_bar = _transposed_solve(a, g)
    return unbroadcast(-b_bar @ _mT(ans), a)


def solve_vjps(g, ans, a, b):
    """The adjoints ``(a_bar, b_bar)`` of ``np.linalg.solve(a, b)`` at once, sharing one solve
    with the transposed matrix: b_bar = solve(a^T, g), a_bar = -b_bar ans^T (summed to the
    shapes of ``a`` and ``b``)."""
    g, vec = _operand(g), np.ndim(b) == 1
    b_bar = np.linalg.solve(_mT(a), g[..., None]) if vec else _transposed_solve(a, g)
    return _solve_pair(b_bar, ans, a, b, vec)


def solve_vjps_by_inverse(g, ans, a, b, *, inverse):
    """solve_vjps given ``inverse``, the inverse of ``a``, which a backward sweep computed once
    for every adjoint reading it (differentiate/inverses.py): b_bar = inverse^T g."""
    g, vec = _operand(g), np.ndim(b) == 1
    return _solve_pair(_mT(inverse) @ (g[..., None] if vec else g), ans, a, b, vec)


def _solve_pair(b_bar, ans, a, b, vec):
    """``(a_bar, b_bar)`` of ``np.linalg.solve(a, b)`` from b_bar = solve(a^T, g) (a column per
    vector ``b``): a_bar = -b_bar ans^T, each summed to its operand's shape."""
    a_bar = -b_bar * _operand(ans)[..., None, :] if vec else -b_bar @ _mT(ans)
    return unbroadcast(a_bar, a), unbroadcast(b_bar[..., 0] if vec else b_bar, b)


def cholesky_vjp(g, ans, upper=False):
    """Adjoint of ``np.linalg.cholesky`` (symmetric; Murray 2016, eq. 10)."""
    # one inverse of the factor (numpy has no triangular one)
    return cholesky_vjp_by_inverse(g, ans, upper, inverse=np.linalg.inv(ans))


def cholesky_vjp_by_inverse(g, ans, upper=False, *, inverse):
    """cholesky_vjp given ``inverse``, the inverse of the factor ``ans``, which a backward sweep
    computed once for every adjoint reading it (differentiate/inverses.py)."""
    low = _mT(ans) if upper else np.asarray(ans)
    g = _mT(g) if upper else np.asarray(g)
    inv_low = _mT(inverse) if upper else inverse
    s = _mT(inv_low) @ _phi(_mT(low) @ g) @ inv_low
    out = s + _mT(s)
    out *= 0.5
    return out


def eigvalsh_vjp(g, a, UPLO="L"):
    """Adjoint of ``np.linalg.eigvalsh(a)``: V diag(g) V^T (symmetric; a complex ``a`` is refused)."""
    real_only(a, "np.linalg.eigvalsh")
    _, v = np.linalg.eigh(a, UPLO=UPLO)
    return (v * np.asarray(g)[..., None, :]) @ _mT(v)


def svdvals_vjp(g, a):
    """Adjoint of ``np.linalg.svdvals(a)``: U diag(g) V^T (its conjugate for a complex ``a``:
    ds_i = Re(u_i^H da v_i))."""
    u, _, vt = np.linalg.svd(a, full_matrices=False)
    return _conj((u * np.asarray(g)[..., None, :]) @ vt) if np.iscomplexobj(a) else \
        (u * np.asarray(g)[..., None, :]) @ vt


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
    x = _operand(x)  # an array keeps its type (a subclass, CuPy's, dask's)
    if axis is None and x.ndim == 2 and ord is not None:
        return matrix_norm_vjp(g, ans, x, ord, (0, 1), keepdims)
    if axis is not None and np.ndim(axis) == 1 and len(axis) == 2:
        return matrix_norm_vjp(g, ans, x, ord, tuple(a % x.ndim for a in axis), keepdims)
    return vector_norm_vjp(g, ans, x, ord, axis, keepdims)


def vector_norm_vjp(g, ans, x, ord, axis, keepdims):
    x = _operand(x)  # an array keeps its type (a subclass, CuPy's, dask's)
    g = np.real(g)  # a norm is real; its adjoint at a complex x is conjugated (complex.py)
    if ord is None or ord == 2:
        return _expand(g * _power_or_zero(ans, -1.0), x, axis, keepdims) * _conj(x)
    if ord == 1:
        return _expand(g, x, axis, keepdims) * abs_slope(x)
    if ord in (np.inf, -np.inf):
        return extremum_vjp(g, ans, np.abs(x), axis, keepdims) * abs_slope(x)
    if ord == 0:
        return np.zeros(x.shape, dtype=np.result_type(x, np.float64))
    return _expand(g * ans ** (1.0 - ord), x, axis, keepdims) * np.abs(x) ** (ord - 1) * abs_slope(x)


def matrix_norm_vjp(g, ans, x, ord, axes, keepdims):
    """Matrix norms over the two ``axes`` (Frobenius, nuclear, 1, -1, inf, -inf, 2, -2)."""
    x = _operand(x)  # an array keeps its type (a subclass, CuPy's, dask's)
    g = np.real(g)
    if ord is None or ord == "fro":
        return _expand(g * _power_or_zero(ans, -1.0), x, axes, keepdims) * _conj(x)
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

def _as_matrix(x, vec):  # a vector b's values as a column
    return np.asarray(x)[..., None] if vec else np.asarray(x)


def _as_given(x, vec, like):  # and back, summed to like's shape
    return unbroadcast(x[..., 0] if vec else x, like)


def solve_vjp_b_tangent(value, a, b, t):
    """The tangent of ``solve_vjp_b(value, a, b)`` along ``t``, that of ``a``: -solve(a^T, t^T y)."""
    vec = np.ndim(b) == 1
    y = np.linalg.solve(_mT(a), _as_matrix(value, vec))
    return _as_given(-np.linalg.solve(_mT(a), _mT(t) @ y), vec, b)


def solve_vjp_a_adjoints(g, value, result, a, b):
    """The adjoints of ``value``, ``result``, ``a`` in ``solve_vjp_a = -solve(a^T, value) result^T``."""
    vec = np.ndim(b) == 1
    x = np.linalg.solve(_mT(a), _as_matrix(value, vec))
    w = np.linalg.solve(a, g @ _as_matrix(result, vec))
    return _as_given(-w, vec, value), _as_given(-_mT(g) @ x, vec, result), unbroadcast(x @ _mT(w), a)


def solve_vjp_a_tangent(value, result, a, b, t):
    """The tangent of ``solve_vjp_a(value, result, a, b)`` along ``t``, that of ``a``."""
    vec = np.ndim(b) == 1
    x = np.linalg.solve(_mT(a), _as_matrix(value, vec))
    return unbroadcast(np.linalg.solve(_mT(a), _mT(t) @ x) @ _mT(_as_matrix(result, vec)), a)


def solve_vjps_adjoints(g, value, result, a, b):
    """The adjoints of ``value``, ``result``, ``a`` in ``solve_vjps(value, result, a, b)``, ``g``
    the pair of its outputs' adjoints ``(ga, gb)``: with y = solve(a^T, value) (its b_bar) and
    w = solve(a, gb - ga result), they are w, -ga^T y and -y w^T."""
    vec = np.ndim(b) == 1
    ga, gb = g
    x = _as_matrix(result, vec)
    y = np.linalg.solve(_mT(a), _as_matrix(value, vec))
    w = np.linalg.solve(a, _as_matrix(gb, vec) - np.asarray(ga) @ x)
    return _as_given(w, vec, value), _as_given(-_mT(ga) @ y, vec, result), unbroadcast(-y @ _mT(w), a)


@functools.lru_cache(maxsize=32)
def _phi_weights(n):
    """``(mask, weights)`` of Murray's Phi for n x n matrices: the lower triangle, and 1 below the
    diagonal, 1/2 on it (read-only, shared)."""
    mask, weights = np.tri(n, dtype=bool), np.tri(n) - 0.5 * np.eye(n)
    mask.setflags(write=False)
    weights.setflags(write=False)
    return mask, weights


def _phi(x):
    """The lower triangle with its diagonal halved (Murray's Phi); zero above the diagonal
    whatever ``x`` holds there."""
    mask, weights = _phi_weights(np.shape(x)[-1])
    return np.where(mask, x * weights, 0.0)


def _sym(x):
    return 0.5 * (x + _mT(x))


def cholesky_vjp_adjoints(g, value, result, upper=False):
    """The adjoints of ``value`` and the factor ``result`` in cholesky_vjp, ``g`` its output's."""
    low, gl = (_mT(result), _mT(value)) if upper else (np.asarray(result), np.asarray(value))
    inv = np.linalg.inv(low)
    k = _phi(inv @ _sym(g) @ _mT(inv))
    p = _phi(_mT(low) @ gl)
    value_bar, result_bar = low @ k, gl @ _mT(k) - _mT(inv) @ (p + _mT(p)) @ inv @ _sym(g) @ _mT(inv)
    return (_mT(value_bar), _mT(result_bar)) if upper else (value_bar, result_bar)


def cholesky_vjp_tangent(value, result, upper, t):
    """The tangent of ``cholesky_vjp(value, result, upper)`` along ``t``, the factor's tangent."""
    low, gl = (_mT(result), _mT(value)) if upper else (np.asarray(result), np.asarray(value))
    dl = _mT(t) if upper else np.asarray(t)
    inv = np.linalg.inv(low)
    d_inv = -inv @ dl @ inv
    p = _phi(_mT(low) @ gl)
    return _sym(_mT(d_inv) @ p @ inv + _mT(inv) @ _phi(_mT(dl) @ gl) @ inv + _mT(inv) @ p @ d_inv)


def _divided(value, s):
    """(g_j - g_i) / (s_j - s_i), 0 where s_i == s_j."""
    dg = value[..., None, :] - value[..., :, None]
    ds = s[..., None, :] - s[..., :, None]
    return np.where(ds == 0, 0.0, dg / np.where(ds == 0, 1.0, ds))


def _triangle(x, UPLO, adjoint):
    """The symmetric matrix eigh reads from one triangle of ``x`` (or that reading's adjoint)."""
    y = _mT(x)
    if UPLO.upper() == "L":
        return np.tril(x) + (np.tril(y, -1) if adjoint else _mT(np.tril(x, -1)))
    return np.triu(x) + (np.triu(y, 1) if adjoint else _mT(np.triu(x, 1)))


def eigvalsh_vjp_adjoints(g, value, a, UPLO="L"):
    """The adjoints of ``value`` and ``a`` in ``eigvalsh_vjp = V diag(value) V^T``, ``g`` its output's."""
    lam, v = np.linalg.eigh(a, UPLO=UPLO)
    c = _mT(v) @ np.asarray(g) @ v
    e = _divided(np.asarray(value), lam)
    return np.diagonal(c, axis1=-2, axis2=-1), _triangle(v @ (e * c) @ _mT(v), UPLO, True)


def eigvalsh_vjp_tangent(value, a, UPLO, t):
    """The tangent of ``eigvalsh_vjp(value, a, UPLO)`` along ``t``, the tangent of ``a``."""
    lam, v = np.linalg.eigh(a, UPLO=UPLO)
    e = _divided(np.asarray(value), lam)
    return v @ (e * (_mT(v) @ _triangle(t, UPLO, False) @ v)) @ _mT(v)


def _power_words(a, n):
    """``(sign, C, pairs)``: matrix_power_vjp is sign * sum C^p g C^q (C: a^T, or inv(a)^T)."""
    c = _mT(a) if n >= 0 else _mT(np.linalg.inv(a))
    pairs = [(k, n - 1 - k) for k in range(n)] if n >= 0 else [(k + 1, -n - k) for k in range(-n)]
    return (1.0 if n >= 0 else -1.0), c, pairs


def matrix_power_vjp_adjoints(g, value, a, n):
    """The adjoints of ``value`` and ``a`` in ``matrix_power_vjp(value, a, n)``, ``g`` its output's."""
    sign, c, pairs = _power_words(np.asarray(a), n)
    c_bar = sign * _power_sum_adjoint(c, pairs, np.asarray(value), g)
    return matrix_power_vjp(g, _mT(a), n), (_mT(c_bar) if n >= 0 else -c @ _mT(c_bar) @ c)


def matrix_power_vjp_tangent(value, a, n, t):
    """The tangent of ``matrix_power_vjp(value, a, n)`` along ``t``, the tangent of ``a``."""
    sign, c, pairs = _power_words(np.asarray(a), n)
    dc = _mT(t) if n >= 0 else -c @ _mT(t) @ c
    return sign * _power_sum_tangent(c, pairs, np.asarray(value), dc)


# pinv_vjp(G, P, A) as a sum of products: (sign, factors), a factor "X" or its transpose "X'"
_PINV_WORDS = ((-1.0, ("P'", "G", "P'")), (1.0, ("G'", "P", "P'")), (-1.0, ("A", "P", "G'", "P", "P'")),
               (1.0, ("P'", "P", "G'")), (-1.0, ("P'", "P", "G'", "P", "A")))


def pinv_vjp_adjoints(g, value, result, a):
    """The adjoints of ``value``, ``result`` and ``a`` in ``pinv_vjp(value, result, a)``."""
    bars = _word_adjoints(_PINV_WORDS, {"G": value, "P": result, "A": a}, g)
    return bars["G"], bars["P"], bars["A"]


def pinv_vjp_tangent(value, result, a, t, which):
    """The tangent of ``pinv_vjp(value, result, a)`` along ``t``, that of "G", "P" or "A"."""
    return _word_tangent(_PINV_WORDS, {"G": value, "P": result, "A": a}, which, t)


def _svd_parts(value, a):
    """The thin SVD's u, vt, and f = 1/(s_j^2 - s_i^2), alpha = s_j g_j - s_i g_i, beta = s_i g_j
    - s_j g_i, the projection off u's columns and v diag(g/s) v^T."""
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    g = np.asarray(value)
    d = s[..., None, :] ** 2 - s[..., :, None] ** 2
    f = np.where(d == 0, 0.0, 1.0 / np.where(d == 0, 1.0, d))
    alpha = (s * g)[..., None, :] - (s * g)[..., :, None]
    beta = s[..., :, None] * g[..., None, :] - s[..., None, :] * g[..., :, None]
    rest = np.eye(a.shape[-2]) - u @ _mT(u)
    return u, vt, f, alpha, beta, rest, (_mT(vt) * (g / s)[..., None, :]) @ vt


def svdvals_vjp_adjoints(g, value, a):
    """The adjoints of ``value`` and ``a`` in ``svdvals_vjp = U diag(value) V^T``, ``g`` its output's."""
    a = real_only(np.asarray(a), "the second derivative of np.linalg.svdvals")
    if a.shape[-2] < a.shape[-1]:
        value_bar, a_bar = svdvals_vjp_adjoints(_mT(g), value, _mT(a))
        return value_bar, _mT(a_bar)
    u, vt, f, alpha, beta, rest, w = _svd_parts(value, a)
    k = _mT(u) @ g @ _mT(vt)
    z = k * f * alpha + _mT(k * f * beta)
    return np.diagonal(k, axis1=-2, axis2=-1), u @ z @ vt + rest @ g @ w


def svdvals_vjp_tangent(value, a, t):
    """The tangent of ``svdvals_vjp(value, a)`` along ``t``, the tangent of ``a``."""
    a = real_only(np.asarray(a), "the second derivative of np.linalg.svdvals")
    if a.shape[-2] < a.shape[-1]:
        return _mT(svdvals_vjp_tangent(value, _mT(a), _mT(t)))
    u, vt, f, alpha, beta, rest, w = _svd_parts(value, a)
    dp = _mT(u) @ t @ _mT(vt)
    return u @ (f * (dp * alpha + _mT(dp) * beta)) @ vt + rest @ t @ w


def _norm_kind(x, ord, axis, kind):
    """``(kind, axis)``: "matrix" and its two axes, or "vector", as norm_vjp dispatches."""
    if kind is None and axis is None and np.ndim(x) == 2 and ord is not None:
        return "matrix", (0, 1)
    if kind is None and axis is not None and np.ndim(axis) == 1 and len(axis) == 2:
        return "matrix", tuple(a % np.ndim(x) for a in axis)
    return kind or "vector", axis


def _norm_power(ord, kind):
    """p of a norm whose adjoint is smooth in x (2 for Frobenius), "svd" for the spectral ones,
    None for those whose adjoint is piecewise constant in x (1, inf, 0) and reads no result."""
    if kind == "matrix":
        return 2.0 if ord in (None, "fro") else "svd" if ord in ("nuc", 2, -2) else None
    return 2.0 if ord is None else None if ord in (0, 1, np.inf, -np.inf) else float(ord)


def _norm_second(wrt, s, value, result, x, ord, axis, keepdims, kind, adjoint):
    """norm_vjp_adjoint (``adjoint``; ``s``: the output's adjoint) or norm_vjp_tangent (``s``: a tangent)."""
    x = np.asarray(x)
    kind, axis = _norm_kind(x, ord, axis, kind)
    vjp = matrix_norm_vjp if kind == "matrix" else vector_norm_vjp
    if wrt == "value":  # the output is value (spread over x) times the norm's slope
        if adjoint:
            s = s * vjp(np.ones(np.shape(result)), result, x, ord, axis, keepdims)
            return np.sum(s, axis, keepdims=keepdims)
        return vjp(s, result, x, ord, axis, keepdims)
    p = _norm_power(ord, kind)
    if p is None or (p == "svd" and wrt == "result"):
        return zeros_like(result if wrt == "result" and adjoint else x)
    if p == "svd":  # value times U diag(w) V^T, w picking singular values: svdvals' derivatives
        moved = np.moveaxis(x, axis, (-2, -1))
        g_m = np.moveaxis(_expand(value, x, axis, keepdims), axis, (-2, -1))[..., :1, :1]
        k = min(moved.shape[-2:])
        w = np.ones(k) if ord == "nuc" else np.eye(k)[0 if ord == 2 else -1]
        s_m = np.moveaxis(s, axis, (-2, -1))
        if adjoint:
            return np.moveaxis(svdvals_vjp_adjoints(g_m * s_m, w, moved)[1], (-2, -1), axis)
        return np.moveaxis(g_m * svdvals_vjp_tangent(w, moved, s_m), (-2, -1), axis)
    ax, sign = np.abs(x), np.sign(x)
    if wrt == "result" and adjoint:
        return (1 - p) * _power_or_zero(result, -p) * value * np.sum(s * ax ** (p - 1) * sign, axis, keepdims=keepdims)
    if wrt == "result":
        return _expand(value * (1 - p) * _power_or_zero(result, -p) * s, x, axis, keepdims) * ax ** (p - 1) * sign
    return _expand(value * _power_or_zero(result, 1 - p), x, axis, keepdims) * (p - 1) * ax ** (p - 2) * s


def norm_vjp_adjoint(wrt, g, value, result, x, ord=None, axis=None, keepdims=False, kind=None):
    """The adjoint of ``value``, ``result`` or ``x`` (``wrt``) in ``norm_vjp(value, result, x,
    ord, axis, keepdims)``, ``g`` that of its output; ``kind``: "vector" or "matrix" for
    vector_norm_vjp and matrix_norm_vjp (``axis``: their axis or axes)."""
    return _norm_second(wrt, g, value, result, x, ord, axis, keepdims, kind, True)


def norm_vjp_tangent(wrt, value, result, x, t, ord=None, axis=None, keepdims=False, kind=None):
    """The tangent of ``norm_vjp(...)`` along ``t``, that of ``wrt`` (see norm_vjp_adjoint)."""
    return _norm_second(wrt, t, value, result, x, ord, axis, keepdims, kind, False)


# ----- the pieces of the eigh, svd and qr templates (rules/linalg.py) ------------------------------


def eigh_gaps(w):
    """``F[..., i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it: how eigenvectors turn as
    eigenvalues ``w`` move apart (infinite where two are equal: the derivative is undefined there)."""
    w = np.asarray(w)
    gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    n = w.shape[-1]
    off = ~np.eye(n, dtype=bool)
    with np.errstate(divide="ignore"):
        return np.where(off, 1.0 / np.where(off, gaps, 1.0), 0.0)


def _hermitian(x, UPLO, adjoint):
    """``_triangle`` of a complex ``x``: the Hermitian matrix read from one triangle, its diagonal's
    real part (or that reading's adjoint: the other triangle's conjugate added, the diagonal's real
    part), each the other's adjoint under the convention that pairs an adjoint with a change
    without conjugating (both are real-linear, not complex-linear)."""
    lower = UPLO.upper() == "L"
    strict = np.tril(x, -1) if lower else np.triu(x, 1)
    other = (np.triu(x, 1) if lower else np.tril(x, -1)) if adjoint else strict
    return strict + np.conj(_mT(other)) + np.real(np.diagonal(x, 0, -2, -1))[..., None] * np.eye(x.shape[-1])


def triangle_symmetric(x, UPLO="L"):
    """The symmetric (for a complex ``x``, Hermitian) matrix ``np.linalg.eigh(x, UPLO)`` reads from
    one triangle of ``x`` (linear)."""
    if np.iscomplexobj(x):
        return _hermitian(x, UPLO, False)
    return _triangle(x, UPLO, False)


def triangle_fold(x, UPLO="L"):
    """The transpose of ``triangle_symmetric``: an adjoint ``x`` of the symmetric (Hermitian)
    matrix folded onto the triangle it was read from (the other triangle's adjoint is zero)."""
    if np.iscomplexobj(x):
        return _hermitian(x, UPLO, True)
    return _triangle(x, UPLO, True)


def phase_free(value, v, function="np.linalg.eigh"):
    """``value`` (the adjoint of eigenvectors ``v``) itself, after checking that the function does
    not depend on the eigenvectors' phases, which numpy leaves arbitrary for complex ones:
    Im(diag(v^T value)) is zero (as JAX checks; real eigenvectors have no such freedom)."""
    if np.iscomplexobj(v) and not (type(value) is float and value == 0.0):
        drift = np.abs(np.imag(np.diagonal(_mT(v) @ value, 0, -2, -1)))
        if np.any(drift > 1e-8 * (1.0 + np.max(np.abs(value)))):
            raise GradientError(f"{function} of a complex matrix: the function depends on the phases of its "
                                "eigenvectors, which numpy leaves arbitrary, so it has no derivative (a function "
                                "of np.abs(v) or of v @ v.conj().T has one)")
    return value


def eig_similar(value, v):
    """``V^-T diag(value) V^T``: the adjoint of a matrix whose eigenvectors are ``v``'s columns in
    its eigenvalues, ``value`` theirs (np.linalg.eigvals' rule; one ``v``, so a second derivative
    sees the phases of ``v``'s columns cancel)."""
    return np.linalg.solve(_mT(v), np.asarray(value)[..., None] * _mT(v))


def svd_phase_free(j, k):
    """``j`` itself, after checking that a function of ``np.linalg.svd``'s complex factors does not
    depend on the phases numpy leaves arbitrary (a singular pair turned together, ``u_i e^(i phi)``,
    ``v_i e^(i phi)``): Im(diag(j + k)) is zero, ``j = U^H conj(gU)`` and ``k = Vh gVh^T`` (as
    PyTorch checks)."""
    drift = np.abs(np.imag(np.diagonal(j, 0, -2, -1) + np.diagonal(k, 0, -2, -1)))
    if np.any(drift > 1e-8 * (1.0 + np.max(np.abs(j)) + np.max(np.abs(k)))):
        raise GradientError("np.linalg.svd of a complex matrix: the function depends on the phases of its "
                            "singular vectors, which numpy leaves arbitrary, so it has no derivative (a function "
                            "of the singular values, of np.abs(u), or of u @ vh has one)")
    return j


def real_only(x, function):
    """``x`` itself, after checking it is real: ``function``'s derivative is written for real
    matrices only (a complex one raises GradientError rather than give a wrong gradient)."""
    if np.iscomplexobj(x):
        raise GradientError(f"s2sgrad differentiates {function} of real matrices only; this one "
                            "is complex")
    return x


def svd_thin(u, vh):
    """``u`` itself, after checking that ``u`` and ``vh`` are the thin factors of an SVD (the
    adjoint of ``np.linalg.svd`` is written for them: with ``full_matrices=True`` a non-square
    matrix's extra singular vectors are arbitrary)."""
    if np.shape(u)[-1] != np.shape(vh)[-2]:
        raise ValueError("s2sgrad: the derivative of np.linalg.svd of a non-square matrix needs "
                         "full_matrices=False")
    return u


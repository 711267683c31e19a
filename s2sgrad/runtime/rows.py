"""A loop's per-step values computed before the loop, all steps at once (numpy only).

The products with one loop-invariant factor (lower/hoist.py writes the calls):
``s2s.rows_matmul(a, n, b)`` stacks ``a[t] @ b`` for ``t < n``, ``rows_rmatmul`` stacks ``b @
a[t]``, ``rows_dot`` and ``rows_rdot`` the same with ``np.dot``; each has the adjoints of ``a``
and ``b``. One product where it gives the same rows (stacked vectors or matrices and one vector
or matrix), else the products one by one, so values stay those of the loop as written.

The tails (lower/batched_loops.py writes the calls): ``s2s.tails(x, start, padded)`` holds each
step's ``x[start + t:]`` in row ``t``, laid where it lies in ``x[start:]``, the entries before it
(``padded``) holding ``x[-1]``; ``tails_vjp`` is its adjoint."""

from __future__ import annotations

import numpy as np

from .broadcasting import _ndarray
from .containers import zeros_like
from .products import dot_vjp_a, dot_vjp_b, matmul_vjp_a, matmul_vjp_b

__all__ = [
    "rows_matmul",
    "rows_matmul_vjp_a",
    "rows_matmul_vjp_b",
    "rows_rmatmul",
    "rows_rmatmul_vjp_a",
    "rows_rmatmul_vjp_b",
    "rows_dot",
    "rows_dot_vjp_a",
    "rows_dot_vjp_b",
    "rows_rdot",
    "rows_rdot_vjp_a",
    "rows_rdot_vjp_b",
    "tails",
    "tails_vjp",
]


def _one_product(a, b, left: bool) -> bool:
    """Whether one product of ``a[:n]`` gives the rows: ``a[t] @ b`` for a stack of vectors or
    matrices and one vector or matrix; ``b @ a[t]`` for a matrix ``b`` and a stack of vectors or
    matrices (np.dot is the same product for these)."""
    if type(a) is not _ndarray or type(b) is not _ndarray:
        return False
    return a.ndim >= 2 and 1 <= b.ndim <= 2 if left else b.ndim == 2 and a.ndim in (2, 3)


def _rows(a, n, b, product, left: bool):
    if _one_product(a, b, left):
        if left:
            return a[:n] @ b
        return a[:n] @ b.T if a.ndim == 2 else np.matmul(b, a[:n])
    rows = [product(a[t], b) if left else product(b, a[t]) for t in range(min(n, len(a)))]
    return np.array(rows) if rows else np.empty((0,))


def _rows_vjp_a(g, a, n, b, row_vjp, left: bool):
    """The adjoint of the stacked array: the per-row adjoints in its first ``n`` rows."""
    out = zeros_like(a)
    if _one_product(a, b, left):
        if left:
            out[:n] = matmul_vjp_a(g, a[:n], b)
        else:
            out[:n] = g @ b if a.ndim == 2 else np.matmul(b.T, g)
        return out
    for t in range(len(g)):
        out[t] += row_vjp(g[t], a[t], b)
    return out


def _rows_vjp_b(g, a, n, b, fixed_vjp, left: bool):
    """The adjoint of the loop-invariant factor: the sum over the rows."""
    if _one_product(a, b, left):
        if left:
            return matmul_vjp_b(g, a[:n], b)
        if a.ndim == 2:
            return g.T @ a[:n]
        return np.tensordot(g, a[:n], axes=([0, 2], [0, 2]))
    total = zeros_like(b)
    for t in range(len(g)):
        total = total + fixed_vjp(g[t], a[t], b)
    return total


def rows_matmul(a, n, b):
    """``a[t] @ b`` for every ``t < n``, stacked."""
    return _rows(a, n, b, np.matmul, True)


def rows_matmul_vjp_a(g, a, n, b):
    return _rows_vjp_a(g, a, n, b, matmul_vjp_a, True)


def rows_matmul_vjp_b(g, a, n, b):
    return _rows_vjp_b(g, a, n, b, matmul_vjp_b, True)


def rows_rmatmul(a, n, b):
    """``b @ a[t]`` for every ``t < n``, stacked."""
    return _rows(a, n, b, np.matmul, False)


def rows_rmatmul_vjp_a(g, a, n, b):
    return _rows_vjp_a(g, a, n, b, lambda gt, at, b_: matmul_vjp_b(gt, b_, at), False)


def rows_rmatmul_vjp_b(g, a, n, b):
    return _rows_vjp_b(g, a, n, b, lambda gt, at, b_: matmul_vjp_a(gt, b_, at), False)


def rows_dot(a, n, b):
    """``np.dot(a[t], b)`` for every ``t < n``, stacked."""
    return _rows(a, n, b, np.dot, True)


def rows_dot_vjp_a(g, a, n, b):
    return _rows_vjp_a(g, a, n, b, dot_vjp_a, True)


def rows_dot_vjp_b(g, a, n, b):
    return _rows_vjp_b(g, a, n, b, dot_vjp_b, True)


def rows_rdot(a, n, b):
    """``np.dot(b, a[t])`` for every ``t < n``, stacked."""
    return _rows(a, n, b, np.dot, False)


def rows_rdot_vjp_a(g, a, n, b):
    return _rows_vjp_a(g, a, n, b, lambda gt, at, b_: dot_vjp_b(gt, b_, at), False)


def rows_rdot_vjp_b(g, a, n, b):
    return _rows_vjp_b(g, a, n, b, lambda gt, at, b_: dot_vjp_a(gt, b_, at), False)


def _padding(padded, x):
    """``padded`` (steps x entries) with an axis of length 1 for each further axis of ``x``."""
    return padded.reshape(padded.shape + (1,) * (np.ndim(x) - 1))


def tails(x, start, padded, fill=True):
    """Every step's tail of ``x`` at once: row ``t`` is ``x[start:]`` with the entries before the
    step's tail ``x[start + t:]`` (``padded[t]``, ``np.tri(steps, len(x) - start, k=-1)``)
    replaced by ``x[-1]`` (``fill``), which every tail of one entry or more holds, so a padded
    entry computes what its step's last entry computes; or by 0 (``fill`` False: the tangent and
    the adjoint's transpose). The fill carries no derivative: the batched loop sums a tail's axis
    over its step's entries only, so a padded entry never reaches its value."""
    x = np.asarray(x)
    if fill and x.ndim > 1:  # rows taken by index: a where over short rows runs 4x slower
        return np.take(x, np.where(padded, len(x) - 1, np.arange(start, len(x))), axis=0)
    return np.where(_padding(padded, x), x[-1] if fill else 0, x[start:])


def _kept_sums(value, padded):
    """The sum over the steps of ``value``'s entries that are not ``padded`` (``value``: steps x
    entries x ..., floats), as products with the 0/1 mask (one batched matrix product where the
    entries are rows of several numbers); None where a product is not finite (a padded inf or nan
    times 0 is not the 0 np.where gives: the caller's where then) or ``value`` is of another
    kind."""
    if value.ndim < 2 or value.shape[:2] != padded.shape or value.dtype.kind not in "fc":
        return None
    kept = (~padded).astype(value.dtype)
    if value.ndim == 2:
        summed = (value * kept).sum(axis=0)
    else:
        steps, entries = padded.shape
        each = int(np.prod(value.shape[2:]))
        rows = value.reshape(steps, entries, each).transpose(1, 0, 2)  # entries x steps x each
        summed = np.matmul(kept.T[:, None, :], rows)[:, 0, :]
    return summed if np.isfinite(summed.sum()) else None


def tails_vjp(value, x, start, padded):
    """The adjoint of ``x`` in ``tails(x, start, padded)`` given the result's adjoint ``value``:
    each step's entries (not the padded ones) added back where the step read them (_kept_sums;
    else rows of several numbers masked as one flat row per step: a where over short rows is
    slow)."""
    out = zeros_like(x)
    value = np.asarray(value)
    steps, entries = padded.shape
    summed = _kept_sums(value, padded)
    if summed is not None:
        out[start:] = summed.reshape(out[start:].shape)
        return out
    if value.ndim > 2 and value.shape[:2] == padded.shape:
        each = int(np.prod(value.shape[2:]))  # (no entry to ask where a loop made no step)
        flat = np.where(np.repeat(padded, each, axis=1), 0, value.reshape(steps, entries * each))
        out[start:] = np.add.reduce(flat, axis=0).reshape(out[start:].shape)
    else:
        out[start:] = np.sum(np.where(_padding(padded, x), 0, value), axis=0)
    return out

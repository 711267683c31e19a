"""Runtime helpers for Python's ``sorted`` of numbers (numpy only; re-exported by
s2sgrad.runtime): ``sorted(xs)`` puts each item where the order of the values sends it, so its
derivative is that permutation: the tangent gathers the items' tangents by the order
(``sorted_jvp``), the adjoint scatters the result's adjoints back (``sorted_vjp``); each is the
other's transpose."""

from __future__ import annotations

import numpy as np

from .containers import Parts, _is_zero

__all__ = ["sorted_jvp", "sorted_vjp"]


def _order(xs, key, reverse):
    """The positions of ``xs``'s items in the order ``sorted(xs, key=key, reverse=reverse)``
    puts them (stable, as Python's sort is)."""
    values = list(xs)
    pick = values.__getitem__ if key is None else (lambda i: key(values[i]))
    return sorted(range(len(values)), key=pick, reverse=reverse)


def sorted_jvp(t, xs, key=None, reverse=False):
    """The tangent of ``sorted(xs, ...)``: the items' tangents ``t`` in the sorted order (a list)."""
    if _is_zero(t):
        return t
    items = list(t)
    return [items[i] for i in _order(xs, key, reverse)]


def sorted_vjp(g, xs, key=None, reverse=False):
    """The adjoint of ``xs`` in ``sorted(xs, ...)``: the result's adjoints ``g`` (one per item)
    put back where each item came from; an array ``xs`` gets an array."""
    if _is_zero(g):
        return g
    out = [0.0] * len(list(xs))
    for position, i in enumerate(_order(xs, key, reverse)):
        out[i] = 0.0 if g[position] is None else g[position]
    if isinstance(xs, np.ndarray):
        return np.reshape(np.asarray(out, dtype=np.result_type(xs, float)), np.shape(xs))
    return Parts(out)

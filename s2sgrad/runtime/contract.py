"""Runtime helpers for ``np.einsum`` (numpy only; re-exported by s2sgrad.runtime): what generated
code calls for the adjoints of einsum operands (``s2s.einsum_vjps``).

The adjoint of an einsum operand is an einsum of the output's adjoint with the other operands.
Three things make that more than one call: ``...`` (its axes get letters of their own, aligned
from the right and broadcast like numpy's), a size-1 axis broadcast against a longer one (it gets
a letter of its own, so the adjoint sums over the longer axis and keeps the 1), and a repeated
index (``'ii->'``: the operand's diagonal is read, so its adjoint is the partial result written on
a diagonal of zeros, through the writable view ``np.einsum('ii->i', out)`` returns).
"""

from __future__ import annotations

import string

import numpy as np

from ..errors import UsageError
from .containers import Parts, _is_zero, zeros_like

__all__ = [
    "einsum_vjps",
    "einsum_vjp",
    "einsum_with",
    "einsum_vjp_operands",
    "einsum_vjps_operands",
    "einsum_vjps_value",
    "einsum_pairs_value",
    "einsum_pairs_operands",
    "einsum_interleaved",
    "one_at",
]

_LETTERS = string.ascii_letters


def einsum_vjps(g, subscripts, operands):
    """Adjoints of every operand of ``np.einsum(subscripts, *operands)``."""
    return Parts(einsum_vjp(g, subscripts, operands, i) for i in range(len(operands)))


def einsum_vjp(g, subscripts, operands, index):
    """Adjoint of ``operands[index]`` in ``np.einsum(subscripts, *operands)``."""
    ins, out = _explicit(subscripts, [np.ndim(o) for o in operands])
    shapes = [np.shape(o) for o in operands]
    sizes = _sizes(ins + [out], shapes + [np.shape(g)])
    x = operands[index]
    target = list(ins[index])
    fresh = iter(c for c in _LETTERS if c not in sizes)
    for ax, c in enumerate(target):  # an axis of 1 broadcast against a longer one: its own letter
        if shapes[index][ax] == 1 and sizes[c] != 1:
            target[ax] = next(fresh)
    others = [s for i, s in enumerate(ins) if i != index]
    available = set(out).union(*others)
    kept = "".join(dict.fromkeys(c for c in target if c in available))
    spec = ",".join([out] + others) + "->" + kept
    partial = np.einsum(spec, g, *(o for i, o in enumerate(operands) if i != index))
    unique = "".join(dict.fromkeys(target))
    if kept != unique:  # summed in the forward (only in this operand): broadcast back
        for ax, c in enumerate(unique):
            if c not in kept:
                partial = np.expand_dims(partial, ax)
    full_shape = np.shape(x)
    if len(unique) == len(target):
        return np.broadcast_to(partial, full_shape)
    # a repeated index: the partial result goes on the diagonal of zeros
    result = np.zeros(full_shape, np.result_type(partial, x, 1.0))
    diagonal = np.einsum("".join(target) + "->" + unique, result)
    diagonal[...] = partial
    return result


def einsum_interleaved(subscripts, first):
    """``subscripts``: the subscripts form of an ``np.einsum`` call written in its interleaved
    form (``np.einsum(a, [0, 1], b, [1, 2])``), whose first operand is ``first``. A call whose
    first argument is a string when it runs was in the subscripts form (its operands literal
    lists of ints) and is refused rather than computed as the other form."""
    if isinstance(first, str):
        raise UsageError(f"np.einsum({first!r}, ...) with literal lists of ints as operands: "
                         "s2sgrad read it as einsum's interleaved form; pass the operands as arrays "
                         "(np.array([...]))")
    return subscripts


def _put(operands, index, x):
    return [x if i == index else o for i, o in enumerate(operands)]


def einsum_with(x, subscripts, operands, index):
    """``np.einsum(subscripts, *operands)`` with ``operands[index]`` replaced by ``x``: the
    transpose of ``einsum_vjp(., subscripts, operands, index)``."""
    return np.einsum(subscripts, *_put(operands, index, x))


def einsum_vjp_operands(value, g, subscripts, operands, index):
    """The adjoints of the operands in ``einsum_vjp(value, subscripts, operands, index)``, ``g``
    that of its result: the einsum's adjoints with ``operands[index]`` replaced by ``g`` (zero
    for that operand, read only for its shape)."""
    put = _put(operands, index, g)
    return Parts(zeros_like(o) if i == index else einsum_vjp(value, subscripts, put, i)
                 for i, o in enumerate(operands))


def einsum_vjps_operands(value, g, subscripts, operands):
    """The adjoints of the operands in ``einsum_vjps(value, subscripts, operands)``, ``g`` the
    list of its results' adjoints (a zero item adds nothing)."""
    total = Parts(zeros_like(o) for o in operands)
    for i, gi in enumerate(g):
        if not _is_zero(gi):
            total = total + einsum_vjp_operands(value, gi, subscripts, operands, i)
    return total


def one_at(x, index, operands):
    """A list as long as ``operands`` holding ``x`` at ``index`` and zeros elsewhere: the upstream
    of ``einsum_vjps`` where only the adjoint of ``operands[index]`` was taken."""
    return Parts(x if i == index else 0.0 for i in range(len(operands)))


def einsum_vjps_value(g, subscripts, operands):
    """The adjoint of ``value`` in ``einsum_vjps(value, subscripts, operands)``, ``g`` the list
    of its results' adjoints: the sum of the einsums with one operand replaced by its item."""
    total = 0.0
    for i, gi in enumerate(g):
        total = total + einsum_with(gi, subscripts, operands, i)
    return total


def _pairs(first, second, operands):
    """``(i, j, operands with [i] first[i] and [j] second[j])`` for each i != j."""
    for i, a in enumerate(first):
        for j, b in enumerate(second):
            if i != j and not _is_zero(a) and not _is_zero(b):
                yield i, j, _put(_put(operands, i, a), j, b)


def einsum_pairs_value(first, second, subscripts, operands):
    """The sum over ``i != j`` of the einsum with ``operands[i]`` replaced by ``first[i]`` and
    ``operands[j]`` by ``second[j]``: the adjoint of ``value`` in
    ``einsum_vjps_operands(value, first, subscripts, operands)``, ``second`` its output's."""
    total = 0.0
    for _, _, put in _pairs(first, second, operands):
        total = total + np.einsum(subscripts, *put)
    return total


def einsum_pairs_operands(value, first, second, subscripts, operands):
    """The adjoints of the operands in ``einsum_vjps_operands(value, first, subscripts,
    operands)``, ``second`` its output's: for each ``k``, the adjoint of operand ``k`` of the
    einsums with two other operands replaced (``i != j``, both not ``k``)."""
    total = Parts(zeros_like(o) for o in operands)
    for i, j, put in _pairs(first, second, operands):
        for k in range(len(operands)):
            if k != i and k != j:
                total[k] = total[k] + einsum_vjp(value, subscripts, put, k)
    return total


def _explicit(subscripts, ndims):
    """The inputs' and the output's subscripts with ``...`` spelled as letters and ``->`` made
    explicit (numpy's implicit output: the broadcast axes, then the letters used once, sorted)."""
    text = subscripts.replace(" ", "")
    lhs, arrow, out = text.partition("->")
    ins = lhs.split(",")
    used = set(text) - set(".,->")
    spare = [c for c in _LETTERS if c not in used]
    named = [len(s.replace("...", "")) for s in ins]
    width = max((nd - n for s, nd, n in zip(ins, ndims, named) if "..." in s), default=0)
    ellipsis = "".join(spare[:width])
    ins = [s.replace("...", ellipsis[width - (nd - n):] if nd - n else "")
           for s, nd, n in zip(ins, ndims, named)]
    if not arrow:
        letters = "".join(ins)
        out = ("..." if width else "") + "".join(sorted(c for c in set(letters) - set(ellipsis)
                                                         if letters.count(c) == 1))
    return ins, out.replace("...", ellipsis)


def _sizes(specs, shapes):
    """The size of each letter: the largest of the axes it names (numpy broadcasts 1s)."""
    sizes: dict = {}
    for spec, shape in zip(specs, shapes):
        for c, n in zip(spec, shape):
            sizes[c] = max(sizes.get(c, 1), n)
    return sizes


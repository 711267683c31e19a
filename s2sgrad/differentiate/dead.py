"""Dead code: program items and the expressions read after them (returns) -> the same items
without the assignments whose values nothing reads.

Forward mode over inlined code computes values the result never needs (the value of a function
whose gradient is differentiated, tangents of records such as shapes). An assignment goes when
every name it binds is read nowhere (not in the code, not in ``outside``) and its value only
calls numpy (not ``np.random``) and s2sgrad's runtime, so dropping it drops no effect; removing
one may free others, so it repeats until nothing changes. Statements in blocks count their reads
wherever they are (a loop reads names bound later in its body), so nothing a later iteration
reads goes.
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from ..program import Comment, Nest, Simple, pure


def _reads(code, total: Counter) -> Counter:
    for item in code:
        total.update(item.reads)
        if isinstance(item, Nest):
            _reads(item.body, total)
    return total


def names_only(target: cst.BaseExpression) -> bool:
    """A target that binds names and writes into nothing (``a``, ``a, (b, c)``; not ``a[0], b``)."""
    if isinstance(target, cst.Name):
        return True
    return isinstance(target, (cst.Tuple, cst.List)) and \
        all(names_only(e.value) for e in target.elements)


def _dead(item, reads: Counter, methods: frozenset, local: frozenset) -> bool:
    return isinstance(item, Simple) and isinstance(item.node, cst.Assign) and item.binds and \
        not any(reads[name] for name in item.binds) and \
        all(names_only(t.target) for t in item.node.targets) and \
        pure(item.node.value, methods, local)


def _sweep(code, reads: Counter, methods: frozenset = frozenset(),
           local: frozenset = frozenset()) -> tuple:
    """One pass: the dead assignments dropped, and the comment of a source statement none of
    whose code is left."""
    out: list = []
    start, removed = None, False  # where the current comment's group starts; lost any?
    for item in list(code) + [None]:
        if item is None or isinstance(item, Comment):
            if start is not None and removed and len(out) == start + 1:
                out.pop()  # every line under this comment went
            start, removed = (len(out), False) if item is not None else (None, False)
            if item is not None:
                out.append(item)
        elif _dead(item, reads, methods, local):
            removed = True
        else:
            out.append(Nest(item.header, _sweep(item.body, reads, methods, local))
                       if isinstance(item, Nest) else item)
    return tuple(out)


def without_dead_code(code, outside: Counter, methods: frozenset = frozenset(),
                      params: tuple = ()) -> tuple:
    """``code`` without the pure assignments nothing reads (``outside``: reads after it);
    ``methods``: ndarray methods whose calls on the function's own values (``params`` or names
    the code binds) count as pure."""
    code = tuple(code)
    local = frozenset(params) | frozenset(n for item in _flat(code) for n in item.binds)
    while True:
        reads = _reads(code, Counter(outside))
        swept = _sweep(code, reads, methods, local)
        if len(_flat(swept)) == len(_flat(code)):
            return swept
        code = swept


def _flat(code) -> list:
    out = []
    for item in code:
        out.append(item)
        if isinstance(item, Nest):
            out.extend(_flat(item.body))
    return out

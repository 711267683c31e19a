"""Repeated expressions of generated straight-line code: program items -> the same items with an
expression computed twice computed once.

Forward mode over a gradient writes, for one primal statement, the backward sweep's expression
and its tangent's (``tanh``'s ``1.0 - t * t`` in both), and the templates of two rules may share a
subexpression. When a later ``name = expr`` repeats a subexpression of an earlier line, it moves
up to just before that line and the lines from there read ``name`` instead of recomputing
``expr``; when it repeats an earlier line's whole value, it reads that line's name.

Only where this cannot change a value:
- both lines are top-level simple statements with no compound statement between them;
- ``expr`` only calls numpy (not ``np.random``) and s2sgrad's runtime, and is more than a name,
  a literal, an attribute or a subscript;
- ``name`` and every name ``expr`` reads are bound once in the whole function (parameters:
  never), before the earlier line, and are never written in place, not even through an alias: a
  name whose value is computed from an array written in place (``x_bar += ...``, ``a[i] = ...``,
  an ``out=`` argument, a call made for its effect) may share its memory, and is left alone.
Pure: code in, code out; deterministic (the first repeat in line order moves first).
"""

from __future__ import annotations

from collections import Counter
from typing import Optional

import libcst as cst
import libcst.matchers as m
import numpy as np

from ..program import Comment, Simple, Verbatim, all_items, name_reads, pure
from .dead import names_only
from ..read.walk import findall

# not worth a name: reading them again costs what reading a name costs (a slice is a view)
_CHEAP = (cst.Name, cst.Attribute, cst.Subscript, cst.Integer, cst.Float, cst.Imaginary,
          cst.SimpleString)


def _key(node: cst.CSTNode) -> str:
    """An expression's code without its outer parentheses: equal code, equal value."""
    if isinstance(node, cst.BaseExpression) and not isinstance(node, cst.Tuple) and node.lpar:
        node = node.with_changes(lpar=[], rpar=[])
    return cst.Module([]).code_for_node(node)


def _written_in_place(item) -> set:
    """Names whose arrays ``item`` may change without rebinding them (any a user's statement
    copied as written reads or binds)."""
    if isinstance(item, Verbatim):
        return set(item.reads) | set(item.binds)
    if not isinstance(item, Simple):
        return set()
    node = item.node
    if isinstance(node, cst.AugAssign):
        return set(item.update_base)
    if isinstance(node, cst.Expr) or _writes_out(node):
        return set(item.reads)
    if isinstance(node, cst.Assign):
        return {name for t in node.targets if not names_only(t.target)
                for name in name_reads(t.target)}
    return set()


def _writes_out(node: cst.CSTNode) -> bool:
    """Whether a call in ``node`` takes an ``out=`` array (written in place)."""
    return bool(findall(node, m.Arg(keyword=m.Name("out"))))


def _fresh(value: cst.BaseExpression) -> bool:
    """Whether ``value`` is a new array (or number), sharing no memory with what it reads: an
    operator's result or a numpy ufunc's; anything else (a name, ``.T``, a slice, a reshape, a
    runtime helper that may return its argument) may be a view."""
    if isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)):
        return True
    func = value.func if isinstance(value, cst.Call) else None
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
        func.value.value == "np" and isinstance(getattr(np, func.attr.value, None), np.ufunc) and \
        not _writes_out(value)


def _shares(item) -> set:
    """The names ``item`` may make share memory with each other (empty for a fresh value)."""
    if isinstance(item, Comment):
        return set()
    node = item.node if isinstance(item, Simple) else None
    if isinstance(node, cst.Assign) and _fresh(node.value):
        return set()
    if isinstance(item, Simple) and not isinstance(node, cst.Assign):
        return set()  # an update in place (tainted), a del, an expression statement (tainted)
    return set(item.binds) | set(item.reads)  # assignments, loop headers, restores


def _stable_names(code) -> set:
    """The names bound at most once and never changed in place, directly or through an alias
    (parameters, bound nowhere, included)."""
    items = list(all_items(code))
    bound: Counter = Counter()
    named: set = set()
    for item in items:
        bound.update(item.binds)
        named |= set(item.binds) | set(item.reads)
    tainted = set().union(*(_written_in_place(item) for item in items))
    groups = [g for g in (_shares(item) for item in items) if len(g) > 1]
    changed = True
    while changed:  # everything in a group with a tainted name may be the tainted array
        changed = False
        for group in groups:
            if group & tainted and not group <= tainted:
                tainted |= group
                changed = True
    return {name for name in named if bound[name] <= 1 and name not in tainted}


class _Replace(cst.CSTTransformer):
    def __init__(self, key: str, name: str) -> None:
        super().__init__()
        self.key, self.name = key, name

    def on_leave(self, original_node, updated_node):
        if isinstance(updated_node, cst.BaseExpression) and not isinstance(updated_node, cst.Name) \
                and _key(updated_node) == self.key:
            return cst.Name(self.name)
        return updated_node


def _expressions(node: cst.CSTNode, memo: dict) -> set:
    """The keys of the subexpressions of ``node`` worth a name (``memo``: by node, computed once)."""
    held = memo.get(id(node))
    if held is not None and held[0] is node:
        return held[1]
    out: set = set()

    class _Collect(cst.CSTVisitor):
        def on_visit(self, n) -> bool:
            if isinstance(n, cst.BaseExpression) and not isinstance(n, _CHEAP):
                out.add(_key(n))
            return True

    node.visit(_Collect())
    memo[id(node)] = (node, out)
    return out


def _movable(item, stable: set) -> Optional[tuple]:
    """``(name, key)`` of a line ``name = expr`` that may move up, else None."""
    if not (isinstance(item, Simple) and item.plain) or item.assigned not in stable:
        return None
    value = item.node.value
    if isinstance(value, _CHEAP) or not pure(value) or any(n not in stable for n in item.reads
                                                          if n != item.assigned):
        return None
    return item.assigned, _key(value)


def _one_move(code: list, stable: set, bound: set, memo: dict) -> bool:
    """Move the first repeat up (in place); whether one moved. ``bound``: the names the code
    binds somewhere (a name it only reads is a parameter or a global: ready everywhere);
    ``memo``: each line's subexpressions, kept across calls."""
    start = 0  # the first line after the last compound statement (or other item)
    before: set = set()  # the names bound before ``start``
    for j, item in enumerate(code):
        if not isinstance(item, (Simple, Comment)):
            before |= {n for earlier in all_items(code[start:j + 1]) for n in earlier.binds}
            start = j + 1
            continue
        found = _movable(item, stable)
        if found is None:
            continue
        name, key = found
        needed = {n for n in item.reads if n != name and n in bound} - before
        for i in range(start, j):
            earlier = code[i]
            if needed or not isinstance(earlier, Simple):
                pass
            elif earlier.plain and earlier.assigned in stable and \
                    _key(earlier.node.value) == key:  # the same value: read it
                code[j] = Simple(item.node.with_changes(value=cst.Name(earlier.assigned)))
                return True
            elif key in _expressions(earlier.node, memo):
                _move(code, i, j, name, key)
                return True
            needed -= earlier.binds
    return False


def _move(code: list, i: int, j: int, name: str, key: str) -> None:
    """Line ``j`` (``name = <key>``) before line ``i``; the lines from ``i`` to the next compound
    statement read ``name`` for ``<key>``."""
    line = code.pop(j)
    if isinstance(code[j - 1], Comment) and (j == len(code) or isinstance(code[j], Comment)):
        code.pop(j - 1)  # its source statement has no line left under its comment
    replacer = _Replace(key, name)
    for k in range(i, len(code)):
        if not isinstance(code[k], (Simple, Comment)):
            break
        if isinstance(code[k], Simple):
            code[k] = Simple(code[k].node.visit(replacer))
    code.insert(i, line)


def without_repeats(code, params) -> tuple:
    """``code`` (a function's body; ``params``: its parameter names) with each repeated pure
    expression computed once where that provably keeps every value."""
    code = list(code)
    stable = _stable_names(code) - {p for p in params if any(
        p in item.binds for item in all_items(code))}
    bound = {name for item in all_items(code) for name in item.binds}
    memo: dict = {}
    while _one_move(code, stable, bound, memo):
        pass
    return tuple(code)

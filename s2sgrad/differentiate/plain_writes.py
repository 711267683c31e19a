"""Index writes as plain numpy: a step that works in place (differentiate/writes_in_place.py)
-> the lines ``u[1:-1] = v`` or ``u_bar[:-2] += h``, for a group whose every name certainly holds
a numpy array and an index the helpers take as basic (``(slice(1, -1, None),)``, ``t``): the
writes the helpers' fast paths make, without their checks of each operand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from ..program import Simple

__all__ = ["Plain", "basic_index", "plain_lines", "subscript"]


@dataclass(frozen=True)
class Plain:
    """What lets a step that works in place be plain numpy (``u[1:-1] = v``, ``g[1:-1] += h``)
    rather than a helper that checks its operands each time: ``arrays``, the names that, held by
    an array the sweep owns, certainly hold a numpy array (of a known shape, one axis or more:
    code made for a call's shapes); ``numbers``, the names certainly holding one number (an
    index's ints). Given to write_in_place by the builder; empty: no plain step."""

    arrays: frozenset = frozenset()
    numbers: frozenset = frozenset()


_SLICE_PARTS = 3


def _one_int(node: cst.BaseExpression, numbers: frozenset) -> bool:
    """Whether ``node`` certainly is one integer: an int literal, a name holding one number, a
    sum, difference or product of those (``t + 4``)."""
    if isinstance(node, cst.Integer) or (isinstance(node, cst.UnaryOperation) and
                                         isinstance(node.operator, cst.Minus) and
                                         isinstance(node.expression, cst.Integer)):
        return True
    if isinstance(node, cst.Name):
        return node.value in numbers
    return isinstance(node, cst.BinaryOperation) and \
        isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply)) and \
        _one_int(node.left, numbers) and _one_int(node.right, numbers)


def _index_part(node: cst.BaseExpression, numbers: frozenset):
    """A ``cst.Index`` or ``cst.Slice`` writing one part of a basic index as a subscript
    (``slice(1, -1, None)`` -> ``1:-1``, an int literal, a name holding one number, ``t + 4``),
    else None."""
    if _one_int(node, numbers):
        return cst.Index(node)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "slice" \
            and 1 <= len(node.args) <= _SLICE_PARTS and all(a.keyword is None and a.star == "" for a in node.args):
        parts = [a.value for a in node.args]
        if len(parts) == 1:  # slice(stop)
            parts = [cst.Name("None"), parts[0], cst.Name("None")]
        parts += [cst.Name("None")] * (_SLICE_PARTS - len(parts))
        lower, upper, step = (None if isinstance(p, cst.Name) and p.value == "None" else p for p in parts)
        return cst.Slice(lower=lower, upper=upper, step=step)
    return None


def subscript(base: cst.Name, index: cst.BaseExpression, numbers: frozenset) -> Optional[cst.Subscript]:
    """``base[...]`` for a basic index written as helpers take it (``(slice(1, -1, None),)``,
    ``t``), else None."""
    items = [e.value for e in index.elements] if isinstance(index, cst.Tuple) else [index]
    if not items or any(isinstance(e, cst.StarredElement) for e in items):
        return None
    parts = [_index_part(item, numbers) for item in items]
    if None in parts:
        return None
    return cst.Subscript(base, [cst.SubscriptElement(p) for p in parts])


def basic_index(index: cst.BaseExpression, numbers: frozenset) -> bool:
    """Whether ``index`` (as helpers take it: ``(slice(1, -1, None),)``, ``t``) is basic: slices,
    int literals and names in ``numbers``, so no position is written twice."""
    return subscript(cst.Name("_"), index, numbers) is not None


def plain_lines(target: Optional[str], base: cst.BaseExpression, index: cst.BaseExpression,
                value: cst.BaseExpression, add: bool, numbers: frozenset) -> Optional[tuple]:
    """``base[index] = value`` (``+=`` where ``add``; ``-= e`` for a ``value`` of ``-e``), then
    ``target = base`` where the step binds another name; None where ``base`` is no name or
    ``index`` is not basic as written."""
    part = subscript(base, index, numbers) if isinstance(base, cst.Name) else None
    if part is None:
        return None
    if add and isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        written = cst.AugAssign(part, cst.SubtractAssign(), value.expression.with_changes(lpar=[], rpar=[]))
    elif add:
        written = cst.AugAssign(part, cst.AddAssign(), value)
    else:
        written = cst.Assign([cst.AssignTarget(part)], value)
    lines = (Simple(written),)
    if target is not None and target != base.value:
        lines += (Simple(cst.Assign([cst.AssignTarget(cst.Name(target))], base)),)
    return lines

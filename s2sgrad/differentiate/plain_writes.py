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

__all__ = ["Plain", "plain_lines"]


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


def _index_part(node: cst.BaseExpression, numbers: frozenset):
    """A ``cst.Index`` or ``cst.Slice`` writing one part of a basic index as a subscript
    (``slice(1, -1, None)`` -> ``1:-1``, an int literal, a name holding one number), else None."""
    if isinstance(node, cst.Integer) or (isinstance(node, cst.UnaryOperation) and
                                         isinstance(node.operator, cst.Minus) and
                                         isinstance(node.expression, cst.Integer)):
        return cst.Index(node)
    if isinstance(node, cst.Name) and node.value in numbers:
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


def _subscript(base: cst.Name, index: cst.BaseExpression, numbers: frozenset) -> Optional[cst.Subscript]:
    """``base[...]`` for a basic index written as helpers take it (``(slice(1, -1, None),)``,
    ``t``), else None."""
    items = [e.value for e in index.elements] if isinstance(index, cst.Tuple) else [index]
    if not items or any(isinstance(e, cst.StarredElement) for e in items):
        return None
    parts = [_index_part(item, numbers) for item in items]
    if None in parts:
        return None
    return cst.Subscript(base, [cst.SubscriptElement(p) for p in parts])


def plain_lines(target: Optional[str], base: cst.BaseExpression, index: cst.BaseExpression,
                value: cst.BaseExpression, add: bool, numbers: frozenset) -> Optional[tuple]:
    """``base[index] = value`` (``+=`` where ``add``), then ``target = base`` where the step binds
    another name; None where ``base`` is no name or ``index`` is not basic as written."""
    subscript = _subscript(base, index, numbers) if isinstance(base, cst.Name) else None
    if subscript is None:
        return None
    written = cst.AugAssign(subscript, cst.AddAssign(), value) if add \
        else cst.Assign([cst.AssignTarget(subscript)], value)
    lines = (Simple(written),)
    if target is not None and target != base.value:
        lines += (Simple(cst.Assign([cst.AssignTarget(cst.Name(target))], base)),)
    return lines

"""Parts of a subscript's index, as code: a slice element -> whether it can only select (never
gather), and the expression it stands for (``1:n`` -> ``slice(1, n, None)``); whether an axis
operand is written as integer literals."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from .ir import Const


def literal_int(node) -> bool:
    if isinstance(node, cst.Integer):
        return True
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
        and isinstance(node.expression, cst.Integer)


def literal_axis(op) -> bool:
    """An axis operand written as an integer literal or a nonempty tuple display of them."""
    if not isinstance(op, Const) or op.reads:
        return False
    node = op.node
    if isinstance(node, cst.Tuple):
        return bool(node.elements) and all(literal_int(e.value) for e in node.elements)
    return literal_int(node)


def basic_element(element: cst.BaseSlice) -> bool:
    """An index part that can only select (never gather): an integer literal, a slice, None, ..."""
    if isinstance(element, cst.Slice):
        return True  # slice bounds can only be integers (or None)
    value = element.value
    return literal_int(value) or m.matches(value, m.Name("None") | m.Ellipsis())


def slice_to_expr(inner: cst.BaseSlice) -> cst.BaseExpression:
    if isinstance(inner, cst.Index):
        return inner.value
    none = cst.Name("None")
    return cst.Call(cst.Name("slice"), [cst.Arg(inner.lower or none), cst.Arg(inner.upper or none),
                                        cst.Arg(inner.step or none)])

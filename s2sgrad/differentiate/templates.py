"""Rule templates -> code: substitute the names of a parsed template with operand expressions."""

from __future__ import annotations

import libcst as cst

from ..rules.table import parse_template

ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float,
         cst.Imaginary, cst.SimpleString, cst.Tuple, cst.List, cst.Dict)

# Binary operators that bind at least as tightly as `+` on their right-hand side.
_TIGHT = (cst.Multiply, cst.Divide, cst.MatrixMultiply, cst.Power, cst.FloorDivide, cst.Modulo)


class _Substitute(cst.CSTTransformer):
    def __init__(self, mapping: dict) -> None:
        self.mapping = mapping
        self.used: set = set()

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        new = self.mapping.get(original.value)
        if new is None:
            return updated
        self.used.add(original.value)
        return new

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)


def needs_parens(node: cst.CSTNode, inside: str = "*") -> bool:
    """Whether ``node`` must be parenthesized as an operand (of ``+`` or of a tighter operator)."""
    if node.lpar if hasattr(node, "lpar") else False:
        return False
    if isinstance(node, ATOMS):
        return False
    if isinstance(node, cst.UnaryOperation):
        return inside != "+"
    if isinstance(node, cst.BinaryOperation):
        if inside == "+":
            return not isinstance(node.operator, _TIGHT + (cst.Add,))
        return True
    return True


def instantiate(template: str, mapping: dict) -> cst.BaseExpression:
    """The template's expression with each mapped name replaced by its node (parenthesized as needed)."""
    node = parse_template(template)
    safe = {}
    for name, value in mapping.items():
        if isinstance(value, cst.BaseExpression) and needs_parens(value):
            value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        safe[name] = value
    return node.visit(_Substitute(safe))

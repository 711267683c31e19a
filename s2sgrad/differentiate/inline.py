"""Expression substitution: an expression + {name: expression} -> the expression with those names
replaced, parenthesized exactly where Python's operator binding needs it (``-(a + b)``, not
``-a + b``; ``a * b + c``, not ``(a * b) + c``). Pure; used by differentiate.fold.
"""

from __future__ import annotations

import libcst as cst

# Binding strength of expression kinds (higher binds tighter), for deciding parentheses.
_BINARY = {
    cst.Power: 8,
    cst.Multiply: 6, cst.Divide: 6, cst.FloorDivide: 6, cst.Modulo: 6, cst.MatrixMultiply: 6,
    cst.Add: 5, cst.Subtract: 5,
    cst.LeftShift: 4, cst.RightShift: 4,
    cst.BitAnd: 3, cst.BitXor: 2, cst.BitOr: 1,
}
_UNARY = 7
_ATOM = 10


def _strength(node: cst.BaseExpression) -> int:
    if node.lpar:
        return _ATOM
    if isinstance(node, cst.BinaryOperation):
        return _BINARY[type(node.operator)]
    if isinstance(node, cst.UnaryOperation):
        return -1 if isinstance(node.operator, cst.Not) else _UNARY
    if isinstance(node, cst.Comparison):
        return 0
    if isinstance(node, cst.BooleanOperation):
        return -2 if isinstance(node.operator, cst.And) else -3
    if isinstance(node, (cst.IfExp, cst.Lambda, cst.NamedExpr)):
        return -4
    return _ATOM


def _wrap(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


class _Substitute(cst.CSTTransformer):
    """Replaces names by expressions, parenthesizing a replacement where its reader binds tighter."""

    def __init__(self, mapping: dict) -> None:
        super().__init__()
        self.mapping = mapping
        self.placed: set = set()  # ids of the nodes put in place of names

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        node = self.mapping.get(updated.value)
        if node is None:
            return updated
        self.placed.add(id(node))
        return node

    def fix(self, child: cst.BaseExpression, need: bool) -> cst.BaseExpression:
        return _wrap(child) if need and id(child) in self.placed else child

    def leave_BinaryOperation(self, original, updated) -> cst.BaseExpression:
        own = _BINARY[type(updated.operator)]
        left, right = _strength(updated.left), _strength(updated.right)
        power = isinstance(updated.operator, cst.Power)
        return updated.with_changes(
            left=self.fix(updated.left, left < own or (power and left <= own)),
            right=self.fix(updated.right, right <= own and not (power and right == _UNARY)))

    def leave_BooleanOperation(self, original, updated) -> cst.BaseExpression:
        own = _strength(updated.with_changes(lpar=[], rpar=[]))
        return updated.with_changes(left=self.fix(updated.left, _strength(updated.left) < own),
                                    right=self.fix(updated.right, _strength(updated.right) <= own))

    def leave_IfExp(self, original, updated) -> cst.BaseExpression:
        return updated.with_changes(
            test=self.fix(updated.test, _strength(updated.test) <= -4),
            body=self.fix(updated.body, _strength(updated.body) <= -4),
            orelse=self.fix(updated.orelse, _strength(updated.orelse) < -4))

    def leave_UnaryOperation(self, original, updated) -> cst.BaseExpression:
        need = _strength(updated.expression) < (_UNARY if not isinstance(updated.operator, cst.Not) else -1)
        return updated.with_changes(expression=self.fix(updated.expression, need))

    def leave_Comparison(self, original, updated) -> cst.BaseExpression:
        left = self.fix(updated.left, _strength(updated.left) <= 0)
        targets = [t.with_changes(comparator=self.fix(t.comparator, _strength(t.comparator) <= 0))
                   for t in updated.comparisons]
        return updated.with_changes(left=left, comparisons=targets)

    def leave_Attribute(self, original, updated) -> cst.BaseExpression:
        return updated.with_changes(value=self.fix(updated.value, _strength(updated.value) < _ATOM
                                                   or isinstance(updated.value, (cst.Integer, cst.Float))),
                                    attr=original.attr)

    def leave_Subscript(self, original, updated) -> cst.BaseExpression:
        return updated.with_changes(value=self.fix(updated.value, _strength(updated.value) < _ATOM))

    def leave_Call(self, original, updated) -> cst.BaseExpression:
        return updated.with_changes(func=self.fix(updated.func, _strength(updated.func) < _ATOM))

    def leave_Arg(self, original, updated) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)


def substitute(expr: cst.BaseExpression, mapping: dict) -> cst.BaseExpression:
    """``expr`` with each name in ``mapping`` replaced by its expression (parenthesized as needed)."""
    if not mapping:
        return expr
    return expr.visit(_Substitute(mapping))

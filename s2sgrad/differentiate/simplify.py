"""Peephole simplification of instantiated rule templates (pure: expression -> expression).

Folds what a constant operand makes trivial, so ``x ** 2`` differentiates to ``g * 2 * x`` and not
``g * 2 * x ** s2s.safe_power_base(2)``.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

_NUMBER = m.Integer() | m.Float()


def _number(node: cst.BaseExpression):
    if isinstance(node, cst.Integer):
        return int(node.value.replace("_", ""), 0)
    if isinstance(node, cst.Float):
        return float(node.value.replace("_", ""))
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _number(node.expression)
        return None if inner is None else -inner
    return None


def _literal(value) -> cst.BaseExpression:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        text = f"{value:.1f}"
    else:
        text = repr(value)
    if text.startswith("-"):
        return cst.UnaryOperation(cst.Minus(), _literal(-value))
    return cst.Float(text) if ("." in text or "e" in text) else cst.Integer(text)


class _Fold(cst.CSTTransformer):
    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if m.matches(updated.func, m.Attribute(value=m.Name("s2s"), attr=m.Name("safe_power_base"))) \
                and len(updated.args) == 1:
            n = _number(updated.args[0].value)
            if n is not None:
                return _literal(n - 1 if n != 0 else 1.0)
        return updated

    def leave_BinaryOperation(self, original, updated) -> cst.BaseExpression:
        right = _number(updated.right)
        if isinstance(updated.operator, cst.Power) and right == 1:
            return updated.left
        if isinstance(updated.operator, cst.Multiply) and right == 1 and not updated.lpar:
            return updated.left
        left = _number(updated.left)
        if isinstance(updated.operator, cst.Multiply) and left == 1 and not updated.lpar:
            return updated.right
        inner = updated.left
        if isinstance(updated.operator, cst.Multiply) and right is not None and \
                isinstance(inner, cst.UnaryOperation) and isinstance(inner.operator, cst.Minus) \
                and _number(inner) is None:
            # -(e) * 2  ->  e * -2: the sign joins the constant instead of costing a pass
            operand = inner.expression.with_changes(lpar=[], rpar=[])
            tight = isinstance(operand, (cst.Name, cst.Attribute, cst.Call, cst.Subscript,
                                         cst.UnaryOperation)) or \
                (isinstance(operand, cst.BinaryOperation) and isinstance(
                    operand.operator, (cst.Multiply, cst.Divide, cst.Power, cst.MatrixMultiply)))
            if tight:
                return updated.with_changes(left=operand, right=_literal(-right))
        return updated


def simplify(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.visit(_Fold())

"""Which expressions lowering keeps whole: a Context and an expression -> whether it is a constant
(a literal, a global, a module attribute), carries no derivative (kept verbatim as one statement),
or is simple enough to stay inside an index as written."""

from __future__ import annotations

import libcst as cst

from .context import Context

# Attributes of an array that carry no derivative; reading them is kept verbatim.
NONDIFF_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"})

BITWISE = (cst.BitAnd, cst.BitOr, cst.BitXor, cst.LeftShift, cst.RightShift)

LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis,
            cst.FormattedString)


def is_constant(ctx: Context, node: cst.BaseExpression) -> bool:
    """A literal, a global name, a module attribute, or a display of those."""
    if isinstance(node, LITERALS):
        return True
    if isinstance(node, cst.Name):
        return node.value not in ctx.locals
    if isinstance(node, cst.Attribute):
        return is_constant(ctx, node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return isinstance(node.expression, LITERALS) or is_constant(ctx, node.expression)
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(is_constant(ctx, e.value) for e in node.elements
                   if not isinstance(e, cst.StarredElement))
    return False


def is_nondiff(ctx: Context, node: cst.BaseExpression) -> bool:
    """An expression whose value carries no derivative: kept verbatim as one statement."""
    if isinstance(node, (cst.Comparison, cst.BooleanOperation)):
        return True
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, BITWISE):
        return True  # on booleans and integers (masks): piecewise constant
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Not, cst.BitInvert)):
        return True
    if isinstance(node, cst.Attribute) and node.attr.value in NONDIFF_ATTRIBUTES \
            and not is_constant(ctx, node.value):
        return True
    if isinstance(node, cst.Subscript):
        return is_nondiff(ctx, node.value)
    if isinstance(node, cst.Call):
        if isinstance(node.func, cst.Attribute) and not is_constant(ctx, node.func.value):
            return f"ndarray.{node.func.attr.value}" in ctx.nondiff
        return ctx.callee_name(node.func) in ctx.nondiff
    return False


def is_verbatim(ctx: Context, node: cst.BaseExpression) -> bool:
    """Kept whole as one operand or statement: carries no derivative, or is a constant."""
    return is_nondiff(ctx, node) or is_constant(ctx, node)


def is_simple_index(ctx: Context, node: cst.BaseExpression) -> bool:
    """An index part kept inside the subscript as written: names, integers, constants and
    arithmetic on them (no matrix product)."""
    if isinstance(node, (cst.Name, cst.Integer)) or is_constant(ctx, node):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Name)):
        return True
    if isinstance(node, cst.BinaryOperation):
        return is_simple_index(ctx, node.left) and is_simple_index(ctx, node.right) and \
            not isinstance(node.operator, cst.MatrixMultiply)
    return False

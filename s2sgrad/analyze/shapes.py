"""Scalar analysis: CoreFunction -> the names known to hold a scalar (0-d) value.

Used to skip unbroadcasting where no broadcasting can happen: an elementwise operand combined only
with scalars has the output's shape already.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from ..lower.ir import Const, CoreFunction, Seq, Var, flatten

_FULL_REDUCTIONS = frozenset(
    f"{owner}.{name}"
    for owner in ("numpy", "ndarray")
    for name in ("sum", "mean", "var", "std", "max", "min", "amax", "amin", "prod")
)
_SCALAR_FUNCTIONS = frozenset({"builtins.float", "builtins.len", "builtins.int"})
_ELEMENTWISE_PREFIXES = ("operator.", "copy")

_SIZE_READ = (
    m.Subscript(value=m.Attribute(attr=m.Name("shape")))
    | m.Attribute(attr=m.Name("ndim") | m.Name("size"))
    | m.Call(func=m.Name("len"))
)


def is_scalar_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation):
        return is_scalar_literal(node.expression)
    return False


def _is_scalar_operand(op, scalars: set) -> bool:
    if isinstance(op, Var):
        return op.name in scalars
    if isinstance(op, Const):
        return is_scalar_literal(op.node)
    return False


def _scalar_definition(stmt, scalars: set, elementwise: frozenset) -> bool:
    prim = stmt.prim
    if prim.op in _FULL_REDUCTIONS:
        kwargs = dict(prim.kwargs)
        return len(prim.args) == 1 and "axis" not in kwargs and "keepdims" not in kwargs
    if prim.op.startswith("math.") or prim.op in _SCALAR_FUNCTIONS:
        return True
    if prim.op == "nondiff":
        return m.matches(stmt.expr, _SIZE_READ)
    if prim.op in elementwise or prim.op.startswith(_ELEMENTWISE_PREFIXES):
        operands = list(prim.args) + [v for _, v in prim.kwargs]
        return bool(operands) and prim.op not in ("operator.matmul", "operator.getitem") and \
            all(_is_scalar_operand(o, scalars) for o in operands if not isinstance(o, Seq))
    return False


def known_scalars(fn: CoreFunction, elementwise: frozenset) -> frozenset:
    """Names whose every definition certainly gives a scalar (to a fixed point, from none)."""
    definitions: dict = {}
    for stmt in flatten(fn.body):
        for target in stmt.targets:
            definitions.setdefault(target, []).append(stmt)
    scalars: set = set()
    changed = True
    while changed:
        changed = False
        for name, stmts in definitions.items():
            if name in scalars or any(len(s.targets) != 1 for s in stmts):
                continue
            if all(_scalar_definition(s, scalars, elementwise) for s in stmts):
                scalars.add(name)
                changed = True
    return frozenset(scalars)

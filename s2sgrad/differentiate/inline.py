"""Inlining single-use temporaries of the forward sweep: IR blocks -> which statements to fold
into their one reader, and expression substitution with the parentheses Python needs.

The lowered form names every intermediate value; the forward sweep only needs names for what the
backward sweep reads. Folding the others back into the expression that reads them makes the
forward sweep read like the user's statement and lets numpy reuse its temporaries in place.
Pure: nothing here runs or imports user code.
"""

from __future__ import annotations

import re
from typing import Callable, Optional

import libcst as cst

from ..lower.ir import If, Loop, Stmt, operand_reads, prim_operands

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


_WORD = re.compile(r"[A-Za-z_]\w*")


def _reads(node) -> list:
    """Names a block node reads itself (a statement's operands, a branch's condition, a loop
    header), with repeats."""
    if isinstance(node, Stmt):
        out: list = []
        for op in prim_operands(node.prim):
            out.extend(operand_reads(op))
        return out
    if isinstance(node, If):
        return [node.test]
    if isinstance(node, Loop):
        return _WORD.findall(node.header)
    return []


def _all_reads(body: tuple, counts: dict) -> None:
    for node in body:
        for name in _reads(node):
            counts[name] = counts.get(name, 0) + 1
        if isinstance(node, If):
            _all_reads(node.body, counts)
            _all_reads(node.orelse, counts)
        elif isinstance(node, Loop):
            _all_reads(node.body, counts)
            _all_reads(node.carries, counts)


def plan(body: tuple, keep: frozenset, foldable: Callable[[Stmt], bool],
         definitions: dict) -> dict:
    """Statements to fold into their one reader: ``{name: defining Stmt}``. A statement folds
    when ``foldable`` says so (pure, one target), its name is not in ``keep`` (values the sweep
    records or returns), is defined once and read once in all, by a later ``foldable`` statement
    of the same block and the same source line, with only ``foldable`` statements between that
    rebind nothing it reads."""
    counts: dict = {}
    _all_reads(body, counts)
    folded: dict = {}
    _plan_block(body, keep, foldable, definitions, counts, folded)
    for node in _nested_blocks(body):
        _plan_block(node, keep, foldable, definitions, counts, folded)
    return folded


def _nested_blocks(body: tuple):
    for node in body:
        if isinstance(node, If):
            yield node.body
            yield node.orelse
            yield from _nested_blocks(node.body)
            yield from _nested_blocks(node.orelse)
        elif isinstance(node, Loop):
            yield node.body
            yield from _nested_blocks(node.body)


def _plan_block(block: tuple, keep: frozenset, foldable, definitions: dict, counts: dict,
                folded: dict) -> None:
    expanded: dict = {}  # Stmt -> the names its expression reads once folds are applied

    def reads_of(stmt: Stmt) -> set:
        if stmt not in expanded:
            expanded[stmt] = set(_reads(stmt))
        return expanded[stmt]

    for i, stmt in enumerate(block):
        if not (isinstance(stmt, Stmt) and foldable(stmt)):
            continue
        name = stmt.targets[0]
        if name in keep or counts.get(name) != 1 or definitions.get(name) != 1:
            continue
        reader: Optional[Stmt] = None
        between: list = []
        for later in block[i + 1:]:
            if not isinstance(later, Stmt) or not foldable(later):
                break
            if name in _reads(later):
                reader = later
                break
            between.append(later)
        if reader is None or reader.origin is not stmt.origin or _reads(reader).count(name) != 1:
            continue
        needed = reads_of(stmt) | {name}
        if any(set(s.targets) & needed for s in between):
            continue
        folded[name] = stmt
        reads_of(reader).update(reads_of(stmt))

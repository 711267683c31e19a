"""Shared inverses: a backward sweep's top-level code (program items, folded) made for a call's
shapes -> the same, computing a matrix's inverse once where two or more of its lines read it.

Adjoints of linear algebra read inverses: np.linalg.solve's two (the runtime's ``solve_vjps``:
the transposed inverse times the upstream adjoint), a Cholesky factor's (``cholesky_vjp``),
slogdet's and det's (``np.linalg.inv`` of the transposed matrix). A likelihood that solves with a
Cholesky factor twice reads the factor's inverse three times. Which helpers read which argument's
inverse, and the helper taking that inverse given, is the rule table's fact
(RuleTable.inverse_reader). A matrix read transposed (``L.T`` of a matrix, a name the function
bound to one, ``np.swapaxes(L, -1, -2)``) has the inverse of ``L`` transposed: inv(L^T) =
inv(L)^T; a name bound to a copy of ``L`` (the lowering's, where ``L`` is computed twice) has
``L``'s. Where one matrix's inverse is read twice or more, ``inv_L = np.linalg.inv(L)`` goes
before the first line reading it, and each reader takes it given
(``solve_vjps_by_inverse(g, ans, a, b, inverse=inv_L.T)``; ``np.linalg.inv(L.T)`` becomes
``inv_L.T``).

Only where every reader reads the same values: the readers are lines of one block (the
function's top level, a loop's body, a branch), no line from the first to the last binds ``L``
again, and no line of the sweep writes into it in place. Only in code no transformation reads again: the
helpers taking an inverse given have no rules (their value depends on the inverse as much as on
the matrix). Pure: code in, code out; deterministic (matrices in the order their first reader
comes).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping, Optional

import libcst as cst

from ..program import Nest, Simple, _dotted, bound_within, calls_in, written_within
from ..rules.table import RuleTable


def _flipped(matrix: Optional[tuple]) -> Optional[tuple]:
    return None if matrix is None else (matrix[0], not matrix[1])


def _is_int(node: cst.BaseExpression, value: int) -> bool:
    """Whether ``node`` is the literal ``value`` (``-1``: a minus and an integer)."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return isinstance(node.expression, cst.Integer) and -int(node.expression.value) == value
    return isinstance(node, cst.Integer) and int(node.value) == value


class _Matrices:
    """What a matrix expression of the backward code is: ``(name, transposed)``, the name bound
    to the matrix it is (or the transpose of), following the names the function bound to a copy
    of a name or to a matrix's transpose (``links``: name -> ``(that name, transposed)``);
    ``ranks``: the names whose number of axes is known."""

    def __init__(self, table: RuleTable, links: Mapping[str, tuple], ranks: Mapping[str, int]) -> None:
        self.table, self.links, self.ranks = table, links, ranks

    def of(self, node: cst.BaseExpression) -> Optional[tuple]:
        if isinstance(node, cst.Name):
            name, transposed = node.value, False
            while name in self.links:
                name, flip = self.links[name]
                transposed ^= flip
            return name, transposed
        if isinstance(node, cst.Attribute) and node.attr.value == "T" and \
                isinstance(node.value, cst.Name) and self.ranks.get(node.value.value) == 2:
            return _flipped(self.of(node.value))
        if isinstance(node, cst.Call) and _dotted(node.func) == self.table.matrix_transpose() and \
                len(node.args) == 3 and not any(a.keyword for a in node.args) and (
                    (_is_int(node.args[1].value, -1) and _is_int(node.args[2].value, -2)) or
                    (_is_int(node.args[1].value, -2) and _is_int(node.args[2].value, -1))):
            return _flipped(self.of(node.args[0].value))
        return None

    def inverse(self, name: str, transposed: bool, inverse_name: str) -> cst.BaseExpression:
        """The inverse of ``name`` (transposed) read from ``inverse_name``."""
        found = cst.Name(inverse_name)
        if not transposed:
            return found
        if self.ranks.get(name) == 2:
            return cst.Attribute(found, cst.Name("T"))
        return cst.parse_expression(f"{self.table.matrix_transpose()}({inverse_name}, -1, -2)")


def _reads(call: cst.Call, table: RuleTable, matrices: _Matrices) -> Optional[tuple]:
    """``(matrix, transposed)`` whose inverse ``call`` reads (np.linalg.inv's argument, or an
    inverse reader's), or None."""
    func = _dotted(call.func)
    if func == table.inverse():
        position = 0
    else:
        reader = table.inverse_reader(func)
        if reader is None:
            return None
        position = reader[0]
    args = call.args
    if len(args) <= position or any(a.keyword or a.star for a in args[:position + 1]):
        return None
    return matrices.of(args[position].value)


class _Given(cst.CSTTransformer):
    """The readers of one line (``{id(call): replacement}``) replaced."""

    def __init__(self, replacements: dict) -> None:
        self.replacements = replacements

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        found = self.replacements.get(id(original))
        return updated if found is None else found(updated)


def shared_inverses(code, table: RuleTable, links: Mapping[str, tuple], ranks: Mapping[str, int],
                    fresh: Callable[[str], str]) -> list:
    """``code`` with one ``inv_<m> = np.linalg.inv(<m>)`` per matrix whose inverse two or more
    lines of one block read, each reader taking it given (see the module doc). ``links``:
    names bound to a copy of a name, or to a matrix's transpose -> ``(that name, transposed)``;
    ``ranks``: names -> their number of axes, where known; ``fresh``: a new name for a base."""
    return _block(list(code), _Matrices(table, links, ranks), written_within(code), fresh)


def _block(code: list, matrices: _Matrices, written: set, fresh: Callable[[str], str]) -> list:
    """One block's lines (the blocks inside it first), with the matrices two or more of them
    read the inverse of computing it once: where no line from the first reader to the last
    rebinds the matrix, and no line of the sweep writes into it."""
    table = matrices.table
    code = [replace(item, body=tuple(_block(list(item.body), matrices, written, fresh)))
            if isinstance(item, Nest) else item for item in code]
    readers: dict = {}  # matrix name -> [(line index, call, transposed)], in line order
    for index, item in enumerate(code):
        if isinstance(item, Simple):
            for call in calls_in(item.node):
                found = _reads(call, table, matrices)
                if found is not None:
                    readers.setdefault(found[0], []).append((index, call, found[1]))
    shared = [(name, found) for name, found in readers.items()
              if len(found) > 1 and name not in written and not any(
                  name in bound_within(item) | written_within((item,)) for item in code[found[0][0]:found[-1][0]])]
    if not shared:
        return code
    per_line: dict = {}  # line index -> {id(call): replacement}
    before: dict = {}  # line index -> the lines computing inverses there
    for name, found in shared:
        inverse_name = fresh(f"inv_{name}")
        before.setdefault(found[0][0], []).append(
            Simple(cst.parse_statement(f"{inverse_name} = {table.inverse()}({name})").body[0]))
        for index, call, transposed in found:
            given = matrices.inverse(name, transposed, inverse_name)
            per_line.setdefault(index, {})[id(call)] = _replacement(call, given, table)
    out = []
    for index, item in enumerate(code):
        out.extend(before.get(index, ()))
        if index in per_line:
            item = Simple(item.node.visit(_Given(per_line[index])))
        out.append(item)
    return out


def _replacement(call: cst.Call, given: cst.BaseExpression, table: RuleTable) -> Callable:
    """What a reader becomes, given the inverse it reads: the inverse itself (np.linalg.inv's
    call), or the helper taking it given (the reader's arguments and ``inverse=``)."""
    func = _dotted(call.func)
    if func == table.inverse():
        return lambda updated: given
    helper = cst.parse_expression(table.inverse_reader(func)[1])
    keyword = cst.Arg(given, keyword=cst.Name("inverse"),
                      equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    return lambda updated: updated.with_changes(func=helper, args=[
        *[a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in updated.args], keyword])


__all__ = ["shared_inverses"]

"""Scaled operands of matrix products: a backward sweep's code (program items, folded) made for a
call's shapes -> the same, multiplying a product's result by a number where its operand was.

A loss's adjoint is often a number times an array (``r_bar = g * 2.0 * r`` for ``np.sum(r ** 2)``,
``g / n * r`` for a mean) that a matrix product then reads (``w_bar += r_bar @ X``). Where the
product's result is smaller than that array (``X`` is 2000 x 50: the result has 50 numbers, ``r``
2000), scaling the result costs less than scaling the operand: ``w_bar += g * 2.0 * (r @ X)``.

A temporary moves into its readers when it is ``t = <numbers> * a`` (a product of number literals
and names holding one number, and one name ``a`` of a known shape, or a call keeping such a name's
shape: the runtime's ``complex_conj(r)``, the table's ``keeps_shape``), bound once, read by later
lines of its block only and there only as an operand of ``@`` whose other operand is a name of a
known shape (or its ``.T``), each product's result certainly smaller than ``a`` (dims.py: the
labels ``n0 < n1 < ...``), and no line between it and its last reader binding or writing into what
it reads. The line binding ``t`` goes; each reader computes ``<numbers> * (a @ b)``. The values
differ from the operand's scaling by rounding only (as any regrouping of a product does). Pure:
code in, code out.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Mapping, Optional

import libcst as cst

from .. import dims
from ..program import Nest, Simple, all_items, bound_within, name_reads, qualified, written_within
from ..rules.table import RuleTable
from .simplify import _factors, _number, _product


class _Shapes:
    """The known shapes of the code's names (``known``: name -> a tuple of dims) and the names
    holding one number (``numbers``)."""

    def __init__(self, known: Mapping[str, tuple], numbers: frozenset, table: RuleTable) -> None:
        self.known, self.numbers, self.table = known, numbers, table

    def of(self, node: cst.BaseExpression) -> Optional[tuple]:
        """The shape of a name, of the transpose of a matrix name (``b.T``), or of a call
        keeping its one argument's shape (the table's ``keeps_shape``: the runtime's
        ``complex_conj(r)``)."""
        if isinstance(node, cst.Name):
            return self.known.get(node.value)
        if isinstance(node, cst.Call) and len(node.args) == 1 and not node.args[0].keyword and \
                not node.args[0].star and self.table.keeps_shape(qualified(node.func)):
            return self.of(node.args[0].value) if isinstance(node.args[0].value, cst.Name) else None
        if isinstance(node, cst.Attribute) and node.attr.value == "T" and isinstance(node.value, cst.Name):
            found = self.known.get(node.value.value)
            return found[::-1] if found is not None and len(found) == 2 else None
        return None

    def is_number(self, node: cst.BaseExpression) -> bool:
        if _number(node) is not None:
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            return self.is_number(node.expression)
        if isinstance(node, cst.BinaryOperation) and isinstance(
                node.operator, (cst.Multiply, cst.Divide, cst.Add, cst.Subtract)):
            return self.is_number(node.left) and self.is_number(node.right)  # (g / n)
        return isinstance(node, cst.Name) and node.value in self.numbers

    def shrinks(self, array: cst.BaseExpression, other: cst.BaseExpression, left: bool) -> bool:
        """Whether ``array @ other`` (``left``; else ``other @ array``) is certainly smaller than
        ``array``, both shapes known."""
        operand, other_shape = self.of(array), self.of(other)
        if operand is None or other_shape is None:
            return False
        return _smaller(dims.matmul((operand, other_shape) if left else (other_shape, operand)), operand)

    def scaled(self, node: cst.BaseExpression) -> Optional[tuple]:
        """``(numbers, a)`` of ``<numbers> * a`` (one name ``a`` of a known shape, or a call
        keeping one such name's shape, the other factors numbers; parenthesized or not), else
        None."""
        factors = _factors(node.with_changes(lpar=[], rpar=[]) if node.lpar else node)
        arrays = [f for f in factors if not self.is_number(f)]
        if len(factors) < 2 or len(arrays) != 1 or not isinstance(arrays[0], (cst.Name, cst.Call)) or \
                self.of(arrays[0]) is None:
            return None
        return [f for f in factors if f is not arrays[0]], arrays[0]


def _smaller(result: Optional[tuple], operand: tuple) -> bool:
    """Whether an array of shape ``result`` certainly has fewer numbers than one of ``operand``:
    the dims left when equal ones are set aside, none of the result's and one or more of the
    operand's, each 2 or more, or one each, the operand's certainly the longer."""
    if result is None or not dims.known(result) or not dims.known(operand):
        return False
    left = list(operand)
    rest = []
    for dim in result:
        if dim in left:
            left.remove(dim)
        else:
            rest.append(dim)
    if not rest:
        return bool(left) and all((dims.least(dims.linear(d)) or 0) >= 2 for d in left)
    if len(rest) == 1 and len(left) == 1:
        gap = dims.least(dims.linear(left[0]) - dims.linear(rest[0]))
        return gap is not None and gap >= 1 and (dims.least(dims.linear(rest[0])) or 0) >= 1
    return False


def _products(node: cst.CSTNode, name: str) -> list:
    """Every ``@`` of ``node`` with ``name`` as an operand: ``(product, other operand, name on
    the left)``."""
    found = []

    class Visitor(cst.CSTVisitor):
        def visit_BinaryOperation(self, op: cst.BinaryOperation) -> None:
            if isinstance(op.operator, cst.MatrixMultiply):
                for side, other, left in ((op.left, op.right, True), (op.right, op.left, False)):
                    if isinstance(side, cst.Name) and side.value == name and not side.lpar:
                        found.append((op, other, left))

    node.visit(Visitor())
    return found


def _scaled_product(product: cst.BinaryOperation, array, left: bool, numbers: list) -> cst.BinaryOperation:
    """``<numbers> * (array @ other)`` (``left``; else ``(other @ array)``) where ``product`` was
    the product of the scaled operand and ``other``, in ``product``'s parentheses."""
    inner = product.with_changes(left=array if left else product.left, right=product.right if left else array,
                                 lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    scaled = cst.BinaryOperation(_product(numbers), cst.Multiply(), inner)
    return scaled.with_changes(lpar=product.lpar, rpar=product.rpar)


class _Rescaled(cst.CSTTransformer):
    """The products reading a temporary (by identity) computed from its array, then scaled."""

    def __init__(self, products: dict, numbers: list, array: cst.BaseExpression) -> None:
        self.products, self.numbers, self.array = products, numbers, array

    def leave_BinaryOperation(self, original, updated):
        left = self.products.get(id(original))
        return updated if left is None else _scaled_product(updated, self.array, left, self.numbers)


class _Operands(cst.CSTTransformer):
    """Each product of a line whose operand is a number times an array (``g * 2.0 * r @ X``,
    folded into the line) computed from the array, its result scaled where it is smaller."""

    def __init__(self, shapes: _Shapes) -> None:
        self.shapes = shapes

    def leave_BinaryOperation(self, original, updated):
        if not isinstance(updated.operator, cst.MatrixMultiply):
            return updated
        for side, other, left in ((updated.left, updated.right, True), (updated.right, updated.left, False)):
            found = self.shapes.scaled(side) if isinstance(side, cst.BinaryOperation) else None
            if found is not None and self.shapes.shrinks(found[1], other, left):
                return _scaled_product(updated, found[1], left, found[0])
        return updated


def scaled_products(code, known: Mapping[str, tuple], numbers: frozenset, outside: Counter,
                    table: RuleTable) -> list:
    """``code`` with each scaled temporary that only matrix products with smaller results read
    moved into them, scaling their results (see the module doc). ``known``: names -> their known
    shapes; ``numbers``: names holding one number; ``outside``: reads the code around makes."""
    if not known:  # (code for any shape)
        return list(code)
    reads: Counter = Counter(outside)
    binds: Counter = Counter()
    for item in all_items(code):
        reads.update(item.reads)
        binds.update(item.binds)
    return _block(list(code), _Shapes(known, numbers, table), reads, binds)


def _block(code: list, shapes: _Shapes, reads: Counter, binds: Counter) -> list:
    code = [replace(item, body=tuple(_block(list(item.body), shapes, reads, binds)))
            if isinstance(item, Nest) else _rescaled(item, shapes) for item in code]
    index = 0
    while index < len(code):
        item = code[index]
        moved = _moved(code, index, shapes, reads, binds) if isinstance(item, Simple) and item.plain else None
        if moved is None:
            index += 1
            continue
        code = moved
    return code


def _rescaled(item, shapes: _Shapes):
    """A line with the scaled operands of its products moved onto their results (_Operands)."""
    if not isinstance(item, Simple):
        return item
    node = item.node.visit(_Operands(shapes))
    return item if node.deep_equals(item.node) else Simple(node)


def _moved(code: list, index: int, shapes: _Shapes, reads: Counter, binds: Counter) -> Optional[list]:
    """``code`` with the temporary line ``index`` binds moved into its readers, or None."""
    item = code[index]
    name = item.assigned
    found = shapes.scaled(item.node.value)
    if found is None or binds[name] != 1 or not reads[name]:
        return None
    numbers, array = found
    readers: dict = {}
    seen = 0
    for at in range(index + 1, len(code)):
        later = code[at]
        count = later.reads.get(name, 0)
        if not count:
            continue
        if not isinstance(later, Simple):
            return None
        products = _products(later.node, name)
        if len(products) != count or later.binds & {name}:
            return None
        if not all(shapes.shrinks(array, other, left) for _, other, left in products):
            return None
        readers[at] = {id(product): left for product, _, left in products}
        seen += count
        if seen == reads[name]:
            break
    if seen != reads[name]:
        return None
    last = max(readers)
    used = set(name_reads(item.node.value))
    if any(used & (bound_within(between) | written_within((between,))) for between in code[index + 1:last]):
        return None
    out = list(code)
    for at, products in readers.items():
        out[at] = Simple(out[at].node.visit(_Rescaled(products, numbers, array)))
    del out[index]
    for read in name_reads(array):
        reads[read] += len(readers) - 1
    reads[name] = 0
    return out


__all__ = ["scaled_products"]

"""Whole sums of elementwise products written as the runtime's sum of products, in code made for a
call's shapes: CoreFunction + the shapes its values are known to have + the rule table ->
CoreFunction.

``s = np.sum(t)`` (any sum over the whole array the table's rules of reduction ``"sum"`` make:
``np.sum(t)``, ``t.sum()``, no other argument) whose operand ``t`` is an elementwise product of
two arrays of one known shape (``t = a * b``, the rules of algebra ``"mul"``; ``a ** 2``,
``np.power(a, 2)``, ``np.square(a)``: ``a`` times itself), read by nothing but the sum, becomes
the runtime's ``s = sum_of_products(a, b)`` (``sum_of_squares(a)`` for a square; runtime/sums.py:
one dot product of the flat arrays where they are C-contiguous float64 arrays of at most
``DOT_MOST`` elements, numpy's own sum of the product elsewhere), and ``t`` is not computed: a
loss's ``np.sum(r ** 2)`` is ``r @ r``, one pass without a product array, as a careful person
writes it; the adjoints are the product's (``g * b``; ``g * 2.0 * a`` at once for a square).

Conditions: ``t`` bound last before the sum by a statement of the same block with one target
and no keyword, read by nothing else (no other statement, test, loop header or the result); no
item of the block from it to the sum binds a name ``a`` or ``b`` reads; both of one known shape
(rank 1 or more: a product that broadcasts stays as written). The values are numpy's up to the
order of the sum's terms (the dot product's, within ``DOT_MOST`` terms as accurate).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional

import libcst as cst

from ..errors import TransformError
from ..rules.helpers.sums import SUM_OF_PRODUCTS, SUM_OF_SQUARES
from ..rules.table import RuleTable
from .binding import bind_arguments, defaulted_params
from .ir import Const, CoreFunction, Prim, Stmt, Var, defined_names, is_number, operand_reads, read_counts

_RUNTIME = "s2sgrad.runtime."


class _Rewriter:
    def __init__(self, fn: CoreFunction, shapes: Mapping[str, tuple], table: RuleTable) -> None:
        self.shapes, self.table = shapes, table
        self.reads = read_counts(fn)
        self.changed = False

    def block(self, items: tuple) -> tuple:
        """``items`` with their sums of products rewritten, nested blocks first."""
        out = list(items)
        for index, item in enumerate(items):
            if not isinstance(item, Stmt):
                nested = {field: self.block(getattr(item, field)) for field in ("body", "orelse")
                          if hasattr(item, field)}
                if any(block is not getattr(item, field) for field, block in nested.items()):
                    out[index] = replace(item, **nested)
        dropped: set = set()
        for index, item in enumerate(out):
            if isinstance(item, Stmt):
                found = self.summed_product(item, out[:index])
                if found is not None:
                    at, operands = found
                    out[index] = self.written(item, operands)
                    dropped.add(at)
        if dropped:
            self.changed = True
            return tuple(item for index, item in enumerate(out) if index not in dropped)
        return items if all(a is b for a, b in zip(out, items)) else tuple(out)

    def summed_product(self, stmt: Stmt, before: list) -> Optional[tuple]:
        """``(the index of the product's statement in the block, (a, b))`` where ``stmt`` is a
        whole sum of an elementwise product (module docstring), else None."""
        rule = self.table.rules.get(stmt.prim.op)
        if rule is None or getattr(rule, "reduction", "") != "sum" or len(stmt.targets) != 1 or \
                stmt.unpack or not rule.params:
            return None
        try:
            bound = bind_arguments(rule, stmt.prim)
        except TransformError:
            return None
        given = set(bound) - defaulted_params(rule, stmt.prim)
        t = bound.get(rule.params[0].name)
        if given != {rule.params[0].name} or not isinstance(t, Var) or self.reads[t.name] != 1:
            return None
        for at in range(len(before) - 1, -1, -1):
            item = before[at]
            if isinstance(item, Stmt) and t.name in item.targets:
                break
            if not isinstance(item, Stmt) and t.name in defined_names((item,)):
                return None
        else:
            return None
        operands = self.factors(item)
        if operands is None or any(set(operand_reads(op)) & defined_names(tuple(before[at + 1:]))
                                   for op in operands):
            return None
        shapes = [self.shape(op) for op in operands]
        if not isinstance(shapes[0], tuple) or not shapes[0] or shapes[0] != shapes[1]:
            return None
        return at, operands

    def factors(self, product: Stmt) -> Optional[tuple]:
        """``(a, b)`` of an elementwise product ``a * b`` (``(a, a)`` of a square), else None."""
        prim = product.prim
        rule = self.table.rules.get(prim.op)
        if rule is None or not rule.elementwise or len(product.targets) != 1 or product.unpack or \
                prim.kwargs or not all(isinstance(op, (Var, Const)) for op in prim.args):
            return None
        if rule.algebra == "mul" and len(prim.args) == 2:
            return tuple(prim.args)
        if rule.algebra == "square" and len(prim.args) == 1:
            return prim.args[0], prim.args[0]
        if rule.algebra == "pow" and len(prim.args) == 2 and is_number(prim.args[1], 2):
            return prim.args[0], prim.args[0]
        return None

    def shape(self, op) -> Optional[tuple]:
        name = op.name if isinstance(op, Var) else op.code if not op.reads else None
        return self.shapes.get(name) if name is not None else None

    def written(self, stmt: Stmt, operands: tuple) -> Stmt:
        """The sum as the runtime's sum of products (of squares, where both factors are one)."""
        helper, operands = (SUM_OF_SQUARES, operands[:1]) if operands[0] == operands[1] else \
            (SUM_OF_PRODUCTS, operands)
        expr = cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(helper)), [cst.Arg(_node(op)) for op in operands])
        return replace(stmt, expr=expr, prim=Prim(_RUNTIME + helper, operands, location=stmt.prim.location))



def _node(op) -> cst.BaseExpression:
    return cst.Name(op.name) if isinstance(op, Var) else op.node


def sums_of_products(fn: CoreFunction, shapes: Mapping[str, tuple], table: RuleTable) -> CoreFunction:
    """``fn`` with each whole sum of an elementwise product of arrays of one known shape written
    as the runtime's sum of products (module docstring); ``fn`` itself where there is none.
    ``shapes``: names -> known shapes."""
    rewriter = _Rewriter(fn, shapes, table)
    body = rewriter.block(fn.body)
    return replace(fn, body=body) if rewriter.changed else fn

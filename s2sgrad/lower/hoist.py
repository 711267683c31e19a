"""Hoisting per-step products out of loops: CoreFunction + RuleTable -> CoreFunction.

In ``for t in range(n):``, a statement ``v = A[t] @ B`` whose ``A`` and ``B`` the loop leaves
alone computes one row of ``A[:n] @ B`` per iteration. The rewrite computes all rows in one product
before the loop, ``A_matmul_B = s2s.rows_matmul(A, n, B)``, and reads ``v = A_matmul_B[t]``
inside it: one matrix product instead of ``n`` vector products (what a person does for the input
projection of an RNN), and the backward sweep then forms ``B``'s gradient in one product too.
Which products qualify, on which side, is the rule table's: a product's rule names the primitive
for a row at each factor (``Rule.row_products``: ``B @ A[t]`` is ``s2s.rows_rmatmul``,
``np.dot(A[t], B)`` and ``A[t].dot(B)`` are ``s2s.rows_dot``). The primitives fall back to the
per-row products when one product would not give the same rows (a 1-D ``A``, a stacked ``B``), so
the values stay those of the loop as written.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst
import libcst.matchers as m

from .ir import (SUBSCRIPT, Const, CoreFunction, If, Loop, Prim, RangeHeader, SequenceHeader, Stmt, Var,
                 defined_names, flatten, operand_reads, reads_counter)
from .naming import Namer
from ..read.walk import findall


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


_SIMPLE_COUNT = (m.Integer() | m.Name() | m.Call(func=m.Name("len"), args=[m.Arg(value=m.Name())])
                 | m.Subscript(value=m.Attribute(value=m.Name(), attr=m.Name("shape")),
                               slice=[m.SubscriptElement(slice=m.Index(value=m.Integer()))]))


def _trip_count(loop: Loop) -> Optional[cst.BaseExpression]:
    """The number of iterations of a loop whose counter runs 0, 1, ..., as code that may be
    evaluated again before the loop: ``n`` of ``range(n)`` (a literal, a name, ``len(x)`` or
    ``x.shape[k]``), ``len(xs)`` of a loop over one named sequence; else None."""
    kind = loop.kind
    if isinstance(kind, RangeHeader):
        count = kind.stop_only()
        return count if count is not None and m.matches(count, _SIMPLE_COUNT) else None
    if isinstance(kind, SequenceHeader) and len(kind.sequences) == 1 and isinstance(kind.sequences[0], Var):
        return cst.Call(cst.Name("len"), [cst.Arg(cst.Name(kind.sequences[0].name))])
    return None


def _read_counts(fn: CoreFunction) -> dict:
    counts: dict = {}
    for stmt in flatten(fn.body):
        for op in (*stmt.prim.args, *(v for _, v in stmt.prim.kwargs)):
            for name in operand_reads(op):
                counts[name] = counts.get(name, 0) + 1
    for name in operand_reads(fn.result):
        counts[name] = counts.get(name, 0) + 1
    return counts


class _Hoister:
    def __init__(self, fn: CoreFunction, table) -> None:
        self.fn = fn
        self.table = table
        self.namer = Namer(fn.reserved | defined_names(fn.body) | {p.name for p in fn.params})
        self.reads = _read_counts(fn)
        self.added: set = set()

    def block(self, body: tuple) -> tuple:
        out: list = []
        for node in body:
            if isinstance(node, If):
                out.append(replace(node, body=self.block(node.body), orelse=self.block(node.orelse)))
            elif isinstance(node, Loop):
                loop = replace(node, body=self.block(node.body))
                before, loop = self.loop(loop)
                out.extend(before)
                out.append(loop)
            else:
                out.append(node)
        return tuple(out)

    def row_product(self, prim: Prim, rows: dict, changed: set) -> Optional[tuple]:
        """``(position, rows rule)`` when ``prim`` is a product (its rule names row products)
        of a row ``A[t]`` at ``position`` and a name the loop leaves alone."""
        rule = self.table.get(prim.op)
        products = dict(getattr(rule, "row_products", ()))
        if not products or len(prim.args) != 2 or prim.kwargs:
            return None
        for position in (0, 1):
            row, other = prim.args[position], prim.args[1 - position]
            name = products.get(rule.params[position].name)
            if name and isinstance(row, Var) and row.name in rows and isinstance(other, Var) and \
                    other.name not in changed:
                return position, name
        return None

    def rows_statement(self, stmt: Stmt, rows_rule: str, a: str, b: str, count, position: int) -> Stmt:
        """``product = <rows_rule>(a, n, b)``: the loop's products of ``a[t]`` and ``b``."""
        word = stmt.prim.op.rpartition(".")[2]  # matmul, dot
        left, right = (a, b) if position == 0 else (b, a)
        product = self.namer.fresh(f"{left}_{word}_{right}")
        self.added.add(product)
        count_code = _code(count)
        counted = tuple(n.value for n in findall(count, m.Name()) if n.value not in ("len",))
        return Stmt((product,), cst.parse_expression(f"{rows_rule}({a}, {count_code}, {b})"),
                    Prim(rows_rule, (Var(a), Const(count, count_code, counted), Var(b)),
                         location=stmt.prim.location), stmt.origin)

    def loop(self, loop: Loop) -> tuple:
        count, t = _trip_count(loop), loop.counter()
        if count is None or not t:
            return (), loop
        changed = defined_names(loop.body) | defined_names(loop.carries) | set(loop.targets)
        if any(name in changed for name in findall(count, m.Name())):
            return (), loop
        rows = {}  # name of A[t] -> (A, its statement)
        body = list(loop.body)
        hoisted: list = []
        dropped: set = set()
        for index, stmt in enumerate(loop.body):
            if not isinstance(stmt, Stmt) or len(stmt.targets) != 1:
                continue
            prim = stmt.prim
            if prim.op == SUBSCRIPT and len(prim.args) == 2 and not prim.kwargs:
                base, key = prim.args
                if isinstance(base, Var) and base.name not in changed and reads_counter(key, t):
                    rows[stmt.targets[0]] = (base.name, stmt)
                continue
            choice = self.row_product(prim, rows, changed)
            if choice is None:
                continue
            position, rows_rule = choice
            row, other = prim.args[position], prim.args[1 - position]
            a, row_stmt = rows[row.name]
            hoisted.append(self.rows_statement(stmt, rows_rule, a, other.name, count, position))
            product = hoisted[-1].targets[0]
            index_const = Const(cst.Name(t), t, (t,), f"[{t}]", True)
            body[index] = Stmt(stmt.targets, cst.parse_expression(f"{product}[{t}]"),
                               Prim(SUBSCRIPT, (Var(product), index_const), location=prim.location),
                               stmt.origin)
            self.reads[row.name] -= 1
            if self.reads[row.name] == 0:  # the row is no longer read: drop its statement
                dropped.add(id(row_stmt))
        if not hoisted:
            return (), loop
        return tuple(hoisted), replace(loop, body=tuple(s for s in body if id(s) not in dropped))


def hoist_products(fn: CoreFunction, table) -> CoreFunction:
    """``fn`` with the per-step products of range loops that the rule table knows how to stack
    (``A[t] @ B``, ``B @ A[t]``, ``np.dot``, ``.dot``) computed before the loop."""
    hoister = _Hoister(fn, table)
    body = hoister.block(fn.body)
    if not hoister.added:
        return fn
    return replace(fn, body=body, reserved=fn.reserved | frozenset(hoister.added))

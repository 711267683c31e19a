"""Einsums that are matrix products, written as products: CoreFunction + the shapes its values are
known to have -> CoreFunction.

``np.einsum("td,de->te", X, W)`` is ``X @ W``, and ``np.einsum("te,se->ts", Q, K)`` is
``Q @ K.T``; numpy computes the einsum with its own loops (without BLAS: several times slower) and
JAX reads it as a matrix product. Where an einsum has two operands whose ranks are known (code made
for a call's array shapes, ``Options.shapes``: their ranks are part of what the code was made
for), no letter repeated in one operand, exactly one letter summed (in both operands, not in the
output), each other letter in one operand and the output, and at most two axes each, the rewrite
writes it as ``L @ R`` of the operands, each transposed where its letters need (``K_T = K.T``),
the output's order choosing which operand is on the left. Then every optimization that knows
matrix products (their plain adjoints for known ranks, the hoisting of per-step products out of a
loop, the sums of per-step weight contributions) knows these einsums too: one structure, however
it is spelled.

Where a rank is not known (code for any shape), the einsum stays as written: with ranks other than
its letters, numpy's einsum raises where a product of the same arrays may not, so the rewrite would
change what the code computes. The values are those of the einsum up to the order of the sums'
terms (a product's rounding, as JAX's).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional

import libcst as cst

from .ir import MATMUL, Const, CoreFunction, Prim, Stmt, Var, defined_names, rewrite_statements
from .naming import Namer

EINSUM = "numpy.einsum"


def _subscripts(op) -> Optional[str]:
    """The text of a literal string operand (``"td,de->te"``), else None."""
    if not isinstance(op, Const) or op.reads or not isinstance(op.node, cst.SimpleString):
        return None
    value = op.node.evaluated_value
    return value if isinstance(value, str) else None


def product_plan(subscripts: str, ranks: tuple) -> Optional[tuple]:
    """``(swap, transpose_left, transpose_right, output letters)`` for ``np.einsum(subscripts, a,
    b)`` of operands of ``ranks`` written as ``L @ R``: ``(L, R)`` is ``(a, b)``, or ``(b, a)``
    where ``swap``, each transposed where told; None where the einsum is no such product (see the
    module's docstring)."""
    text = subscripts.replace(" ", "")
    inputs, arrow, output = text.partition("->")
    operands = inputs.split(",")
    if len(operands) != 2 or not all(s.isalpha() and s.isascii() for s in operands):
        return None
    a, b = operands
    if (len(a), len(b)) != tuple(ranks) or any(len(set(s)) != len(s) for s in operands):
        return None
    if not arrow:  # numpy's implicit output: the letters met once, in alphabetical order
        output = "".join(sorted(c for c in a + b if (a + b).count(c) == 1))
    if not (output.isascii() and (output.isalpha() or output == "")) or len(set(output)) != len(output):
        return None
    summed = [c for c in a if c in b and c not in output]
    if len(summed) != 1 or not 1 <= len(a) <= 2 or not 1 <= len(b) <= 2:
        return None
    (c,) = summed
    free_a, free_b = a.replace(c, ""), b.replace(c, "")
    if any(x in b or x not in output for x in free_a) or any(x in a or x not in output for x in free_b):
        return None
    orders = [(swap, left, right, free_left, free_right)
              for swap, left, right, free_left, free_right in ((False, a, b, free_a, free_b),
                                                               (True, b, a, free_b, free_a))
              if output == free_left + free_right]
    if not orders:
        return None
    # of two orders that give the output, the one with fewer transposes
    swap, transpose_left, transpose_right = min(
        ((swap, left != free_left + c, right != c + free_right)
         for swap, left, right, free_left, free_right in orders), key=lambda o: o[1] + o[2])
    return swap, transpose_left, transpose_right, output


class _Rewriter:
    def __init__(self, fn: CoreFunction, shapes: Mapping[str, tuple]) -> None:
        self.shapes = shapes
        self.namer = Namer(fn.reserved | defined_names(fn.body) | {p.name for p in fn.params})
        self.added: set = set()
        self.changed = False

    def rank(self, op) -> Optional[int]:
        name = op.name if isinstance(op, Var) else op.code if isinstance(op, Const) and not op.reads else None
        shape = self.shapes.get(name) if name is not None else None
        return len(shape) if isinstance(shape, tuple) else None

    def statement(self, stmt: Stmt, block: tuple = ()) -> tuple:
        prim = stmt.prim
        if prim.op != EINSUM or len(stmt.targets) != 1 or len(prim.args) != 3 or prim.kwargs or \
                stmt.unpack:
            return (stmt,)
        subscripts, a, b = prim.args
        text = _subscripts(subscripts)
        ranks = (self.rank(a), self.rank(b))
        plan = product_plan(text, ranks) if text is not None and None not in ranks else None
        if plan is None:
            return (stmt,)
        swap, transpose_left, transpose_right, _ = plan
        left, right = (b, a) if swap else (a, b)
        made: list = []
        left = self.transposed(left, stmt, made) if transpose_left else left
        right = self.transposed(right, stmt, made) if transpose_right else right
        expr = cst.BinaryOperation(_node(left), cst.MatrixMultiply(), _node(right))
        made.append(replace(stmt, expr=expr, prim=Prim(MATMUL, (left, right), location=prim.location)))
        self.changed = True
        return tuple(made)

    def transposed(self, op, stmt: Stmt, made: list):
        """A name holding ``op.T``, its statement appended to ``made``."""
        base = op.name if isinstance(op, Var) else op.code
        name = self.namer.fresh(f"{base}_T")
        self.added.add(name)
        made.append(Stmt((name,), cst.Attribute(_node(op), cst.Name("T")),
                         Prim("ndarray.T", (op,), location=stmt.prim.location), stmt.origin))
        return Var(name)


def _node(op) -> cst.BaseExpression:
    return cst.Name(op.name) if isinstance(op, Var) else op.node


def einsum_products(fn: CoreFunction, shapes: Mapping[str, tuple]) -> CoreFunction:
    """``fn`` with each einsum that is a matrix product of operands of known ranks (``shapes``:
    name -> a known shape, a tuple of dims) written as that product (``fn`` itself where there is
    none). An einsum of a product's result has its rank known at the next run of the shape
    analysis: the pipeline runs this again until nothing changes."""
    rewriter = _Rewriter(fn, shapes)
    body = rewrite_statements(fn.body, rewriter.statement)
    if not rewriter.changed:
        return fn
    return replace(fn, body=body, reserved=fn.reserved | frozenset(rewriter.added))

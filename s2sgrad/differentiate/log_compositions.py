"""Logarithms of one function's value: a CoreFunction + the rule table -> each ``y = np.log(c)``
(the table's natural log, RuleTable.log_of) whose operand ``c = f(x)`` is a function whose rule
states the log's adjoint (``Rule.log_adjoint``: ``cosh`` -> ``g * np.tanh(x)``), mapped to
``(y = log(f)(x), the rule of that one function)``.

Conditions: the log's operand ``c`` is bound last, before it, by a statement of the log's block
(one loop body, one branch, or the function's top level) with one positional operand and no
keyword, so the log reads that value; ``c`` is read by nothing but the log (no other statement,
test, loop header or the result); and no item of the block from ``c``'s statement to the log
binds a name ``x`` reads (so the ``x`` the log's adjoint reads is the one ``f`` was given) and
no branch or loop between binds ``c`` (so the log reads ``f``'s value on every path). The
backward sweep then gives ``x`` the log's adjoint at once (``x_bar = y_bar * np.tanh(x)``): ``c``
gets no adjoint, and the sweep neither divides by ``c`` nor keeps it; the forward sweep's
``np.log(np.cosh(x))`` stays as written.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ..lower.ir import CoreFunction, Stmt, Var, blocks, defined_names, operand_reads, read_counts
from ..rules.table import RuleTable

__all__ = ["log_compositions"]


def log_compositions(fn: CoreFunction, table: RuleTable) -> dict:
    """``{log statement: (the log read as a function of f's operand, its rule)}`` (module
    docstring)."""
    reads = read_counts(fn)
    found: dict = {}
    for block in blocks(fn.body):
        for index, node in enumerate(block):
            if isinstance(node, Stmt):
                composed = _composed(node, block[:index], table, reads)
                if composed is not None:
                    found[node] = composed
    return found


def _composed(log: Stmt, before: tuple, table: RuleTable, reads) -> Optional[tuple]:
    """``(log read as a function of f's operand, its rule)`` where the log and the statement
    binding its operand are one function (module docstring), else None; ``before``: the items of
    the log's block before it."""
    prim = log.prim
    if len(log.targets) != 1 or log.unpack or len(prim.args) != 1 or prim.kwargs or \
            not isinstance(prim.args[0], Var):
        return None
    name = prim.args[0].name
    if reads[name] != 1:
        return None
    for start in range(len(before) - 1, -1, -1):
        inner = before[start]
        if isinstance(inner, Stmt) and name in inner.targets:
            break
        if not isinstance(inner, Stmt) and name in defined_names((inner,)):
            return None  # a branch or loop between may bind it: the log may read that value
    else:
        return None
    rule = table.log_of(prim.op, inner.prim.op)
    if rule is None or inner.targets != (name,) or inner.unpack or len(inner.prim.args) != 1 or \
            inner.prim.kwargs:
        return None
    if set(operand_reads(inner.prim.args[0])) & defined_names(before[start + 1:]):
        return None
    return replace(log, prim=replace(prim, args=inner.prim.args)), rule

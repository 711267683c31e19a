"""Chains of elementwise functions read as one function of their first operand, whose rule
states a shorter adjoint: a CoreFunction + the rule table -> ``{the chain's last statement: (it
read as that one function of the chain's operand, the function's rule)}``.

Three chains are read so:
- **the log of one function's value**, ``y = np.log(c)`` (the table's natural log,
  RuleTable.log_of) whose operand ``c = f(x)`` is a function whose rule states the log's adjoint
  (``Rule.log_adjoint``: ``cosh`` -> ``g * np.tanh(x)``);
- **the logistic function spelled out**, ``1 / (1 + exp(-x))``: ``u = -x``, ``e = exp(u)``,
  ``t = 1 + e`` (or ``e + 1``), ``y = 1 / t`` (or ``np.reciprocal(t)``, ``np.divide(1, t)``),
  each step known by its rule's algebra (``neg``, ``exp``, ``add``, ``div``, ``reciprocal``),
  the ones literal; it is the table's logistic function (RuleTable.logistic: ``expit``, whose
  adjoint ``g * ans * (1.0 - ans)`` reads only its value);
- **the square of a norm**, ``n ** 2`` (``np.square(n)``, ``n * n``) of ``n =
  np.linalg.norm(x)`` given ``x`` alone (the rule of algebra ``"norm"``: the 2-norm of all of
  ``x``): the sum of ``|x|^2`` (RuleTable.squared_norm), whose adjoint ``g * 2.0 * conj(x)``
  neither divides by the norm (0 / 0 at ``x = 0``) nor reads it (reverse mode only: the norm
  has no forward mode).

Conditions, for each value inside a chain (``c``; ``u``, ``e``, ``t``): it is bound last, before
the statement reading it, by a statement of the same block (one loop body, one branch, or the
function's top level) with one target and no keyword, so the next step reads that value; no
item of the block from the chain's first statement to its last binds a name ``x`` reads (so the
``x`` the adjoint reads is the one the chain was given), and no branch or loop between binds a
value of the chain. The backward sweep then gives ``x`` the whole chain's adjoint at once
(``x_bar = y_bar * np.tanh(x)``, ``x_bar = y_bar * y * (1.0 - y)``): the values inside get no
share of it; one read by nothing else gets no adjoint at all, and the sweep neither divides by
it nor keeps it (a logistic's ``exp(-x)``, which overflows to inf for a very negative ``x``
where the chain's own adjoint then reads ``0 * inf``, is not read at all); one read elsewhere too
(``np.exp(-x)`` in two expressions, one negation the common value of several) takes the
adjoints of those other reads as usual. Forward mode reads the chains too: the last value's
tangent is the one function's of ``x``'s, and the tangents of the values inside go unless
something else reads them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from ..lower.ir import CoreFunction, Prim, Stmt, Var, blocks, defined_names, is_number, operand_reads
from ..rules.table import RuleTable

__all__ = ["compositions"]


def compositions(fn: CoreFunction, table: RuleTable) -> dict:
    """``{a chain's last statement: (it read as one function of the chain's operand, its rule)}``
    (module docstring)."""
    logistic, squared = table.logistic(), table.squared_norm()
    found: dict = {}
    for block in blocks(fn.body):
        for index, node in enumerate(block):
            if isinstance(node, Stmt):
                composed = _log_of(node, block[:index], table) or \
                    _logistic(node, block[:index], table, logistic) or \
                    _squared_norm(node, block[:index], table, squared)
                if composed is not None:
                    found[node] = composed
    return found


def _feeding(operand, before: tuple) -> Optional[tuple]:
    """``(index, statement)`` of the statement of ``before`` (the items of a block before the
    one reading ``operand``) binding that name last, where it is one call with one positional
    operand list and no keyword, and no branch or loop after it binds it; else None."""
    if not isinstance(operand, Var):
        return None
    for start in range(len(before) - 1, -1, -1):
        inner = before[start]
        if isinstance(inner, Stmt) and operand.name in inner.targets:
            if inner.targets != (operand.name,) or inner.unpack or inner.prim.kwargs:
                return None
            return start, inner
        if not isinstance(inner, Stmt) and operand.name in defined_names((inner,)):
            return None  # a branch or loop between may bind it: the next step may read that value
    return None


def _single(stmt: Stmt) -> bool:
    return len(stmt.targets) == 1 and not stmt.unpack and not stmt.prim.kwargs


def _log_of(log: Stmt, before: tuple, table: RuleTable) -> Optional[tuple]:
    """``np.log(f(x))`` as one function of ``x`` (module docstring), else None."""
    prim = log.prim
    if not _single(log) or len(prim.args) != 1:
        return None
    fed = _feeding(prim.args[0], before)
    if fed is None:
        return None
    start, inner = fed
    rule = table.log_of(prim.op, inner.prim.op)
    if rule is None or len(inner.prim.args) != 1:
        return None
    if set(operand_reads(inner.prim.args[0])) & defined_names(before[start + 1:]):
        return None
    return replace(log, prim=replace(prim, args=inner.prim.args)), rule


def _algebra(table: RuleTable, prim: Prim) -> str:
    rule = table.rules.get(prim.op)
    return getattr(rule, "algebra", "") if rule is not None and rule.elementwise else ""


def _other_than_one(prim: Prim) -> Optional[object]:
    """Of two operands one a literal 1, the other; else None."""
    if len(prim.args) != 2:
        return None
    first, second = prim.args
    return second if is_number(first, 1) else first if is_number(second, 1) else None


def _logistic(y: Stmt, before: tuple, table: RuleTable, rule) -> Optional[tuple]:
    """``1 / (1 + exp(-x))`` as the logistic function of ``x`` (module docstring), else None."""
    if rule is None or not _single(y):
        return None
    kind = _algebra(table, y.prim)
    if kind == "div" and len(y.prim.args) == 2 and is_number(y.prim.args[0], 1):
        t = y.prim.args[1]
    elif kind == "reciprocal" and len(y.prim.args) == 1:
        t = y.prim.args[0]
    else:
        return None
    fed = _feeding(t, before)  # t = 1 + e
    if fed is None or _algebra(table, fed[1].prim) != "add":
        return None
    fed = _feeding(_other_than_one(fed[1].prim), before[:fed[0]])  # e = exp(u)
    if fed is None or _algebra(table, fed[1].prim) != "exp" or len(fed[1].prim.args) != 1:
        return None
    fed = _feeding(fed[1].prim.args[0], before[:fed[0]])  # u = -x
    if fed is None or _algebra(table, fed[1].prim) != "neg" or len(fed[1].prim.args) != 1:
        return None
    start, negation = fed
    x = negation.prim.args[0]
    if not isinstance(x, Var) or set(operand_reads(x)) & defined_names(before[start + 1:]):
        return None  # (an index kept verbatim, ``-(x[1, 2])``: the chain as written)
    return replace(y, prim=Prim(rule.name, (x,), location=y.prim.location)), rule


def _squared_norm(y: Stmt, before: tuple, table: RuleTable, rule) -> Optional[tuple]:
    """``np.linalg.norm(x) ** 2`` (``np.square(n)``, ``n * n``) as the sum of ``|x|^2``
    (module docstring), else None."""
    if rule is None or not _single(y):
        return None
    kind, args = _algebra(table, y.prim), y.prim.args
    if kind == "pow" and len(args) == 2 and is_number(args[1], 2) or kind == "square" and len(args) == 1:
        n = args[0]
    elif kind == "mul" and len(args) == 2 and isinstance(args[0], Var) and args[0] == args[1]:
        n = args[0]
    else:
        return None
    fed = _feeding(n, before)  # n = np.linalg.norm(x), x alone
    if fed is None or fed[1].prim.op != rule.name or len(fed[1].prim.args) != 1:
        return None
    start, norm = fed
    x = norm.prim.args[0]
    if not isinstance(x, Var) or set(operand_reads(x)) & defined_names(before[start + 1:]):
        return None
    return replace(y, prim=Prim(rule.name, (x,), location=y.prim.location)), rule

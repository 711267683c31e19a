"""The function's own sums and means over axes, taken as the runtime's: CoreFunction + the rule
table -> CoreFunction.

Each call of a sum or a mean (the table's rules of reduction ``"sum"`` and ``"mean"``:
``np.sum(x, axis=k)``, ``x.mean(axis=k)``) given an axis (an integer literal or a tuple of them)
and nothing but ``keepdims`` (a literal) besides is written as the runtime's ``axis_sum(x,
axis=k)`` or ``axis_mean`` (runtime/sums.py): numpy's, computed as a product with ones where that
is the faster (numpy reduces one inner run of the kept axes at a time: the 3 coordinates of
``(n, n, 3)`` differences summed cost about ten times the product). So is a whole sum or mean
(no axis, or ``axis=None``) of a name known to hold an array (its shape known): ``axis_sum(x)``
is numpy's own reduction without the Python of ``np.sum``'s dispatch (1.0 us where ``np.sum``
of 1000 numbers takes 2.2 us). Its rule is a sum's (a
mean's), so every analysis and rule sees the same reduction. Code made for a call's shapes takes
it (pipeline, after the rewrites that read sums: the batched loops spell their sums as numpy's);
code for any shape, the one ``emit`` writes for review, keeps the sums as written. The values are
numpy's up to the order of the sums' terms (as a product's).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

import libcst as cst

from ..errors import TransformError
from ..rules.helpers.sums import AXIS_MEAN, AXIS_SUM
from ..rules.table import RuleTable
from .binding import bind_arguments, defaulted_params
from .index_parts import literal_axis
from .ir import Const, CoreFunction, Prim, Stmt, Var, rewrite_statements

# a reduction -> the helper taking it, and the rule table's name of the helper
_HELPERS = {"sum": (AXIS_SUM, "s2sgrad.runtime." + AXIS_SUM),
            "mean": (AXIS_MEAN, "s2sgrad.runtime." + AXIS_MEAN)}
_TAKEN = frozenset(op for _, op in _HELPERS.values())


def _literal_bool(op) -> bool:
    return isinstance(op, Const) and isinstance(op.node, cst.Name) and op.node.value in ("True", "False")


def _statement(table: RuleTable, arrays: Mapping[str, tuple], lists: frozenset, stmt: Stmt,
               changed: list) -> tuple:
    """``(stmt,)``, or the statement calling the runtime's reduction in its place (``arrays``: the
    names known to hold arrays, by their shapes, whose whole sums are taken too; ``lists``: the
    names holding Python lists, whose sums stay numpy's)."""
    prim = stmt.prim
    rule = table.rules.get(prim.op)
    if rule is None or getattr(rule, "reduction", "") not in _HELPERS or prim.op in _TAKEN or \
            len(stmt.targets) != 1 or stmt.unpack or not rule.params:
        return (stmt,)
    helper, op = _HELPERS[rule.reduction]
    try:
        bound = bind_arguments(rule, prim)
    except TransformError:  # (a keyword the rule does not model: as written, refused later)
        return (stmt,)
    bound = {name: operand for name, operand in bound.items() if name not in defaulted_params(rule, prim)}
    first = rule.params[0].name
    operand, axis = bound.get(first), bound.get("axis")
    whole = (axis is None or (isinstance(axis, Const) and axis.code == "None")) and \
        isinstance(operand, Var) and isinstance(arrays.get(operand.name), tuple)
    if set(bound) - {first, "axis", "keepdims"} or not isinstance(operand, (Var, Const)) or \
            not (whole or literal_axis(axis)) or \
            ("keepdims" in bound and not _literal_bool(bound["keepdims"])) or \
            (isinstance(operand, Var) and operand.name in lists):
        return (stmt,)  # (a dtype or an out, a list or an operand of another form: as written)
    args = [cst.Arg(cst.Name(operand.name) if isinstance(operand, Var) else operand.node)]
    if axis is not None:
        args.append(cst.Arg(axis.node, keyword=cst.Name("axis")))
    kwargs: tuple = ()
    if "keepdims" in bound:
        args.append(cst.Arg(bound["keepdims"].node, keyword=cst.Name("keepdims")))
        kwargs = (("keepdims", bound["keepdims"]),)
    expr = cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(helper)), args)
    changed.append(stmt)
    operands = (operand,) if axis is None else (operand, axis)
    return (replace(stmt, expr=expr, prim=Prim(op, operands, kwargs, location=prim.location)),)


def axis_sums(fn: CoreFunction, table: RuleTable, arrays: Mapping[str, tuple]) -> CoreFunction:
    """``fn`` with its sums and means over literal axes, and its whole sums and means of arrays
    (``arrays``: names -> known shapes), written as the runtime's ``axis_sum`` and ``axis_mean``
    (``fn`` itself where it has none)."""
    changed: list = []
    lists = frozenset(fn.lists)
    body = rewrite_statements(fn.body, lambda stmt, block: _statement(table, arrays, lists, stmt, changed))
    return replace(fn, body=body) if changed else fn

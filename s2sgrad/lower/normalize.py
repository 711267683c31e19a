"""Normalize: ParsedFunction -> CoreFunction (one primitive per statement, SSA names, origins).

Nested expressions are split into temporaries named after what they hold (``h_times_w``); the
outermost expression of a statement keeps the user's target name. A name assigned twice gets a new
version (``h``, ``h_2``) so the backward sweep can still read every value it needs. Parts that
cannot carry a derivative (shapes, comparisons, index expressions) stay verbatim.

The passes share one Context (context.py): expressions.py lowers expressions to operands,
statements.py and assignments.py simple statements (write_calls.py the calls that write into
an argument), branches.py and loops.py compound ones,
blocks.py dispatches between them, joins.py joins names where blocks meet; this module lowers the
parameters and the body and builds the CoreFunction.
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import libcst.matchers as m

from ..read.parse import ParsedFunction
from .blocks import lower_any
from .context import Context
from .ir import Const, CoreFunction, Param
from .resolve import default_of
from .scope import read_names, statements_of
from .statements import lower_return


def lower_function(pf: ParsedFunction, table: Any, returns: bool = True) -> CoreFunction:
    """Lower ``pf`` to the core form; ``table`` (a RuleTable) says which functions are kept
    verbatim (no derivative) and which write into an argument. ``returns``: refuse a function
    that returns no value (False: it returns None, for a function called for its effect)."""
    ctx = Context.start(pf, table)
    params = _lower_params(ctx)
    result, result_origin = _lower_body(ctx, returns)
    node = pf.node
    return CoreFunction(
        name=node.name.value,
        qualname=node.name.value,
        params=params,
        body=tuple(ctx.body),
        result=result,
        result_origin=result_origin,
        reserved=ctx.namer.used(),
        globals_read=tuple(sorted(ctx.globals_read)),
        path=pf.unit.path,
        module=pf.unit.module,
        lists=frozenset(ctx.lists),
        inplace=tuple(ctx.inplace),
        user_names=dict(ctx.user_names),
    )


def _lower_params(ctx: Context) -> tuple:
    """The parameters (positional and keyword-only) with their defaults, each bound to itself."""
    node = ctx.pf.node
    params = []
    for p in list(node.params.params) + list(node.params.kwonly_params):
        default = default_of(ctx.pf, p)
        params.append(Param(p.name.value, default))
        ctx.env[p.name.value] = p.name.value
        ctx.namer.reserve(p.name.value)
        if default is not None:
            ctx.globals_read.update(read_names(default))
    return tuple(params)


def _lower_body(ctx: Context, returns: bool) -> tuple:
    """Lower the body into ``ctx.body``; returns the returned operand and its statement's Origin."""
    node = ctx.pf.node
    result = None
    result_origin = None
    for i, stmt in enumerate(statements_of(node.body)):
        if m.matches(stmt, m.Return()):
            ctx.origin = ctx.origin_of(stmt)
            result = lower_return(ctx, stmt)
            result_origin = ctx.origin
            continue
        lower_any(ctx, stmt, is_first=(i == 0))
    if result is None and not returns:
        return Const(cst.Name("None"), "None"), None
    if result is None:
        raise ctx.pf.error(node, f"{node.name.value} does not return a value",
                           "end the function with `return <value>`")
    return result, result_origin

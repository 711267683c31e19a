"""Blocks: a Context and statements (simple or compound) -> core statements in ``ctx.body``,
or a block of their own. Hands ``if``/``for``/``while`` to branches and loops, with
``lower_block`` for the blocks nested in them, and small statements to statements."""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from ..runtime.contexts import enter_context, entered, exit_context
from .branches import lower_if
from .context import Context
from .ir import Prim
from .loops import lower_for, lower_while
from .scope import statements_of
from .statements import lower_statement
from .text import code


def lower_any(ctx: Context, stmt: cst.CSTNode, is_first: bool = False) -> None:
    """Lower one statement (simple or compound) into ``ctx.body``."""
    if isinstance(stmt, cst.If):
        lower_if(ctx, stmt, lower_block)
    elif isinstance(stmt, cst.For):
        lower_for(ctx, stmt, lower_block)
        _lower_loop_else(ctx, stmt)
    elif isinstance(stmt, cst.While):
        lower_while(ctx, stmt, lower_block)
        _lower_loop_else(ctx, stmt)
    elif isinstance(stmt, cst.With):
        _lower_with(ctx, stmt)
    else:
        ctx.origin = ctx.origin_of(stmt)
        lower_statement(ctx, stmt, is_first)


def _lower_with(ctx: Context, stmt: cst.With) -> None:
    """``with m: body`` -> the manager bound to a name of its own and entered, the body lowered
    as if the ``with`` were not there, then the manager exited: kept verbatim where they run
    (runtime/contexts.py: no derivative), so ``np.errstate`` holds around the body's forward code.
    ``with m as name`` binds what entering gives, with no derivative: only where ``m`` reads none
    of the function's values (the fence refuses a target that is not a name)."""
    ctx.origin = ctx.header_origin(f"with {', '.join(code(i.item) for i in stmt.items)}:", stmt)
    location = ctx.pf.location(stmt)
    managers = []
    for item in stmt.items:
        expr, reads = ctx.verbatim(item.item)
        if item.asname is not None and reads:
            raise ctx.pf.error(item, "a `with` block binding a name (`as`) is supported where its "
                               "manager reads none of the function's values: what it binds has no "
                               f"derivative, and this one reads `{ctx.user_names.get(reads[0], reads[0])}`",
                               "compute the value in the body instead of binding it with `as`")
        name = ctx.new_target(None, "context", "context")
        ctx.emit((name,), expr, Prim("nondiff", (), location=location))
        enter = _helper_call(enter_context, name)
        ctx.emit((), enter, Prim("nondiff", (), location=location))
        if item.asname is not None:
            value = _helper_call(entered, name)
            ctx.emit((ctx.bind(item.asname.name.value),), value, Prim("nondiff", (), location=location))
        managers.append(name)
    for inner in statements_of(stmt.body):
        lower_any(ctx, inner)
    ctx.origin = ctx.header_origin(f"end of with {', '.join(code(i.item) for i in stmt.items)}", stmt)
    for name in reversed(managers):
        leave = _helper_call(exit_context, name)
        ctx.emit((), leave, Prim("nondiff", (), location=location))


def _helper_call(helper: Callable, name: str) -> cst.Call:
    """``s2s.<helper>(name)``: a call of a runtime helper as generated code spells it."""
    return cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(helper.__name__)), [cst.Arg(cst.Name(name))])


def _lower_loop_else(ctx: Context, loop: cst.CSTNode) -> None:
    """A loop's ``else:`` block, lowered as statements after the loop (structuring has already
    turned a ``break`` that would skip it into a flag the block tests)."""
    if loop.orelse is not None:
        for stmt in statements_of(loop.orelse.body):
            lower_any(ctx, stmt)


def lower_block(ctx: Context, statements: list, prologue: tuple = (),
                start: Optional[Callable[[], None]] = None) -> tuple:
    """Lower ``statements`` into a new block (``prologue`` statements first, then what
    ``start()`` emits)."""
    saved_body, saved_origin = ctx.body, ctx.origin
    ctx.body = list(prologue)
    if start is not None:
        start()
    for stmt in statements:
        lower_any(ctx, stmt)
    block = tuple(ctx.body)
    ctx.body, ctx.origin = saved_body, saved_origin
    return block

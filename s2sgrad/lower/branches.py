"""``if`` statements: a Context and an ``if`` (with its ``elif``/``else`` arms) -> one If in
``ctx.body`` whose arms end with the copies into the join names. Nested blocks are lowered by the
``lower_block(ctx, statements)`` the caller passes (blocks.lower_block)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from .context import BlockLowerer, Context
from .expressions import condition
from .ir import If
from .joins import join
from .scope import statements_of
from .text import code


def lower_if(ctx: Context, node: cst.If, lower_block: BlockLowerer,
             keyword: str = "if") -> None:
    ctx.if_count += 1
    n = ctx.if_count
    origin = ctx.header_origin(f"{keyword} {code(node.test)}:", node)
    ctx.origin = origin
    test = condition(ctx, node.test, f"cond{n}")
    saved = ctx.namer.fresh(f"if{n}_saved")
    before = dict(ctx.env)
    body = lower_block(ctx, statements_of(node.body))
    env_then = ctx.env
    ctx.env = dict(before)
    orelse = _lower_orelse(ctx, node.orelse, lower_block)
    env_else = ctx.env
    ctx.env = before
    ctx.origin = origin
    then_copies, else_copies = join(ctx, before, [env_then, env_else])
    ctx.body.append(If(test, body + tuple(then_copies), orelse + tuple(else_copies), saved,
                       origin))


def _lower_orelse(ctx: Context, orelse: Optional[cst.CSTNode],
                  lower_block: BlockLowerer) -> tuple:
    """The other arm of an ``if``: an ``elif`` (an If of its own), an ``else`` block, or nothing."""
    if isinstance(orelse, cst.If):
        block, _ = ctx.collect(lambda: lower_if(ctx, orelse, lower_block, keyword="elif"))
        return block
    if orelse is not None:
        return lower_block(ctx, statements_of(orelse.body))
    return ()

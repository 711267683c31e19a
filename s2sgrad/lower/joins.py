"""Where blocks meet: a Context and the environments (user name -> SSA name) of alternative or
repeated blocks -> the copies that give each name one version afterwards: join names at the end
of a branch, carries at the end of a loop iteration, Nones bound before a loop."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from .context import Context
from .ir import Const, Origin, Prim, Stmt, Var
from .scope import statements_of, targets_in, targets_outside


def join(ctx: Context, before: dict, branches: list) -> list:
    """Join the environments at the end of alternative blocks: for every name a branch
    assigned, a join name and, per branch, the copy into it. Returns the copies per branch.

    A name first bound in some branches only keeps its name, and the other branches bind it
    to None, so that every later statement (and the backward sweep) can name it safely."""
    names = sorted({k for env in branches for k, v in env.items() if before.get(k) != v})
    copies: list = [[] for _ in branches]
    joined = dict(before)
    for name in names:
        versions = [env.get(name) for env in branches]
        target = _join_target(ctx, name, before, versions)
        if target is None:
            joined[name] = versions[0]
            continue
        ctx.user_names[target] = name
        for env, out in zip(branches, copies):
            if env.get(name) != target:
                out.append(_copy_into(ctx, target, env.get(name)))
        joined[name] = target
    ctx.env = joined
    return copies


def _join_target(ctx: Context, name: str, before: dict, versions: list) -> Optional[str]:
    """The name ``name`` has after the branches (``versions``: its version at the end of each,
    None where unbound), or None when every branch ends with the same version of a name bound
    before them (nothing to copy)."""
    distinct = sorted({v for v in versions if v is not None})
    if name not in before and len(distinct) == 1:
        return distinct[0]
    if len(distinct) == 1 and None not in versions:
        return None
    return ctx.namer.fresh(name)


def _copy_into(ctx: Context, target: str, source: Optional[str]) -> Stmt:
    """``target = source`` at the end of a branch; ``target = None`` where it is unbound."""
    if source is None:  # unbound on this path: None stands in
        none = cst.Name("None")
        return Stmt((target,), none, Prim("copy", (Const(none, "None"),)), ctx.origin)
    if source in ctx.lists:
        ctx.lists.add(target)
    if source in ctx.dicts:
        ctx.dicts.add(target)
    return Stmt((target,), cst.Name(source), Prim("copy", (Var(source),)), ctx.origin)


def bind_conditional_locals(ctx: Context, body: cst.BaseSuite) -> None:
    """Bind to None, before a loop, each new name its body assigns only inside a nested block:
    an iteration that skips the assignment must see the previous iteration's value, so the
    name is carried around the loop like any other."""
    names = set()
    for stmt in statements_of(body):
        if isinstance(stmt, (cst.If, cst.For, cst.While)):
            names |= targets_in(stmt)
    for name in sorted(names - set(ctx.env)):
        none = cst.Name("None")
        ctx.emit((ctx.bind(name),), none, Prim("copy", (Const(none, "None"),)))


def bind_loop_locals_bound_again(ctx: Context, loop: cst.CSTNode) -> None:
    """Bind to None, before ``loop``, each new name it assigns (its targets, its body) that the
    function assigns elsewhere too (``for i in ...`` twice): a loop that runs zero times binds
    none of them, and a later loop that rebinds one carries it (generated code records its
    value before that loop, which must then be bound)."""
    names = targets_in(loop) - set(ctx.env)
    if not names:
        return
    for name in sorted(names & targets_outside(ctx.pf.node.body, loop)):
        none = cst.Name("None")
        ctx.emit((ctx.bind(name),), none, Prim("copy", (Const(none, "None"),)))


def loop_carries(ctx: Context, before: dict, origin: Origin) -> tuple:
    """Copies that hand a loop's new values of pre-existing names to the next iteration."""
    carries = []
    for name in sorted(k for k in before if ctx.env.get(k) != before[k]):
        carries.append(Stmt((before[name],), cst.Name(ctx.env[name]),
                            Prim("copy", (Var(ctx.env[name]),)), origin))
        if ctx.env[name] in ctx.lists:
            ctx.lists.add(before[name])
        if ctx.env[name] in ctx.dicts:
            ctx.dicts.add(before[name])
        ctx.env[name] = before[name]
    return tuple(carries)

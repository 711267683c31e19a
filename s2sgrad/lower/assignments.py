"""Assignments: a Context, a target and a value -> new SSA versions of the names assigned,
emitted into ``ctx.body``. Covers names, tuple unpacking (of a display, a call's result or any
sequence), writes by index (``y[i] = v`` as a new version ``y_2`` from the runtime's ``setitem``)
and ``lst.append(v)`` (as ``lst_2 = lst + [v]``); each in-place update is recorded in
``ctx.inplace``."""

from __future__ import annotations

from typing import Any

import libcst as cst

from .context import Context
from .describe import short
from .expressions import index, lower_call, operand, subscript_expr
from .ir import Const, Prim, Seq, Stmt, Var, operand_node
from .kinds import is_nondiff


def assign(ctx: Context, target: cst.BaseExpression, value: cst.BaseExpression,
           source: Any = None) -> None:
    """``target = value``; ``source`` is ``value`` already lowered, when it is."""
    if isinstance(target, cst.Name):
        op = operand(ctx, value, target=target.value)
        if isinstance(op, Var) and op.name == ctx.env.get(target.value):
            return  # the value was already written to the target (or `x = x`)
        copy_to(ctx, target.value, op)
    elif isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) \
            and target.value.value in ctx.env:
        _assign_index(ctx, target, value)
    elif isinstance(target, (cst.Tuple, cst.List)):
        _assign_unpack(ctx, [e.value for e in target.elements], value, source)
    elif isinstance(target, cst.Subscript):
        raise ctx.pf.error(target, "only a local array can be written by index (`y[i] = ...`)",
                           "copy it into a local name first: `y = y.copy(); y[i] = ...`")
    else:
        raise ctx.pf.error(target, "only names and tuples of names can be assigned here",
                           "assign to a new name instead")


def _assign_index(ctx: Context, target: cst.Subscript, value: cst.BaseExpression) -> None:
    """``y[i] = v`` as ``y_2 = setitem(y, i, v)``: the runtime's setitem writes into a copy."""
    held = operand(ctx, value)
    _, index_op = index(ctx, target)
    write_at(ctx, target.value.value, index_op, held, target)


def write_at(ctx: Context, user_name: str, index_op: Const, held: Any, node: cst.CSTNode) -> Var:
    """``user_name[index] = held`` as a new version of ``user_name`` (``s2s.setitem`` writes into
    a copy), recorded as an in-place update located at ``node``."""
    base = Var(ctx.env[user_name])
    name = ctx.bind(user_name)
    ctx.inplace.append((name, base.name, ctx.pf.location(node)))
    call = cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name("setitem")),
                    [cst.Arg(cst.Name(base.name)), cst.Arg(index_op.node),
                     cst.Arg(operand_node(held))])
    ctx.emit((name,), call, Prim("s2s.setitem", (base, index_op, held),
                                 location=ctx.pf.location(node)))
    return Var(name)


def _assign_unpack(ctx: Context, elements: list, value: cst.BaseExpression, source: Any) -> None:
    """``a, b = value``: element by element from a display of the same length, in one statement
    from a call, else by reading ``value[0]``, ``value[1]``, ..."""
    if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(elements):
        ops = [operand(ctx, e.value) for e in value.elements]
        for el, e, op in zip(elements, value.elements, ops):
            if isinstance(el, cst.Name):
                copy_to(ctx, el.value, op)
            else:  # a nested target: ``a, (b, c) = x, (y, z)``
                _assign_unpack(ctx, [x.value for x in el.elements], e.value, op)
        return
    if isinstance(value, cst.Call) and not is_nondiff(ctx, value) and \
            all(isinstance(e, cst.Name) for e in elements):
        lower_call(ctx, value, None, unpack_to=tuple(e.value for e in elements))
        return
    source = operand(ctx, value) if source is None else source
    op = "list.getitem" if isinstance(source, Var) and source.name in ctx.lists \
        else "operator.getitem"
    for i, el in enumerate(elements):
        position = cst.Integer(str(i))
        nested = not isinstance(el, cst.Name)  # ``a, (b, c) = value``: value[1] unpacked again
        name = ctx.new_target(None, f"{short(source)}_{i}", "item") if nested else ctx.bind(el.value)
        expr = subscript_expr(source, position)
        ctx.emit((name,), expr, Prim(op, (source, Const(position, str(i))),
                                     location=ctx.pf.location(el)))
        if nested:
            _assign_unpack(ctx, [x.value for x in el.elements], cst.Name(name), Var(name))


def lower_append(ctx: Context, owner: str, item_node: cst.BaseExpression,
                 stmt: cst.CSTNode) -> None:
    """``lst.append(v)`` as ``lst_2 = lst + [v]``: a new list, so every version stays intact."""
    base = Var(ctx.env[owner])
    item = operand(ctx, item_node)
    name = ctx.bind(owner)
    ctx.inplace.append((name, base.name, ctx.pf.location(stmt)))
    expr = cst.BinaryOperation(cst.Name(base.name), cst.Add(),
                               cst.List([cst.Element(operand_node(item))]))
    ctx.emit((name,), expr, Prim("list.append", (base, item), location=ctx.pf.location(stmt)))
    ctx.lists.add(name)


def copy_to(ctx: Context, user_name: str, op: Any) -> None:
    """``user_name = op`` where ``op`` is an already-lowered operand."""
    last = ctx.body[-1] if ctx.body else None
    if isinstance(op, Var) and isinstance(last, Stmt) and op.name in last.targets \
            and op.name in ctx.temps and len(last.targets) == 1:
        # Rename the temporary that holds the value to the user's name.
        ctx.body.pop()
        name = ctx.bind(user_name)
        ctx.body.append(Stmt((name,), last.expr, last.prim, last.origin, last.unpack))
        for kind in (ctx.lists, ctx.dicts):
            if op.name in kind:
                kind.add(name)
        return
    name = ctx.bind(user_name)
    ctx.emit((name,), operand_node(op), Prim("copy", (op,), location=ctx.origin.location))
    if isinstance(op, Seq) or (isinstance(op, Var) and op.name in ctx.lists) or \
            (isinstance(op, Const) and isinstance(op.node, cst.List)):
        ctx.lists.add(name)
    if isinstance(op, Var) and op.name in ctx.dicts:
        ctx.dicts.add(name)

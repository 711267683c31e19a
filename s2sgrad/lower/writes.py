"""Calls that write into an argument: a Context and a call -> what it writes (a WriteCall), or None.

What a function writes is the rule table's fact (rules/writes.py): a Write for the functions that
change an argument (``np.copyto``, ``np.add.at``, ``y.fill(v)``), and numpy's own ``out``
parameter, by keyword or by position. lower/write_calls.py turns what this finds into an in-place
update of the written name; anywhere but a statement of its own, such a call is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst
import libcst.matchers as m

from ..rules.writes import Write
from .context import Context
from .scope import read_names


@dataclass(frozen=True)
class WriteCall:
    """A call that writes: ``write`` (the table's Write; None for an ``out`` argument),
    ``callee`` (its qualified name, ``ndarray.<method>`` for a method of a local), ``args``
    (parameter -> the argument's node, ``self`` for a method's array) and, for ``out``, the
    call without it and the written node (None for ``out=None``, which writes nothing)."""

    callee: str
    write: Optional[Write]
    args: dict
    without_out: Optional[cst.Call] = None
    out: Optional[cst.BaseExpression] = None


def reads_locals(ctx: Context, node: cst.CSTNode) -> bool:
    """Whether ``node`` reads a name the function binds (a value that may carry a derivative)."""
    return bool(set(read_names(node)) & ctx.locals)


def find_write(ctx: Context, call: cst.Call) -> Optional[WriteCall]:
    """What ``call`` writes into, or None when it writes nothing the table knows of."""
    func = call.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
            and func.value.value in ctx.env:
        callee = f"ndarray.{func.attr.value}"
        write = ctx.table.write(callee)
        if write is None:
            return None
        return WriteCall(callee, write, _bind(ctx, write, call, {"self": func.value}))
    callee = ctx.callee_name(func)
    write = ctx.table.write(callee)
    if write is not None:
        return WriteCall(callee, write, _bind(ctx, write, call, {}))
    return _out_argument(ctx, call, callee)


def _out_argument(ctx: Context, call: cst.Call, callee: str) -> Optional[WriteCall]:
    """A library call with ``out=`` (or ``out`` at its position): the call without it."""
    position = ctx.table.out_position(callee)
    positional = [i for i, a in enumerate(call.args) if a.keyword is None and not a.star]
    at = next((i for i, a in enumerate(call.args) if a.keyword is not None
               and a.keyword.value == "out"), None)
    if at is None and position is not None and len(positional) > position:
        at = positional[position]
    if at is None:
        return None
    out = call.args[at].value
    kept = [a for i, a in enumerate(call.args) if i != at]
    if kept:
        kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    without = call.with_changes(args=kept)
    ctx.pf.parsed.adopt(without, call)
    if m.matches(out, m.Name("None")):  # numpy's default: a new array, nothing written
        return WriteCall(callee, None, {}, without, None)
    return WriteCall(callee, None, {}, without, out)


def _bind(ctx: Context, write: Write, call: cst.Call, bound: dict) -> dict:
    """The call's arguments by ``write``'s parameter names (a located error when they do not fit)."""
    names = [n for n, _ in write.params if n not in bound]
    args = dict(bound)
    for a in call.args:
        if a.star:
            raise ctx.pf.error(a, "star-arguments (*args, **kwargs) are not supported",
                               "pass the arguments one by one")
        if a.keyword is None:
            if not names:
                raise ctx.pf.error(call, f"too many positional arguments for {write.name}")
            args[names.pop(0)] = a.value
        else:
            key = a.keyword.value
            if key not in dict(write.params) or key in args:
                raise ctx.pf.error(a, f"{write.name} takes no argument `{key}=` here",
                                   f"call it as numpy documents it: {write.signature}")
            names.remove(key)
            args[key] = a.value
    missing = [n for n, default in write.params if n not in args and default is None]
    if missing:
        raise ctx.pf.error(call, f"{write.name} is missing its argument `{missing[0]}`")
    return args

"""Calls that write into an argument, as in-place updates: a Context, a call and what it writes
(writes.WriteCall) -> the operand the call evaluates to, with a new version of the written name
emitted into ``ctx.body`` (``s2s.setitem`` of the value the call leaves there, so the aliasing
pass checks it like any index write); None when the call reads no local value and writes none
(it is kept as written); a located TransformError for a write s2sgrad does not differentiate."""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from ..rules.writes import Write
from .assignments import write_at
from .context import Context
from .expressions import operand
from .ir import Const, Prim, Var, operand_node
from .text import code, one_line_text
from .writes import WriteCall, reads_locals

WHOLE = Const(cst.Ellipsis(), "...", (), "[...]", True)
NONE = Const(cst.Name("None"), "None")


def lower_write(ctx: Context, call: cst.Call, found: WriteCall) -> Optional[Any]:
    """``call``, which writes as ``found`` says, as an in-place update of the written name."""
    if not reads_locals(ctx, call):
        return None
    if found.write is None:
        return _lower_out(ctx, call, found)
    write = found.write
    written = found.args[write.written]
    spoken = _spoken(found.callee)
    if write.why:
        raise ctx.pf.error(call, f"{spoken} changes `{one_line_text(code(written))}` in place, "
                           f"which s2sgrad does not differentiate: {write.why}")
    for param, why in write.refused.items():
        default = dict(write.params)[param]
        if param in found.args and code(found.args[param]) != default:
            raise ctx.pf.error(found.args[param], f"{spoken} with `{param}=` is not "
                               f"differentiated: {why}")
    name = _local_name(ctx, written, call, spoken)
    template = next((t for p, t in write.given.items() if p in found.args), write.value)
    assert template is not None
    env = _Arguments(ctx, write, found.args)
    at = WHOLE if write.at is None else _index(ctx, write.at, env)
    value = _lower_template(ctx, cst.parse_expression(template), env)
    write_at(ctx, name, at, value, call)
    return NONE


def _lower_out(ctx: Context, call: cst.Call, found: WriteCall) -> Any:
    """``f(..., out=y)`` as ``y[...] = f(...)``; the call's value is ``y``."""
    out = found.out
    assert found.without_out is not None
    if out is None:  # ``out=None``: the call as numpy's default makes it
        return operand(ctx, found.without_out)
    if isinstance(out, cst.Tuple) and len(out.elements) == 1:
        out = out.elements[0].value
    spoken = _spoken(found.callee)
    known = ctx.table.get(found.callee) is not None or found.callee in ctx.nondiff
    if not known:
        raise ctx.pf.error(call, f"{spoken} writes its result into `out`, and s2sgrad has no "
                           "rule for it, so it cannot tell what that write does",
                           "assign the result instead: `y = f(...)`")
    where = next((a for a in call.args if a.keyword is not None and a.keyword.value == "where"), None)
    if where is not None:  # numpy leaves ``out`` as it was where the mask is False
        raise ctx.pf.error(where, f"{spoken} with both `out=` and `where=` is not differentiated",
                           "write the choice out: `y = np.where(mask, f(x), y)`")
    name = _local_name(ctx, out, call, spoken)
    assert found.without_out is not None
    value = operand(ctx, found.without_out)
    return write_at(ctx, name, WHOLE, value, call)


def _local_name(ctx: Context, written: cst.BaseExpression, call: cst.Call, spoken: str) -> str:
    """The user name of a local array the call writes into (a located error for anything else)."""
    if isinstance(written, cst.Name) and written.value in ctx.env:
        return written.value
    text = one_line_text(code(written))
    raise ctx.pf.error(call, f"{spoken} writes into `{text}`, which is not a local array of "
                       "this function; s2sgrad differentiates writes into local names only",
                       "copy it into a local name first (`y = ....copy()`) and write into that")


def _spoken(callee: str) -> str:
    head, _, rest = callee.partition(".")
    return f"`np.{rest}`" if head == "numpy" else f"`.{rest}()`" if head == "ndarray" else f"`{callee}`"


class _Arguments:
    """The operands of a write's parameters, each lowered once when a template first reads it
    (an optional parameter not passed: its default)."""

    def __init__(self, ctx: Context, write: Write, args: dict) -> None:
        self.ctx, self.write, self.args, self.done = ctx, write, args, {}

    def __contains__(self, name: str) -> bool:
        return name in dict(self.write.params)

    def __getitem__(self, name: str) -> Any:
        if name not in self.done:
            node = self.args.get(name)
            if node is None:
                default = cst.parse_expression(dict(self.write.params)[name])
                self.done[name] = Const(default, code(default))
            else:
                self.done[name] = operand(self.ctx, node)
        return self.done[name]


class _Substitute(cst.CSTTransformer):
    def __init__(self, env: _Arguments) -> None:
        super().__init__()
        self.env = env

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        return operand_node(self.env[original.value]) if original.value in self.env else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)  # ``np.ndim``: not a parameter

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)  # ``axis=``: not a parameter


def _index(ctx: Context, template: str, env: _Arguments) -> Const:
    """The index a write's ``at`` template names: a parameter's operand, else the template
    computed in one statement kept as written (an index carries no derivative)."""
    node = cst.parse_expression(template)
    if isinstance(node, cst.Name) and node.value in env:
        held = env[node.value]
    else:
        expr = node.visit(_Substitute(env))
        name = ctx.namer.temp("written_at", "index")
        ctx.temps.add(name)
        ctx.emit((name,), expr, Prim("nondiff", (), location=ctx.origin.location))
        held = Var(name)
    if isinstance(held, Var):
        return Const(cst.Name(held.name), held.name, (held.name,), f"[{held.name}]", False)
    return Const(held.node, held.code, held.reads, f"[{held.code}]", False)


_OPERATORS = {cst.Add: "operator.add", cst.Subtract: "operator.sub", cst.Modulo: "operator.mod"}


def _lower_template(ctx: Context, node: cst.BaseExpression, env: _Arguments) -> Any:
    """A value template's expression as operands and primitives: parameters, literals, ``-a``,
    ``a + b``, ``a - b``, ``a % b`` and calls of ``np.<f>`` / ``s2s.<f>`` (their rules by name)."""
    location = ctx.origin.location
    if isinstance(node, cst.Name):
        return env[node.value] if node.value in env else Const(node, code(node))
    if isinstance(node, (cst.Ellipsis, cst.Integer, cst.Float, cst.SimpleString)):
        return Const(node, code(node))
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _lower_template(ctx, node.expression, env)
        expr = node.with_changes(expression=operand_node(inner))
        return ctx.emit_prim(None, "negated", "negated", expr,
                             Prim("operator.neg", (inner,), location=location))
    if isinstance(node, cst.BinaryOperation) and type(node.operator) in _OPERATORS:
        left = _lower_template(ctx, node.left, env)
        right = _lower_template(ctx, node.right, env)
        expr = node.with_changes(left=operand_node(left), right=operand_node(right))
        return ctx.emit_prim(None, "written", "written", expr,
                             Prim(_OPERATORS[type(node.operator)], (left, right), location=location))
    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute), code(node)
    namespace, attr = code(node.func.value), node.func.attr.value
    op = f"numpy.{attr}" if namespace == "np" else f"s2sgrad.runtime.{attr}"
    if op in ctx.nondiff:
        expr = node.visit(_Substitute(env))
        return ctx.emit_prim(None, attr, attr, expr, Prim("nondiff", (), location=location))
    args, kwargs, new_args = [], [], []
    for a in node.args:
        held = _lower_template(ctx, a.value, env)
        new_args.append(a.with_changes(value=operand_node(held)))
        if a.keyword is None:
            args.append(held)
        else:
            kwargs.append((a.keyword.value, held))
    expr = node.with_changes(args=new_args)
    return ctx.emit_prim(None, attr, attr, expr, Prim(op, tuple(args), tuple(kwargs), location=location))

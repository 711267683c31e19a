"""Simple statements: a Context and one small statement (``pass``, an expression, ``assert``,
``del name``, an assignment, ``+=``, ``return``) -> core statements emitted into ``ctx.body``."""

from __future__ import annotations

from typing import Any

import libcst as cst
import libcst.matchers as m

from ..runtime.contexts import check_class
from .assignments import assign, copy_to, lower_append
from .context import Context
from .expressions import operand
from .ir import Prim
from .text import code, one_line_text
from .write_calls import lower_write
from .writes import find_write, reads_locals


# ``del a`` or ``del a, b``: the other forms (``del x[i]``) change a value and are refused (fence).
# ``assert type(model) is LinearModel, ...``: kept where it runs (runtime check_class).
CLASS_CHECK = m.Assert(test=m.Comparison(
    left=m.Call(func=m.Name("type"), args=[m.Arg(value=m.Name(), keyword=None)]),
    comparisons=[m.ComparisonTarget(operator=m.Is(), comparator=m.Name())]))
NAME_DEL = m.Del(target=m.Name() | m.Tuple(elements=[m.ZeroOrMore(m.Element(value=m.Name()))]))


def lower_statement(ctx: Context, stmt: cst.BaseSmallStatement, is_first: bool) -> None:
    """Lower one small statement; ``is_first``: the first of the function (a docstring there is
    left out)."""
    if isinstance(stmt, cst.Pass):
        return
    if isinstance(stmt, cst.Expr):
        if not (is_first and isinstance(stmt.value, (cst.SimpleString, cst.ConcatenatedString))):
            _expression_statement(ctx, stmt)
        return
    if m.matches(stmt, CLASS_CHECK):
        _class_check(ctx, stmt)
        return
    if isinstance(stmt, cst.Assert):
        return  # checks on values do not change the gradient; the forward call keeps them
    if m.matches(stmt, NAME_DEL):
        return  # ends names' lifetimes early (generated code frees residuals so): no derivative
    if isinstance(stmt, cst.AugAssign):
        _augmented_assignment(ctx, stmt)
        return
    if isinstance(stmt, cst.AnnAssign):
        assign(ctx, stmt.target, stmt.value)
        return
    if isinstance(stmt, cst.Assign):
        first, *rest = [t.target for t in stmt.targets]
        if _writing_assignment(ctx, stmt):
            return
        assign(ctx, first, stmt.value)
        for other in rest:
            assign(ctx, other, first)
        return
    raise ctx.pf.error(stmt, f"unsupported statement: {one_line_text(code(stmt))}")


def _class_check(ctx: Context, stmt: cst.Assert) -> None:
    """``assert type(v) is Cls, message`` as a call of the runtime's check_class, kept in the
    forward code: code that read ``Cls``'s methods for ``v`` (lower/methods.py, a parameter's
    annotation on the command line) runs for that class only."""
    value = stmt.test.left.args[0].value
    cls = stmt.test.comparisons[0].comparator
    message = stmt.msg if stmt.msg is not None else cst.SimpleString(repr(f"not a {cls.value}"))
    args = [cst.Arg(ctx.verbatim(node)[0]) for node in (value, cls, message)]
    call = cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(check_class.__name__)), args)
    ctx.emit((), call, Prim("nondiff", (), location=ctx.pf.location(stmt)))


def _writing_assignment(ctx: Context, stmt: cst.Assign) -> bool:
    """``z = np.exp(x, out=y)``: the write into ``y`` (write_calls.py), then ``z = y``; False
    when the value is not a call that writes into a local."""
    value = stmt.value
    found = find_write(ctx, value) if isinstance(value, cst.Call) else None
    result = lower_write(ctx, value, found) if found is not None else None
    if result is None:
        return False
    for target in stmt.targets:
        if not isinstance(target.target, cst.Name):
            raise ctx.pf.error(target.target, "a call that writes into an argument is assigned "
                               "only to names here", "assign it to a name, then use that name")
        copy_to(ctx, target.target.value, result)
    return True


def _expression_statement(ctx: Context, stmt: cst.Expr) -> None:
    """An expression evaluated for its effect: ``lst.append(v)``, a call that writes into an
    argument (write_calls.py), else kept verbatim (a method that changes a local in place and
    that the rule table does not know is refused)."""
    value = stmt.value
    found = find_write(ctx, value) if isinstance(value, cst.Call) else None
    if found is not None and lower_write(ctx, value, found) is not None:
        return
    if m.matches(value, m.Call(func=m.Attribute(value=m.Name()))) and \
            value.func.value.value in ctx.env:
        owner, method = value.func.value.value, value.func.attr.value
        if method == "append" and len(value.args) == 1 and value.args[0].keyword is None:
            lower_append(ctx, owner, value.args[0].value, stmt)
            return
        raise ctx.pf.error(value, f"the in-place method `.{method}()` on `{owner}` is not "
                           "supported in a differentiated function",
                           f"assign a new value instead: `{owner} = ...`")
    if isinstance(value, cst.Call) and _may_change_arguments(ctx, value):
        operand(ctx, value)  # a call of the user's: the pipeline checks what it writes into
        return
    expr, reads = ctx.verbatim(stmt.value)
    ctx.emit((), expr, Prim("nondiff", (), location=ctx.pf.location(stmt)))


def _may_change_arguments(ctx: Context, call: cst.Call) -> bool:
    """A call, for its effect, of a function that is not numpy's, Python's or s2sgrad's, with a
    local value: lowered as a call, so that a function of the user's that changes it is refused."""
    if isinstance(call.func, cst.Attribute) and not isinstance(call.func.value, cst.Name):
        return False
    callee = ctx.callee_name(call.func)
    return not ctx.table.is_library(callee) and ctx.table.differentiable(callee) and \
        callee not in ctx.nondiff and reads_locals(ctx, call)


def _augmented_assignment(ctx: Context, stmt: cst.AugAssign) -> None:
    """``x += v`` as ``x_2 = x + v``, recorded as an in-place update of ``x``."""
    target = stmt.target
    op_type = type(stmt.operator).__name__.replace("Assign", "")
    right = stmt.value
    if isinstance(right, (cst.BinaryOperation, cst.Comparison, cst.BooleanOperation, cst.IfExp,
                          cst.UnaryOperation, cst.Lambda)) and not right.lpar:
        right = right.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])  # m &= x < 1
    binop = cst.BinaryOperation(left=target, operator=getattr(cst, op_type)(), right=right)
    before = ctx.env.get(target.value) if isinstance(target, cst.Name) else None
    assign(ctx, target, binop)
    if before is not None and ctx.env.get(target.value) != before:
        ctx.inplace.append((ctx.env[target.value], before, ctx.pf.location(stmt)))


def lower_return(ctx: Context, stmt: cst.Return) -> Any:
    """The operand a ``return`` statement returns (written to the function's own name)."""
    if stmt.value is None:
        raise ctx.pf.error(stmt, "a differentiated function must return a value",
                           "return the value to differentiate")
    return operand(ctx, stmt.value, target=ctx.pf.node.name.value)

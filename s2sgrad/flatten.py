"""Inlining the sweeps of a generated gradient: a generated first-order module's text and the name
of one of its ``<f>_grad`` functions -> the same text with that function's body replaced by the
bodies of the sweeps it calls, or None where they cannot be joined.

``<f>_grad`` is ``return <f>_bwd(<f>_fwd(<args>)[1], <seed>)[k]``: two calls, a residual tuple
built by one and unpacked by the other. Forward mode over that carries a tangent through every
residual, packs and unpacks both tuples, and computes the value and tangent of ``<f>``'s result,
which the gradient drops. Inlined, it reads as one function: the forward sweep's statements, the
residuals bound to the names the backward sweep reads (nothing at all where the names agree), the
backward sweep's statements, and what it returns at ``k``. Both sweeps draw their names from one
namer, so the only names they share are the residuals; anything else shared is refused (None) and
the caller differentiates ``<f>_grad`` as written.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst
import libcst.matchers as m

from .read.names import name_nodes
from .read.walk import findall

_SWEEPS = m.Call(func=m.Name(), args=[
    m.Arg(m.Subscript(value=m.Call(func=m.Name()),
                      slice=[m.SubscriptElement(m.Index(m.Integer("1")))]), keyword=None),
    m.Arg(m.Name(), keyword=None)])
_CALL = _SWEEPS | m.Subscript(value=_SWEEPS, slice=[m.SubscriptElement(m.Index(m.Integer()))])


def _body(fn: cst.FunctionDef) -> list:
    """A function's statements after its docstring."""
    body = list(fn.body.body)
    if body and m.matches(body[0], m.SimpleStatementLine([m.Expr(m.SimpleString())])):
        body = body[1:]
    return body


def _only(stmt: cst.BaseStatement, matcher) -> Optional[cst.BaseSmallStatement]:
    """The one small statement of ``stmt`` when it matches, else None."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
            m.matches(stmt.body[0], matcher):
        return stmt.body[0]
    return None


def _bound(statements: list) -> set:
    """Every name the statements bind (assignment and loop targets, at any depth)."""
    found: set = set()
    for stmt in statements:
        for node in findall(stmt, m.AssignTarget() | m.AugAssign() | m.For()):
            found |= {n.value for n in name_nodes(node.target)}
    return found


def _reads(statements: list) -> set:
    return {n.value for stmt in statements for n in name_nodes(stmt, reads_only=True)}


def _joinable(fwd: cst.FunctionDef, forward: list, backward: list, residuals: list) -> bool:
    """Whether the sweeps' statements mean the same in one scope: the sweeps bind no name in
    common (a name bound by both would hold two values whose derivatives the analyses, which go by
    name, could not tell apart: a backward loop rebinding a loop's counter from its tape, say);
    no name the forward sweep reads from outside is bound by the backward sweep (it would become
    local too early); every name the backward sweep reads from outside that the forward sweep
    binds is a residual (the same value either way)."""
    params = {p.name.value for p in fwd.params.params + fwd.params.kwonly_params}
    forward_bound, backward_bound = _bound(forward) | params, _bound(backward)
    forward_free = _reads(forward) - forward_bound
    backward_free = _reads(backward) - backward_bound
    handed = {n.value for r in residuals for n in name_nodes(r)}
    return not (forward_bound & backward_bound) and not (forward_free & backward_bound) and \
        backward_free & forward_bound <= handed


def _assign(target: str, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))], value)])


def functions_of(module: cst.Module) -> dict:
    """A module's top-level functions by name."""
    return {s.name.value: s for s in module.body if isinstance(s, cst.FunctionDef)}


def grad_parts(grad: cst.FunctionDef, functions: dict) -> Optional[tuple]:
    """``(fwd, bwd, forward args, seed, k)`` of ``return bwd(fwd(args)[1], seed)[k]`` (``k``
    None for ``return bwd(fwd(args)[1], seed)``: the whole tuple)."""
    body = _body(grad)
    ret = _only(body[0], m.Return(_CALL)) if len(body) == 1 else None
    if ret is None:
        return None
    outer, k = ret.value, None
    if isinstance(outer, cst.Subscript):
        outer, k = outer.value, int(outer.slice[0].slice.value.value)
    inner = outer.args[0].value.value
    fwd, bwd = functions.get(inner.func.value), functions.get(outer.func.value)
    if fwd is None or bwd is None:
        return None
    return fwd, bwd, inner.args, outer.args[1].value.value, k


def _forward_part(fwd: cst.FunctionDef, args) -> Optional[tuple]:
    """``(statements, residual expressions)``: the forward sweep with its parameters as called
    (the wrapper passes them through by name) and the residual tuple it returns."""
    params = [p.name.value for p in fwd.params.params + fwd.params.kwonly_params]
    passed = [a.value.value if isinstance(a.value, cst.Name) else None for a in args]
    if passed != params or any(a.keyword is not None for a in args):
        return None
    body = _body(fwd)
    ret = _only(body[-1], m.Return(m.Tuple([m.Element(), m.Element(m.Tuple())])))
    if ret is None:
        return None
    return body[:-1], [e.value for e in ret.value.elements[1].value.elements]


def _backward_part(bwd: cst.FunctionDef, residuals: list, seed: str, k: int) -> Optional[tuple]:
    """``(statements, returned expression)``: the backward sweep with its residuals and seed
    bound, ending in what it returns at ``k`` (all of it for None)."""
    params = [p.name.value for p in bwd.params.params]
    body = _body(bwd)
    if len(params) != 2 or not body:
        return None
    start = []
    if params[1] != seed:
        start.append(_assign(params[1], cst.Name(seed)))
    unpack = _only(body[0], m.Assign([m.AssignTarget(m.Tuple())], m.Name(params[0])))
    if unpack is None and residuals:
        return None
    if unpack is not None:
        targets = [e.value for e in unpack.targets[0].target.elements]
        if len(targets) != len(residuals) or not all(isinstance(t, cst.Name) for t in targets):
            return None
        start += [_assign(t.value, r) for t, r in zip(targets, residuals)
                  if not m.matches(r, m.Name(t.value))]
        body = body[1:]
    body = [s for s in body if _only(s, m.Del(m.Name(params[0]))) is None]
    ret = _only(body[-1], m.Return(m.Tuple())) if body else None
    if ret is None or (k is not None and k >= len(ret.value.elements)) or \
            any(params[0] in {n.value for n in name_nodes(s)} for s in body):
        return None
    return start + body[:-1], ret.value if k is None else ret.value.elements[k].value


def read_gradient(text: str, grad_name: str) -> Optional[tuple]:
    """``(module, its functions by name, the <f>_grad def, grad_parts of it)`` of a generated
    module's ``text``, or None when ``grad_name`` is not a ``<f>_grad`` of codegen's shape."""
    module = cst.parse_module(text)
    functions = functions_of(module)
    grad = functions.get(grad_name)
    parts = grad_parts(grad, functions) if grad is not None else None
    return None if parts is None else (module, functions, grad, parts)


def flat_gradient(text: str, grad_name: str) -> Optional[str]:
    """``text`` with ``grad_name``'s sweeps inlined into it (see the module doc), or None."""
    found = read_gradient(text, grad_name)
    if found is None:
        return None
    module, functions, grad, (fwd, bwd, args, seed, k) = found
    forward = _forward_part(fwd, args)
    backward = _backward_part(bwd, forward[1], seed, k) if forward is not None else None
    if backward is None:
        return None
    if not _joinable(fwd, forward[0], backward[0], forward[1]):
        return None
    statements = forward[0] + backward[0] + [
        cst.SimpleStatementLine([cst.Return(backward[1])])]
    docstring = grad.body.body[:len(grad.body.body) - len(_body(grad))]
    flat = grad.with_changes(body=grad.body.with_changes(body=[*docstring, *statements]))
    return module.with_changes(body=[flat if s is grad else s for s in module.body]).code

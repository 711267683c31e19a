"""s2sgrad's transformations called inside a differentiated function: a ParsedFunction -> the same
function calling generated code s2sgrad reads like any callee instead (so it is differentiated
through them: second derivatives of the function they transform).

- ``out, pullback = s2sgrad.vjp(f, *primals)`` -> ``out = f(*primals)`` and, for each call
  ``pullback(cotangent)``, a call of ``<f>_grads(*primals, cotangent)``: ``f``'s gradient as a
  tuple, seeded with the cotangent (write/entries.py). Rewritten only where the meaning is plain:
  the vjp call a statement of the function's body (not inside a block), unpacked into two names,
  the pullback bound once and only ever called with one cotangent. Each primal is bound to a name
  of its own at the vjp call, so the pullback sees the values it was made at.
- ``s2sgrad.jvp(f, (p, ...), (t, ...))`` (tuple or list displays) -> ``<f>_jvp(p, ..., p_dot=t,
  ...)``, f's generated forward mode, wherever the call is; ``s2sgrad.hvp(f, (p, ...), (t, ...))``
  -> ``<g>_jvp(p, ..., p_dot=t, ...)[1]`` for ``g`` f's generated gradient (a tuple).
- ``s2sgrad.grad(f, argnums=...)(x, ...)`` (also value_and_grad, hessian, jacfwd, jacrev; literal
  keyword arguments only) -> a call of the generated function the transformation made, as when
  the function it returned is bound to a global name and called.

``f`` must be a function s2sgrad reads (or one it returned). Anything else is left as written and
refused where it is differentiated (rules/transforms.py says what to write instead).
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, replace
from typing import Any, Optional

import libcst as cst
import libcst.matchers as m

from ..errors import UsageError
from ..read.capture import from_function, is_source_function
from ..read.live import readable
from ..read.parse import KeepingTransformer, ParsedFunction, find_function
from ..transformations import TRANSFORMATIONS
from .lift import Lifted, fresh_name
from .resolve import callee_name
from .text import code
from ..read.walk import findall

VJP, JVP, HVP = "s2sgrad.vjp", "s2sgrad.jvp", "s2sgrad.hvp"


@dataclass(frozen=True)
class _Site:
    """One rewritable vjp call: the pullback's name, what replaces the statement, and the
    generated function (its name in the rewritten code) and primal names its calls take."""

    pullback: str
    statements: tuple
    callee: str
    primals: tuple
    seed: str  # the generated function's cotangent parameter


def _vjp_call(pf: ParsedFunction, stmt: Any) -> Optional[tuple]:
    """``(out target, pullback name, f node, primal nodes)`` of ``out, pb = s2sgrad.vjp(f, ...)``."""
    pattern = m.Assign([m.AssignTarget(m.Tuple([m.Element(), m.Element(m.Name())]))], m.Call())
    if not m.matches(stmt, pattern) or callee_name(pf, stmt.value.func) != VJP:
        return None
    args = stmt.value.args
    if len(args) < 2 or any(a.keyword is not None or a.star for a in args) or \
            not isinstance(args[0].value, cst.Name):
        return None
    out, pullback = (e.value for e in stmt.targets[0].target.elements)
    return out, pullback.value, args[0].value, [a.value for a in args[1:]]


def _only_called(body: cst.BaseSuite, name: str) -> bool:
    """Whether ``name`` is bound once in ``body`` and read only as ``name(cotangent)``."""
    bound = [t for t in findall(body, m.AssignTarget() | m.For() | m.AugAssign())
             if any(n.value == name for n in findall(t.target, m.Name()))]
    calls = findall(body, m.Call(func=m.Name(name)))
    reads = [n for n in findall(body, m.Name(name))]
    return len(bound) == 1 and all(len(c.args) == 1 and c.args[0].keyword is None and
                                   not c.args[0].star for c in calls) and \
        len(reads) == len(calls) + 1


def _site(pf: ParsedFunction, stmt: Any, taken: set, lifted: dict) -> Optional[_Site]:
    found = _vjp_call(pf, stmt)
    if found is None or not _only_called(pf.node.body, found[1]):
        return None
    out, pullback, fun, primals = found
    made = generated_function(pf, fun.value, len(primals), "rev")
    if made is None:
        return None
    callee = fresh_name(f"{fun.value}_pullback_in_{pf.name}", taken)
    lifted[callee], seed = made
    names = tuple(fresh_name(f"{pullback}_{p.value}" if isinstance(p, cst.Name) else
                         f"{pullback}_primal_{k}", taken) for k, p in enumerate(primals))
    binds = [cst.Assign([cst.AssignTarget(cst.Name(n))], p) for n, p in zip(names, primals)]
    value = cst.Assign([cst.AssignTarget(out)],
                       cst.Call(fun, [cst.Arg(cst.Name(n)) for n in names]))
    return _Site(pullback, (*binds, value), callee, names, seed)


def _jvp_site(pf: ParsedFunction, call: cst.Call, taken: set, lifted: dict) -> Optional[tuple]:
    """``(name of f's generated jvp in the rewritten code, its tangent parameters)`` for
    ``s2sgrad.jvp(f, (primals), (tangents))``, or None."""
    displays = m.Tuple() | m.List()
    args = call.args
    if len(args) != 3 or any(a.keyword is not None or a.star for a in args) or \
            not isinstance(args[0].value, cst.Name) or not all(m.matches(a.value, displays) for a in args[1:]) \
            or len(args[1].value.elements) != len(args[2].value.elements) or \
            callee_name(pf, call.func) not in (JVP, HVP):
        return None
    fun = args[0].value.value
    hvp = callee_name(pf, call.func) == HVP
    made = generated_function(pf, fun, len(args[1].value.elements), "hvp" if hvp else "fwd")
    if made is None:
        return None
    callee = fresh_name(f"{fun}_{'hvp' if hvp else 'jvp'}_in_{pf.name}", taken)
    lifted[callee], tangents = made
    return callee, tangents, hvp


def _curried_site(pf: ParsedFunction, call: cst.Call, taken: set, lifted: dict) -> Optional[str]:
    """The name (in the rewritten code) of the generated function ``s2sgrad.grad(f, ...)`` made,
    for the call ``s2sgrad.grad(f, ...)(...)``, or None (left as written: refused later)."""
    inner = call.func
    name = callee_name(pf, inner.func)
    args = inner.args
    if name not in {f"s2sgrad.{n}" for n in TRANSFORMATIONS.curried()} or not args or args[0].keyword is not None \
            or args[0].star or not isinstance(args[0].value, cst.Name) or \
            any(a.keyword is None or a.keyword.value != "argnums" for a in args[1:]):
        return None
    try:
        kwargs = {a.keyword.value: ast.literal_eval(code(a.value)) for a in args[1:]}
        made = TRANSFORMATIONS.make(name.split(".")[1], pf.unit.live.get(args[0].value.value), **kwargs)
        generated = readable(made)
    except (ValueError, SyntaxError, TypeError, UsageError):
        return None
    if generated is made or not is_source_function(generated):
        return None
    fun = args[0].value.value
    callee = fresh_name(f"{name.split('.')[1]}_{fun}_in_{pf.name}", taken)
    lifted[callee] = Lifted(find_function(from_function(generated)), (), fun, pf.name)
    return callee


def _jvp_call(call: cst.Call, callee: str, tangents: tuple, hvp: bool) -> cst.BaseExpression:
    """The call of the generated forward mode; for hvp, its tangent (the gradient's)."""
    equal = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
    primals = [cst.Arg(e.value) for e in call.args[1].value.elements]
    along = [cst.Arg(e.value, keyword=cst.Name(t), equal=equal)
             for e, t in zip(call.args[2].value.elements, tangents)]
    made = call.with_changes(func=cst.Name(callee), args=[*primals, *along])
    return cst.Subscript(made, [cst.SubscriptElement(cst.Index(cst.Integer("1")))]) if hvp else made


class _Rewrite(KeepingTransformer):
    """The vjp statements of ``sites`` replaced, their pullbacks' calls redirected, and the jvp
    calls of ``jvps`` redirected to generated forward mode."""

    def __init__(self, parsed, sites: dict, jvps: dict) -> None:
        super().__init__(parsed)
        self.sites = sites  # id(vjp statement) -> _Site
        self.jvps = jvps  # id(jvp call) -> (callee, tangent parameters); curried: callee
        self.by_pullback = {s.pullback: s for s in sites.values()}

    def leave_SimpleStatementLine(self, original, updated):
        found = [self.sites.get(id(s)) for s in original.body]
        if not any(found):
            return updated
        small = [n for s, site in zip(updated.body, found)
                 for n in (site.statements if site else (s,))]
        written = [o for o, site in zip(original.body, found)
                   for _ in (site.statements if site else (o,))]
        lines = [updated.with_changes(body=[n]) for n in small]
        for line, source in zip(lines, written):
            self.parsed.adopt(line, original)
            self.parsed.adopt(line.body[0], original.body[0])
            self.parsed.written_as[line.body[0]] = self.parsed.written_as.get(source, source)
        return cst.FlattenSentinel(lines)

    def on_leave(self, original_node, updated_node):
        result = super().on_leave(original_node, updated_node)
        if isinstance(original_node, cst.BaseSmallStatement) and result is not original_node and \
                isinstance(result, cst.BaseSmallStatement):
            self.parsed.written_as[result] = self.parsed.written_as.get(original_node, original_node)
        return result

    def leave_Call(self, original, updated):
        found = self.jvps.get(id(original))
        if isinstance(found, str):  # a curried transformation: its generated function
            return updated.with_changes(func=cst.Name(found))
        if found is not None:
            return _jvp_call(updated, *found)
        site = self.by_pullback.get(updated.func.value) if isinstance(updated.func, cst.Name) else None
        if site is None:
            return updated
        args = [cst.Arg(cst.Name(n)) for n in site.primals]
        seed = updated.args[0].with_changes(keyword=cst.Name(site.seed), equal=cst.AssignEqual(
            cst.SimpleWhitespace(""), cst.SimpleWhitespace("")), comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(func=cst.Name(site.callee), args=[*args, seed])


def generated_function(pf: ParsedFunction, name: str, count: int, mode: str) -> Optional[tuple]:
    """For the function ``name`` binds in ``pf``'s live names, with respect to its first
    ``count`` parameters: ``(Lifted <f>_grads, its cotangent parameter)`` (``mode`` "rev":
    write/entries.py) or ``(Lifted <f>_jvp, its tangent parameters)`` ("fwd"; "hvp": of f's
    generated gradient, a tuple, as s2sgrad.hvp returns); None when ``name`` is not a function
    s2sgrad reads."""
    fn = readable(pf.unit.live.get(name))
    if not is_source_function(fn):
        return None
    wrt = tuple(inspect.signature(fn).parameters)[:count]
    if len(wrt) != count:
        return None
    if mode == "hvp":
        fn, mode = readable(TRANSFORMATIONS.make("grad", fn, argnums=tuple(range(count)))), "fwd"
        if not is_source_function(fn):
            return None
    made = TRANSFORMATIONS.gradients(fn, wrt) if mode == "rev" else TRANSFORMATIONS.forward(fn, wrt)
    if made is None:
        return None
    params = tuple(inspect.signature(made).parameters)
    extra = params[-1] if mode == "rev" else params[len(params) - count:]
    return Lifted(find_function(from_function(made)), (), name, pf.name), extra


def inner_transforms_into(pf: ParsedFunction, lifted: dict) -> ParsedFunction:
    """``pf`` with its vjp and jvp calls rewritten (see the module doc), the generated functions
    the rewritten calls call added to ``lifted`` under the names they call them by."""
    if pf.unit.live is None:  # the CLI reads files without running them: no generated code
        return pf
    named = m.Name("vjp") | m.Name("jvp") | m.Name("hvp")
    calls = findall(pf.node.body, m.Call(func=m.Attribute(attr=named) | named))
    made = m.OneOf(*(m.Name(n) for n in TRANSFORMATIONS.curried()))
    curried_calls = findall(pf.node.body, m.Call(func=m.Call(func=m.Attribute(attr=made) | made)))
    if not calls and not curried_calls:  # the usual case: nothing to rewrite
        return pf
    body = pf.node.body.body if isinstance(pf.node.body, cst.IndentedBlock) else ()
    statements = [s for line in body if isinstance(line, cst.SimpleStatementLine) for s in line.body]
    taken = set(lifted) | {n.value for n in findall(pf.node, m.Name())} | set(pf.unit.live)
    sites, jvps = {}, {}
    for stmt in statements:
        site = _site(pf, stmt, taken, lifted)
        if site is not None:
            sites[id(stmt)] = site
    for call in calls:
        found = _jvp_site(pf, call, taken, lifted)
        if found is not None:
            jvps[id(call)] = found
    for call in curried_calls:
        callee = _curried_site(pf, call, taken, lifted)
        if callee is not None:
            jvps[id(call)] = callee
    if not sites and not jvps:
        return pf
    node = pf.node.with_changes(body=pf.node.body.visit(_Rewrite(pf.parsed, sites, jvps)))
    pf.parsed.adopt(node, pf.node)
    return replace(pf, node=node)

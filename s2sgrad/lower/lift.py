"""Lift: a ParsedFunction whose body defines a ``custom_gradient`` function -> the function without
that definition, calling a module-level copy of it instead, and that copy (a ParsedFunction).

The copy takes the names the definition read from the enclosing function (its captured values) as
keyword-only parameters, and each call passes them wrapped in ``s2sgrad.stop_gradient``: by the
custom_gradient contract (CUSTOM_GRADIENT.md, "Higher order") the inner rule is the gradient with
respect to the explicit arguments only, and captured values get no gradient through it. This is
what a first-order gradient keeps of a ``custom_gradient`` nested in a ``grad_fn``, so a second
transformation honours the user's second-order rule (the fused pattern).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst
import libcst.matchers as m

from ..read.parse import KeepingTransformer, ParsedFunction
from .custom import CUSTOM_DECORATORS
from .scope import read_names, statements_of
from ..read.walk import findall

STOP_GRADIENT = "s2sgrad.stop_gradient"


@dataclass(frozen=True)
class Lifted:
    """A lifted custom_gradient definition: its module-level copy, and the enclosing function's
    names it captured (keyword-only parameters of the copy, given no gradient)."""

    function: ParsedFunction
    captured: tuple
    inner_name: str
    outer_name: str


def _is_custom(pf: ParsedFunction, node: cst.CSTNode) -> bool:
    return isinstance(node, cst.FunctionDef) and any(
        pf.qualified_name(d.decorator) in CUSTOM_DECORATORS for d in node.decorators)


def _bound_in(node: cst.FunctionDef) -> set:
    """Names a function binds: its parameters, assignment and loop targets, defs inside it."""
    params = node.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for found in findall(node.body, m.AssignTarget() | m.AugAssign() | m.AnnAssign() | m.For()):
        names |= {n.value for n in findall(found.target, m.Name())}
    names |= {d.name.value for d in findall(node.body, m.FunctionDef())}
    return names


def _captured(outer: cst.FunctionDef, inner: cst.FunctionDef) -> tuple:
    """The enclosing function's names ``inner`` reads (sorted)."""
    own = _bound_in(inner)
    reads = set(read_names(inner.body)) - own
    return tuple(sorted(reads & (_bound_in(outer) - {inner.name.value})))


def _copy(inner: cst.FunctionDef, name: str, captured: tuple) -> cst.FunctionDef:
    params = inner.params
    kwonly = [*params.kwonly_params, *(cst.Param(cst.Name(c)) for c in captured)]
    star = params.star_arg if isinstance(params.star_arg, cst.Param) or not kwonly else cst.ParamStar()
    return inner.with_changes(name=cst.Name(name),
                              params=params.with_changes(kwonly_params=kwonly, star_arg=star))


class _Calls(KeepingTransformer):
    """Calls of the lifted definitions -> calls of their copies, captured values passed by
    keyword without a gradient; the definitions themselves removed."""

    def __init__(self, parsed, lifted: dict) -> None:
        super().__init__(parsed)
        self.lifted = lifted  # inner name -> (copy name, captured)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not (isinstance(updated.func, cst.Name) and updated.func.value in self.lifted):
            return updated
        name, captured = self.lifted[updated.func.value]
        stop = cst.parse_expression(STOP_GRADIENT)
        equal = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
        extra = [cst.Arg(cst.Call(stop, [cst.Arg(cst.Name(c))]), keyword=cst.Name(c), equal=equal)
                 for c in captured]
        return updated.with_changes(func=cst.Name(name), args=[*updated.args, *extra])

    def leave_FunctionDef(self, original, updated):
        if original.name.value in self.lifted:
            return cst.RemoveFromParent()
        return updated


def lift_custom_defs(pf: ParsedFunction, taken: set) -> tuple:
    """``(pf without its nested custom_gradient defs, (Lifted, ...))``; ``taken``: names the
    copies must not take (updated with theirs)."""
    found = [s for s in statements_of(pf.node.body) if _is_custom(pf, s)]
    if not found:
        return pf, ()
    lifted, out = {}, []
    for inner in found:
        name = fresh_name(f"{inner.name.value}_in_{pf.name}", taken)
        captured = _captured(pf.node, inner)
        lifted[inner.name.value] = (name, captured)
        copy = _copy(inner, name, captured)
        pf.parsed.adopt(copy, inner)
        out.append(Lifted(replace(pf, node=copy), captured, inner.name.value, pf.name))
    body = pf.node.body.visit(_Calls(pf.parsed, lifted))
    node = pf.node.with_changes(body=body)
    pf.parsed.adopt(node, pf.node)
    return replace(pf, node=node), tuple(out)


def fresh_name(base: str, taken: set) -> str:
    """``base``, or ``base_2``, ``base_3``, ...: the first not in ``taken`` (then added to it)."""
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def lift_into(pf: ParsedFunction, lifted: dict) -> ParsedFunction:
    """``pf`` calling module-level copies of the custom_gradient functions it defines, each
    added to ``lifted`` (copy name -> Lifted)."""
    taken = set(lifted) | {n.value for n in findall(pf.node, m.Name())}
    pf, found = lift_custom_defs(pf, taken)
    lifted.update((item.function.name, item) for item in found)
    return pf

"""Binding a primitive's operands to a rule's parameters: Prim + Rule -> {parameter: operand}
(and which parameters the call left to their defaults)."""

from __future__ import annotations

import libcst as cst

from ..errors import Location, TransformError
from ..rules.table import POSITIONAL, VARARGS, Rule
from .ir import Const, Prim, Seq


def bind_arguments(rule: Rule, prim: Prim) -> dict:
    """Map each rule parameter to the operand passed for it (or a Const of its default)."""
    bound: dict = {}
    positional = list(prim.args)
    for p in rule.params:
        if p.kind == POSITIONAL:
            if positional:
                bound[p.name] = positional.pop(0)
        elif p.kind == VARARGS:
            bound[p.name] = Seq("tuple", tuple(positional))
            positional = []
    if positional:
        raise _binding_error(prim, rule, f"too many positional arguments for {rule.name}")
    names = {p.name for p in rule.params}
    for key, value in prim.kwargs:
        if key not in names:
            # Keywords the rule does not model (out=, where=, casting=) would change the meaning.
            raise _binding_error(prim, rule, f"{rule.name} is not differentiable with `{key}=`")
        bound[key] = value
    for p in rule.params:
        if p.name not in bound:
            if p.default is None and p.kind != VARARGS:
                raise _binding_error(prim, rule, f"{rule.name} needs argument `{p.name}`")
            code = p.default if p.default is not None else "()"
            node = cst.parse_expression(code)
            bound[p.name] = Const(node, code, ())
    return bound


def defaulted_params(rule: Rule, prim: Prim) -> frozenset:
    """Names of the parameters the call left out (``bind_arguments`` filled in their defaults)."""
    given = len(prim.args)
    keywords = {k for k, _ in prim.kwargs}
    positional = [p for p in rule.params if p.kind == POSITIONAL]
    out = set()
    for p in rule.params:
        if p.kind == VARARGS or p.default is None or p.name in keywords:
            continue
        index = positional.index(p) if p in positional else None
        if index is None or index >= given:
            out.add(p.name)
    return frozenset(out)


def _binding_error(prim: Prim, rule: Rule, message: str) -> TransformError:
    loc = prim.location or Location("<unknown>", 0, 0, "")
    return TransformError(message, loc, "call it with the arguments numpy documents, or "
                          "give it a rule with s2sgrad.register_gradient")

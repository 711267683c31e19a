"""A rule's call written so the lists it empties as it reads them are copies (``keeping_consumed``)."""

from __future__ import annotations

import libcst as cst


def keeping_consumed(expr: cst.BaseExpression, rule) -> cst.BaseExpression:
    """``expr`` (a call of ``rule``'s function) passing copies (the runtime's ``copied(xs)``,
    which s2sgrad reads again) of the lists the function empties as it reads them
    (``Rule.consumes``), so the derivative code after it can read them again."""
    consumed = getattr(rule, "consumes", ())
    if not consumed or not isinstance(expr, cst.Call):
        return expr
    names = [p.name for p in rule.params]
    args = []
    for position, arg in enumerate(expr.args):
        param = arg.keyword.value if arg.keyword is not None else \
            (names[position] if position < len(names) else "")
        if param in consumed:
            copy = cst.Attribute(cst.Name("s2s"), cst.Name("copied"))
            arg = arg.with_changes(value=cst.Call(copy, [cst.Arg(arg.value)]))
        args.append(arg)
    return expr.with_changes(args=args)

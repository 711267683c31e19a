"""Peephole simplification of instantiated rule templates (pure: expression -> expression).

Folds what a constant operand makes trivial, so ``x ** 2`` differentiates to ``g * 2 * x`` and not
``g * 2 * x ** s2s.safe_power_base(2)``.
"""

from __future__ import annotations

import functools
import math

from typing import Optional

import libcst as cst
import libcst.matchers as m

from ..program import pure
from ..runtime.sums import axis_sum

_NUMBER = m.Integer() | m.Float()


def _number(node: cst.BaseExpression):
    if isinstance(node, cst.Integer):
        return int(node.value.replace("_", ""), 0)
    if isinstance(node, cst.Float):
        return float(node.value.replace("_", ""))
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _number(node.expression)
        return None if inner is None else -inner
    return None


def _literal(value) -> cst.BaseExpression:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        text = f"{value:.1f}"
    else:
        text = repr(value)
    if text.startswith("-"):
        return cst.UnaryOperation(cst.Minus(), _literal(-value))
    return cst.Float(text) if ("." in text or "e" in text) else cst.Integer(text)


def _factors(node: cst.BaseExpression) -> list:
    """The factors of a left-nested product ``a * b * c`` (one factor for anything else)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply) \
            and not node.lpar:
        return _factors(node.left) + [node.right]
    return [node]


def _product(factors: list) -> cst.BaseExpression:
    out = factors[0]
    for f in factors[1:]:
        out = cst.BinaryOperation(out, cst.Multiply(), f)
    return out


def _power_of_two(value) -> bool:
    """Scaling by it is exact: moving it within a product changes no rounding."""
    if value is None or value == 0:
        return False
    mantissa, _ = math.frexp(abs(value))
    return mantissa == 0.5


def _gather_scales(node: cst.BaseExpression) -> cst.BaseExpression:
    """``g * a * 2 * x`` -> ``g * 2 * a * x``: exact (power-of-two) constants join the first
    factor, so when that one is a number (a full sum's adjoint) the scaling costs no array pass;
    several of them are multiplied into one (``g * 0.5 * 2 * r`` -> ``g * r``: the constant of
    ``0.5 * r ** 2`` and its power's; exact too), none where they make 1."""
    factors = _factors(node)
    if len(factors) < 3 or _number(factors[0]) is not None:
        return node
    scales = [i for i, f in enumerate(factors[1:], 1) if _power_of_two(_number(f))]
    if not scales or scales == [1]:
        return node
    value = 1
    for i in scales:
        value = value * _number(factors[i])
    rest = [f for i, f in enumerate(factors) if i not in scales]
    return _product([rest[0], *([] if value == 1 else [_literal(value)]), *rest[1:]])


def _compound_first(node: cst.BaseExpression) -> cst.BaseExpression:
    """``g * a * (1.0 - t * t)`` -> ``g * (1.0 - t * t) * a``: the parenthesized factor, which
    needs temporaries of its own, is computed before the running product holds one more; numpy
    then multiplies into that factor's fresh result in place, so the line's peak is one array
    lower. The leading factor and the numbers right after it (``g * -2``) stay first."""
    factors = _factors(node)
    lead = 1
    while lead < len(factors) and _number(factors[lead]) is not None:
        lead += 1
    if not isinstance(factors[0], (cst.Name, cst.Integer, cst.Float)):
        return node
    for i in range(lead + 1, len(factors)):
        f = factors[i]
        if isinstance(f, cst.BinaryOperation) and f.lpar and \
                (_number(f.left) is None or _number(f.right) is None):
            return _product([*factors[:lead], f, *factors[lead:i], *factors[i + 1:]])
    return node


def _factor_common(node: cst.BinaryOperation, scalars: frozenset) -> cst.BaseExpression:
    """``g * a + g * b`` -> ``g * (a + b)`` for a name ``g`` that may be an array: one pass over
    ``g`` instead of two (a name known to hold one number is left in place: factoring it out
    would cost an array pass, not save one)."""
    if not isinstance(node.operator, (cst.Add, cst.Subtract)) or node.lpar:
        return node
    left, right = _factors(node.left), _factors(node.right)
    if len(left) < 2 or len(right) < 2:
        return node
    g = left[0]
    if not (isinstance(g, cst.Name) and m.matches(right[0], m.Name(g.value))) or g.value in scalars:
        return node
    inner = cst.BinaryOperation(_product(left[1:]), node.operator, _product(right[1:]),
                                lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BinaryOperation(g, cst.Multiply(), inner)


_TIGHT = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.UnaryOperation)


def doubled(node: cst.BinaryOperation) -> cst.BaseExpression:
    """``e + e`` -> ``e * 2`` (the sum of the product rule's two terms for ``t * t``, or of two
    equal contributions): one pass instead of two, and exact, as doubling is. Only for a term
    that binds at least as tightly as ``*`` (no parentheses to add) and calls nothing but numpy
    and the runtime (evaluating it once changes no effect)."""
    if not isinstance(node.operator, cst.Add) or node.lpar or \
            not node.left.deep_equals(node.right) or not pure(node.left):
        return node
    term = node.left
    tight = isinstance(term, _TIGHT) or term.lpar or (isinstance(term, cst.BinaryOperation) and
                                                      isinstance(term.operator, (cst.Multiply, cst.Power)))
    if not tight:
        return node
    return _compound_first(_gather_scales(cst.BinaryOperation(term, cst.Multiply(), cst.Integer("2"))))


@functools.lru_cache(maxsize=1)
def _helpers() -> tuple:
    """``(foldable, linear_first)``: runtime helper name -> the helper, for the rules that
    declare ``folds``; the names of the helpers linear in their first parameter."""
    from .. import runtime
    from ..rules import DEFAULT_TABLE

    prefix = "s2sgrad.runtime."
    rules = {name[len(prefix):]: rule for name, rule in sorted(DEFAULT_TABLE.rules.items())
             if name.startswith(prefix)}
    foldable = {name: getattr(runtime, name) for name, rule in rules.items() if rule.folds}
    linear_first = frozenset(name for name, rule in rules.items()
                             if rule.params and rule.params[0].name in rule.linear)
    return foldable, linear_first


def _lifted_scales(call: cst.Call):
    """``(call, scales)``: a call of a runtime helper linear in its first argument (the sum's
    spread ``sum_vjp(g * 0.5 / r, x, 1)``), that argument without the exact (power-of-two)
    factors of its chain of ``*`` and ``/``, and those factors (1/k for a divisor k); None where
    there are none."""
    if not (m.matches(call.func, m.Attribute(value=m.Name("s2s"))) and
            call.func.attr.value in _helpers()[1] and call.args and call.args[0].keyword is None
            and not call.args[0].star):
        return None
    scales: list = []

    def strip(node):
        if not (isinstance(node, cst.BinaryOperation) and not node.lpar and
                isinstance(node.operator, (cst.Multiply, cst.Divide))):
            return node
        value = _number(node.right)
        if _power_of_two(value) and _number(node.left) is None:
            scales.append(value if isinstance(node.operator, cst.Multiply) else 1.0 / value)
            return strip(node.left)
        return node.with_changes(left=strip(node.left))

    first = strip(call.args[0].value)
    if not scales:
        return None
    return call.with_changes(args=[call.args[0].with_changes(value=first), *call.args[1:]]), scales


def _merge_lifted(node: cst.BaseExpression) -> cst.BaseExpression:
    """``sum_vjp(g * 0.5 / r, x, 1) * 2 * d`` -> ``sum_vjp(g / r, x, 1) * d``: the exact
    factors inside a linear runtime helper's first argument join the exact factors of the
    product it leads (one pass fewer, none where they make 1); left as it is where the product
    has no such factor (the scaling would move to the larger array)."""
    factors = _factors(node)
    if len(factors) < 2 or not isinstance(factors[0], cst.Call) or \
            not any(_power_of_two(_number(f)) for f in factors[1:]):
        return node
    lifted = _lifted_scales(factors[0])
    if lifted is None:
        return node
    call, scales = lifted
    return _gather_scales(_product([call, *[_literal(v) for v in scales], *factors[1:]]))


class _Fold(cst.CSTTransformer):
    def __init__(self, scalars: frozenset = frozenset()) -> None:
        super().__init__()
        self.scalars = scalars

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        """A runtime helper whose rule says it folds (``Rule.folds``), called on numbers: its
        value, computed now."""
        if not m.matches(updated.func, m.Attribute(value=m.Name("s2s"))):
            return updated
        helper = _helpers()[0].get(updated.func.attr.value)
        numbers = [_number(a.value) for a in updated.args if a.keyword is None]
        if helper is None or not numbers or None in numbers or len(numbers) != len(updated.args):
            return updated
        value = helper(*numbers)
        return _literal(value) if type(value) in (int, float) else updated

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        """A sum over axes kept, ``axis_sum(x, axis=k, keepdims=True)[:, 0]`` (the runtime's, or
        ``np.sum``: each kept axis read at 0, every other whole; a negation of the sum kept), is
        the sum without them, ``axis_sum(x, axis=k)``: the sum a broadcast operand's adjoint is,
        read without the new axes it was given (``P[:, None]``)."""
        total = updated.value
        inner = total.expression if isinstance(total, cst.UnaryOperation) and \
            isinstance(total.operator, cst.Minus) else total
        if not m.matches(inner, m.Call(func=m.Attribute(value=m.Name("np"), attr=m.Name("sum")) |
                                       m.Attribute(value=m.Name("s2s"), attr=m.Name(axis_sum.__name__)))) or \
                len(inner.args) != 3 or inner.args[0].keyword is not None or \
                [a.keyword.value for a in inner.args[1:] if a.keyword] != ["axis", "keepdims"] or \
                not m.matches(inner.args[2].value, m.Name("True")):
            return updated
        axis = inner.args[1].value
        axes = [e.value for e in axis.elements] if isinstance(axis, cst.Tuple) else [axis]
        if not all(isinstance(a, cst.Integer) for a in axes):
            return updated
        zeros = []
        for at, element in enumerate(updated.slice):
            item = element.slice
            if isinstance(item, cst.Index) and isinstance(item.value, cst.Integer) and item.value.value == "0":
                zeros.append(at)
            elif not (isinstance(item, cst.Slice) and item.lower is None and item.upper is None and
                      item.step is None):
                return updated
        if sorted(zeros) != sorted(int(a.value) for a in axes):
            return updated
        summed = inner.with_changes(args=[inner.args[0], inner.args[1].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        return summed if inner is total else total.with_changes(expression=summed)

    def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign) -> cst.AugAssign:
        """``x += -e`` is ``x -= e``: one array operation fewer (exact)."""
        unsigned = negated(updated.value) if isinstance(updated.operator, cst.AddAssign) else None
        if unsigned is None:
            return updated
        # (an update's value needs no parentheses of its own)
        return updated.with_changes(operator=cst.SubtractAssign(), value=unsigned.with_changes(lpar=[], rpar=[]))

    def leave_BinaryOperation(self, original, updated) -> cst.BaseExpression:
        left, right = _number(updated.left), _number(updated.right)
        if left is not None and right is not None and isinstance(updated.operator, (cst.Add, cst.Subtract)):
            # numbers a template adds (an order v - 1): one literal, so code read again sees no
            # name that could be taken to vary
            value = left + right if isinstance(updated.operator, cst.Add) else left - right
            return _literal(value).with_changes(lpar=updated.lpar, rpar=updated.rpar)  # (1 - 2) ** 2
        flipped = _minus_added(updated)
        if flipped is not updated:
            return flipped
        twice = doubled(updated)
        if twice is not updated:
            return twice
        factored = _factor_common(updated, self.scalars)
        if factored is not updated:
            return factored
        right = _number(updated.right)
        if isinstance(updated.operator, cst.Power) and right == 1:
            return updated.left
        if isinstance(updated.operator, cst.Multiply) and right == 1 and not updated.lpar:
            return updated.left
        left = _number(updated.left)
        if isinstance(updated.operator, cst.Multiply) and left == 1 and not updated.lpar:
            return updated.right
        if isinstance(updated.operator, cst.Multiply) and not updated.lpar:
            reordered = _compound_first(_gather_scales(_merge_lifted(updated)))
            if reordered is not updated:
                return reordered
        inner = updated.left
        if isinstance(updated.operator, cst.Multiply) and right is not None and \
                isinstance(inner, cst.UnaryOperation) and isinstance(inner.operator, cst.Minus) \
                and _number(inner) is None:
            # -(e) * 2  ->  e * -2: the sign joins the constant instead of costing a pass
            operand = inner.expression.with_changes(lpar=[], rpar=[])
            tight = isinstance(operand, (cst.Name, cst.Attribute, cst.Call, cst.Subscript,
                                         cst.UnaryOperation)) or \
                (isinstance(operand, cst.BinaryOperation) and isinstance(
                    operand.operator, (cst.Multiply, cst.Divide, cst.Power, cst.MatrixMultiply)))
            if tight:
                return updated.with_changes(left=operand, right=_literal(-right))
        return updated


    def leave_UnaryOperation(self, original, updated) -> cst.BaseExpression:
        if not isinstance(updated.operator, cst.Minus) or _number(updated) is not None:
            return updated
        inner = updated.expression
        if isinstance(inner, cst.UnaryOperation) and isinstance(inner.operator, cst.Minus):
            result = inner.expression  # --e -> e, keeping e's own parentheses: -(-(a + b)) * c
            if updated.lpar and not result.lpar:
                result = result.with_changes(lpar=updated.lpar, rpar=updated.rpar)
            return result
        unsigned = _without_leading_minus(inner)
        if unsigned is not None:  # -(-a * b / c) -> a * b / c (negation is exact)
            return unsigned.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        factors = _factors(updated.expression.with_changes(lpar=[], rpar=[]))
        for i, f in enumerate(factors):
            value = _number(f)
            if value is not None and len(factors) > 1:  # -(g * 2 * t) -> g * -2 * t
                factors[i] = _literal(-value)
                return _product(factors).with_changes(lpar=updated.lpar, rpar=updated.rpar)
        return updated


def _without_leading_minus(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``a * b / c`` for ``-a * b / c`` (a chain of ``*`` and ``/`` whose leftmost operand is a
    negation, not a number, and no parentheses inside): None for any other expression."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and \
            _number(node) is None and not node.lpar:
        return node.expression
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Multiply, cst.Divide)):
        left = _without_leading_minus(node.left) if not node.left.lpar else None
        if left is not None:
            return node.with_changes(left=left)
    return None


def negated(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """``e`` where ``node`` is ``-e`` (a leading negation of a chain of ``*`` and ``/``), in
    parentheses where it needs them after a ``-``; None otherwise."""
    unsigned = _without_leading_minus(node) if not node.lpar else None
    if isinstance(unsigned, cst.BinaryOperation) and isinstance(unsigned.operator, (cst.Add, cst.Subtract)):
        unsigned = unsigned.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return unsigned


def _minus_added(node: cst.BinaryOperation) -> cst.BaseExpression:
    """``a + -b * c`` -> ``a - b * c`` and ``a - -b`` -> ``a + b``: the negation is the other
    operation (exact, as negation is), one pass fewer."""
    if not isinstance(node.operator, (cst.Add, cst.Subtract)):
        return node
    unsigned = negated(node.right)
    if unsigned is None:
        return node
    operator = cst.Subtract() if isinstance(node.operator, cst.Add) else cst.Add()
    return node.with_changes(operator=operator, right=unsigned)


_CHAIN = (cst.Multiply, cst.Divide)
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)


def _chain(node: cst.BaseExpression) -> list:
    """``[(None, a), (*, b), (/, c)]`` of a left-nested chain ``a * b / c`` (no parentheses)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _CHAIN) and not node.lpar:
        return _chain(node.left) + [(node.operator, node.right)]
    return [(None, node)]


def _unchained(links: list) -> cst.BaseExpression:
    """The left-nested chain of ``links`` (_chain's form) as one expression."""
    node = links[0][1]
    for operator, factor in links[1:]:
        node = cst.BinaryOperation(node, operator, factor)
    return node


def divided_once(parts: list) -> Optional[tuple]:
    """``(quotients, divisor)`` where every one of several ``parts`` (chains of ``*`` and ``/``)
    divides by one name ``divisor``: the parts without that division (the sum of ``a / d`` and
    ``-b / d * c`` is then ``(a - b * c) / d``, one division where there were two); else None."""
    if len(parts) < 2:
        return None
    chains = [_chain(part) for part in parts]
    divisors = [link[1].value for link in chains[0][1:]
                if isinstance(link[0], cst.Divide) and isinstance(link[1], cst.Name)]
    for name in divisors:
        kept = []
        for chain in chains:
            place = next((k for k, (op, node) in enumerate(chain) if k and isinstance(op, cst.Divide)
                          and isinstance(node, cst.Name) and node.value == name), None)
            if place is None:
                break
            kept.append(_unchained(chain[:place] + chain[place + 1:]))
        else:
            return kept, cst.Name(name)
    return None


def _of_only(node: cst.BaseExpression, name: str) -> bool:
    """Whether ``node`` is arithmetic (operators, parentheses) of numbers and ``name`` alone:
    elementwise, so its shape is at most ``name``'s."""
    if isinstance(node, cst.Name):
        return node.value == name
    if _number(node) is not None:
        return True
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, cst.Minus) and _of_only(node.expression, name)
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ARITHMETIC) and \
        _of_only(node.left, name) and _of_only(node.right, name)


def unbroadcast_call(expr: cst.BaseExpression, shape: cst.BaseExpression,
                     operand: str, axes: Optional[tuple] = None) -> cst.BaseExpression:
    """``s2s.unbroadcast(expr, shape)``: ``operand``'s contribution ``expr`` summed back to its
    shape (``axes``, ``(leading, ones)`` known when the code is made: ``np.sum`` over them,
    analyze.shapes.summed_axes), the factors of ``expr`` (a chain of ``*`` and ``/``, its first
    factor kept) that are
    arithmetic of ``operand`` alone applied after the sum: they have at most ``operand``'s shape,
    so they are constant along every axis the sum reduces (``unbroadcast(-g * a / (b * b),
    b_shape)`` -> ``-unbroadcast(g * a, b_shape) / (b * b)``: the quotient's divisor's adjoint
    costs one pass over the broadcast array, not two; a leading negation, exact, is applied to
    the sum)."""
    chain = _chain(expr)
    inside = [chain[0]] + [link for link in chain[1:] if not _of_only(link[1], operand)]
    outside = [link for link in chain[1:] if _of_only(link[1], operand)]
    if not outside or len(inside) == 1 and len(chain) == 1:
        inside, outside = chain, []
    node = _unchained(inside)
    unsigned = _without_leading_minus(node) if not node.lpar else None
    if unsigned is not None:  # -(the sum): negated once summed, a pass over the smaller array
        node = unsigned
    node = _summed(node, axes) if axes is not None else \
        cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name("unbroadcast")), [cst.Arg(node), cst.Arg(shape)])
    if unsigned is not None:
        node = cst.UnaryOperation(cst.Minus(), node)
    return _unchained([(None, node)] + outside)


def _summed(node: cst.BaseExpression, axes: tuple) -> cst.BaseExpression:
    """The sum of ``node`` over ``axes`` = ``(leading, ones)``: the leading axes dropped (all of
    them for a 0-d operand: ``leading`` None where their count is not known: ``np.sum(node)``),
    the others kept (the runtime's ``axis_sum(node, axis=...)``: numpy's sum, or a product with
    ones where that is the faster, runtime/sums.py)."""
    leading, ones = axes

    def total(inner: cst.BaseExpression, over: tuple, keep: bool) -> cst.BaseExpression:
        axis = str(over[0]) if len(over) == 1 else f"({', '.join(map(str, over))})"
        args = [cst.Arg(inner), cst.Arg(cst.parse_expression(axis), keyword=cst.Name("axis"))]
        if keep:
            args.append(cst.Arg(cst.Name("True"), keyword=cst.Name("keepdims")))
        return cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(axis_sum.__name__)), args)

    if leading is None:  # every axis
        return cst.Call(cst.Attribute(cst.Name("np"), cst.Name("sum")), [cst.Arg(node)])
    if ones:
        node = total(node, ones, True)
    return total(node, leading, False) if leading else node


def simplify(node: cst.CSTNode, scalars: frozenset = frozenset()) -> cst.CSTNode:
    """``node`` with the folds above applied; ``scalars`` names values known to be one number."""
    return node.visit(_Fold(scalars))

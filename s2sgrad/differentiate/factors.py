"""Shared factors of forward mode's code made for numbers: program items -> the same, where two or
more lines of one block multiply the same two names, that product computed once.

Forward mode of Kepler's step writes the primal's ``fprime = 1.0 - e * cos_E`` and, per
parameter, tangents such as ``f_dM = E_dM - E_dM * cos_E * e - M_dM``: the product of ``e`` and
``cos_E`` three times a step, which a person writing the derivatives by hand computes once. A
line's products are read as chains of factors (``E_dM * cos_E * e``: ``E_dM``, ``cos_E``, ``e``,
however parenthesized); the pair of names that the most chains of a block hold (two or more)
becomes ``e_times_cos_E = e * cos_E``, put before the first line holding it, and each chain
holding both reads it in their place.

A tangent line's chain (its target not one of the primal's names) may be regrouped: in code made
for calls passing numbers every factor of a tangent's product is one number, so regrouping only
rounds differently (the sweeps group their products otherwise too). A primal line's chain is
read as the product only where it is that product, its two names in its order: the value is the
one the user's code computes, bit for bit. Only where neither name is bound again from that
line to the last one reading the product (the lines of one block: a loop's body, a branch, the
function's top level). Pure: code in, code out; deterministic (the first pair in line order
among the most held).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Callable, Optional

import libcst as cst

from ..program import Nest, Simple, bound_within


def _factors(node: cst.BaseExpression) -> list:
    """The factors of a product chain, in order (parentheses inside it flattened)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _chains(node: cst.CSTNode) -> list:
    """The maximal product chains in ``node`` (a chain's root: a product whose parent is not one)."""
    found: list = []

    class _Visit(cst.CSTVisitor):
        def visit_BinaryOperation(self, n: cst.BinaryOperation) -> bool:
            if isinstance(n.operator, cst.Multiply):
                found.append(n)
                for factor in _factors(n):
                    factor.visit(self)
                return False
            return True

    node.visit(_Visit())
    return found


def _names(chain: cst.BinaryOperation) -> list:
    return [f.value for f in _factors(chain) if isinstance(f, cst.Name)]


def _pairs(chain: cst.BinaryOperation, free: bool) -> set:
    """The pairs of names (sorted) ``chain`` may read as one product: any two of its named
    factors where it may be regrouped (``free``), else its own two where it is that product."""
    names = _names(chain)
    if free:
        return {tuple(sorted((a, b))) for i, a in enumerate(names) for b in names[i + 1:] if a != b}
    factors = _factors(chain)
    if len(factors) == 2 and len(names) == 2 and names[0] != names[1]:
        return {tuple(sorted(names))}
    return set()


def _value(item) -> Optional[cst.BaseExpression]:
    return item.node.value if isinstance(item, Simple) and item.plain else None


class _Regroup(cst.CSTTransformer):
    """Each chain holding the pair reads ``name`` for it (a primal line's only where it is the
    product itself)."""

    def __init__(self, pair: tuple, name: str, free: bool) -> None:
        self.pair, self.name, self.free = pair, name, free

    def leave_BinaryOperation(self, original: cst.BinaryOperation,
                              updated: cst.BinaryOperation) -> cst.BaseExpression:
        if not isinstance(updated.operator, cst.Multiply) or self.pair not in _pairs(updated, self.free):
            return updated
        factors = _factors(updated)
        out: list = []
        left = set(self.pair)
        for factor in factors:
            if isinstance(factor, cst.Name) and factor.value in left:
                left.discard(factor.value)
                if len(left) == 1:  # the first of the two: the product goes here
                    out.append(cst.Name(self.name))
                continue
            out.append(factor)
        chain = out[0]
        for factor in out[1:]:
            chain = cst.BinaryOperation(chain, cst.Multiply(), factor)
        return chain.with_changes(lpar=updated.lpar, rpar=updated.rpar) if len(out) > 1 else \
            cst.Name(self.name, lpar=updated.lpar, rpar=updated.rpar)


def shared_factors(code, primal: frozenset, fresh: Callable[[str], str]) -> list:
    """``code`` with each product of two names that two or more lines of one block hold computed
    once (see the module doc); ``primal``: the names the primal's lines bind (their products
    read the shared one only where they are it); ``fresh``: a new name."""
    return _block(list(code), primal, fresh)


def _block(code: list, primal: frozenset, fresh: Callable[[str], str]) -> list:
    code = [replace(item, body=tuple(_block(list(item.body), primal, fresh)))
            if isinstance(item, Nest) else item for item in code]
    while True:
        held: Counter = Counter()
        where: dict = {}  # pair -> the lines holding it, in order
        for index, item in enumerate(code):
            value = _value(item)
            if value is None:
                continue
            free = item.assigned not in primal
            pairs = set().union(*(_pairs(chain, free) for chain in _chains(value)))
            for pair in sorted(pairs):
                held[pair] += 1
                where.setdefault(pair, []).append(index)
        chosen = None
        for pair, count in sorted(held.items(), key=lambda kv: (-kv[1], where[kv[0]][0], kv[0])):
            first, last = where[pair][0], where[pair][-1]
            if count > 1 and not any(set(pair) & bound_within(code[i]) for i in range(first, last)):
                chosen = pair
                break
        if chosen is None:
            return code
        code = _share(code, chosen, where[chosen], primal, fresh)


def _share(code: list, pair: tuple, lines: list, primal: frozenset, fresh: Callable[[str], str]) -> list:
    """``code`` with ``pair``'s product computed before the first of ``lines`` and read there."""
    first = lines[0]
    order = pair
    for index in lines:  # a primal line's own order, so its value stays bit for bit
        value = _value(code[index])
        if code[index].assigned in primal:
            for chain in _chains(value):
                if _pairs(chain, False) == {pair}:
                    order = tuple(_names(chain))
                    break
    name = fresh(f"{order[0]}_times_{order[1]}")
    out = list(code)
    for index in lines:
        item = out[index]
        out[index] = Simple(item.node.visit(_Regroup(pair, name, item.assigned not in primal)))
    out.insert(first, Simple(cst.parse_statement(f"{name} = {order[0]} * {order[1]}").body[0]))
    return out


__all__ = ["shared_factors"]

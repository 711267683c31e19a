"""Reuse of forward values in the backward sweep (and in forward mode's tangent lines): a
contribution (libcst expression) of a statement -> the same expression where a call of a library
function on the function's own names that another statement of the same block computed
(``cos_E = math.cos(E)``) reads that statement's target instead of calling again (``g *
math.cos(E)`` becomes ``g * cos_E``; the tape then records ``cos_E`` for the backward step, as
it does any forward value the backward sweep reads).

Matched in the IR: the call's function, named in a rule template as ``np.<name>`` or
``math.<name>``, is the statement's primitive (``numpy.<name>``, ``math.<name>``), and its
arguments are the primitive's operands, the same names in the same order. Sound where both read
the same values: the two statements lie in one block (one loop body, one branch, or the
function's top level), no item of that block from one to the other binds an operand, and the
target is bound nowhere else (so the value the backward sweep restores for it is that one).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..lower.ir import If, Loop, Stmt, Var, defined_names

_NAMESPACES = {"np": "numpy", "math": "math"}


def block_places(body: tuple, out: Optional[dict] = None) -> dict:
    """``id(item) -> (block, index)`` for every item of ``body`` and of the blocks inside it."""
    out = {} if out is None else out
    for index, item in enumerate(body):
        out[id(item)] = (body, index)
        if isinstance(item, If):
            block_places(item.body, out)
            block_places(item.orelse, out)
        elif isinstance(item, Loop):
            block_places(item.body, out)
    return out


def _binds(item) -> set:
    return set(item.targets) if isinstance(item, Stmt) else defined_names((item,))


def _call_key(node: cst.Call) -> Optional[tuple]:
    """``(op, operand names)`` of a call ``np.f(a, b)`` / ``math.f(a)`` of plain names, else None."""
    func = node.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
            and func.value.value in _NAMESPACES):
        return None
    if not node.args or any(a.keyword is not None or a.star or not isinstance(a.value, cst.Name)
                            for a in node.args):
        return None
    return f"{_NAMESPACES[func.value.value]}.{func.attr.value}", tuple(a.value.value for a in node.args)


class _Reuse(cst.CSTTransformer):
    def __init__(self, found: dict) -> None:
        self.found = found
        self.used: set = set()  # the keys of the calls replaced

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        key = _call_key(updated)
        name = self.found.get(key) if key is not None else None
        if name is None:
            return updated
        self.used.add(key)
        return cst.Name(name)


def _computed(stmt: Stmt, places: dict, definitions: dict) -> dict:
    """``(op, operand names) -> statement`` for the calls statements of ``stmt``'s block compute
    that ``stmt`` may read (the module docstring's conditions)."""
    place = places.get(id(stmt))
    if place is None:
        return {}
    block, here = place
    found: dict = {}
    for index, item in enumerate(block):
        if index == here or not isinstance(item, Stmt) or len(item.targets) != 1 or item.prim.kwargs:
            continue
        target, args = item.targets[0], item.prim.args
        if not args or not all(isinstance(a, Var) for a in args) or definitions.get(target) != 1:
            continue
        operands = {a.name for a in args}
        if target in operands:
            continue
        low, high = min(index, here), max(index, here)
        if any(_binds(block[k]) & operands for k in range(low, high + 1)):
            continue
        found.setdefault((item.prim.op, tuple(a.name for a in args)), item)
    return found


def reuse_forward(expr: cst.BaseExpression, stmt: Stmt, places: dict,
                  definitions: dict) -> cst.BaseExpression:
    """``expr`` (a contribution of ``stmt``) reading, for each call it makes that a statement of
    ``stmt``'s block computed from the same values, that statement's target (module docstring).
    ``places``: block_places of the function; ``definitions``: how often each name is bound."""
    found = _computed(stmt, places, definitions)
    return expr.visit(_Reuse({k: item.targets[0] for k, item in found.items()})) if found else expr


def reuse_beside(expr: cst.BaseExpression, stmt: Stmt, places: dict,
                 definitions: dict) -> tuple:
    """``(expr', later)`` for forward mode, whose tangent lines run beside the primal lines:
    ``expr`` (a tangent of ``stmt``) reading the targets of the statements of its block that
    compute its calls, and ``later``, those of them that come after ``stmt`` in the block, in
    block order (their operands hold the same values at ``stmt``, so they may run before its
    tangent line: the caller writes them there, and not at their own place)."""
    found = _computed(stmt, places, definitions)
    if not found:
        return expr, ()
    block, here = places[id(stmt)]
    after = {id(item) for item in block[here + 1:]}  # (a later statement the lowering implied
    found = {k: item for k, item in found.items() if not (item.implicit and id(item) in after)}
    reading = _Reuse({k: item.targets[0] for k, item in found.items()})  # is written nowhere)
    expr = expr.visit(reading)
    used = {id(item) for k, item in found.items() if k in reading.used}
    return expr, tuple(item for item in block[here + 1:] if id(item) in used)


__all__ = ["block_places", "reuse_beside", "reuse_forward"]

"""Common subexpressions of the core form: CoreFunction + RuleTable -> the same, a statement that
computes again what an earlier statement of its block computed (the same primitive of the same
operands) written as a copy of that statement's target.

``x_minus_mu_2 = x - mu`` after ``x_minus_mu = x - mu`` becomes ``x_minus_mu_2 = x_minus_mu``:
the forward sweep computes the value once, and the backward sweep adds both readers' adjoints into
one name before the primitive's own contributions (one ``unbroadcast`` of ``mu``'s, not two).
Matched in the IR, never by text: the primitive's ``op`` (a method spelling read as the numpy
function it is: ``x.mean(axis=1)`` is ``np.mean(x, axis=1)``, RuleTable.function_of), its
positional operands and its keyword operands in any order compare equal (a ``Const`` by its code
and the names its index reads), a name bound once
to a copy of a name bound at most once read as that name (so ``(x - mu) ** 2`` twice is merged
whole: its second ``x - mu`` first, then the power of the copy).

Only where both compute the same value:
- the primitive is a library function with a rule (numpy, ndarray methods, Python's operators and
  ``math``, scipy), not a registered gradient's, not one that empties a list it reads
  (``Rule.consumes``); never a copy, a kept verbatim expression, a random draw (no rule), a
  user's function, a runtime helper or a container's operation. A view (``Rule.view``: a slice
  or a reshape costs nothing to take again, and two names sharing one view would keep the
  in-place writes of differentiate/writes_in_place.py from the array it views) stays as it is,
  and is read as the earlier equal view where a later statement's operands are compared
  (``0.3 * x[:, :3]`` twice is merged: its second view kept, its product a copy);
- both statements lie in one block (a loop body, a branch, the function's top level), each binds
  one name and is a statement of its own (not bound by a loop header, not unpacked), no call of a
  computed value;
- no item of the block from the first to the second binds a name the operands read (index reads
  included) or the first's target, and the first's target is bound nowhere else in the function.
A copy is read as its source only where both are bound once in the function (a parameter counts
as bound at the call: one a loop carries is bound twice).
The core form has no in-place writes (an update is a new value, lower/normalize.py, and aliasing.py
refuses where Python's sharing would make the two differ), so no later write changes the value the
copy reads; the passes that write in place decide on the code with the copy (a copy joins the
names that may hold one array: differentiate/groups.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Optional

import libcst as cst

from .ir import CoreFunction, If, Loop, Prim, Seq, Stmt, Var, defined_names, flatten, operand_reads, \
    prim_operands

_NAMESPACES = ("numpy.", "ndarray.", "operator.", "math.", "scipy.")


def merge_common(core: CoreFunction, table) -> CoreFunction:
    """``core`` with each repeated computation read from its first statement (module docstring);
    ``table``: the rule table saying which primitives qualify."""
    bound = _bindings(core.body)
    bound.update(param.name for param in core.params)  # bound at the call: a loop may rebind one
    roots = {stmt.targets[0]: stmt.prim.args[0].name for stmt in flatten(core.body)
             if _plain_copy(stmt) and bound[stmt.targets[0]] == 1
             and bound[stmt.prim.args[0].name] <= 1}
    body = _block(core.body, table, bound, roots)
    return core if body is core.body else replace(core, body=body)


def _bindings(body: tuple) -> Counter:
    """How often each name is bound in ``body`` (statements, loop carries, headers, records)."""
    counts: Counter = Counter()
    for stmt in flatten(body):
        counts.update(stmt.targets)
    counts.update(name for name in defined_names(body) if not counts[name])
    return counts


def _plain_copy(stmt: Stmt) -> bool:
    return stmt.prim.op == "copy" and len(stmt.targets) == 1 and not stmt.unpack and \
        len(stmt.prim.args) == 1 and isinstance(stmt.prim.args[0], Var)


def _root(name: str, roots: dict) -> str:
    while name in roots:
        name = roots[name]
    return name


def _operand(op, roots: dict):
    """An operand with each name a copy stands for read as its source (Seq items included)."""
    if isinstance(op, Var):
        return Var(_root(op.name, roots))
    if isinstance(op, Seq):
        return Seq(op.kind, tuple(_operand(item, roots) for item in op.items))
    return op


def _key(stmt: Stmt, table, roots: dict) -> Optional[tuple]:
    """``(op, args, kwargs)`` of a statement that may be merged, or of a view that may be read
    as an earlier equal one (names read through the names ``roots`` maps to the ones they
    equal), else None."""
    prim = stmt.prim
    if stmt.implicit or stmt.unpack or len(stmt.targets) != 1 or prim.called_value is not None:
        return None
    rule = table.get(prim.op)
    if rule is None or not prim.op.startswith(_NAMESPACES) or not table.differentiable(prim.op) \
            or rule.registered or rule.consumes:
        return None
    return (table.function_of(prim.op), tuple(_operand(a, roots) for a in prim.args),
            tuple(sorted((k, _operand(v, roots)) for k, v in prim.kwargs)))


def _binds(item) -> set:
    return set(item.targets) if isinstance(item, Stmt) else defined_names((item,))


def _block(block: tuple, table, bound: Counter, roots: dict) -> tuple:
    """One block with its nested blocks merged first, then its own repeats."""
    items = list(block)
    changed = False
    for index, item in enumerate(items):
        if isinstance(item, If):
            body, orelse = _block(item.body, table, bound, roots), _block(item.orelse, table, bound, roots)
            if body is not item.body or orelse is not item.orelse:
                items[index], changed = replace(item, body=body, orelse=orelse), True
        elif isinstance(item, Loop):
            body = _block(item.body, table, bound, roots)
            if body is not item.body:
                items[index], changed = replace(item, body=body), True
    first: dict = {}  # key -> (target, the names its value depends on)
    for index, item in enumerate(items):
        key = _key(item, table, roots) if isinstance(item, Stmt) else None
        earlier = first.get(key) if key is not None else None
        if earlier is not None and item.prim.op in table.views:
            if bound[item.targets[0]] == 1:  # kept, and read as the earlier view in keys
                roots[item.targets[0]] = earlier[0]
        elif earlier is not None:
            items[index] = Stmt(item.targets, cst.Name(earlier[0]),
                                Prim("copy", (Var(earlier[0]),), location=item.prim.location),
                                item.origin)
            changed = True
            if bound[item.targets[0]] == 1:
                roots[item.targets[0]] = earlier[0]
        names = _binds(item)
        if names:
            first = {k: v for k, v in first.items() if not (names & v[1] or v[0] in names)}
        if key is not None and earlier is None and key not in first:
            target = item.targets[0]
            reads = {name for op in prim_operands(item.prim) for name in operand_reads(op)}
            reads |= {_root(name, roots) for name in reads}
            if bound[target] == 1 and target not in reads:
                first[key] = (target, reads)
    return tuple(items) if changed else block


__all__ = ["merge_common"]

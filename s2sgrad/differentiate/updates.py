"""Index writes that add into what they read: a CoreFunction -> each ``x_2 = setitem(x, I, s)``
whose value is ``s = t + e`` (``e + t``, ``t - e``) with ``t = x[I]`` read just before (the same
version of ``x``, the same index, a basic one: no position written twice), ``t`` and ``s`` read
nowhere else, ``x`` certainly a numpy array, mapped to ``t``. Such a write is ``x[I] += e`` (the
lowering of ``x[I] += e``, ``x[I] -= e`` and ``x[I] = x[I] + e``): ``x_2`` is ``x`` plus ``e``
scattered at ``I``, so ``x``'s adjoint is ``x_2``'s itself (``t``'s share of it left in place,
not zeroed and added back) and ``e``'s is its part at ``I`` (reverse.setitem_backward). The array
written into may be ``promoted(x, s)`` (a join written as an index write, lower/splices.py:
``x``'s numbers, cast to the join's type, reading ``s`` for its type only) with ``t = x[I]``.
"""

from __future__ import annotations

from collections import Counter

from ..lower.ir import SUBSCRIPT, Const, CoreFunction, Stmt, Var, blocks, read_counts
from ..rules.helpers.containers import PROMOTED
from ..rules.table import RuleTable
from .plain_writes import basic_index

__all__ = ["index_updates"]

_ADDS = {"operator.add": (0, 1), "operator.sub": (0,)}  # the sums, and where the read may be
_PROMOTED = "s2sgrad.runtime." + PROMOTED  # the rule table's name of the helper


def index_updates(fn: CoreFunction, table: RuleTable, numbers: frozenset, arrays: frozenset) -> dict:
    """``{setitem statement: t}`` for each of the table's index writes adding into what it read
    (module docstring); ``numbers``: the names certainly holding one number (an index's ints);
    ``arrays``: those certainly holding a numpy array, the only ones written into (a list's ``+``
    joins lists: a list's slice written so is no update)."""
    reads = read_counts(fn)
    found: dict = {}
    for block in blocks(fn.body):
        single = {s.targets[0]: s for s in block if isinstance(s, Stmt) and len(s.targets) == 1}
        for stmt in block:
            read = _update(stmt, single, reads, numbers, arrays) \
                if isinstance(stmt, Stmt) and table.index_write(stmt.prim.op) else None
            if read is not None:
                found[stmt] = read
    return found


def _update(stmt: Stmt, single: dict, reads: Counter, numbers: frozenset, arrays: frozenset):
    prim = stmt.prim
    if len(prim.args) != 3 or prim.kwargs or len(stmt.targets) != 1:
        return None
    base, index, value = prim.args
    if not (isinstance(base, Var) and isinstance(index, Const) and isinstance(value, Var)) or \
            base.name not in arrays:
        return None
    if not (index.basic or basic_index(index.node, numbers)):
        return None
    source, typed = _promoted(single.get(base.name), value)
    added = single.get(value.name)
    if added is None or added.prim.op not in _ADDS or added.prim.kwargs or len(added.prim.args) != 2 or \
            reads[value.name] != 1 + typed:
        return None
    for read in (added.prim.args[k] for k in _ADDS[added.prim.op]):
        got = single.get(read.name) if isinstance(read, Var) else None
        if got is not None and got.prim.op == SUBSCRIPT and len(got.prim.args) == 2 and \
                not got.prim.kwargs and got.prim.args[0] in (base, source) and \
                isinstance(got.prim.args[1], Const) and got.prim.args[1].code == index.code and \
                reads[read.name] == 1 and sum(1 for a in added.prim.args if a == read) == 1:
            return read.name
    return None


def _promoted(made, value: Var) -> tuple:
    """``(x, 1)`` where the array written into is the runtime helper's ``promoted(x, value)``
    (lower/splices.py: ``x`` cast to the type of a join with ``value``, exactly its numbers,
    reading ``value`` for its type only), so a read of ``x[I]`` is a read of the written array;
    else ``(None, 0)``."""
    if made is not None and made.prim.op == _PROMOTED and len(made.prim.args) == 2 and \
            not made.prim.kwargs and made.prim.args[1] == value and isinstance(made.prim.args[0], Var):
        return made.prim.args[0], 1
    return None, 0

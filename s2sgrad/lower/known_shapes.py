"""What the rewrites of code made for a call's shapes share (lower/scans.py,
lower/batched_loops.py): a CoreFunction, the shapes its values are known to have and the rule
table -> the names a rewrite adds (fresh, none the function reads or writes) and the known shape
of a name; a statement or operand reading other names; a numpy function's name as generated code
calls it."""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional

import libcst as cst

from .. import dims
from ..rules.table import RuleTable
from .ir import CoreFunction, Seq, Stmt, Var, defined_names, read_counts
from .naming import Namer


class KnownShapes:
    """``shapes``: names -> known shapes (dims.py); ``scalars``: names known to hold one number;
    ``reads``: how many times each name is read; ``added``: the names ``fresh`` gave."""

    def __init__(self, fn: CoreFunction, shapes: Mapping[str, tuple], table: RuleTable,
                 scalars: frozenset) -> None:
        self.fn, self.shapes, self.table, self.scalars = fn, shapes, table, scalars
        self.reads = read_counts(fn)
        self.namer = Namer(fn.reserved | defined_names(fn.body) | {p.name for p in fn.params})
        self.added: set = set()

    def fresh(self, hint: str) -> str:
        name = self.namer.fresh(hint)
        self.added.add(name)
        return name

    def shape(self, name: str) -> Optional[tuple]:
        """``name``'s shape where it is known (``()`` for one number), else None."""
        if name in self.scalars:
            return ()
        found = self.shapes.get(name)
        return found if isinstance(found, tuple) and dims.known(found) else None


class _Renamed(cst.CSTTransformer):
    def __init__(self, names: Mapping[str, str]) -> None:
        self.names = names

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value=self.names[updated.value]) if updated.value in self.names else updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)  # ``a.name``: no read of ``name``

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)


def renamed(op, names: Mapping[str, str]):
    """The operand ``op`` reading ``names[n]`` where it read the Var ``n`` (in a display too)."""
    if isinstance(op, Var):
        return Var(names.get(op.name, op.name))
    if isinstance(op, Seq):
        return replace(op, items=tuple(renamed(i, names) for i in op.items))
    return op


def reading(stmt: Stmt, names: Mapping[str, str]) -> Stmt:
    """``stmt`` reading ``names[n]`` where it read the Var ``n`` (its Consts read none of them)."""
    prim = replace(stmt.prim, args=tuple(renamed(a, names) for a in stmt.prim.args),
                   kwargs=tuple((k, renamed(v, names)) for k, v in stmt.prim.kwargs))
    return replace(stmt, expr=stmt.expr.visit(_Renamed(names)), prim=prim)


def spelled(op: str) -> str:
    """A function's name as generated code calls it (``numpy.sum``: ``np.sum``; generated code
    imports numpy as np)."""
    module, _, attr = op.rpartition(".")
    return f"np.{attr}" if module == "numpy" else op

"""Activity: CoreFunction + wrt + seeded outputs -> the names that are both varied and useful.

A value is *varied* when it depends differentiably on a ``wrt`` parameter, *useful* when the seeded
output depends differentiably on it. Only active values (both) get adjoints.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst
import libcst.matchers as m

from ..errors import TransformError
from ..lower.ir import CoreFunction, Const, Seq, flatten, operand_reads, operand_vars, prim_operands
from ..rules.table import RuleTable
from ..read.walk import findall


@dataclass(frozen=True)
class Activity:
    varied: frozenset
    useful: frozenset

    @property
    def active(self) -> frozenset:
        return self.varied & self.useful

    def is_active(self, name: str) -> bool:
        return name in self.varied and name in self.useful


def _carrying(fn: CoreFunction, table: RuleTable, constant: frozenset) -> list:
    """The statements that can pass a derivative on: differentiable, and defining more than
    ``constant`` names."""
    return [s for s in flatten(fn.body) if table.differentiable(s.prim.op)
            and not (s.targets and set(s.targets) <= constant)]


def varied_names(fn: CoreFunction, wrt: tuple, table: RuleTable,
                 constant: frozenset = frozenset()) -> set:
    """Names that depend on ``wrt``, to a fixed point (loops carry values around)."""
    return _varied(_carrying(fn, table, constant), wrt)


def _varied(statements: list, wrt: tuple) -> set:
    varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for stmt in statements:
            if any(name in varied for op in prim_operands(stmt.prim) for name in operand_vars(op)):
                new = set(stmt.targets) - varied
                if new:
                    varied |= new
                    changed = True
    return varied


def seeded_outputs(fn: CoreFunction, has_aux: bool) -> tuple:
    """The names whose adjoints the caller seeds: the result, or its first item with has_aux."""
    result = fn.result
    if has_aux and isinstance(result, Seq):
        return operand_vars(result.items[0])
    return operand_vars(result)


def analyze(fn: CoreFunction, wrt: tuple, outputs: tuple, table: RuleTable,
            constant: frozenset = frozenset()) -> Activity:
    """Varied and useful names, to a fixed point (loops carry values around). Statements that
    define only ``constant`` names (e.g. stabilizing maxima) carry no derivative."""
    statements = _carrying(fn, table, constant)
    varied = _varied(statements, wrt)
    useful = set(outputs)
    changed = True
    while changed:
        changed = False
        for stmt in reversed(statements):
            if any(t in useful for t in stmt.targets):
                for op in prim_operands(stmt.prim):
                    new = set(operand_vars(op)) - useful
                    if new:
                        useful |= new
                        changed = True
    return Activity(frozenset(varied), frozenset(useful))


def refuse_constant_subscripts(fn: CoreFunction, varied: set) -> None:
    """Raise for an index of a constant (a global, a module attribute such as ``np.r_``) that reads
    a varied value: indexing carries no derivative through its index, so its gradient would be
    silently dropped (``np.r_[x, y]`` joins arrays, but is a subscript, not a call)."""
    for stmt in flatten(fn.body):
        args = stmt.prim.args
        if len(args) != 2 or not isinstance(args[0], Const) or not isinstance(args[1], Const) \
                or not args[1].brackets:
            continue
        if isinstance(args[0].node, (cst.List, cst.Tuple, cst.SimpleString)):
            continue  # a display's index is an int or a slice: nothing to differentiate
        names = set(operand_reads(args[1])) | {n.value for n in findall(args[1].node, m.Name())}
        if names & varied:  # (the reads of a Const list user locals, not temporaries)
            raise TransformError(
                f"indexing the constant `{args[0].code}` with a differentiated value would drop "
                "its gradient (s2sgrad differentiates an index expression through its array only)",
                stmt.prim.location or stmt.origin.location,
                "join arrays with np.concatenate, np.stack or np.column_stack (np.r_ and np.c_ are "
                "differentiated with arrays, numbers and slices as items, not directive strings), "
                "or wrap the index in s2sgrad.stop_gradient(...) if no gradient should flow")

"""Joins that rebuild an array with parts replaced, written as index writes: CoreFunction + the
shapes its values are known to have -> CoreFunction.

``u_new = np.concatenate([u[:1], interior, u[-1:]])`` is ``u`` with ``u[1:-1]`` replaced by
``interior``: the functional update a person writes where arrays are immutable (JAX's style), and
the index write ``u[1:-1] = interior`` on a copy is what a person writes with numpy. Written as the
index write (``s2s.setitem``), the join gets what every index write gets: the write made into the
array itself where nothing reads the old values after it (``writes_in_place``), and a backward
step that keeps the adjoint's buffer, reading the replaced part's adjoint from it and zeroing it,
instead of a new adjoint array scattered from each part. One structure, however it is spelled.

The rewrite holds where the code is made for a call's shapes (``Options.shapes``): a
join along the first axis (``np.concatenate``: RuleTable.joins) of a list or tuple display whose result has the shape of an array
``x`` (known, equal), some items of which are basic slices ``x[a:b]`` with literal bounds, each at
the place it takes in the result (``dims.split_points`` of the items' known lengths), read from the
version of ``x`` the join reads, bound in the join's block. Each other item is written at its
place, in order, into ``s2s.promoted(x, item)`` (``x`` itself where its dtype holds the item's,
else ``x`` cast to the join's type, so the result's type is the join's). Where a shape is not known
the join stays as written (an item of another length would make a join of another shape).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional

import libcst as cst

from .. import dims
from ..rules.helpers.containers import PROMOTED
from ..rules.helpers.inplace import SETITEM
from ..rules.table import RuleTable
from .ir import (SUBSCRIPT, Const, CoreFunction, Prim, Seq, Stmt, Var, defined_names, read_counts,
                 rewrite_statements)
from .naming import Namer

_PROMOTED_OP = "s2sgrad.runtime." + PROMOTED  # the rule table's name of the helper
_SETITEM_OP = "s2s." + SETITEM  # the lowering's index write (RuleTable.index_write)


def _literal_int(node: cst.BaseExpression) -> Optional[int]:
    """The value of an int literal (``3``, ``-1``), else None."""
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and \
            isinstance(node.expression, cst.Integer):
        return -int(node.expression.value)
    return None


def literal_slice(index: Const) -> Optional[tuple]:
    """``(start, stop)`` of a basic index that is one slice of step 1 along the first axis with
    literal bounds (``x[1:-1]``: ``(1, -1)``; an omitted bound or a start of 0 is None), else
    None."""
    node = index.node
    if not index.basic or not isinstance(node, cst.Tuple) or len(node.elements) != 1:
        return None
    call = node.elements[0].value
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name) or \
            call.func.value != "slice" or len(call.args) != 3 or \
            any(a.keyword is not None or a.star for a in call.args):
        return None
    bounds = []
    for arg in call.args:
        value = arg.value
        if isinstance(value, cst.Name) and value.value == "None":
            bounds.append(None)
        else:
            found = _literal_int(value)
            if found is None:
                return None
            bounds.append(found)
    start, stop, step = bounds
    if step not in (None, 1):
        return None
    return (None if start == 0 else start), stop


def _slice_const(start: Optional[int], stop: Optional[int], base: str) -> Const:
    """The index ``[start:stop]`` as the Const an index write of ``base`` takes."""
    text = f"(slice({start}, {stop}, None),)"
    brackets = f"[{'' if start is None else start}:{'' if stop is None else stop}]"
    return Const(cst.parse_expression(text), text, (base,), brackets, True)


class _Rewriter:
    def __init__(self, fn: CoreFunction, shapes: Mapping[str, tuple], table: RuleTable) -> None:
        self.shapes = shapes
        self.table = table
        self.namer = Namer(fn.reserved | defined_names(fn.body) | {p.name for p in fn.params})
        self.added: set = set()
        self.changed = False
        self.parts: list = []  # the reads of an array's parts a rewritten join read in place

    def shape(self, op) -> Optional[tuple]:
        found = self.shapes.get(op.name) if isinstance(op, Var) else None
        return found if isinstance(found, tuple) and found and dims.known(found) else None

    def statement(self, stmt: Stmt, block: tuple) -> tuple:
        prim = stmt.prim
        if not self.table.joins(prim.op) or len(stmt.targets) != 1 or stmt.unpack or \
                len(prim.args) != 1 or not isinstance(prim.args[0], Seq) or not self._axis_0(prim):
            return (stmt,)
        items = prim.args[0].items
        result = self.shapes.get(stmt.targets[0])
        item_shapes = [self.shape(item) for item in items]
        if not isinstance(result, tuple) or not result or None in item_shapes:
            return (stmt,)
        places = dims.split_points([s[0] for s in item_shapes], result[0])
        if places is None:
            return (stmt,)
        reads = [self._read_of(item, block, stmt) for item in items]
        base = self._base(reads, places, result)
        if base is None:
            return (stmt,)
        written = [i for i, (read, place) in enumerate(zip(reads, places))
                   if read is None or read[:2] != (base.name, tuple(place))]
        self.parts.extend(read[2] for i, read in enumerate(reads) if i not in written)
        made: list = []
        current = base
        for i in written:
            item = items[i]
            cast = Var(self._fresh(f"{base.name}_as"))
            made.append(Stmt((cast.name,), _call(PROMOTED, (current, item)),
                             Prim(_PROMOTED_OP, (current, item), location=prim.location),
                             stmt.origin))
            index = _slice_const(*places[i], cast.name)
            target = stmt.targets[0] if i == written[-1] else self._fresh(f"{base.name}_part")
            made.append(Stmt((target,), _call(SETITEM, (cast, index, item)),
                             Prim(_SETITEM_OP, (cast, index, item), location=prim.location),
                             stmt.origin))
            current = Var(target)
        self.changed = True
        return tuple(made)

    def _fresh(self, hint: str) -> str:
        name = self.namer.fresh(hint)
        self.added.add(name)
        return name

    @staticmethod
    def _axis_0(prim: Prim) -> bool:
        if not prim.kwargs:
            return True
        if len(prim.kwargs) != 1 or prim.kwargs[0][0] != "axis":
            return False
        value = prim.kwargs[0][1]
        return isinstance(value, Const) and not value.reads and _literal_int(value.node) == 0

    def _read_of(self, item, block: tuple, stmt: Stmt) -> Optional[tuple]:
        """``(x, (start, stop), statement)`` where ``item`` is bound in ``block`` before ``stmt``
        to ``x[start:stop]`` (a literal slice along the first axis) by that statement and neither
        it nor ``x`` is bound again before ``stmt``; else None."""
        if not isinstance(item, Var):
            return None
        at = next(i for i, node in enumerate(block) if node is stmt)
        for i in range(at - 1, -1, -1):
            node = block[i]
            bound = _bound_names(node)
            if item.name in bound:
                if not isinstance(node, Stmt) or node.prim.op != SUBSCRIPT or node.unpack or \
                        len(node.targets) != 1 or len(node.prim.args) != 2 or node.prim.kwargs:
                    return None
                source, index = node.prim.args
                if not isinstance(source, Var) or not isinstance(index, Const):
                    return None
                place = literal_slice(index)
                if place is None or any(source.name in _bound_names(n) for n in block[i + 1:at]):
                    return None
                return source.name, place, node
        return None

    def _base(self, reads: list, places: list, result: tuple) -> Optional[Var]:
        """The array ``x`` of the result's shape that some items read at their own places
        (``reads``: each item's ``_read_of``), where at least one item is no such read; None
        where there is none."""
        found = None
        kept = 0
        for read, place in zip(reads, places):
            if read is None or read[1] != tuple(place):
                continue
            if found is not None and read[0] != found:
                return None
            found, kept = read[0], kept + 1
        if found is None or kept == len(reads) or self.shapes.get(found) != result:
            return None
        return Var(found)


def _bound_names(node) -> set:
    if isinstance(node, Stmt):
        return set(node.targets)
    return set(defined_names((node,)))


def _call(helper: str, args: tuple) -> cst.Call:
    return cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(helper)),
                    [cst.Arg(cst.Name(a.name) if isinstance(a, Var) else a.node) for a in args])


def spliced_joins(fn: CoreFunction, shapes: Mapping[str, tuple], table: RuleTable) -> CoreFunction:
    """``fn`` with each join that rebuilds an array with parts replaced written as index writes
    (module docstring); ``fn`` itself where there is none."""
    rewriter = _Rewriter(fn, shapes, table)
    body = rewrite_statements(fn.body, rewriter.statement)
    if not rewriter.changed:
        return fn
    out = replace(fn, body=body, reserved=fn.reserved | frozenset(rewriter.added))
    reads = read_counts(out)
    unread = {id(s) for s in rewriter.parts if not any(reads[t] for t in s.targets)}
    return replace(out, body=_without(out.body, unread)) if unread else out


def _without(body: tuple, dropped: set) -> tuple:
    """``body`` without the statements whose ids are in ``dropped`` (reads of parts a join read
    and nothing else reads: a basic slice has no effect)."""
    return rewrite_statements(body, lambda stmt, _: () if id(stmt) in dropped else (stmt,))

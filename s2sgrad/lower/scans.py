"""Loops that compute a running product or sum of an array's rows, written as one scan:
CoreFunction + the shapes its values are known to have + the rule table -> CoreFunction.

A loop over the rows of ``x`` (``for t in range(len(x))`` reading ``x[t]``, or ``for row in x``)
whose body is only ``acc = acc * x[t]`` (or ``+``: the rule table's ``scan`` of the operation's
algebra) and the collection of each new ``acc``, appended to a list made empty before the loop and
then stacked (``np.stack(rows)``, ``np.array(rows)``), or written into the row ``out[t]`` of an
array of ``x``'s shape, computes ``acc0 * np.cumprod(x, axis=0)``: written so, it is one numpy
call instead of a step of Python per row, forward and backward (the scan's rule), and no tape.

The rewrite holds where the code is made for a call's shapes (``Options.shapes``) and:
- ``x``'s length is known and not 0 (a loop of no steps stacks an empty list, which raises), the
  loop runs over all of it (``range(len(x))``, ``range(x.shape[0])``, ``for row in x``), ``acc``'s
  shape is known (or ``acc`` starts as a number literal, ``acc = 1.0``, over the numbers of a
  1-D ``x``) and ``acc * row`` has the rows' shape (``x``'s less its first length);
- nothing after the loop reads ``acc``, the row, the counter or the new ``acc``; the list is read
  by the one statement stacking it, after the loop in its block; the array ``out`` has ``x``'s
  shape and one statement after the loop in its block reads it (which then reads
  ``out`` with every row written: ``s2s.setitem(out, (slice(None),), prefix)``, out's type kept).

``x`` is first cast to the type the steps compute in (``s2s.promoted(x, acc)``: an int array with
a float ``acc`` is multiplied as floats, as the loop does). The values are the loop's up to the
order of the products (``acc0 * (x0 * x1)`` for ``(acc0 * x0) * x1``; exact where ``acc0`` is 1).
Where ``acc0`` is the operation's exact identity (``np.ones(shape)``, the literal 1 or 1.0 for a
product: RuleTable.exact_identity), the scan is the prefix itself: no operation with it, forward
or backward.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping, Optional

import libcst as cst

from .. import dims
from ..rules.helpers.containers import PROMOTED
from ..rules.helpers.inplace import SETITEM
from ..rules.table import RuleTable
from .ir import (SUBSCRIPT, Const, CoreFunction, If, Loop, Prim, RangeHeader, SequenceHeader, Stmt,
                 Var, all_reads, defined_names)
from .known_shapes import KnownShapes, reading, spelled

_PROMOTED_OP = "s2sgrad.runtime." + PROMOTED  # the rule table's name of the helper
_SETITEM_OP = "s2s." + SETITEM  # the lowering's index write (RuleTable.index_write)
_APPEND = "list.append"


def _name_of(node) -> Optional[str]:
    return node.value if isinstance(node, cst.Name) else None


def _length_of(node: cst.BaseExpression) -> Optional[str]:
    """``x`` of ``len(x)`` or ``x.shape[0]`` (as written in a range header), else None."""
    if isinstance(node, cst.Call) and _name_of(node.func) == "len" and len(node.args) == 1 and \
            node.args[0].keyword is None and not node.args[0].star:
        return _name_of(node.args[0].value)
    if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute) and \
            node.value.attr.value == "shape" and len(node.slice) == 1 and \
            isinstance(node.slice[0].slice, cst.Index) and \
            isinstance(node.slice[0].slice.value, cst.Integer) and node.slice[0].slice.value.value == "0":
        return _name_of(node.value.value)
    return None


def _rows(loop: Loop, counter: str) -> Optional[tuple]:
    """``(x, row)`` where the loop's first statement binds ``row = x[counter]`` of an ``x`` it
    does not bind, and the loop runs over all of ``x`` (``range(len(x))``, ``range(x.shape[0])``,
    ``for row in x``); else None."""
    read_row = loop.body[0]
    if read_row.prim.op != SUBSCRIPT or len(read_row.targets) != 1 or read_row.prim.kwargs or \
            len(read_row.prim.args) != 2:
        return None
    x, index = read_row.prim.args
    if not isinstance(x, Var) or not isinstance(index, Const) or _name_of(index.node) != counter \
            or x.name in defined_names(loop.body):
        return None
    if isinstance(loop.kind, RangeHeader):
        return (x, read_row.targets[0]) if _length_of(loop.kind.stop_only()) == x.name else None
    if isinstance(loop.kind, SequenceHeader) and loop.kind.sequences == (x,):
        return x, read_row.targets[0]
    return None


@dataclass(frozen=True)
class _Scan:
    """A loop found to compute a running product or sum: ``acc_first``: acc is the step's left
    operand; ``kept``: the list or array collecting each new acc (``appended``: a list), which
    the statement ``reader`` at ``reader_at`` of the block reads after the loop."""

    x: Var
    acc: Var
    acc_first: bool
    step: Stmt
    scan: str
    kept: str
    appended: bool
    reader_at: int
    reader: Stmt


class _Rewriter(KnownShapes):
    def __init__(self, fn: CoreFunction, shapes: Mapping[str, tuple], table: RuleTable,
                 scalars: frozenset) -> None:
        super().__init__(fn, shapes, table, scalars)
        self.changed = False

    def block(self, body: tuple) -> tuple:
        out = list(body)
        at = 0
        while at < len(out):
            node = out[at]
            if isinstance(node, If):
                out[at] = replace(node, body=self.block(node.body), orelse=self.block(node.orelse))
            elif isinstance(node, Loop):
                rewritten = self.scan(out, at)
                if rewritten is not None:
                    out, at = rewritten
                    self.changed = True
                    continue
                out[at] = replace(node, body=self.block(node.body))
            at += 1
        return tuple(out)

    def scan(self, block: list, at: int) -> Optional[tuple]:
        """``(the block rewritten, where to go on)`` where the loop at ``at`` is a running product
        or sum of an array's rows (module docstring); else None."""
        found = self.match(block, at)
        return None if found is None else self.rewrite(block, at, found)

    def match(self, block: list, at: int) -> Optional[_Scan]:
        """The scan the loop at ``at`` computes, or None (module docstring)."""
        loop = block[at]
        counter = loop.counter()
        if not counter or len(loop.body) != 3 or len(loop.carries) != 2 or \
                not all(isinstance(s, Stmt) and not s.unpack for s in loop.body):
            return None
        carried = {c.targets[0]: c.prim.args[0] for c in loop.carries
                   if len(c.targets) == 1 and c.prim.op == "copy" and len(c.prim.args) == 1}
        rows = _rows(loop, counter)
        stepped = None if rows is None else self._step(loop.body[1], rows[1], carried)
        collected = None if stepped is None else \
            self._collection(loop.body[2], counter, loop.body[1].targets[0], carried)
        if collected is None or len(carried) != 2:
            return None
        (x, row), (scan, acc, acc_first), (kept, kept_new, appended) = rows, stepped, collected
        # shapes: x's rows (numbers for a 1-D x), acc broadcast to them
        x_shape = self.shape(x.name)
        acc_shape = self.shape(acc.name)
        if acc_shape is None:
            acc_shape = self._number(block[:at], acc.name)
        new_acc = loop.body[1].targets[0]
        if x_shape is None or not x_shape or x_shape[0] == 0 or acc_shape is None or \
                dims.broadcast(acc_shape, x_shape[1:]) != x_shape[1:] or \
                self.shape(new_acc) not in (None, x_shape[1:]):
            return None
        # names the loop binds are read nowhere after it; acc neither
        inside = all_reads(loop)
        if any(self.reads[n] != inside[n] for n in (counter, row, new_acc, kept_new, acc.name)):
            return None
        after = self._reader(block, at, kept)
        if after is None:
            return None
        return _Scan(x, acc, acc_first, loop.body[1], scan, kept, appended, *after)

    def _step(self, step: Stmt, row: str, carried: dict) -> Optional[tuple]:
        """``(the scan, acc, whether acc is the left operand)`` of ``acc_2 = acc * row`` (or
        ``row * acc``, or another operation with a scan), acc carried to acc_2; else None."""
        scan = self.table.scan(step.prim.op)
        if not scan or not isinstance(step.expr, (cst.BinaryOperation, cst.Call)) or \
                len(step.targets) != 1 or step.prim.kwargs or len(step.prim.args) != 2 or \
                Var(row) not in step.prim.args:
            return None
        acc_at = 1 - step.prim.args.index(Var(row))
        acc = step.prim.args[acc_at]
        if not isinstance(acc, Var) or carried.get(acc.name) != Var(step.targets[0]):
            return None
        return scan, acc, acc_at == 0

    @staticmethod
    def _number(before: list, name: str) -> Optional[tuple]:
        """``()`` where the last statement of ``before`` binding ``name`` binds a number literal
        (``acc = 1.0``), else None."""
        for node in reversed(before):
            if isinstance(node, Stmt) and name in node.targets:
                value = node.prim.args[0] if node.prim.op == "copy" and len(node.prim.args) == 1 else None
                return () if isinstance(value, Const) and not value.reads and \
                    isinstance(value.node, (cst.Integer, cst.Float)) else None
        return None

    def _identity(self, before: list, name: str, op: str) -> bool:
        """Whether the last statement of ``before`` binding ``name`` binds ``op``'s exact
        identity (RuleTable.exact_identity): ``np.ones(shape)`` (float64: the cast to the scan's
        type, PROMOTED, already holds it) or the literal 1 or 1.0."""
        maker = self.table.exact_identity(op)
        for node in reversed(before):
            if isinstance(node, Stmt) and name in node.targets:
                prim, call = node.prim, node.expr
                if maker and prim.op == "nondiff" and prim.callee == maker:  # read from its code
                    return len(node.targets) == 1 and isinstance(call, cst.Call) and \
                        len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star
                value = prim.args[0] if prim.op == "copy" and len(prim.args) == 1 else None
                return bool(maker) and isinstance(value, Const) and not value.reads and \
                    value.code in ("1", "1.0")
        return False

    def rewrite(self, block: list, at: int, found: _Scan) -> tuple:
        """``(the block with the loop at ``at`` written as the scan, where to go on)``."""
        x, acc, step = found.x, found.acc, found.step
        origin, location = block[at].origin, step.prim.location
        cast = Var(self.fresh(f"{x.name}_as"))
        scanned = Var(self.fresh(f"{x.name}_{found.scan.rsplit('.', 1)[-1]}"))
        axis = Const(cst.Integer("0"), "0", (), "", False)
        made = [
            Stmt((cast.name,), _call(cst.Attribute(cst.Name("s2s"), cst.Name(PROMOTED)), (x, acc)),
                 Prim(_PROMOTED_OP, (x, acc), location=location), origin),
            Stmt((scanned.name,), _call(cst.parse_expression(spelled(found.scan)), (cast,), (("axis", axis),)),
                 Prim(found.scan, (cast,), (("axis", axis),), location=location), origin),
        ]
        operands = (acc, scanned) if found.acc_first else (scanned, acc)
        if self._identity(block[:at], acc.name, step.prim.op):  # 1.0 * cumprod: cumprod itself
            expr, prim = cst.Name(scanned.name), Prim("copy", (scanned,), location=location)
        else:
            expr, prim = _binary(step.expr, operands), replace(step.prim, args=operands)
        out = list(block)
        kept = found.kept
        if found.appended:
            # the stacking statement's target is the prefix itself; the empty list goes
            made.append(Stmt(found.reader.targets, expr, prim, origin))
            del out[found.reader_at]
            out[at:at + 1] = made
            start = next(i for i, n in enumerate(out[:at]) if isinstance(n, Stmt) and n.targets == (kept,))
            del out[start]
            return out, at - 1 + len(made)
        prefix = self.fresh(f"{acc.name}_prefix")
        written = self.fresh(f"{kept}_rows")
        whole = Const(cst.parse_expression("(slice(None, None, None),)"), "(slice(None, None, None),)",
                      (kept,), "[:]", True)
        made.append(Stmt((prefix,), expr, prim, origin))
        made.append(Stmt((written,), _call(cst.Attribute(cst.Name("s2s"), cst.Name(SETITEM)),
                                           (Var(kept), whole, Var(prefix))),
                         Prim(_SETITEM_OP, (Var(kept), whole, Var(prefix)), location=location), origin))
        out[found.reader_at] = reading(found.reader, {kept: written})
        out[at:at + 1] = made
        return out, at + len(made)

    def _collection(self, stmt: Stmt, counter: str, new_acc: str, carried: dict) -> Optional[tuple]:
        """``(the collecting name, its new version, whether it is a list appended to)`` of the
        loop's last statement, else None."""
        prim = stmt.prim
        if len(stmt.targets) != 1 or prim.kwargs:
            return None
        kept_new = stmt.targets[0]
        if prim.op == _APPEND and len(prim.args) == 2 and prim.args[1] == Var(new_acc):
            kept = prim.args[0]
            appended = True
        elif self.table.index_write(prim.op) and len(prim.args) == 3 and prim.args[2] == Var(new_acc) \
                and isinstance(prim.args[1], Const) and _name_of(prim.args[1].node) == counter:
            kept = prim.args[0]
            appended = False
        else:
            return None
        if not isinstance(kept, Var) or carried.get(kept.name) != Var(kept_new):
            return None
        return kept.name, kept_new, appended

    def _reader(self, block: list, at: int, kept: str) -> Optional[tuple]:
        """``(position, statement)`` of the one statement after the loop, in its block, that reads
        ``kept`` (the stacking of a list; any statement reading an array by name), where nothing
        else does; else None."""
        loop = block[at]
        appended = loop.body[2].prim.op == _APPEND
        readers = [(i, n) for i, n in enumerate(block) if i > at and all_reads(n)[kept]]
        if len(readers) != 1 or self.reads[kept] != all_reads(loop)[kept] + all_reads(readers[0][1])[kept]:
            return None
        i, reader = readers[0]
        if not isinstance(reader, Stmt) or reader.unpack or len(reader.targets) != 1:
            return None
        if appended:
            made = [n for n in block[:at] if isinstance(n, Stmt) and n.targets == (kept,)]
            empty = len(made) == 1 and made[0].prim.op == "copy" and len(made[0].prim.args) == 1 and \
                isinstance(made[0].prim.args[0], Const) and isinstance(made[0].prim.args[0].node, cst.List) \
                and not made[0].prim.args[0].node.elements
            if not empty or not self.table.stacks(reader.prim.op) or reader.prim.args != (Var(kept),) or \
                    reader.prim.kwargs or all_reads(loop)[kept] != 1:
                return None
            return i, reader
        if any(isinstance(op, Const) and kept in op.reads for op in reader.prim.args) or \
                any(isinstance(op, Const) and kept in op.reads for _, op in reader.prim.kwargs) or \
                self.shape(kept) is None or self.shape(kept) != self.shape(loop.body[0].prim.args[0].name):
            return None
        return i, reader


def _operand_node(op) -> cst.BaseExpression:
    return cst.Name(op.name) if isinstance(op, Var) else op.node


def _call(func: cst.BaseExpression, args: tuple, kwargs: tuple = ()) -> cst.Call:
    return cst.Call(func, [cst.Arg(_operand_node(a)) for a in args] +
                    [cst.Arg(_operand_node(v), keyword=cst.Name(k)) for k, v in kwargs])


def _binary(expr: cst.BaseExpression, operands: tuple) -> cst.BaseExpression:
    """The step's expression (``acc * x_t``, ``np.multiply(acc, x_t)``) of other operands."""
    left, right = (_operand_node(o) for o in operands)
    if isinstance(expr, cst.BinaryOperation):
        return expr.with_changes(left=left, right=right, lpar=[], rpar=[])
    return expr.with_changes(args=[cst.Arg(left), cst.Arg(right)], lpar=[], rpar=[])


def running_scans(fn: CoreFunction, shapes: Mapping[str, tuple], table: RuleTable,
                  scalars: frozenset = frozenset()) -> CoreFunction:
    """``fn`` with each loop that computes a running product or sum of an array's rows written as
    one scan (module docstring); ``fn`` itself where there is none. ``shapes``: names -> known
    shapes; ``scalars``: names known to hold one number."""
    rewriter = _Rewriter(fn, shapes, table, scalars)
    body = rewriter.block(fn.body)
    if not rewriter.changed:
        return fn
    return replace(fn, body=body, reserved=fn.reserved | frozenset(rewriter.added))

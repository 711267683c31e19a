"""Loops whose steps only add to sums, written as all their steps at once: CoreFunction + the
shapes its values are known to have + the rule table -> CoreFunction.

A loop ``for t in range(N)`` (or over the rows of arrays of one length, ``for x in X``, ``zip``,
``enumerate``) whose steps read rows ``x[t]`` and tails ``x[t + k:]`` of arrays made before it,
compute from them with elementwise operations, matrix products with a value made before it,
sums and means, and carry nothing but
sums (``acc = acc + e``, ``acc - e``, ``e + acc``, or a chain of them, ``acc + e1 - e2``)
computes ``acc0 + (e_0 + ... + e_{N-1})``. Written batched, each step-local value holds every
step's value on a new first axis, and the loop is one pass of numpy calls, forward and backward,
instead of N steps of Python:

- a row ``x[t]`` is ``x[:N]`` (``x`` itself where its length is N);
- a tail ``x[t + k:]`` is ``tails(x, k, padded)`` (runtime/rows.py): row ``t`` is ``x[k:]`` with
  the entries before the step's tail (``padded = np.tri(N, len(x) - k, k=-1, dtype=bool)``) replaced by the
  last row ``x[-1]``, which every step's tail holds: a padded entry computes what the step's last
  entry computes, so none raises or overflows where the loop's values do not; none reaches the
  result (a sum over the tail's axis sums the step's entries only, ``np.where(padded, 0, v)``),
  so the fill carries no derivative;
- an elementwise operation reads its batched operands with axes inserted after the first where
  their steps' ranks are less than the result's (``v[:, None]``), so they broadcast as one step's
  do; values made before the loop broadcast as they are, where a batched operand has the
  result's shape (else a value made before would be held once per step: the loop stays); a value
  computed in a step from neither rows nor tails is computed once, before;
- a matrix product of a batched operand on the left (its steps vectors or matrices) and a vector
  or matrix is the same product (``x[:N] @ w``), and so is ``@`` of a matrix and a batched
  operand whose steps are matrices;
- a sum (a mean, not over a tail's axis) over axes of a step's value is over those axes, one
  further on; ``acc = acc + e`` is
  ``acc + np.sum(e, axis=0)`` after the steps.

The rewrite holds where the code is made for a call's shapes (``Options.shapes``) and: the loop
counts with ``range(N)``, its body only statements of those kinds, every step value's shape known
(a tail's length of the form ``L - t``, one tail axis a value), each row read there and every
step's tail 1 long or more (the counter's bounds), the loop running once or more (or not at
all, where no sum's first step changes its shape and no value is computed once before), nothing
after the loop reading a name it binds but the sums, which plain statements of its block read
(renamed to the sums' new names; the function's result too) and nothing binds again, and each
sum's running value read in a step by its next step only. Anything else keeps the loop. The
values are the loop's up to the order of the sums' additions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable, Mapping, Optional

import libcst as cst

from .. import dims
from ..read.names import name_nodes
from ..rules.helpers.rows import TAILS
from ..rules.table import RuleTable
from .ir import (SUBSCRIPT, Const, CoreFunction, If, Loop, Prim, RangeHeader, Stmt, Var, all_reads,
                 defined_names, operand_reads, reads_counter)
from .known_shapes import KnownShapes, reading, renamed, spelled

_COPY = "copy"
_TAILS_OP = "s2sgrad.runtime." + TAILS  # the rule table's name of the helper
_COUNTER = "counter"  # the tag of a loop counter's symbol in a dims.Linear (analyze/integers.py)


class _Refused(Exception):
    """The loop has no batched form here (it stays a loop)."""


@dataclass(frozen=True)
class _Batched:
    """A step-local value held batched: its steps' rank, and the step axis that is a tail (its
    length ``L - t``: ``tail`` that dim) or None."""

    rank: int
    tail_axis: Optional[int] = None
    tail: object = None


def _name(node) -> Optional[str]:
    return node.value if isinstance(node, cst.Name) else None


_WHOLE = ("slice(None, None, None)", ":")


def _index(items: tuple, reads: tuple = ()) -> Const:
    """A basic index as an operand, from its items as ``(code, as written)`` pairs
    (``(_WHOLE, ("None", "None"))``: ``[:, None]``)."""
    code = items[0][0] if len(items) == 1 and not items[0][0].startswith("slice") else \
        f"({', '.join(c for c, _ in items)},)"
    return Const(cst.parse_expression(code), code, reads, f"[{', '.join(w for _, w in items)}]", True)


def _subscript(base: str, index: Const) -> cst.BaseExpression:
    return cst.parse_expression(f"{base}{index.brackets}")


def _tail_start(index: Const, counter: str) -> Optional[int]:
    """``k`` of an index ``t + k:`` (``(slice(t + k, None, None),)``, ``k`` 0 or more), else None."""
    node = index.node
    if isinstance(node, cst.Tuple) and len(node.elements) == 1:
        node = node.elements[0].value
    if not (isinstance(node, cst.Call) and _name(node.func) == "slice" and len(node.args) == 3 and
            all(a.keyword is None and not a.star for a in node.args) and
            all(_name(a.value) == "None" for a in node.args[1:])):
        return None
    start = node.args[0].value
    if _name(start) == counter:
        return 0
    if isinstance(start, cst.BinaryOperation) and isinstance(start.operator, cst.Add):
        for left, right in ((start.left, start.right), (start.right, start.left)):
            if _name(left) == counter and isinstance(right, cst.Integer) and right.evaluated_value >= 0:
                return right.evaluated_value
    return None


class _Loop:
    """One loop's batched form, statement by statement (``made``), or _Refused."""

    def __init__(self, rewriter: "_Rewriter", loop: Loop) -> None:
        self.rw, self.loop = rewriter, loop
        self.counter = loop.counter()
        self.count = _step_count(loop, rewriter)
        self.inside = defined_names(loop.body) | {self.counter}
        self.batched: dict = {}  # name -> _Batched
        self.made: list = []
        self.expanded: dict = {}  # (name, rank) -> the name of it with axes inserted
        self.pads: dict = {}  # a tail's length (its dim) -> the name of its padding mask
        self.tails: list = []  # the tails' dims (their steps' lengths hold each 1 or more)
        self.rows: list = []  # the arrays read by row (their lengths hold N or more)
        self.needs_a_step = False  # whether no step would differ (a sum's shape, a value hoisted)
        self.carried: set = set()  # the sums' names carried into a step
        self.sums: dict = {}  # the names a step of a sum binds -> their shapes (None: not known)

    # ----- shapes -----------------------------------------------------------------------------

    def shape(self, name: str) -> tuple:
        found = self.rw.shape(name)
        if found is None:
            raise _Refused(name)
        return found

    def tail_axes(self, shape: tuple) -> list:
        """The axes of a step's shape whose lengths change with the counter (``L - t``, ``L`` of
        labels and a literal); _Refused for a length changing otherwise, or two such axes."""
        counter = (_COUNTER, self.counter)
        found = []
        for axis, dim in enumerate(shape):
            form = dims.linear(dim)
            others = {s for s in form.symbols() if not dims.is_label(s)} if form is not None else set()
            if not others:
                continue
            if others != {counter} or dict(form.terms)[counter] != -1:
                raise _Refused("a length that is not L - t")
            found.append(axis)
        if len(found) > 1:
            raise _Refused("two tail axes")
        return found

    def operand(self, op) -> object:
        """``op`` checked: a Var made before the loop, a batched one, or a Const reading neither
        the counter nor a name the loop binds."""
        if isinstance(op, Var):
            if op.name in self.inside and op.name not in self.batched:
                raise _Refused(op.name)
            return op
        if isinstance(op, Const) and not (set(op.reads) & self.inside):
            return op
        raise _Refused("an operand")

    # ----- statements --------------------------------------------------------------------------

    def emit(self, targets: tuple, expr: cst.BaseExpression, prim: Prim, origin) -> str:
        self.made.append(Stmt(targets, expr, prim, origin))
        return targets[0]

    def statement(self, stmt: Stmt) -> None:
        if not isinstance(stmt, Stmt) or len(stmt.targets) != 1 or stmt.unpack or \
                (stmt.implicit and stmt.prim.op != SUBSCRIPT):
            raise _Refused("a statement")
        prim, target = stmt.prim, stmt.targets[0]
        rule = self.rw.table.get(prim.op)
        if prim.op == SUBSCRIPT and len(prim.args) == 2 and not prim.kwargs:
            self.indexed(stmt)
        elif rule is not None and rule.result_shape in (dims.matmul, dims.dot) and not prim.kwargs and \
                len(prim.args) == 2 and prim.called_value is None:
            self.product(stmt, rule.result_shape is dims.matmul)
        elif prim.op == _COPY and len(prim.args) == 1 and isinstance(prim.args[0], Var) and \
                prim.args[0].name in self.batched:
            self.made.append(stmt)
            self.batched[target] = self.batched[prim.args[0].name]
        elif prim.op in self.rw.table.elementwise and not prim.kwargs and prim.called_value is None:
            self.elementwise(stmt)
        elif rule is not None and rule.reduction in ("sum", "mean"):  # (the function: a method's too)
            self.summed(stmt, rule.reduction)
        else:
            raise _Refused(prim.op)

    def product(self, stmt: Stmt, matmul: bool) -> None:
        """A matrix product (``@``, ``np.matmul``, ``np.dot``, ``.dot``) of a batched operand and
        a value made before the loop: the same product where it gives every step's (the batched
        operand on the left, its steps vectors or matrices, the other a vector or a matrix; on the
        right, for ``@`` only, its steps matrices)."""
        a, b = (self.operand(op) for op in stmt.prim.args)
        if self.invariant(stmt):
            return
        rank = self.shape(stmt.targets[0])
        left = self.batched.get(a.name) if isinstance(a, Var) else None
        right = self.batched.get(b.name) if isinstance(b, Var) else None
        if (left is None) == (right is None) or (left or right).tail_axis is not None:
            raise _Refused("a product")
        fixed = b if left is not None else a  # the operand made before the loop
        other = self.rw.shape(fixed.name) if isinstance(fixed, Var) else None
        if other is None or not 1 <= len(other) <= 2:
            raise _Refused("a product")
        if left is not None and left.rank not in (1, 2) or right is not None and (right.rank != 2 or not matmul):
            raise _Refused("a product")
        self.made.append(stmt)
        self.batched[stmt.targets[0]] = _Batched(len(rank))

    def invariant(self, stmt: Stmt) -> bool:
        """Whether ``stmt`` reads nothing the loop binds (then it stays as written, before)."""
        reads = [n for op in stmt.prim.args + tuple(v for _, v in stmt.prim.kwargs) for n in operand_reads(op)]
        if set(reads) & self.inside:
            return False
        self.made.append(stmt)
        self.inside -= set(stmt.targets)  # computed once, before: a value made before the steps
        self.needs_a_step = True  # (where the loop runs no step, it is not computed at all)
        return True

    def indexed(self, stmt: Stmt) -> None:
        x, index = stmt.prim.args
        target = stmt.targets[0]
        if not isinstance(x, Var) or x.name in self.inside or not isinstance(index, Const):
            raise _Refused("an index")
        if self.invariant(stmt):
            return
        x_shape = self.shape(x.name)
        if not x_shape or self.tail_axes(x_shape):
            raise _Refused("an index")
        origin, location = stmt.origin, stmt.prim.location
        if reads_counter(index, self.counter):  # a row: x[:N]
            self.rows.append(x_shape[0])
            count = cst.Module([]).code_for_node(self.count)
            if self.rw.count_is(self.loop, x_shape[0]):
                self.emit((target,), cst.Name(x.name), Prim(_COPY, (x,), location=location), origin)
            else:
                rows = _index(((f"slice(None, {count}, None)", f":{count}"),), self.rw.names_in(self.count))
                self.emit((target,), _subscript(x.name, rows), Prim(SUBSCRIPT, (x, rows), location=location),
                          origin)
            self.batched[target] = _Batched(len(x_shape) - 1)
            return
        start = _tail_start(index, self.counter)
        if start is None or not index.basic:
            raise _Refused("an index")
        step_shape = self.shape(target)
        if self.tail_axes(step_shape) != [0]:
            raise _Refused("a tail")
        self.tails.append(step_shape[0])
        pad = self.padding(step_shape[0], 0, 1, origin, (x.name, start))
        first = _literal(str(start))
        self.emit((target,), cst.parse_expression(f"s2s.{TAILS}({x.name}, {start}, {pad})"),
                  Prim(_TAILS_OP, (x, first, Var(pad)), location=location), origin)
        self.batched[target] = _Batched(len(x_shape), 0, step_shape[0])

    def padding(self, tail, axis: int, rank: int, origin, made_from: tuple = ()) -> str:
        """The name of the padding mask of the tails of length ``tail`` (True before each step's
        tail), its tail axis at ``axis`` of a step's value of ``rank``; made at the first such
        tail, ``made_from``: ``(x, start)`` of ``x[t + start:]`` (``np.tri(N, len(x) - start,
        k=-1, dtype=bool)``)."""
        if tail not in self.pads:
            if not made_from:
                raise _Refused("a tail")
            x, start = made_from
            pad = self.pads[tail] = self.rw.fresh("padded")
            count = cst.Module([]).code_for_node(self.count)
            length = f"len({x}) - {start}" if start else f"len({x})"
            maker = self.rw.table.lower_triangle()
            self.emit((pad,), cst.parse_expression(f"{spelled(maker)}({count}, {length}, k=-1, dtype=bool)"),
                      Prim("nondiff", (), location=None, callee=maker), origin)
        pad = self.pads[tail]
        if axis == 0 and rank == 1:
            return pad
        key = (pad, axis, rank)
        if key not in self.expanded:
            index = _index((_WHOLE,) + (("None", "None"),) * axis + (_WHOLE,) +
                           (("None", "None"),) * (rank - 1 - axis))
            name = self.rw.fresh(f"{pad}_at_{axis}_of_{rank}")
            self.expanded[key] = self.emit((name,), _subscript(pad, index), Prim(SUBSCRIPT, (Var(pad), index)),
                                           origin)
        return self.expanded[key]

    def widened(self, name: str, rank: int, origin) -> str:
        """``name`` (batched) with axes inserted after the first so its steps have ``rank``."""
        have = self.batched[name].rank
        if have == rank:
            return name
        key = (name, rank)
        if key not in self.expanded:
            index = _index((_WHOLE,) + (("None", "None"),) * (rank - have))
            self.expanded[key] = self.emit((self.rw.fresh(f"{name}_wide"),), _subscript(name, index),
                                           Prim(SUBSCRIPT, (Var(name), index)), origin)
        return self.expanded[key]

    def elementwise(self, stmt: Stmt) -> None:
        prim = stmt.prim
        for op in prim.args:
            self.operand(op)
        if self.invariant(stmt):
            return
        target = stmt.targets[0]
        shape = self.shape(target)
        tails = self.tail_axes(shape)
        names = {}
        for op in prim.args:
            if isinstance(op, Var) and op.name in self.batched:
                have = self.batched[op.name]
                if have.rank > len(shape):
                    raise _Refused("a rank")
                if have.tail_axis is not None and (
                        tails != [have.tail_axis + len(shape) - have.rank] or have.tail != shape[tails[0]]):
                    raise _Refused("a tail moved")
                names[op.name] = self.widened(op.name, len(shape), stmt.origin)
            elif isinstance(op, Var):
                own = self.rw.shape(op.name)
                if own is None or len(own) > len(shape):
                    raise _Refused("an invariant's shape")
        if tails and not any(isinstance(op, Var) and self.batched.get(op.name, _Batched(0)).tail_axis
                             is not None for op in prim.args):
            raise _Refused("a tail")
        if not any(isinstance(op, Var) and op.name in self.batched and self.rw.shape(op.name) == shape
                   for op in prim.args):
            # the result larger than every batched operand: values made before the loop would be
            # held once per step (``W * x[t]`` of a large W), where the loop holds them once
            raise _Refused("a value made before the loop broadcast to each step")
        self.made.append(reading(stmt, {k: v for k, v in names.items() if k != v}))
        self.batched[target] = _Batched(len(shape), tails[0] if tails else None,
                                        shape[tails[0]] if tails else None)

    def summed(self, stmt: Stmt, reduction: str) -> None:
        prim = stmt.prim
        kwargs = dict(prim.kwargs)
        if len(prim.args) > 2 or set(kwargs) - {"axis"} or (len(prim.args) == 2 and kwargs):
            raise _Refused("a sum's arguments")
        a = prim.args[0]
        axis = prim.args[1] if len(prim.args) == 2 else kwargs.get("axis")
        if not isinstance(a, Var) or a.name not in self.batched:
            self.operand(a)
            if self.invariant(stmt):
                return
            raise _Refused("a sum")
        have = self.batched[a.name]
        if axis is None or (isinstance(axis, Const) and _name(axis.node) == "None"):
            axes = list(range(have.rank))
        elif isinstance(axis, Const) and isinstance(axis.node, (cst.Integer, cst.UnaryOperation)):
            try:
                value = int(axis.code)
            except ValueError:
                raise _Refused("an axis") from None
            if not -have.rank <= value < have.rank:
                raise _Refused("an axis")
            axes = [value % have.rank]
        else:
            raise _Refused("an axis")
        target = stmt.targets[0]
        shape = self.shape(target)
        if len(shape) != have.rank - len(axes):
            raise _Refused("a sum's rank")
        operand = a.name
        if have.tail_axis in axes and reduction != "sum":
            raise _Refused("a mean over a tail")  # (each step's count differs)
        if have.tail_axis in axes:  # the padded entries add nothing
            pad = self.padding(have.tail, have.tail_axis, have.rank, stmt.origin)
            operand = self.emit((self.rw.fresh(f"{a.name}_steps"),),
                                cst.parse_expression(f"{spelled(self.rw.where)}({pad}, 0, {a.name})"),
                                Prim(self.rw.where, (Var(pad), _literal("0"), a), location=prim.location), stmt.origin)
        batched_axes = tuple(x + 1 for x in axes)
        code = str(batched_axes[0]) if len(batched_axes) == 1 else repr(batched_axes)
        axis_op = Const(cst.parse_expression(code), code, ())
        function = self.rw.table.function(reduction=reduction)
        self.emit((target,), cst.parse_expression(f"{spelled(function)}({operand}, axis={code})"),
                  Prim(function, (Var(operand),), (("axis", axis_op),), location=prim.location), stmt.origin)
        tail_axis = None
        if have.tail_axis is not None and have.tail_axis not in axes:
            tail_axis = have.tail_axis - sum(1 for x in axes if x < have.tail_axis)
        self.batched[target] = _Batched(len(shape), tail_axis, have.tail if tail_axis is not None else None)

    def accumulated(self, stmt: Stmt, chain: str) -> None:
        """A step of a sum: ``acc_2 = chain + e`` (``chain - e``, ``e + chain``; ``chain`` the
        sum carried in, or the one name an earlier step of it gave: ``acc + e1 - e2``) is
        ``acc_2 = chain + np.sum(e, axis=0)``."""
        prim = stmt.prim
        rule = self.rw.table.get(prim.op)
        if rule is None or not rule.elementwise or rule.algebra not in ("add", "sub") or prim.kwargs or \
                len(prim.args) != 2 or Var(chain) not in prim.args or prim.args[0] == prim.args[1] or \
                len(stmt.targets) != 1:
            raise _Refused("a carried value")
        at = prim.args.index(Var(chain))
        e = prim.args[1 - at]
        if (at == 1 and rule.algebra == "sub") or not isinstance(e, Var) or e.name not in self.batched or \
                self.batched[e.name].tail_axis is not None:
            raise _Refused("a carried value")
        before = self.rw.shape(chain) if chain in self.carried else self.sums.get(chain)
        after = None if before is None else dims.broadcast(before, self.shape(e.name))
        if after is None or after != before:
            self.needs_a_step = True  # the first step changes acc's shape: a loop of no steps differs
        self.sums[stmt.targets[0]] = after
        total = self.emit((self.rw.fresh(f"{e.name}_total"),),
                          cst.parse_expression(f"{spelled(self.rw.sum)}({e.name}, axis=0)"),
                          Prim(self.rw.sum, (e,), (("axis", _literal("0")),), location=prim.location), stmt.origin)
        self.made.append(reading(stmt, {e.name: total}))


def _step_count(loop: Loop, rewriter: "_Rewriter") -> Optional[cst.BaseExpression]:
    """The loop's count of steps as code: ``N`` of ``range(N)``; ``len(x)`` of a loop over the
    rows of arrays of one known length (``for row in x``, ``zip(x, y)``, ``enumerate``); else
    None."""
    if not loop.counter():
        return None
    if isinstance(loop.kind, RangeHeader):
        return loop.kind.stop_only()
    sequences = loop.kind.sequences
    if not all(isinstance(op, Var) for op in sequences):
        return None
    lengths = {(rewriter.shape(op.name) or (None,))[0] for op in sequences}
    if len(lengths) != 1 or None in lengths or any(not rewriter.shape(op.name) for op in sequences):
        return None
    return cst.parse_expression(f"len({sequences[0].name})")


def _literal(code: str) -> Const:
    return Const(cst.parse_expression(code), code, ())


class _Rewriter(KnownShapes):
    def __init__(self, fn: CoreFunction, shapes: Mapping[str, tuple], table: RuleTable,
                 scalars: frozenset, bounds: Callable[[], Mapping]) -> None:
        super().__init__(fn, shapes, table, scalars)
        self.bounds_of = bounds
        self.where, self.sum = table.function(algebra="select"), table.function(reduction="sum")
        self._bounds: Optional[Mapping] = None

    @staticmethod
    def names_in(node: cst.BaseExpression) -> tuple:
        """The names an integer expression (a loop's count) reads, builtins aside."""
        return tuple(dict.fromkeys(n.value for n in name_nodes(node, reads_only=True) if n.value != "len"))

    def bounds(self, symbol):
        if self._bounds is None:
            self._bounds = self.bounds_of()
        return self._bounds.get(symbol[1]) if isinstance(symbol, tuple) and symbol[0] == _COUNTER else None

    def count_is(self, loop: Loop, dim) -> bool:
        """Whether the loop's step count is certainly ``dim``."""
        found = self.bounds((_COUNTER, loop.counter()))
        form = dims.linear(dim)
        return found is not None and form is not None and found[0] == dims.Linear() and \
            found[1] + dims.Linear((), 1) == form

    def proven(self, loop: Loop, batch: _Loop) -> bool:
        """Whether the loop runs once or more (or not at all, where no sum's first step changes its
        shape and no value is computed once before), each row read is there and each step's tail
        is 1 long or more."""
        found = self.bounds((_COUNTER, loop.counter()))
        if found is None or found[0] != dims.Linear():
            return False
        count = found[1] + dims.Linear((), 1)
        least = dims.least(count)
        if least is None or least < (1 if batch.needs_a_step else 0):
            return False  # (no steps: each sum is what it was, its shape too, where none changes
            # it, and nothing else is computed)
        for length in batch.rows:
            if not dims.nonnegative(dims.linear(length) - count):
                return False
        return all(dims.nonnegative(dims.linear(tail) - dims.Linear((), 1), self.bounds) for tail in batch.tails)

    def batched(self, block: list, at: int, top: bool) -> Optional[list]:
        """The statements computing what the loop at ``at`` does, batched, or None."""
        loop = block[at]
        if _step_count(loop, self) is None:
            return None
        carried = {}
        for carry in loop.carries:
            if len(carry.targets) != 1 or carry.prim.op != _COPY or len(carry.prim.args) != 1 or \
                    not isinstance(carry.prim.args[0], Var):
                return None
            carried[carry.prim.args[0].name] = carry.targets[0]  # acc_2 -> acc
        if not carried:
            return None
        batch = _Loop(self, loop)
        inside = all_reads(loop)
        batch.carried = set(carried.values())
        try:
            for stmt in loop.body:
                chain = [n for n in (batch.carried | set(batch.sums)) if isinstance(stmt, Stmt) and
                         any(op == Var(n) for op in stmt.prim.args)]
                if chain:  # a step of a sum: its running value read once, by the next step
                    if len(chain) != 1 or inside[chain[0]] != 1:
                        return None
                    batch.accumulated(stmt, chain[0])
                else:
                    batch.statement(stmt)
        except _Refused:
            return None
        if not set(carried) <= set(batch.sums):
            return None  # a carried value that is no sum
        # nothing after the loop reads what it binds, but the sums (renamed)
        for name in batch.inside:
            if name not in carried.values() and self.reads[name] != inside[name]:
                return None
        # the sums are read after the loop by plain statements of its block only (each read then
        # renamed to the sum's new name), and not bound again there
        after = block[at + 1:]
        if set(carried.values()) & defined_names(tuple(after)):
            return None
        result_reads = Counter(operand_reads(self.fn.result)) if top else Counter()
        for acc in carried.values():
            plain = 0
            for node in after:
                if not all_reads(node)[acc]:
                    continue
                if not isinstance(node, Stmt) or any(isinstance(op, Const) and acc in op.reads
                                                     for op in node.prim.args + tuple(v for _, v in node.prim.kwargs)):
                    return None
                plain += all_reads(node)[acc]
            if self.reads[acc] != inside[acc] + plain + result_reads[acc]:
                return None
        if not self.proven(loop, batch):
            return None
        return batch.made

    def block(self, body: tuple, top: bool = False) -> tuple:
        """``body`` with its loops of independent sums batched, nested blocks too (a loop's sums
        renamed where the rest of the block reads them; ``top``: the function's body, whose
        result reads them too)."""
        block = list(body)
        at = 0
        while at < len(block):
            node = block[at]
            made = self.batched(block, at, top) if isinstance(node, Loop) else None
            if made is None:
                if isinstance(node, If):
                    block[at] = replace(node, body=self.block(node.body), orelse=self.block(node.orelse))
                elif isinstance(node, Loop):
                    block[at] = replace(node, body=self.block(node.body))
                at += 1
                continue
            names = {c.targets[0]: c.prim.args[0].name for c in node.carries}  # acc -> acc_2
            rest = [reading(s, names) if isinstance(s, Stmt) else s for s in block[at + 1:]]
            if top:
                self.result = renamed(self.result, names)
            block[at:] = made + rest
            at += len(made)
            self.changed = True
        return tuple(block)

    def rewrite(self) -> CoreFunction:
        self.result, self.changed = self.fn.result, False
        body = self.block(self.fn.body, top=True)
        if not self.changed:
            return self.fn
        return replace(self.fn, body=body, result=self.result, reserved=self.fn.reserved | frozenset(self.added))


def batched_loops(fn: CoreFunction, shapes: Mapping[str, tuple], table: RuleTable,
                  scalars: frozenset, bounds: Callable[[], Mapping]) -> CoreFunction:
    """``fn`` with each loop of its body whose steps are independent sums written batched (module
    docstring); ``fn`` itself where there is none. ``shapes``: names -> known shapes; ``scalars``:
    names known to hold one number; ``bounds()``: loop counter -> ``(low, high)`` (dims.Linear)."""
    return _Rewriter(fn, shapes, table, scalars, bounds).rewrite()

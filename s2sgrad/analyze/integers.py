"""Integers known at transform time: a CoreFunction's integer expressions (libcst nodes) ->
the dims.Linear each certainly equals, in code made for a call's shapes: int literals, lengths
read off arrays of known shapes (``x.shape[0]``, ``len(x)``), loop counters between their loops'
bounds, and their sums, differences and literal multiples, through names bound once (the
lowering's arithmetic steps too); and the lengths known to be 0 or more where a statement runs
(those the body's makers made before it). The shape classes (shapes.py) read them for slices'
bounds and arrays' lengths, and give them the shapes of names.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Optional

import libcst as cst
import libcst.matchers as m

from ..lower.ir import Const, CoreFunction, If, Loop, RangeHeader, SequenceHeader, Stmt, Var, \
    all_reads, definition_counts, flatten, read_counts
from .. import dims
from ..rules.table import RuleTable

PENDING = "/pending"  # a value not known yet (the shape analysis's fixed point goes on)
COUNTER = "counter"  # the tag of a loop counter's symbol in a Linear: ``(COUNTER, name)``


class Integers:
    """The integers of ``fn``: ``counters`` (names holding only the ints loops count with),
    ``in_loop`` (statement -> whether a loop holds it), ``single`` (name -> the one statement
    binding it), ``shape_of`` (an operand's shape: dims, None, PENDING) and ``named_shape`` (a
    name's, a global array's too), from the shape analysis."""

    def __init__(self, fn: CoreFunction, table: RuleTable, counters: frozenset, in_loop: dict,
                 single: dict, shape_of: Callable, named_shape: Callable) -> None:
        self.table, self.integers, self.in_loop, self.single = table, counters, in_loop, single
        self.shape_of, self.named_shape = shape_of, named_shape
        loops = [loop for loop in _loops(fn.body) if isinstance(loop.kind, (RangeHeader, SequenceHeader))]
        names = [loop.kind.counter if isinstance(loop.kind, RangeHeader) else loop.kind.index for loop in loops]
        self.counting = {name: loop for name, loop in zip(names, loops)
                         if name in counters and names.count(name) == 1}
        self.steps = step_names(fn)
        # statement -> how many of the body's makers (made_lengths) run before it
        self.makers: list = []
        self.position: dict = {}
        for node in fn.body:
            for stmt in flatten((node,)):
                self.position[stmt] = len(self.makers)
            if isinstance(node, Stmt) and made_lengths(node, table):
                self.makers.append(node)

    def integer(self, node, seen: frozenset = frozenset()):
        """The Linear (dims.py) the integer expression ``node`` (a libcst node) certainly
        equals: an int literal, ``x.shape[k]`` or ``len(x)`` of an array of known shape (a
        length certainly 0 or more), a loop's counter (the symbol ``(COUNTER, name)``:
        counter_bounds), sums, differences and products by a literal of those, a name bound
        once to one; None where not known, PENDING where not known yet."""
        if isinstance(node, cst.Integer):
            return dims.Linear((), node.evaluated_value)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            found = self.integer(node.expression, seen)
            return found if found is None or found is PENDING else found.times(-1)
        if isinstance(node, cst.BinaryOperation) and \
                isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply)):
            left, right = self.integer(node.left, seen), self.integer(node.right, seen)
            if left is None or right is None:
                return None
            if left is PENDING or right is PENDING:
                return PENDING
            if isinstance(node.operator, cst.Add):
                return left + right
            if isinstance(node.operator, cst.Subtract):
                return left - right
            if not left.terms or not right.terms:  # a literal multiple
                return right.times(left.constant) if not left.terms else left.times(right.constant)
            return None
        if isinstance(node, cst.Name):
            if node.value in self.integers:
                return dims.Linear.symbol((COUNTER, node.value))
            stmt = self.single.get(node.value)
            if stmt is None or node.value in seen:
                return None
            found = self.bound_integer(stmt, seen | {node.value})
            if isinstance(found, dims.Linear) and self.in_loop[stmt] and \
                    not self.of_its_step(node.value, found.symbols()):
                return None  # a later step may read the value an earlier one bound
            return found
        if m.matches(node, m.Subscript(value=m.Attribute(value=m.Name(), attr=m.Name("shape")),
                                       slice=[m.SubscriptElement(m.Index())])):
            at = literal_int(node.slice[0].slice.value)
            shape = self.named_shape(node.value.value.value)
        elif m.matches(node, m.Call(func=m.Name("len"), args=[m.Arg(m.Name(), keyword=None, star="")])):
            at, shape = 0, self.named_shape(node.args[0].value.value)
        else:
            return None
        if shape is PENDING:
            return PENDING
        if shape is None or at is None or not -len(shape) <= at < len(shape):
            return None
        dim = shape[at]
        return dims.linear(dim) if dim is not dims.UNKNOWN and dims.nonnegative(dim) else None

    def bound_integer(self, stmt: Stmt, seen: frozenset):
        """integer of what ``stmt`` binds its one target to: its code (a call without a
        derivative: ``len(x)``), or a sum, difference, product or copy of integers (the lowering
        writes ``m = len(x) - K + 1`` as such steps)."""
        prim = stmt.prim
        if prim.op == "nondiff":
            return None if stmt.expr is None else self.integer(stmt.expr, seen)
        operator = _INTEGER_OPERATORS.get(prim.op, False)
        if operator is False or prim.kwargs or len(prim.args) != (1 if prim.op == "copy" else 2) or \
                not all(isinstance(a, (Var, Const)) for a in prim.args):
            return None
        nodes = [cst.Name(a.name) if isinstance(a, Var) else a.node for a in prim.args]
        if len(nodes) == 1:
            return self.integer(nodes[0], seen)
        return self.integer(cst.BinaryOperation(nodes[0], operator(), nodes[1]), seen)

    def length(self, node, nonnegative: bool = False):
        """The dim (dims.py) of the length the integer expression ``node`` gives an array made
        with it (a maker raises for a negative one); ``nonnegative``: only a length certainly 0
        or more (``reshape`` takes -1 for a length to find). None where not known, PENDING
        where not known yet."""
        found = self.integer(node)
        if found is None or found is PENDING:
            return found
        if nonnegative and not dims.nonnegative(found):
            return None
        return dims.length_of(found)

    def facts_before(self, stmt: Stmt):
        """The lengths known to be 0 or more where ``stmt`` runs: those an array made by a
        statement of the function's body before the one holding ``stmt`` was made with (a
        maker raises for a negative length: ``m = n - K + 1; y = np.zeros(m)``); PENDING
        where one is not known yet."""
        found = []
        for maker in self.makers[:self.position.get(stmt, 0)]:
            for node in made_lengths(maker, self.table) or ():
                length = self.integer(node)
                if length is PENDING:
                    return PENDING
                if length is not None and length.terms:
                    found.append(length)
        return tuple(found)

    def counter_bounds(self, symbol):
        """``(low, high)``: the Linears of labels a loop counter (``(COUNTER, name)``) lies
        between in the loop that counts with it (the one loop binding it: ``range(stop)``,
        ``range(start, stop[, step > 0])``, the index of a loop over sequences of known
        lengths); None where not known, PENDING where not known yet."""
        loop = self.counting.get(symbol[1]) if isinstance(symbol, tuple) and symbol[0] == COUNTER else None
        if loop is None:
            return None
        if isinstance(loop.kind, SequenceHeader):
            shapes = [self.shape_of(op) for op in loop.kind.sequences]
            if PENDING in shapes:
                return PENDING
            first = next((s[0] for s in shapes if s and s[0] is not dims.UNKNOWN and dims.nonnegative(s[0])), None)
            return None if first is None else (dims.Linear(), dims.linear(first) - dims.Linear((), 1))
        args = loop.kind.args
        if len(args) == 3 and not (isinstance(args[2], cst.Integer) and args[2].evaluated_value > 0):
            return None
        ends = [self.integer(a) for a in args[:2]]
        if PENDING in ends:
            return PENDING
        if None in ends:
            return None
        low, stop = (dims.Linear(), ends[0]) if len(ends) == 1 else ends
        return low, stop - dims.Linear((), 1)

    def of_its_step(self, name: str, symbols) -> bool:
        """Whether ``name``, bound in a loop to a value (an integer, an array's length) of
        ``symbols``, holds it for the counters' values wherever it is read: every symbol is a
        label or the counter of a loop holding the one statement binding ``name``, which every
        read of it follows in the same step (step_names)."""
        loops = self.steps.get(name)
        for symbol in symbols:
            if dims.is_label(symbol):
                continue
            if loops is None or not (isinstance(symbol, tuple) and symbol[0] == COUNTER):
                return False
            counting = self.counting.get(symbol[1])
            if counting is None or not any(loop is counting for loop in loops):
                return False
        return True

    def lengths(self, nodes: list, nonnegative: bool = False):
        """The shape whose lengths are ``nodes`` (libcst nodes: length); None where one is not
        known, PENDING where one is not known yet."""
        found = tuple(self.length(node, nonnegative) for node in nodes)
        if PENDING in found:
            return PENDING
        return None if None in found else found


# the primitives of integer arithmetic the lowering writes, as the operators integer() reads
_INTEGER_OPERATORS = {"operator.add": cst.Add, "operator.sub": cst.Subtract, "operator.mul": cst.Multiply,
                      "copy": None}


def made_lengths(stmt: Stmt, table: RuleTable) -> Optional[list]:
    """The length expressions (libcst nodes) of an array a maker call makes (``np.zeros(n)``,
    ``np.ones((n, m))``, ``np.eye(n)``: the table's makes_shape and makes_square), else None."""
    prim, call = stmt.prim, stmt.expr
    if prim.op != "nondiff" or not prim.callee or not isinstance(call, cst.Call) or \
            any(a.star for a in call.args) or not call.args or call.args[0].keyword is not None:
        return None
    if table.makes_shape(prim.callee):  # (``np.zeros(x.shape)``: shapes._shape_source)
        if any(a.keyword is not None and a.keyword.value == "shape" for a in call.args):
            return None
        node = call.args[0].value
        return [e.value for e in node.elements] if isinstance(node, (cst.Tuple, cst.List)) else [node]
    if table.makes_square(prim.callee):
        positional = [a.value for a in call.args if a.keyword is None]
        named = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if len(positional) > 2 or (len(positional) == 2 and "M" in named):
            return None
        second = positional[1] if len(positional) == 2 else named.get("M")
        return [positional[0], positional[0] if second is None or is_none(second) else second]
    return None


def step_names(fn: CoreFunction) -> dict:
    """Name -> the loops (outermost first) holding the one statement binding it, for each name
    bound by one statement of a block in a loop (its body, or an arm of a branch in it) and read
    only after that statement in the same block (its later statements, nested blocks too, and a
    loop body's carries): every read sees the value bound in the same step of those loops, while
    every counter of them holds the value it held then."""
    blocks: list = []  # (statements, carries, enclosing loops)

    def visit(body: tuple, loops: tuple) -> None:
        for node in body:
            if isinstance(node, If):
                if loops:
                    blocks.extend([(node.body, (), loops), (node.orelse, (), loops)])
                visit(node.body, loops)
                visit(node.orelse, loops)
            elif isinstance(node, Loop):
                blocks.append((node.body, node.carries, loops + (node,)))
                visit(node.body, loops + (node,))

    visit(fn.body, ())
    reads, counts = read_counts(fn), definition_counts(fn.body)
    found: dict = {}
    for body, carries, loops in blocks:
        after: Counter = Counter()
        for node in carries:
            after.update(all_reads(node))
        for node in reversed(body):
            if isinstance(node, Stmt):
                for target in node.targets:
                    if counts.get(target) == 1 and after[target] == reads[target]:
                        found[target] = loops
            after.update(all_reads(node))
    return found


def _loops(body: tuple) -> list:
    """Every loop in ``body``, nested ones too, outer first."""
    found: list = []
    for node in body:
        if isinstance(node, Loop):
            found.append(node)
            found += _loops(node.body)
        elif isinstance(node, If):
            found += _loops(node.body) + _loops(node.orelse)
    return found


def literal_int(node) -> Optional[int]:
    """The value of an integer literal node (negative too), else None."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and \
            isinstance(node.expression, cst.Integer):
        return -node.expression.evaluated_value
    return node.evaluated_value if isinstance(node, cst.Integer) else None


def is_none(node) -> bool:
    """Whether ``node`` is the name ``None``."""
    return isinstance(node, cst.Name) and node.value == "None"

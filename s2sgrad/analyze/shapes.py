"""Shape classes: CoreFunction (and the shapes its parameters and global arrays are known to
have) -> name -> shape class: two names of one class hold arrays of one shape whenever they are
read, so an elementwise operand of its output's class needs no unbroadcasting, and a sum back to
a known shape names its axes (summed_axes).
"""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst
import libcst.matchers as m

from ..lower.ir import (
    Const,
    CoreFunction,
    If,
    Loop,
    RangeHeader,
    Seq,
    SequenceHeader,
    Stmt,
    SUBSCRIPT,
    Var,
    definition_counts,
    flatten,
    operand_reads,
    prim_operands,
)
from .. import dims
from ..rules.table import VARARGS, RuleTable
from .integers import COUNTER, PENDING as _PENDING, Integers, is_none as _is_none, literal_int, made_lengths
from .scalars import is_scalar_literal, known_scalars


# ----- shape classes ---------------------------------------------------------------------------

TOP = "?"  # a shape nothing else is known to share
SCALAR = "()"  # a scalar: broadcasting it against any shape gives that shape
_BOTTOM = None  # not known yet (the fixed point starts optimistic)

_KEPT = "/kept"  # suffix: a keepdims reduction of the class before it
_ORDER = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
_NO_SHAPE = "/no shape"  # no known shape gives the result's


class _Within:
    """A name's class where some definitions give it one number and the others arrays of the
    class ``of`` (``y = 0.0`` before a loop whose steps bind ``y = y + e``, ``e`` of a known
    shape): its shape broadcasts to ``of``'s, so an elementwise result with an operand of ``of``
    is of ``of``. No class of its own: two such names need not hold arrays of one shape."""

    __slots__ = ("of",)

    def __init__(self, of) -> None:
        self.of = of

    def __eq__(self, other) -> bool:
        return isinstance(other, _Within) and other.of == self.of

    def __hash__(self) -> int:
        return hash(("within", self.of))


class ShapeClasses(dict):
    """shape_classes' name -> class, and ``widened``: name -> the class ``C`` of the names
    whose definitions each give an array of ``C`` or a number literal (``y = 0.0`` before a
    loop whose steps bind ``y = y + e``). A number literal takes no adjoint, so the adjoint of
    such a name read by an elementwise statement whose result is of ``C`` needs no sum back to
    the name's shape: where the name holds the literal, nothing reads its adjoint."""

    def __init__(self, classes: dict, widened: dict) -> None:
        super().__init__(classes)
        self.widened = widened


def _join(old, new):
    """The class of a name two definitions give ``old`` and ``new``."""
    if old is _BOTTOM or old == new:
        return new
    pair = {old, new}
    if SCALAR in pair:
        other = (pair - {SCALAR}).pop()
        if isinstance(other, _Within):
            return other
        if other not in (TOP, _BOTTOM) and not (isinstance(other, str) and other.endswith(_KEPT)):
            return _Within(other)
    within = [c for c in pair if isinstance(c, _Within)]
    if len(within) == 1 and (pair - {within[0]}).pop() == within[0].of:
        return within[0]
    return TOP


def _is_true(op) -> bool:
    return isinstance(op, Const) and isinstance(op.node, cst.Name) and op.node.value == "True"


def _loop_depths(body: tuple, in_loop: bool, out: dict) -> None:
    for node in body:
        if isinstance(node, Stmt):
            out[node] = in_loop
        elif isinstance(node, If):
            _loop_depths(node.body, in_loop, out)
            _loop_depths(node.orelse, in_loop, out)
        elif isinstance(node, Loop):
            _loop_depths(node.body, True, out)
            _loop_depths(node.carries, True, out)


def _slice_class(base: str, index) -> Optional[str]:
    """The class of ``base[a:-b]`` (a >= 0, b > 0, either left out): its first axis is
    ``max(0, n - a - b)`` long and the others are ``base``'s, so it is named by ``a + b``."""
    bounds = _trimming_slice(index)
    if bounds is None:
        return None
    start, trimmed = bounds
    return f"{base}[{start + trimmed}:]"


def _trimming_slice(index) -> Optional[tuple]:
    """``(a, b)`` for an index ``[a:-b]`` (literals, ``a >= 0`` and ``b > 0``, either left out
    as 0, no step), else None."""
    node = index.node if isinstance(index, Const) and index.brackets else None
    if not (isinstance(node, cst.Tuple) and len(node.elements) == 1) or \
            not m.matches(node.elements[0].value, m.Call(func=m.Name("slice"), args=[m.Arg()] * 3)):
        return None
    lower, upper, step = (arg.value for arg in node.elements[0].value.args)
    if not _is_none(step):
        return None
    start = 0 if _is_none(lower) else lower.evaluated_value if isinstance(lower, cst.Integer) else None
    stop = 0 if _is_none(upper) else upper.expression.evaluated_value if \
        m.matches(upper, m.UnaryOperation(operator=m.Minus(), expression=m.Integer())) else None
    if start is None or stop is None or (stop == 0 and not _is_none(upper)):
        return None
    return start, stop


def shape_classes(fn: CoreFunction, table: RuleTable, scalars: frozenset,
                  shapes: Optional[dict] = None) -> dict:
    """Name -> shape class: two names of one class (other than ``TOP``) certainly hold arrays of
    the same shape whenever they are read, so an elementwise operand whose class is the output's
    needs no unbroadcasting. Classes are rooted in the parameters' shapes on entry and in the
    results of statements that run at most once per call (outside loops, defined once); the
    rest follows from elementwise operations, plain copies, ``x[a:-b]`` slices and keepdims
    reductions (which broadcast back to their operand's class), to a fixed
    point that starts optimistic (sound like constant propagation: every definition of a name
    must give its class).

    ``shapes``: parameters' shapes the code is made for (dims.py's tuples of dims;
    specialize.shape_signature): a shape all of whose dims are known is a class of its own
    (two names of one such shape hold arrays of equal shapes), rooted in those parameters and
    followed through the rules' result shapes (Rule.result_shape), elementwise broadcasting,
    indexing by an integer and reductions."""
    return _Classes(fn, table, scalars, shapes or {}).solve()


class _Classes:
    """The fixed point of shape_classes: ``env`` maps names to classes found so far."""

    def __init__(self, fn: CoreFunction, table: RuleTable, scalars: frozenset, shapes: dict) -> None:
        self.fn, self.table, self.scalars = fn, table, scalars
        self.in_loop: dict = {}
        _loop_depths(fn.body, False, self.in_loop)
        self.defined = {t for stmt in self.in_loop for t in stmt.targets}
        self.counts = definition_counts(fn.body)
        self.params = {p.name for p in fn.params}
        self.env: dict = {name: (SCALAR if shapes.get(name) == () else shapes.get(name, f"<{name}>"))
                          for name in self.params}
        # the global arrays' (read as constants), but none named like any local name (its
        # class is the local's: the two are never confused)
        local = _local_names(fn.body) | self.params
        self.globals = {name: dims_ for name, dims_ in shapes.items() if name not in local}
        self.integers = set(counters(fn))
        self.single = {stmt.targets[0]: stmt for stmt in self.in_loop if len(stmt.targets) == 1
                       and self.counts.get(stmt.targets[0]) == 1 and stmt.targets[0] not in self.params}
        self.ints = Integers(fn, table, frozenset(self.integers), self.in_loop, self.single,
                             self.shape_of, self.named_shape)

    def solve(self) -> dict:
        changed = True
        while changed:
            changed = False
            for stmt in flatten(self.fn.body):
                if stmt.targets:
                    changed = self.update(stmt) or changed
        # A shape with a dim not known is no class: two such arrays may differ there.
        widened = {k: v.of for k, v in self.env.items() if isinstance(v, _Within) and self.widens(k, v.of)}
        found = {k: v for k, v in self.env.items() if v not in (TOP, _BOTTOM) and
                 not isinstance(v, _Within) and (not isinstance(v, tuple) or dims.known(v))}
        # a global array read by its name (no local has it): its shape
        found.update((name, SCALAR if shape == () else shape) for name, shape in self.globals.items()
                     if dims.known(shape))
        return ShapeClasses(found, {k: v for k, v in widened.items()
                                    if not isinstance(v, tuple) or dims.known(v)})

    def widens(self, name: str, of) -> bool:
        """Whether every definition of ``name`` gives an array of class ``of`` or is a copy of
        a number literal (ShapeClasses.widened)."""
        for stmt in flatten(self.fn.body):
            if name not in stmt.targets:
                continue
            if len(stmt.targets) != 1:
                return False
            prim = stmt.prim
            if prim.op == "copy" and len(prim.args) == 1 and isinstance(prim.args[0], Const) and \
                    not prim.args[0].reads and is_scalar_literal(prim.args[0].node):
                continue
            if self.evaluate(stmt, TOP) != of:
                return False
        return name not in self.params

    def update(self, stmt: Stmt) -> bool:
        """Join what ``stmt`` gives into its targets' classes; whether one changed."""
        name = stmt.targets[0]
        once = not self.in_loop[stmt] and self.counts.get(name, 0) == 1 and \
            name not in self.params and len(stmt.targets) == 1
        if len(stmt.targets) == 1:
            found = (self.evaluate(stmt, f"<{name}>" if once else TOP),)
        else:
            found = self.outputs_classes(stmt)
        changed = False
        for target, each in (zip(stmt.targets, found) if _BOTTOM not in found else ()):
            shape = each.of if isinstance(each, _Within) else each
            if isinstance(shape, tuple) and not self.ints.of_its_step(target, dims.symbols(shape)):
                each = TOP  # a length of a counter, read where the counter may have moved on
            old = self.env.get(target, _BOTTOM)
            new = _join(old, each)
            if new != old:
                self.env[target] = new
                changed = True
        return changed

    def outputs_classes(self, stmt: Stmt) -> tuple:
        """The classes of a statement's several targets: unpacked from a rule's several outputs
        whose shapes its result_shape gives (``sign, logdet = np.linalg.slogdet(S)``), each TOP
        where not known (_BOTTOM where an operand's is not known yet)."""
        rule = self.table.get(stmt.prim.op)
        unknown = (TOP,) * len(stmt.targets)
        if not stmt.unpack or not getattr(rule, "outputs", ()) or rule.result_shape is None or \
                stmt.prim.kwargs or any(t in self.scalars for t in stmt.targets):
            return unknown
        shapes = tuple(self.shape_of(a) if isinstance(a, (Var, Const)) else None for a in stmt.prim.args)
        if _PENDING in shapes:
            return (_BOTTOM,) * len(stmt.targets)
        found = rule.result_shape(shapes)
        if found is None or len(found) != len(stmt.targets):
            return unknown
        return tuple(SCALAR if shape == () else shape for shape in found)

    def operand_class(self, op):
        found = self.bounded_class(op)
        return TOP if isinstance(found, _Within) else found

    def bounded_class(self, op):
        """operand_class, but a _Within where a name's shape is only known to broadcast to a
        class's."""
        if isinstance(op, Var):
            if op.name in self.scalars or op.name in self.integers:  # (a loop's counter: an int)
                return SCALAR
            if op.name in self.env:
                return self.env[op.name]
            if op.name in self.params or op.name in self.defined:
                return _BOTTOM
            return TOP  # a loop target or a name bound elsewhere
        if isinstance(op, Const):
            if not op.reads and (is_scalar_literal(op.node) or (
                    isinstance(op.node, cst.Name) and op.node.value in ("None", "True", "False"))):
                return SCALAR
            if not op.reads and isinstance(op.node, cst.Name) and op.node.value in self.globals:
                found = self.globals[op.node.value]
                return SCALAR if found == () else found
        return TOP

    def evaluate(self, stmt: Stmt, own: str) -> Optional[str]:
        """The class of ``stmt``'s one target (``own``: its own class, when nothing else is
        known of it)."""
        prim = stmt.prim
        if stmt.targets[0] in self.scalars:
            return SCALAR
        if prim.op == "copy" and len(prim.args) == 1:
            return self.bounded_class(prim.args[0])
        if prim.op in self.table.elementwise:
            return self.elementwise_class(prim, own)
        shaped = self.result_shape(stmt)
        if shaped is not _NO_SHAPE:
            return shaped
        if getattr(self.table.get(prim.op), "reduction", "") and prim.args and \
                any(k == "keepdims" and _is_true(v) for k, v in prim.kwargs):
            base = self.operand_class(prim.args[0])
            if base is _BOTTOM or (isinstance(base, str) and base not in (TOP, SCALAR)):
                # The same rank with ones where reduced: it broadcasts to the base's shape.
                return _BOTTOM if base is _BOTTOM else base + _KEPT
        compared = self.compared_shape(stmt)
        if compared is not None:
            return compared
        made = self.made_shape(stmt)
        if made is _PENDING:
            return _BOTTOM
        if made is not None:
            return SCALAR if made == () else made
        kept = _shape_source(stmt, self.table)
        if kept is not None:
            return self.operand_class(kept)
        if self.table.index_write(prim.op) and len(prim.args) == 3 and not prim.kwargs and \
                self.keeps_length(*prim.args):
            return self.operand_class(prim.args[0])
        if prim.op == SUBSCRIPT and len(prim.args) == 2:
            base = self.operand_class(prim.args[0])
            if base is _BOTTOM:
                return _BOTTOM
            if isinstance(base, str) and base not in (TOP, SCALAR):  # (known shapes: result_shape)
                sliced = _slice_class(base, prim.args[1])
                if sliced is not None:
                    return sliced
        return own

    def keeps_length(self, base, index, value) -> bool:
        """Whether ``base[index] = value`` leaves ``base``'s shape as it was, were ``base`` a
        list too: one number written (a slice of a list gets it in each element), an index that
        is no slice (a literal, or a name holding one number), a value of the class of
        ``base[a:-b]``, or a base of a known shape (a numpy array)."""
        if self.operand_class(value) == SCALAR:
            return True
        if isinstance(index, Const) and not index.reads and "slice" not in index.code and \
                ":" not in index.code:
            return True
        if isinstance(index, Var) and index.name in self.scalars:
            return True
        base_class = self.operand_class(base)
        if isinstance(base_class, tuple):
            return True  # a known shape is a numpy array's: an index write keeps its shape
        if base_class in (TOP, SCALAR, _BOTTOM):
            return False
        sliced = _slice_class(base_class, index)
        return sliced is not None and self.operand_class(value) == sliced

    def shape_of(self, op):
        """``op``'s shape as dims.py writes it (``()`` for a scalar), None where not
        known, _PENDING where not known yet."""
        found = self.operand_class(op)
        if found is _BOTTOM:
            return _PENDING
        if isinstance(found, tuple):
            return found
        return () if found == SCALAR else None

    def result_shape(self, stmt: Stmt):
        """The class a known shape gives ``stmt``'s result (its rule's result shape, an index
        by integers, a reduction), _BOTTOM where an operand's is not known yet, else _NO_SHAPE."""
        prim = stmt.prim
        rule = self.table.get(prim.op)
        if getattr(rule, "result_lengths", ""):
            found = self.lengths_given(rule, prim)
            return _BOTTOM if found is _PENDING else _NO_SHAPE if found is None else \
                SCALAR if found == () else found
        if prim.op == SUBSCRIPT and len(prim.args) == 2:
            shapes = (self.shape_of(prim.args[0]),)
        elif _reduces_axis(rule) and prim.args:
            shapes = (self.shape_of(prim.args[0]),)
        elif getattr(rule, "result_shape", None) is not None and not prim.kwargs and not rule.outputs:
            # (several outputs held by one name: outputs_classes reads them unpacked only)
            shapes = tuple(self.shape_of(a) if isinstance(a, (Var, Const)) else
                           [self.shape_of(i) for i in a.items] if isinstance(a, Seq) and
                           rule.result_shape in dims.TAKES_ITEMS else None for a in prim.args)
        else:
            return _NO_SHAPE
        if any(shape is _PENDING or (isinstance(shape, list) and _PENDING in shape) for shape in shapes):
            return _BOTTOM
        if prim.op == SUBSCRIPT:
            facts = self.ints.facts_before(stmt)
            found = _PENDING if facts is _PENDING else \
                _indexed(shapes[0], prim.args[1], self.integers, self.ints.integer, self.ints.counter_bounds, facts)
            if found is _PENDING:
                return _BOTTOM
        elif _reduces_axis(rule):
            found = _reduced(shapes[0], prim)
        else:
            found = rule.result_shape(shapes)
            if found and found[0] is dims.UNKNOWN and getattr(rule, "rows_counted", ""):
                found = self.counted_rows(rule, prim, shapes, found)
                if found is _PENDING:
                    return _BOTTOM
        if found is None:
            return _NO_SHAPE
        return SCALAR if found == () else found

    def counted_rows(self, rule, prim, shapes: tuple, found: tuple):
        """``found`` with its first length the integer of the rule's ``rows_counted`` parameter
        (a loop's per-step products, ``rows_matmul(a, n, b)`` of runtime/rows.py: ``n`` rows where
        ``n`` is certainly no more than ``a``'s length, else as many as ``a`` has), else ``found``;
        _PENDING where the integer is not known yet."""
        at = next((i for i, p in enumerate(rule.params) if p.name == rule.rows_counted), None)
        count = prim.args[at] if at is not None and at < len(prim.args) else None
        if not isinstance(count, (Var, Const)) or not shapes[0] or shapes[0][0] is dims.UNKNOWN:
            return found
        length = self.ints.length(cst.Name(count.name) if isinstance(count, Var) else count.node,
                                  nonnegative=True)
        if length is _PENDING:
            return _PENDING
        rows = dims.linear(shapes[0][0])
        if length is None or rows is None or not dims.nonnegative(rows - dims.linear(length)):
            return found
        return (length,) + found[1:]

    def named_shape(self, name: str):
        """shape_of the value ``name`` names in the code (a local, else a global array's)."""
        if name in self.params or name in self.defined or name not in self.globals:
            return self.shape_of(Var(name))
        found = self.globals[name]
        return found if isinstance(found, tuple) else None

    def made_shape(self, stmt: Stmt):
        """The shape of an array made from lengths known (dims.py's tuple): ``np.zeros(n)``,
        ``np.ones((n, m))``, ``np.empty(x.shape)``, ``np.eye(n)``; None where it is no such
        call or a length is not known, _PENDING where not known yet."""
        items = made_lengths(stmt, self.table)
        return None if items is None else self.ints.lengths(items)

    def lengths_given(self, rule, prim):
        """The shape a call gives its result as the lengths in its argument for the rule's
        ``result_lengths`` parameter (``np.reshape(a, (n, 10))``, ``w.reshape(10, 10)``); None
        where one is not known, _PENDING where not known yet."""
        at = next((i for i, p in enumerate(rule.params) if p.name == rule.result_lengths), None)
        if at is None:
            return None
        if rule.params[at].kind == VARARGS:
            items = list(prim.args[at:])
        else:
            items = [prim.args[at]] if len(prim.args) > at else [v for k, v in prim.kwargs if k == rule.params[at].name]
        if len(items) == 1 and isinstance(items[0], Const) and isinstance(items[0].node, (cst.Tuple, cst.List)):
            nodes = [e.value for e in items[0].node.elements]
        elif items and all(isinstance(i, (Const, Var)) for i in items):
            nodes = [i.node if isinstance(i, Const) else cst.Name(i.name) for i in items]
        else:
            return None
        if any(isinstance(e, cst.StarredElement) for e in nodes):
            return None
        return self.ints.lengths(nodes, nonnegative=True)

    def compared_shape(self, stmt: Stmt):
        """The class of a comparison without a derivative (``a <= delta``) of names and numbers
        of known shapes: the shape they broadcast to (a boolean array, or one bool); _BOTTOM
        where an operand's is not known yet; None for anything else."""
        node = stmt.expr
        if stmt.prim.op != "nondiff" or not isinstance(node, cst.Comparison) or len(node.comparisons) != 1 \
                or not isinstance(node.comparisons[0].operator, _ORDER):
            return None
        shapes = []
        for side in (node.left, node.comparisons[0].comparator):
            if is_scalar_literal(side):
                shapes.append(())
                continue
            if not isinstance(side, cst.Name) or not (side.value in self.params or side.value in self.defined):
                return None
            found = self.operand_class(Var(side.value))
            if found is _BOTTOM:
                return _BOTTOM
            if found != SCALAR and not isinstance(found, tuple):
                return None
            shapes.append(() if found == SCALAR else found)
        found = dims.broadcast(*shapes)
        return None if found is None else SCALAR if found == () else found

    def elementwise_class(self, prim, own: str) -> Optional[str]:
        """The one class of the operands that are not scalars (a keepdims reduction of one of
        them broadcasts to it), the shape known shapes broadcast to, else ``own``."""
        classes = {self.bounded_class(o) for o in prim_operands(prim)}
        classes.discard(SCALAR)
        within = {c for c in classes if isinstance(c, _Within)}
        if within:  # a shape broadcasting to a class's, beside that class or numbers only
            bounded = next(iter(within))
            others = classes - within - {_BOTTOM}
            if len(within) > 1 or others - {bounded.of}:
                return own
            if others:
                return bounded.of
            if _BOTTOM in classes:
                return _BOTTOM
            return bounded if own == TOP else own
        if classes and all(isinstance(c, tuple) for c in classes):
            found = dims.broadcast(*classes)
            return own if found is None else SCALAR if found == () else found
        classes -= {c for c in classes
                    if isinstance(c, str) and c.endswith(_KEPT) and c[:-len(_KEPT)] in classes}
        if TOP in classes or len(classes - {_BOTTOM}) > 1:
            return own
        known = classes - {_BOTTOM}
        if known:
            return known.pop()
        return _BOTTOM if classes else SCALAR


def _reduces_axis(rule) -> bool:
    """Whether ``rule`` is a reduction ``f(a, axis=None, ..., keepdims=False)``."""
    return bool(getattr(rule, "reduction", "")) and len(rule.params) > 1 and \
        rule.params[1].name == "axis" and any(p.name == "keepdims" for p in rule.params)


def _local_names(body: tuple) -> set:
    """Every name the code binds (statements' and loop headers' targets, carries) or reads as a
    local (its operands' names)."""
    found: set = set()
    for node in body:
        if isinstance(node, Stmt):
            found.update(node.targets)
            found.update(_operand_reads(node.prim))
        elif isinstance(node, If):
            found |= {node.test} | _local_names(node.body) | _local_names(node.orelse)
        elif isinstance(node, Loop):
            found.update(node.targets)
            found |= _local_names(node.body) | _local_names(node.carries)
    return found


def _operand_reads(prim) -> set:
    """The local names ``prim``'s operands read (Vars, in sequences too, and a constant's reads)."""
    return {name for op in prim_operands(prim) for name in operand_reads(op)}


def counters(fn: CoreFunction) -> frozenset:
    """The names holding only the ints loops count with (``range``'s target, ``enumerate``'s
    index), bound by no statement and no parameter."""
    bound = {t for stmt in flatten(fn.body) for t in stmt.targets} | {p.name for p in fn.params}
    return frozenset(_counters(fn.body) - bound)


def _counters(body: tuple) -> set:
    """The names loops bind only to the integers they count (``range``'s target, ``enumerate``'s
    index): not a name another loop's header binds to something else."""
    counters: set = set()
    others: set = set()

    def visit(nodes: tuple) -> None:
        for node in nodes:
            if isinstance(node, Loop):
                counter = node.kind.counter if isinstance(node.kind, RangeHeader) else \
                    node.kind.index if isinstance(node.kind, SequenceHeader) else None
                counters.add(counter)
                others.update(t for t in node.targets if t != counter)
                visit(node.body)
            elif isinstance(node, If):
                visit(node.body)
                visit(node.orelse)

    visit(body)
    return counters - others - {None}


def _integer_index(node, integers: set) -> bool:
    """Whether an index node is one integer: a literal (negative too), or a name a loop counts with."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer) or (isinstance(node, cst.Name) and node.value in integers)


def _indexed(base: Optional[tuple], index, integers: set, integer: Callable, bounds: Callable,
             facts: tuple) -> Optional[tuple]:
    """``base[index]``'s shape where ``index`` is integers, slices and ``None`` (``[t]``,
    ``[:, 0]``, ``[:, None]``), one per leading axis but for the new axes ``None`` makes: a
    whole slice keeps its axis's dim, one whose bounds are integers known (``integer`` of a
    libcst node: its Linear; ``bounds``, ``facts``: dims.sliced's) has the length dims.sliced
    gives (``a[H:2 * H]``, ``x[k:k + m]``, ``u[-1:]``), another one's is not known; _PENDING
    where an integer or a counter's bounds are not known yet."""
    if base is None or not (isinstance(index, Const) and index.brackets):
        return None
    node = index.node
    trim = _trimming_slice(index)
    if trim is not None and base:
        return (base[0] if sum(trim) == 0 else dims.trimmed(base[0], sum(trim)),) + base[1:]
    items = [e.value for e in node.elements] if isinstance(node, cst.Tuple) else [node]
    if len([item for item in items if not _is_none(item)]) > len(base):
        return None
    kept, axis = [], 0
    for item in items:
        if _is_none(item):
            kept.append(1)
            continue
        dim, axis = base[axis], axis + 1
        if _integer_index(item, integers):
            continue
        if not m.matches(item, m.Call(func=m.Name("slice"), args=[m.Arg()] * 3)):
            return None
        lower, upper, step = (arg.value for arg in item.args)
        if not _is_none(step) or dim is dims.UNKNOWN:
            kept.append(dims.UNKNOWN)
            continue
        ends = [None if _is_none(end) else integer(end) for end in (lower, upper)]
        symbols = {s for end in ends if isinstance(end, dims.Linear) for s in end.symbols()}
        if _PENDING in ends or any(bounds(s) is _PENDING for s in symbols if not dims.is_label(s)):
            return _PENDING
        start, stop = (_from_end(dim, end) for end in ends)
        if (start is None and not _is_none(lower)) or (stop is None and not _is_none(upper)):
            kept.append(dims.UNKNOWN)
            continue
        kept.append(dims.sliced(dim, dims.Linear() if start is None else start, stop, bounds, facts))
    return tuple(kept) + base[axis:]


def part_shape(base, index, integers: frozenset) -> Optional[tuple]:
    """The shape of ``x[index]`` for an ``x`` of shape ``base`` (a tuple of dims), an index of
    literals, slices of literals and ``integers`` (names holding one int: loop counters); None
    where not known."""
    if not isinstance(base, tuple):
        return None

    def literal(node):
        value = literal_int(node)
        return None if value is None else dims.Linear((), value)

    found = _indexed(base, index, set(integers), literal, lambda symbol: None, ())
    return found if isinstance(found, tuple) and dims.known(found) else None


def _from_end(dim, end):
    """A slice's bound as a position from the axis's start: a negative literal ``-k`` counts
    from the end (``dim - k``, where that is certainly 0 or more); None where not known."""
    if isinstance(end, dims.Linear) and not end.terms and end.constant < 0:
        found = dims.linear(dim) - dims.Linear((), -end.constant)
        return found if dims.nonnegative(found) else None
    return end


def _reduced(base: Optional[tuple], prim) -> Optional[tuple]:
    """A reduction's shape: all axes (``np.sum(x)``) or one literal ``axis``, ``keepdims`` too."""
    kwargs = dict(prim.kwargs)
    if base is None or len(prim.args) > 2 or set(kwargs) - {"axis", "keepdims"}:
        return None
    axis = prim.args[1] if len(prim.args) == 2 else kwargs.get("axis")
    keep = kwargs.get("keepdims")
    if keep is not None and not (isinstance(keep, Const) and isinstance(keep.node, cst.Name) and
                                 keep.node.value in ("True", "False")):
        return None
    keepdims = keep is not None and keep.node.value == "True"
    if axis is None or (isinstance(axis, Const) and _is_none(axis.node)):
        return tuple(1 for _ in base) if keepdims else ()
    node = axis.node if isinstance(axis, Const) else None
    negative = isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
    number = node.expression if negative else node
    if not isinstance(number, cst.Integer):
        return None
    at = -number.evaluated_value if negative else number.evaluated_value
    if not -len(base) <= at < len(base):
        return None
    at %= len(base)
    return base[:at] + ((1,) if keepdims else ()) + base[at + 1:]


def _shape_source(stmt: Stmt, table: RuleTable):
    """The operand whose shape ``stmt``'s result has (a copy of it, an index write into it,
    ``np.zeros_like`` of it: the table's ``keeps_shape``; ``np.zeros(x.shape)``: ``makes_shape``),
    else None. A call without a derivative
    is read from its code, its first argument a name (``Var``)."""
    prim = stmt.prim
    if prim.op == "nondiff" and prim.callee and table.makes_shape(prim.callee) and \
            isinstance(stmt.expr, cst.Call) and stmt.expr.args and stmt.expr.args[0].keyword is None \
            and not stmt.expr.args[0].star and \
            m.matches(stmt.expr.args[0].value, m.Attribute(value=m.Name(), attr=m.Name("shape"))):
        return Var(stmt.expr.args[0].value.value.value)  # np.zeros(x.shape): x's shape
    if prim.op == "nondiff":
        call = stmt.expr
        if not (prim.callee and table.keeps_shape(prim.callee) and isinstance(call, cst.Call)):
            return None
        positional = [a for a in call.args if a.keyword is None]
        if any(a.star for a in call.args) or len(positional) > 4 or not positional or \
                call.args[0] is not positional[0] or not isinstance(positional[0].value, cst.Name) or \
                any(a.keyword is not None and a.keyword.value == "shape" for a in call.args):
            return None
        return Var(positional[0].value.value)
    if table.is_scan(prim.op) and prim.args and _int_literal(
            dict(prim.kwargs).get("axis", prim.args[1] if len(prim.args) > 1 else None)):
        return prim.args[0]  # np.cumsum(x, axis=0): x's shape (with no axis: flattened)
    if not table.keeps_shape(prim.op) or not prim.args or len(prim.args) > 4 or \
            any(k == "shape" for k, _ in prim.kwargs):
        return None
    return prim.args[0]


def _int_literal(op) -> bool:
    """Whether ``op`` is an int literal (``0``, ``-1``)."""
    if not isinstance(op, Const) or op.reads:
        return False
    node = op.node
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, cst.Integer)


def summed_axes(operand, output) -> Optional[tuple]:
    """``(leading, ones)``: the axes of an elementwise output (shape class ``output``) that its
    operand (class ``operand``) was broadcast along, both classes known shapes: the leading axes
    it lacks, then those where it has length 1 (summed keeping them); ``(None, ())`` for a 0-d
    operand of an output of a shape not known (every axis); None where not known (a trimmed dim
    of the operand, which may be 1, under another dim)."""
    operand = () if operand == SCALAR else operand
    if operand == () and not dims.known(output):
        return None, ()  # a number's: the sum of every axis, however many
    if not (dims.known(operand) and dims.known(output)) or len(operand) > len(output):
        return None
    extra = len(output) - len(operand)
    ones = []
    for i, (o, d) in enumerate(zip(operand, output[extra:])):
        if o == 1 and d != 1:
            ones.append(extra + i)
        elif o != d and not dims.not_one(o):
            return None
    return tuple(range(extra)), tuple(ones)


def shape_facts(fn: CoreFunction, table: RuleTable, numbers: frozenset = frozenset(),
                shapes: Optional[dict] = None) -> tuple:
    """(shape classes, known scalars) of ``fn``, by what the table says of its primitives;
    ``numbers``: parameters the code is made for calls passing numbers to (known_scalars);
    ``shapes``: the array parameters' shapes it is made for (shape_classes)."""
    scalars = known_scalars(fn, table, numbers)
    return shape_classes(fn, table, scalars, shapes), scalars


def counter_bounds(fn: CoreFunction, table: RuleTable, scalars: frozenset,
                   shapes: Optional[dict] = None) -> dict:
    """Loop counter -> ``(low, high)``, the Linears (dims.py) of labels it lies between in the one
    loop counting with it (Integers.counter_bounds), for the counters whose bounds are known."""
    classes = _Classes(fn, table, scalars, shapes or {})
    classes.solve()
    found = {}
    for name in classes.ints.counting:
        bounds = classes.ints.counter_bounds((COUNTER, name))
        if bounds is not None and bounds is not _PENDING:
            found[name] = bounds
    return found

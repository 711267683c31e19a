"""The core form: a function as straight-line statements, each one primitive with named operands.

Frozen dataclasses only. Operands are ``Var`` (an SSA name), ``Const`` (a literal, a global, or an
index expression kept verbatim; it may read locals, listed in ``reads``) or ``Seq`` (a tuple/list
display of operands, e.g. the argument of ``np.stack``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Optional, Union

import libcst as cst

from ..errors import Location
from ..read.names import name_nodes


@dataclass(frozen=True)
class Origin:
    """The user statement a core statement came from: its text (one line) and location."""

    text: str
    location: Location


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Const:
    node: cst.BaseExpression = field(compare=False)
    code: str = ""
    reads: tuple = ()
    brackets: str = ""  # for an index: its subscript as written (``[1:, 0]``), "" otherwise
    basic: bool = False  # an index made only of integers, slices, None and ...: no fancy indexing


@dataclass(frozen=True)
class Seq:
    kind: str  # "list" or "tuple"
    items: tuple


Operand = Union[Var, Const, Seq]


# The primitives Python's own syntax lowers to: a subscript ``a[i]`` and a matrix product ``a @ b``
# (their rules, like every other, are in the rule table under these names).
SUBSCRIPT = "operator.getitem"
MATMUL = "operator.matmul"


def reads_counter(index, counter: str) -> bool:
    """Whether an index operand is the loop counter itself (``xs[t]``)."""
    node = index.node if isinstance(index, Const) and index.brackets else None
    return bool(counter) and isinstance(node, cst.Name) and node.value == counter


@dataclass(frozen=True)
class Prim:
    """One primitive application. ``op`` is a rule key (``numpy.tanh``, ``operator.mul``,
    ``ndarray.sum``), a user function (``user:<qualname>``) or ``nondiff`` (kept verbatim, no
    derivative). ``args``/``kwargs`` are operands as written at the call."""

    op: str
    args: tuple
    kwargs: tuple = ()  # ((name, Operand), ...)
    location: Optional[Location] = None
    callee: str = ""  # the call target as written (``predict``, ``np.tanh``), for user functions
    # A call of a value the function computed (``pb(ct)`` after ``out, pb = s2sgrad.vjp(f, x)``):
    # that value, an operand like the arguments (what it computes depends on what it captured).
    called_value: Optional[Any] = None


@dataclass(frozen=True)
class Stmt:
    """``targets = expr``: ``expr`` is the forward code (operands already renamed), ``prim`` its meaning."""

    targets: tuple
    expr: cst.BaseExpression = field(compare=False)
    prim: Prim
    origin: Origin
    unpack: bool = False
    implicit: bool = False  # bound by a loop header (``for i, row in enumerate(X)``): no forward line


@dataclass(frozen=True)
class If:
    """``if <test>: body else: orelse``. ``test`` names the (recorded) condition value; both
    branches end with copies to the join names of what they assign. ``saved`` names the variable
    that keeps the values a branch's backward sweep needs."""

    test: str
    body: tuple
    orelse: tuple
    saved: str
    origin: Origin


@dataclass(frozen=True)
class RangeHeader:
    """``for counter in range(...)``: ``args`` are range's arguments (nodes, as written)."""

    counter: str
    args: tuple = field(compare=False)

    def stop_only(self) -> Optional[cst.BaseExpression]:
        """The count ``n`` of ``range(n)`` (the counter runs 0, 1, ..., n - 1), else None."""
        return self.args[0] if len(self.args) == 1 else None


@dataclass(frozen=True)
class SequenceHeader:
    """``for index, (items) in enumerate(zip(sequences))``: a loop over sequences, the counter
    ``index`` running from 0, ``items[k]`` bound to ``sequences[k][index]``."""

    index: str
    items: tuple
    sequences: tuple  # operands


@dataclass(frozen=True)
class OtherHeader:
    """A while loop, or a for loop over values that carry no derivative (kept as written)."""


@dataclass(frozen=True)
class Loop:
    """A ``for`` or ``while`` loop. ``header`` is its forward header (a program.ForHeader or
    WhileHeader: ``for t in range(n):``);
    ``targets`` are the names the header binds each iteration; ``carries`` are the copies at the end
    of an iteration that hand new values of carried variables to the next one; ``tape`` records,
    per iteration, what the backward sweep needs."""

    header: Any  # program.ForHeader | program.WhileHeader
    targets: tuple
    body: tuple
    carries: tuple
    tape: str
    origin: Origin
    trips: str = ""  # counts iterations when nothing needs recording
    saved: str = ""  # keeps carried values from before the loop, restored after the backward loop
    kind: Any = field(default=OtherHeader(), compare=False)  # RangeHeader | SequenceHeader | OtherHeader

    def counter(self) -> str:
        """The name counting iterations 0, 1, ... by one (``range(n)``'s target, the index of
        a loop over sequences), or ""."""
        if isinstance(self.kind, RangeHeader) and self.kind.stop_only() is not None:
            return self.kind.counter
        return self.kind.index if isinstance(self.kind, SequenceHeader) else ""


@dataclass(frozen=True)
class Param:
    """A parameter of the user function, with its default as code (or None)."""

    name: str
    default: Optional[cst.BaseExpression] = field(default=None, compare=False)


@dataclass(frozen=True)
class CoreFunction:
    """A lowered function: parameters, statements in order, and the returned operand."""

    name: str
    qualname: str
    params: tuple
    body: tuple
    result: Operand
    result_origin: Origin
    reserved: frozenset  # every name the user function reads or writes
    globals_read: tuple  # free names read (module globals, closure values), sorted
    path: str
    module: str = ""
    lists: frozenset = frozenset()  # names known to hold Python lists (adjoints add per element)
    # (new name, updated name, Location) for each in-place update in the user's code (``+=``,
    # an index write, ``.append``), which the core form writes as a new value
    inplace: tuple = ()
    user_names: Mapping = field(default_factory=dict, compare=False)  # SSA name -> user's name


def operand_vars(op: Operand) -> tuple:
    """Names of the Vars inside an operand (Seq items included), in order."""
    if isinstance(op, Var):
        return (op.name,)
    if isinstance(op, Seq):
        out = []
        for item in op.items:
            out.extend(operand_vars(item))
        return tuple(out)
    return ()


def operand_reads(op: Operand) -> tuple:
    """Every local name an operand reads, including a Const's index reads."""
    if isinstance(op, Var):
        return (op.name,)
    if isinstance(op, Const):
        return op.reads
    out = []
    for item in op.items:
        out.extend(operand_reads(item))
    return tuple(out)


def operand_node(op: Operand) -> cst.BaseExpression:
    """An operand as code: a name, the constant's expression, or a list/tuple display."""
    if isinstance(op, Var):
        return cst.Name(op.name)
    if isinstance(op, Const):  # a tuple written without parentheses (`return 1.0, 2.0`) gets them
        if isinstance(op.node, cst.Tuple) and not op.node.lpar:
            return op.node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return op.node
    elements = [cst.Element(operand_node(i)) for i in op.items]
    if op.kind == "list":
        return cst.List(elements)
    if len(elements) == 1:
        return cst.Tuple([elements[0].with_changes(comma=cst.Comma())])
    return cst.Tuple(elements)


def prim_operands(prim: Prim) -> tuple:
    """The operands ``prim`` reads: its arguments, and the value it calls when it calls one."""
    called = () if prim.called_value is None else (prim.called_value,)
    return tuple(prim.args) + tuple(v for _, v in prim.kwargs) + called


def flatten(body: tuple) -> list:
    """Every simple statement of ``body``, nested blocks included, in source order."""
    out: list = []
    for stmt in body:
        if isinstance(stmt, Stmt):
            out.append(stmt)
        elif isinstance(stmt, If):
            out.extend(flatten(stmt.body))
            out.extend(flatten(stmt.orelse))
        elif isinstance(stmt, Loop):
            out.extend(flatten(stmt.body))
            out.extend(flatten(stmt.carries))
    return out


def blocks(body: tuple):
    """Each block of statements: ``body``, each branch's arms and each loop's body, nested ones
    too (not loops' carries)."""
    yield body
    for node in body:
        if isinstance(node, If):
            yield from blocks(node.body)
            yield from blocks(node.orelse)
        elif isinstance(node, Loop):
            yield from blocks(node.body)


def rewrite_statements(body: tuple, rewrite: Callable[[Stmt, tuple], tuple]) -> tuple:
    """``body`` with each simple statement replaced by the nodes ``rewrite(statement, its
    block)`` gives (``(statement,)`` keeps it), in branches' arms and loops' bodies too (not in
    loops' carries)."""
    out: list = []
    for node in body:
        if isinstance(node, If):
            out.append(replace(node, body=rewrite_statements(node.body, rewrite),
                               orelse=rewrite_statements(node.orelse, rewrite)))
        elif isinstance(node, Loop):
            out.append(replace(node, body=rewrite_statements(node.body, rewrite)))
        else:
            out.extend(rewrite(node, body))
    return tuple(out)


def defined_names(body: tuple) -> set:
    """Names assigned anywhere in ``body`` (nested blocks, loop targets, tapes included)."""
    names: set = set()
    for stmt in body:
        if isinstance(stmt, Stmt):
            names.update(stmt.targets)
        elif isinstance(stmt, If):
            names.add(stmt.saved)
            names |= defined_names(stmt.body) | defined_names(stmt.orelse)
        elif isinstance(stmt, Loop):
            names.update((stmt.tape, stmt.trips, stmt.saved))
            names.update(stmt.targets)
            names |= defined_names(stmt.body) | defined_names(stmt.carries)
    return names


def is_number(op, value) -> bool:
    """Whether ``op`` is the literal number ``value`` (``2`` and ``2.0`` alike)."""
    return isinstance(op, Const) and not op.reads and isinstance(op.node, (cst.Integer, cst.Float)) \
        and op.node.evaluated_value == value


def binding_counts(fn: "CoreFunction") -> dict:
    """How many places bind each name of ``fn``: its body's assignments (definition_counts) and
    its parameters."""
    counts = definition_counts(fn.body)
    for p in fn.params:
        counts[p.name] = counts.get(p.name, 0) + 1
    return counts


def definition_counts(body: tuple) -> dict:
    """How many places in ``body`` assign each name (nested blocks and loop targets included)."""
    counts: dict = {}

    def add(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    for stmt in body:
        if isinstance(stmt, Stmt):
            for t in stmt.targets:
                add(t)
        elif isinstance(stmt, If):
            for block in (stmt.body, stmt.orelse):
                for k, v in definition_counts(block).items():
                    counts[k] = counts.get(k, 0) + v
        elif isinstance(stmt, Loop):
            for t in stmt.targets:
                add(t)
            for block in (stmt.body, stmt.carries):
                for k, v in definition_counts(block).items():
                    counts[k] = counts.get(k, 0) + v
    return counts


def own_reads(node) -> list:
    """The names ``node`` itself reads (not its nested blocks'): a statement's operands (and a
    call without a derivative's code), a branch's test, a loop header's sequences, range's
    arguments and its iterable or test as written."""
    found: list = []
    if isinstance(node, Stmt):
        for op in prim_operands(node.prim):
            found.extend(operand_reads(op))
        if node.expr is not None and node.prim.op == "nondiff":
            found.extend(n.value for n in name_nodes(node.expr, reads_only=True))
    elif isinstance(node, If):
        found.append(node.test)
    elif isinstance(node, Loop):
        if isinstance(node.kind, SequenceHeader):
            for op in node.kind.sequences:
                found.extend(operand_reads(op))
        elif isinstance(node.kind, RangeHeader):
            for arg in node.kind.args:
                found.extend(n.value for n in name_nodes(arg, reads_only=True))
        for part in (getattr(node.header, "iter", None), getattr(node.header, "test", None)):
            if isinstance(part, cst.CSTNode):  # a for header's iterable, a while's test
                found.extend(n.value for n in name_nodes(part, reads_only=True))
    return found


def all_reads(node) -> Counter:
    """How many times ``node`` reads each name, its nested blocks (a branch's arms, a loop's
    body and carries) too."""
    found = Counter(own_reads(node))
    for block in ((node.body, node.orelse) if isinstance(node, If) else
                  (node.body, node.carries) if isinstance(node, Loop) else ()):
        for inner in block:
            found.update(all_reads(inner))
    return found


def read_counts(fn: CoreFunction) -> Counter:
    """How many times each name is read in ``fn``: by its statements, branch tests, loop
    headers (all_reads) and its result."""
    counts = Counter(operand_reads(fn.result))
    for node in fn.body:
        counts.update(all_reads(node))
    return counts

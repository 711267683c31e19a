"""The program IR of generated code: what the builders of both modes produce, what the passes
(fold, release, dead code) rewrite, and what codegen renders.

A block is a tuple of items:

- ``Comment(text)``: a provenance line (the source statement the code after it comes from);
- ``Simple(node)``: one simple statement, its libcst node: an assignment, an in-place update
  (``a += e``, ``a[i] += e``), a ``del``, or a call made for its effect (a tape push,
  ``tape.append(x)``);
- ``Nest(header, body)``: a compound statement; its header is typed (``ForHeader``,
  ``WhileHeader``, ``IfHeader``, ``ElseHeader``);
- ``Restore(names, saved)``: carried values put back after a backward loop.

Every item answers what it reads, what it binds and whether it is a plain ``name = ...``, from
its nodes; no pass looks at text. The builders write statements from the rule table's templates,
which are Python text: ``lift`` parses each line once into this IR. Rendering to source happens
only in ``render``.
"""

from __future__ import annotations

import functools
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional, Union

import libcst as cst
import libcst.matchers as m

from .read.names import name_nodes
from .read.walk import findall, walk


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def name_reads(node: Optional[cst.CSTNode]) -> Counter:
    """How often ``node`` reads each name (attribute fields and keyword names excluded)."""
    if node is None:
        return Counter()
    return Counter(n.value for n in name_nodes(node, reads_only=True))


def target_names(node: cst.CSTNode) -> frozenset:
    """The names an assignment or ``for`` target binds (not a subscript's or attribute's base)."""
    if isinstance(node, cst.Name):
        return frozenset((node.value,))
    if isinstance(node, (cst.Tuple, cst.List)):
        return frozenset().union(*(target_names(e.value) for e in node.elements))
    return frozenset()


def _bound_or_read(target: cst.CSTNode) -> Counter:
    """What an assignment target reads: nothing for names and tuples of names; the base and
    index of ``a[i] = ...``."""
    return Counter() if isinstance(target, (cst.Name, cst.Tuple, cst.List)) else name_reads(target)


# ----- items ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Comment:
    """``# text``: provenance, read by people only."""

    text: str
    reads = Counter()
    binds = frozenset()
    plain = False


@dataclass(frozen=True)
class Simple:
    """One simple statement (``cst.Assign``, ``cst.AugAssign``, ``cst.Del``, ``cst.Expr``,
    ``cst.Return``)."""

    node: cst.BaseSmallStatement = field(compare=False)
    text: str = ""  # its code, for equality and rendering (set from node when empty)

    def __post_init__(self) -> None:
        if not self.text:
            object.__setattr__(self, "text", _code(self.node))

    @functools.cached_property
    def reads(self) -> Counter:
        node = self.node
        if isinstance(node, cst.Assign):
            out = name_reads(node.value)
            for t in node.targets:
                out += _bound_or_read(t.target)
            return out
        if isinstance(node, cst.AugAssign):
            return name_reads(node.target) + name_reads(node.value)
        if isinstance(node, (cst.Expr, cst.Return)):
            return name_reads(node.value)
        return Counter()  # del reads nothing a pass needs to keep alive

    @functools.cached_property
    def binds(self) -> frozenset:
        node = self.node
        if isinstance(node, cst.Assign):
            return frozenset().union(*(target_names(t.target) for t in node.targets))
        if isinstance(node, cst.AugAssign):
            return target_names(node.target)
        return frozenset()

    @property
    def plain(self) -> bool:
        """``name = expr``: one target, a name."""
        node = self.node
        return isinstance(node, cst.Assign) and len(node.targets) == 1 and \
            isinstance(node.targets[0].target, cst.Name)

    @property
    def assigned(self) -> Optional[str]:
        """The name of a plain ``name = expr``, else None."""
        return self.node.targets[0].target.value if self.plain else None

    @property
    def update_base(self) -> frozenset:
        """The name an in-place update (``x += e``, ``x[i] += e``) writes into."""
        if not isinstance(self.node, cst.AugAssign):
            return frozenset()
        target = self.node.target
        while isinstance(target, (cst.Subscript, cst.Attribute)):
            target = target.value
        return frozenset((target.value,)) if isinstance(target, cst.Name) else frozenset()


@dataclass(frozen=True)
class ForHeader:
    """``for target in iter:``."""

    target: cst.BaseExpression = field(compare=False)
    iter: cst.BaseExpression = field(compare=False)

    @property
    def text(self) -> str:
        return f"for {_code(self.target)} in {_code(self.iter)}:"

    @property
    def reads(self) -> Counter:
        return name_reads(self.iter)

    @property
    def binds(self) -> frozenset:
        return target_names(self.target)


@dataclass(frozen=True)
class WhileHeader:
    """``while test:``."""

    test: cst.BaseExpression = field(compare=False)

    @property
    def text(self) -> str:
        return f"while {_code(self.test)}:"

    @property
    def reads(self) -> Counter:
        return name_reads(self.test)

    binds = frozenset()


@dataclass(frozen=True)
class IfHeader:
    """``if test:``."""

    test: cst.BaseExpression = field(compare=False)

    @property
    def text(self) -> str:
        return f"if {_code(self.test)}:"

    @property
    def reads(self) -> Counter:
        return name_reads(self.test)

    binds = frozenset()


@dataclass(frozen=True)
class ElseHeader:
    """``else:`` (the block continues the ``if`` before it)."""

    text = "else:"
    reads = Counter()
    binds = frozenset()


Header = Union[ForHeader, WhileHeader, IfHeader, ElseHeader]


@dataclass(frozen=True)
class Nest:
    """A compound statement: its typed header and the code inside it."""

    header: Header
    body: tuple

    @property
    def reads(self) -> Counter:
        return self.header.reads

    @property
    def binds(self) -> frozenset:
        return self.header.binds

    plain = False


@dataclass(frozen=True)
class Restore:
    """``a, b = loop1_saved``: carried values put back after a backward loop. The builder drops
    the names nothing later reads."""

    loop: object = field(compare=False)
    names: tuple = ()
    saved: str = ""

    @property
    def text(self) -> str:
        return f"{unpack_target(self.names)} = {self.saved}"

    @property
    def reads(self) -> Counter:
        return Counter({self.saved: 1})

    @property
    def binds(self) -> frozenset:
        return frozenset(self.names)

    plain = False


@dataclass(frozen=True)
class Verbatim:
    """A statement of the user's copied as written (a ``custom_gradient``'s grad_fn body: any
    statement, compound ones and nested defs included). Passes only ask what it reads."""

    node: cst.BaseStatement = field(compare=False)

    @property
    def reads(self) -> Counter:
        return name_reads(self.node)

    @property
    def binds(self) -> frozenset:
        found = findall(self.node, m.AssignTarget() | m.AugAssign() | m.For())
        names = frozenset().union(*(target_names(t.target) for t in found))
        return names | {d.name.value for d in findall(self.node, m.FunctionDef())}

    plain = False

    @property
    def lines(self) -> list:
        return textwrap.dedent(_code(self.node)).rstrip("\n").splitlines()


Item = Union[Comment, Simple, Nest, Restore, Verbatim]


# ----- from the builders' text, once --------------------------------------------------------------

@functools.lru_cache(maxsize=8192)
def statement(text: str) -> Union[Comment, Simple]:
    """One line a builder wrote (``# ...`` or a simple statement) as an IR item."""
    line = text.strip()
    if line.startswith("#"):
        return Comment(line[1:].strip())
    parsed = cst.parse_statement(line)
    if not isinstance(parsed, cst.SimpleStatementLine) or len(parsed.body) != 1:
        raise ValueError(f"not one simple statement: {line!r}")
    return Simple(parsed.body[0], _code(parsed.body[0]))


@functools.lru_cache(maxsize=1024)
def header(text: str) -> Header:
    """A compound statement's header line (``for a in b:``, ``while c:``, ``if c:``, ``else:``)."""
    line = text.strip()
    if line == "else:":
        return ElseHeader()
    node = cst.parse_statement(line + " pass")
    if isinstance(node, cst.For):
        return ForHeader(node.target, node.iter)
    if isinstance(node, cst.While):
        return WhileHeader(node.test)
    if isinstance(node, cst.If):
        return IfHeader(node.test)
    raise ValueError(f"not a block header: {line!r}")


def lift(code) -> tuple:
    """A builder's code (lines of text, Nests with text headers, IR items) as IR items."""
    out = []
    for item in code:
        if isinstance(item, str):
            out.append(statement(item))
        elif isinstance(item, Nest):
            head = header(item.header) if isinstance(item.header, str) else item.header
            out.append(Nest(head, lift(item.body)))
        else:
            out.append(item)
    return tuple(out)


# ----- questions passes ask ---------------------------------------------------------------------

def code_reads(code) -> set:
    """Names read anywhere in ``code`` (nested blocks included; a builder's lines of text are
    lifted first)."""
    reads: set = set()
    for item in lift(code):
        reads |= set(item.reads)
        if isinstance(item, Nest):
            reads |= code_reads(item.body)
    return reads


def all_items(code):
    """Every item of ``code`` in order, the code inside its blocks included (a Nest, then its body)."""
    for item in code:
        yield item
        if isinstance(item, Nest):
            yield from all_items(item.body)


def bound_within(item) -> set:
    """The names ``item`` binds, the code inside it included."""
    return {name for inner in all_items((item,)) for name in inner.binds}


def written_within(code) -> set:
    """The names the items of ``code`` (the code inside their blocks included) write into in place
    (a user's statement copied as written: any name it reads)."""
    found: set = set()
    for item in all_items(code):
        if isinstance(item, Simple):
            found |= item.update_base
        elif isinstance(item, Verbatim):
            found |= set(item.reads)
    return found


def has_statements(code) -> bool:
    """Whether ``code`` holds anything but comments."""
    return any(not isinstance(item, Comment) for item in code)


def calls_in(node: cst.CSTNode) -> list:
    """The calls inside ``node``, outermost first."""
    return [n for n in walk(node) if type(n) is cst.Call]


_PURE_OWNERS = ("np", "s2s", "math")


def _dotted(node: cst.BaseExpression) -> str:
    """``np.linalg.norm`` for an attribute chain on a name, "" for anything else."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return ""
    parts.append(node.value)
    return ".".join(reversed(parts))


_OWNERS = {"np": "numpy", "s2s": "s2sgrad.runtime"}  # generated code's names of its modules


def qualified(node: cst.BaseExpression) -> str:
    """The rule table's name of a function as generated code calls it (``np.cos`` ->
    ``numpy.cos``, ``s2s.complex_conj`` -> ``s2sgrad.runtime.complex_conj``), "" for another."""
    dotted = _dotted(node)
    owner = dotted.split(".")[0]
    return _OWNERS[owner] + dotted[len(owner):] if owner in _OWNERS else ""


def pure(node: cst.CSTNode, methods: frozenset = frozenset(), local: frozenset = frozenset()) -> bool:
    """Whether every call in ``node`` is to numpy (not np.random), s2sgrad's runtime, or one of
    ``methods`` (ndarray methods) of an expression's value or of a name in ``local``."""
    for call in calls_in(node):
        owner = _dotted(call.func).split(".")
        if len(owner) >= 2 and owner[0] in _PURE_OWNERS and owner[:2] != ["np", "random"]:
            continue
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in methods and
                (owner == [""] or owner[0] in local)):
            return False
    return True


def unpack_target(names) -> str:
    """An assignment/for target for ``names``: ``a, b`` or ``(a,)``."""
    names = list(names)
    if len(names) == 1:
        return f"({names[0]},)"
    return ", ".join(names)


# ----- to source ----------------------------------------------------------------------------------

def render(code, indent: str) -> list:
    """Source lines for ``code`` at ``indent`` (an empty block gets ``pass``)."""
    out = []
    for item in lift(code):
        if isinstance(item, Nest):
            out.append(f"{indent}{item.header.text}")
            inner = render(item.body, indent + "    ")
            if not has_statements(item.body):
                inner.append(f"{indent}    pass")
            out.extend(inner)
        elif isinstance(item, Comment):
            out.append(f"{indent}# {item.text}")
        elif isinstance(item, Verbatim):
            out.extend(f"{indent}{line}" if line else "" for line in item.lines)
        else:
            out.append(f"{indent}{item.text}")
    return out

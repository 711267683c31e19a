"""Generated code as data: lines (str) and nested blocks (Nest), plus the names code reads.

The reverse builder produces this structure; codegen indents it; the residual and tape analyses
ask which names it reads.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field

import libcst as cst

from ..read.names import name_nodes


@dataclass(frozen=True)
class Restore:
    """``a, b = loop1_entry``: carried values put back after a backward loop. The builder drops
    the names nothing later reads."""

    loop: object = field(compare=False)
    names: tuple = ()
    entry: str = ""

    @property
    def text(self) -> str:
        return f"{unpack_target(self.names)} = {self.entry}"


@dataclass(frozen=True)
class Nest:
    """A compound statement: its header line (``for a in b:``) and the code inside it."""

    header: str
    body: tuple


class _Calls(cst.CSTVisitor):
    """Collects the calls of an expression."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)


def name_reads(node: cst.CSTNode) -> Counter:
    """How often ``node`` reads each name (attribute fields and keyword names excluded)."""
    return Counter(n.value for n in name_nodes(node, reads_only=True))


def calls_in(node: cst.CSTNode) -> list:
    """The calls inside ``node``, outermost first."""
    visitor = _Calls()
    node.visit(visitor)
    return visitor.calls


def _target_names(node: cst.CSTNode) -> set:
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, (cst.Tuple, cst.List)):
        out: set = set()
        for element in node.elements:
            out |= _target_names(element.value)
        return out
    return set()


@functools.lru_cache(maxsize=4096)
def line_facts(line: str) -> tuple:
    """One line of generated code: (how often it reads each name, the names it binds, whether it
    is a plain ``a = ...``). Comments read nothing; a compound header reads its condition or
    iterable."""
    text = line.strip()
    if not text or text.startswith("#") or text == "else:":
        return Counter(), frozenset(), False
    if text.endswith(":"):
        header = cst.parse_statement(text + " pass")
        if isinstance(header, cst.For):
            return name_reads(header.iter), frozenset(_target_names(header.target)), False
        if isinstance(header, (cst.If, cst.While)):
            return name_reads(header.test), frozenset(), False
        return Counter(), frozenset(), False
    stmt = cst.parse_statement(text)
    smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()
    reads: Counter = Counter()
    binds: set = set()
    for small in smalls:
        if isinstance(small, cst.Assign):
            reads += name_reads(small.value)
            for t in small.targets:
                binds |= _target_names(t.target)
                if not isinstance(t.target, (cst.Name, cst.Tuple, cst.List)):
                    reads += name_reads(t.target)
        elif isinstance(small, cst.AugAssign):
            reads += name_reads(small.target) + name_reads(small.value)
            binds |= _target_names(small.target)
        elif isinstance(small, (cst.Expr, cst.Return)) and small.value is not None:
            reads += name_reads(small.value)
    plain = len(smalls) == 1 and isinstance(smalls[0], cst.Assign) and \
        len(smalls[0].targets) == 1 and isinstance(smalls[0].targets[0].target, cst.Name)
    return reads, frozenset(binds), plain


def line_reads(line: str) -> frozenset:
    """Names one line of generated code reads."""
    return frozenset(line_facts(line)[0])


def code_reads(code) -> set:
    """Names read anywhere in ``code`` (nested blocks included)."""
    reads: set = set()
    for item in code:
        if isinstance(item, Nest):
            reads |= line_reads(item.header)
            reads |= code_reads(item.body)
        else:
            reads |= line_reads(_text(item))
    return reads


def _text(item) -> str:
    return item.text if isinstance(item, Restore) else item


def has_statements(code) -> bool:
    """Whether ``code`` holds anything but comments."""
    for item in code:
        if isinstance(item, (Nest, Restore)) or not item.lstrip().startswith("#"):
            return True
    return False


def render(code, indent: str) -> list:
    """Source lines for ``code`` at ``indent`` (an empty block gets ``pass``)."""
    out = []
    for item in code:
        if isinstance(item, Nest):
            out.append(f"{indent}{item.header}")
            inner = render(item.body, indent + "    ")
            if not any(not line.strip().startswith("#") for line in inner):
                inner.append(f"{indent}    pass")
            out.extend(inner)
        else:
            out.append(f"{indent}{_text(item)}")
    return out


def unpack_target(names) -> str:
    """An assignment/for target for ``names``: ``a, b`` or ``(a,)``."""
    names = list(names)
    if len(names) == 1:
        return f"({names[0]},)"
    return ", ".join(names)

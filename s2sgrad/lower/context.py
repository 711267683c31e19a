"""The state one function's lowering shares: a ParsedFunction and the nondiff names -> a Context
that the expression, statement and loop passes read and extend (the block being built, the user
name -> SSA name environment, the current statement's origin, what the CoreFunction records)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import libcst as cst
import libcst.matchers as m
from libcst.matchers import findall

from ..read.names import name_nodes
from ..read.parse import ParsedFunction
from .ir import Origin, Prim, Stmt, Var
from .naming import Namer
from .resolve import callee_name
from .scope import all_names, assigned_names, read_names
from .text import Renamer, code, one_line, one_line_text

# lower_block(ctx, statements, prologue=(), start=None) -> the block: how branches and loops lower
# the blocks nested in them (blocks.lower_block, passed in so that they need not import it)
BlockLowerer = Callable[..., tuple]


@dataclass
class Context:
    """Lowering state of one function; used once."""

    pf: ParsedFunction
    nondiff: frozenset  # functions (and ``ndarray.`` methods) kept verbatim: no derivative
    locals: frozenset  # every name the function assigns (parameters included)
    namer: Namer
    body: list = field(default_factory=list)  # the block being built
    env: dict = field(default_factory=dict)  # user name -> current SSA name
    origin: Optional[Origin] = None  # the user statement being lowered
    globals_read: set = field(default_factory=set)
    temps: set = field(default_factory=set)  # temporaries (a user's name may take one over)
    if_count: int = 0
    loop_count: int = 0
    loop_depth: int = 0  # how many loops enclose what is being lowered
    lists: set = field(default_factory=set)  # names known to hold Python lists or tuples
    dicts: set = field(default_factory=set)  # names known to hold dicts (a subset of lists)
    inplace: list = field(default_factory=list)  # (new, updated, Location): CoreFunction.inplace
    user_names: dict = field(default_factory=dict)  # SSA name -> the user's name it versions
    origins: dict = field(default_factory=dict)  # id(a rewritten statement's original) -> Origin
    table: Any = None  # the RuleTable: what a call writes into (RuleTable.write, out_position)

    @classmethod
    def start(cls, pf: ParsedFunction, table: Any) -> "Context":
        return cls(pf, table.nondiff, assigned_names(pf.node), Namer(all_names(pf.node)),
                   table=table)

    def emit(self, targets: tuple, expr: cst.BaseExpression, prim: Prim, unpack: bool = False) -> None:
        assert self.origin is not None
        self.body.append(Stmt(targets, one_line(expr), prim, self.origin, unpack))

    def bind(self, user_name: str) -> str:
        """A fresh SSA version for an assignment to ``user_name``."""
        name = self.namer.fresh(user_name) if user_name in self.env else user_name
        if name == user_name:
            self.namer.reserve(name)
        self.env[user_name] = name
        self.user_names[name] = user_name
        return name

    def new_target(self, target: Optional[str], desc: str, fallback: str) -> str:
        """The name for a value: a new version of the user's ``target``, else a temporary
        named after ``desc`` (``fallback`` when that is too long)."""
        if target is not None:
            return self.bind(target)
        name = self.namer.temp(desc, fallback)
        self.temps.add(name)
        return name

    def emit_prim(self, target: Optional[str], desc: str, fallback: str,
                  expr: cst.BaseExpression, prim: Prim) -> Var:
        name = self.new_target(target, desc, fallback)
        self.emit((name,), expr, prim)
        return Var(name)

    def verbatim(self, node: cst.BaseExpression) -> tuple:
        """``node`` with locals renamed to their SSA names, and the names it reads. A local it
        reads that is not assigned yet (in a loop: what the step before assigned) is refused,
        as an operand's is: the backward sweep would read the value the step assigned."""
        bound_inside = {n.value for found in findall(node, m.CompFor() | m.Lambda())
                        for n in name_nodes(found.target if isinstance(found, cst.CompFor) else found.params)}
        for name in name_nodes(node, reads_only=True):
            if name.value in self.locals and name.value not in self.env and name.value not in bound_inside:
                raise self.unassigned(name)
        renamer = Renamer({k: v for k, v in self.env.items()})
        new = node.visit(renamer)
        for name in read_names(node):
            if name not in self.env and name not in self.locals:
                self.globals_read.add(name)
        return new, tuple(renamer.reads)

    def unassigned(self, name: cst.Name) -> Exception:
        """The refusal of a local read before it is assigned (in a loop: before the step assigns it)."""
        return self.pf.error(name, f"`{name.value}` is read before it is assigned",
                             "assign it before it is read; in a loop, before the loop too (then "
                             "the value the step before assigned is carried to the next step)")

    def collect(self, lower: Callable[[], Any]) -> tuple:
        """``(statements, value)``: what ``lower()`` emits, as a block of its own, and its value."""
        saved_body = self.body
        self.body = []
        value = lower()
        block = tuple(self.body)
        self.body = saved_body
        return block, value

    def callee_name(self, func: cst.BaseExpression) -> Optional[str]:
        return callee_name(self.pf, func)

    def origin_of(self, stmt: cst.CSTNode) -> Origin:
        written = self.pf.parsed.written_as.get(stmt)  # the user's statement a pass rewrote
        if written is not None and id(written) in self.origins:
            return self.origins[id(written)]  # one statement rewritten into several: one comment
        if isinstance(written, cst.For):  # a loop written out: its header (lower/tree_loops.py)
            text = one_line_text(f"for {code(one_line(written.target))} in {code(one_line(written.iter))}:")
        else:
            text = one_line_text(code(one_line(written or stmt)).strip())  # comments in brackets left out
        origin = Origin(text, self.pf.location(stmt))
        if written is not None:
            self.origins[id(written)] = origin
        return origin

    def header_origin(self, text: str, node: cst.CSTNode) -> Origin:
        """The Origin of a block's header ``text``; a block a pass wrote for an expression of
        the user's (a comprehension's loop) quotes that expression instead."""
        written = self.pf.parsed.written_as.get(node)
        if isinstance(written, cst.BaseExpression):
            text = code(written)
        return Origin(one_line_text(text), self.pf.location(node))

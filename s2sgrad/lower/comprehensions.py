"""Comprehensions: a ParsedFunction -> the same function with each list comprehension, generator
expression and dict comprehension written as the loop that builds its list (or dict:
``entries = {}`` and ``entries[key] = value`` in the loop).

    y = np.stack([x ** p for p in range(n) if p != 1], axis=1)

becomes

    items = []
    for p_1 in range(n):
        if p_1 != 1:
            items.append(x ** p_1)
    y = np.stack(items, axis=1)

which the core already reads (lists built with ``append``, loops over ranges and sequences), so
every mode gets it. The comprehension's names are its own (Python gives it a scope): they are
renamed to fresh names, except in its first iterable, which is read in the enclosing scope. A
generator expression becomes a list too (s2sgrad's functions are pure: building it at once
computes the same). The statements a comprehension becomes quote it in their provenance comments
(``ParsedModule.written_as``), the statement using it its own text.

A comprehension is rewritten where it is evaluated once, at the statement that holds it: a simple
statement, an ``if`` test (not an ``elif``'s), a ``for`` loop's iterable. One inside a ``lambda``,
a conditional expression's branch, the right side of ``and``/``or`` or a ``while`` test (evaluated
only sometimes, or again and again) is left as written, and the fence refuses it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst
import libcst.matchers as m
from libcst.metadata import QualifiedName, QualifiedNameSource

from ..read.names import name_nodes
from ..read.parse import KeepingTransformer, ParsedFunction, ParsedModule
from .naming import Namer
from ..read.walk import findall

_COMPREHENSION = m.ListComp() | m.GeneratorExp() | m.DictComp() | m.SetComp()
# Where a comprehension is evaluated only sometimes: left for the fence to refuse.
_GUARDED = m.Lambda() | m.IfExp() | m.BooleanOperation()


def rewrite_comprehensions(pf: ParsedFunction) -> ParsedFunction:
    """``pf`` with its comprehensions written as loops (``pf`` itself when it has none)."""
    if not findall(pf.node.body, _COMPREHENSION):
        return pf
    writer = _Writer(pf.parsed, Namer({n.value for n in name_nodes(pf.node)}))
    body = writer.block(pf.node.body)
    node = pf.node.with_changes(body=body)
    pf.parsed.adopt(node, pf.node)
    return replace(pf, node=node)


class HoistingWriter:
    """Rewrites the statements of one function, writing before each statement what ``hoisted``
    takes out of the expressions it evaluates once (a simple statement, an ``if`` test, a ``for``
    loop's iterable); holds the namer of the fresh names. Subclasses say what is hoisted
    (``wanted``, ``hoisted``)."""

    def __init__(self, parsed: ParsedModule, namer: Namer) -> None:
        self.parsed = parsed
        self.namer = namer
        self.quoted: dict = {}  # comprehension -> what its statements quote

    def block(self, suite: cst.BaseSuite) -> cst.BaseSuite:
        if isinstance(suite, cst.SimpleStatementSuite):
            suite = cst.IndentedBlock([cst.SimpleStatementLine([s]) for s in suite.body])
        out = [new for stmt in suite.body for new in self.statement(stmt)]
        return suite.with_changes(body=out)

    def statement(self, stmt: cst.BaseStatement) -> list:
        """``stmt`` and the loops building its comprehensions' lists before it, its blocks
        rewritten the same way."""
        if isinstance(stmt, cst.SimpleStatementLine):
            if not self.wanted(stmt):
                return [stmt]
            out = []
            for small in stmt.body:
                before, new = self.hoisted(small)
                if new is not small:
                    new = new.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
                    self.keep(new, small)
                line = stmt.with_changes(body=[new])
                self.keep(line, stmt)
                out.extend(before + [line])
            return out
        if isinstance(stmt, cst.If):
            before, test = self.hoisted(stmt.test)
            new = stmt.with_changes(test=test, body=self.block(stmt.body),
                                    orelse=self.orelse(stmt.orelse))
            self.parsed.adopt(new, stmt)
            return before + [new]
        if isinstance(stmt, cst.For):
            before, iterable = self.hoisted(stmt.iter)
            new = stmt.with_changes(iter=iterable, body=self.block(stmt.body),
                                    orelse=self.orelse(stmt.orelse))
            self.parsed.adopt(new, stmt)
            if stmt in self.parsed.written_as:
                self.parsed.written_as[new] = self.parsed.written_as[stmt]
            return before + [new]
        if isinstance(stmt, (cst.While, cst.With)):
            new = stmt.with_changes(body=self.block(stmt.body),
                                    **({"orelse": self.orelse(stmt.orelse)}
                                       if isinstance(stmt, cst.While) else {}))
            self.parsed.adopt(new, stmt)
            return [new]
        return [stmt]

    def orelse(self, orelse):
        if orelse is None:
            return None
        if isinstance(orelse, cst.If):  # an elif: its blocks, not its test (evaluated only sometimes)
            new = orelse.with_changes(body=self.block(orelse.body), orelse=self.orelse(orelse.orelse))
        else:
            new = orelse.with_changes(body=self.block(orelse.body))
        self.parsed.adopt(new, orelse)
        return new

    def keep(self, new: cst.CSTNode, old: cst.CSTNode) -> None:
        """``new`` located at ``old`` and quoting what ``old`` quotes."""
        self.parsed.adopt(new, old)
        if new is not old:
            self.parsed.written_as[new] = self.parsed.written_as.get(old, old)

    def wanted(self, stmt: cst.SimpleStatementLine) -> bool:
        """Whether ``stmt`` holds something to hoist."""
        raise NotImplementedError

    def hoisted(self, node: cst.CSTNode) -> tuple:
        """``(statements to write before, node without what they compute)``."""
        raise NotImplementedError


class _Writer(HoistingWriter):
    """Writes each comprehension as the loop building its list."""

    def wanted(self, stmt: cst.SimpleStatementLine) -> bool:
        return bool(findall(stmt, _COMPREHENSION))

    def hoisted(self, node: cst.CSTNode) -> tuple:
        """``(statements building the lists, node with each comprehension it evaluates at once
        replaced by its list's name)``."""
        replacer = _Replace(self)
        new = node.visit(replacer)
        return replacer.before, new

    def loops(self, comp) -> tuple:
        """``(statements, name)``: the loop building ``comp``'s list, and the list's name."""
        keyed = isinstance(comp, cst.DictComp)
        name = self.namer.fresh("entries" if keyed else "items")
        renames = {}
        for clause in _clauses(comp.for_in):
            for target in findall(clause.target, m.Name()):
                renames.setdefault(target.value, self.namer.fresh(target.value))
        rename = Rename(self.parsed, renames)
        if keyed:  # entries[key] = value
            slot = cst.Subscript(cst.Name(name), [cst.SubscriptElement(cst.Index(comp.key.visit(rename)))])
            append = cst.Assign([cst.AssignTarget(slot)], comp.value.visit(rename))
        else:
            append = cst.Expr(cst.Call(cst.Attribute(cst.Name(name), cst.Name("append")),
                                       [cst.Arg(comp.elt.visit(rename))]))
        inner: cst.BaseStatement = cst.SimpleStatementLine([append])
        self.origin(append, comp)
        self.origin(inner, comp)
        clauses = _clauses(comp.for_in)
        for depth, clause in reversed(list(enumerate(clauses))):
            for condition in reversed(clause.ifs):
                inner = cst.If(condition.test.visit(rename), cst.IndentedBlock([inner]))
                self.origin(inner, comp)
            iterable = clause.iter if depth == 0 else clause.iter.visit(rename)
            inner = cst.For(clause.target.visit(rename), iterable, cst.IndentedBlock([inner]))
            self.origin(inner, comp)
        empty = cst.Dict([]) if keyed else cst.List([])
        start = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], empty)])
        self.origin(start.body[0], comp)
        self.origin(start, comp)
        return [start, *self.statement(inner)], name  # comprehensions inside it rewritten too

    def origin(self, new: cst.CSTNode, comp: cst.CSTNode) -> None:
        """``new`` located at the comprehension and quoting it (provenance comments; a generator
        expression in its parentheses)."""
        self.parsed.adopt(new, comp)
        if comp not in self.quoted:
            bare = isinstance(comp, cst.GeneratorExp) and not comp.lpar
            self.quoted[comp] = comp.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) \
                if bare else comp
        self.parsed.written_as[new] = self.quoted[comp]


class _Replace(KeepingTransformer):
    """Replaces the comprehensions an expression evaluates at once by their lists' names."""

    def __init__(self, writer: _Writer) -> None:
        super().__init__(writer.parsed)
        self.writer = writer
        self.before: list = []

    def visit_Lambda(self, node) -> bool:
        return False  # its body runs when it is called

    def visit_IfExp(self, node) -> bool:
        return False  # its branches run only sometimes; its test always (leave_IfExp)

    def visit_BooleanOperation(self, node) -> bool:
        return False  # its right side runs only sometimes; its left always (leave_BooleanOperation)

    def visit_ListComp(self, node) -> bool:
        return False  # nested ones are rewritten inside the loop built for this one

    def visit_GeneratorExp(self, node) -> bool:
        return False

    def visit_DictComp(self, node) -> bool:
        return False

    def visit_SetComp(self, node) -> bool:
        return False

    def leave_ListComp(self, original, updated):
        return self.replace(original)

    def leave_SetComp(self, original, updated):
        return self.replace(original)

    def leave_DictComp(self, original, updated):
        return self.replace(original)

    def leave_GeneratorExp(self, original, updated):
        return self.replace(original)

    def leave_IfExp(self, original, updated):
        return updated.with_changes(test=original.test.visit(self))

    def leave_BooleanOperation(self, original, updated):
        return updated.with_changes(left=original.left.visit(self))

    def replace(self, comp):
        built, name = self.writer.loops(comp)
        self.before.extend(built)
        new = cst.Name(name)
        self.writer.parsed.adopt(new, comp)
        if isinstance(comp, cst.SetComp):  # the set of the list's items: builtins.set
            func = cst.Name("set")
            new = cst.Call(func, [cst.Arg(new)])
            self.writer.parsed.adopt(new, comp)
            self.writer.parsed.adopt(func, comp)
            index = self.writer.parsed.positions.statement.get(comp)
            if index is not None:
                self.writer.parsed.qualnames.get(comp)  # the statement's names resolved first
                self.writer.parsed.qualnames.resolved.setdefault(index, {})[func] = \
                    frozenset({QualifiedName("builtins.set", QualifiedNameSource.BUILTIN)})
        return new


class Rename(KeepingTransformer):
    """The comprehension's own names renamed (``renames``), keeping positions."""

    def __init__(self, parsed: ParsedModule, renames: dict) -> None:
        super().__init__(parsed)
        self.renames = renames

    def leave_Name(self, original, updated):
        return updated.with_changes(value=self.renames.get(original.value, original.value))

    def leave_Attribute(self, original, updated):
        return updated.with_changes(attr=original.attr)  # ``x.p`` is no name of the comprehension

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)  # nor is ``axis`` in ``f(axis=axis)``


def is_atom(value: cst.BaseExpression) -> bool:
    """Whether ``value`` is a literal that reads the same written for a name anywhere."""
    return isinstance(value, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)) and \
        not value.lpar


class QuotingRename(Rename):
    """Renames an inlined body's names (``renames``: to a name, or to a literal written in its
    place); each statement renamed quotes the one it was, so the generated comments quote the
    function's lines as written."""

    def leave_Name(self, original, updated):
        literal = self.renames.get(original.value)
        if isinstance(literal, cst.BaseExpression):
            return literal.deep_clone()
        return super().leave_Name(original, updated)

    def on_leave(self, original_node, updated_node):
        result = super().on_leave(original_node, updated_node)
        if result is not original_node and \
                isinstance(result, (cst.BaseSmallStatement, cst.SimpleStatementLine)):
            quoted = self.parsed.written_as.get(original_node, original_node)
            self.parsed.written_as[result] = quoted
        return result


def _clauses(for_in: cst.CompFor) -> list:
    out = []
    clause: Optional[cst.CompFor] = for_in
    while clause is not None:
        out.append(clause)
        clause = clause.inner_for_in
    return out

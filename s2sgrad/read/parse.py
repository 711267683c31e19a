"""Parse: SourceUnit -> ParsedFunction (the libcst def node plus qualified names and positions).

The whole module is parsed so that imports and aliases resolve statically (``np.exp`` ->
``numpy.exp``; names are resolved lazily, per top-level statement); user code is never imported.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from typing import Mapping, Optional

import libcst as cst
import libcst.matchers as m
from libcst.metadata import (
    CodePosition,
    CodeRange,
    MetadataWrapper,
    PositionProvider,
    QualifiedNameSource,
    ScopeProvider,
)

from ..errors import Location, TransformError
from .capture import SourceUnit, location_of
from .walk import findall, is_layout, walk


class Positions:
    """Source positions of a module's nodes, computed one top-level statement at a time.

    A statement's nodes get their positions from the statement alone (printed as a module of its
    own), shifted by the lines before it; a whole-module pass costs ~0.1 ms per line, most of it
    for functions nobody asked about. ``definitions`` maps each function definition (by id) to
    its top-level statement, so looking one up resolves only that statement."""

    def __init__(self, module: cst.Module, definitions: dict) -> None:
        self.module = module
        self.definitions = definitions
        self.starts = []  # lines before each top-level statement's own text
        line = sum(module.code_for_node(h).count("\n") for h in module.header)
        for stmt in module.body:
            self.starts.append(line)
            line += module.code_for_node(stmt).count("\n")
        self.found: dict = {}  # node -> CodeRange
        self.statement: dict = {}  # node -> index of its top-level statement
        self.done: set = set()
        self.members: Optional[dict] = None  # _members, made on the first node not yet found

    def statement_of(self, node: cst.CSTNode) -> Optional[int]:
        self.get(node)
        return self.statement.get(node)

    def get(self, node: cst.CSTNode, default=None):
        if node not in self.found:
            index = self.definitions.get(id(node))
            if index is None:
                index = self._members().get(id(node))
            if index is not None:
                self._resolve(index)
            elif not is_layout(node):
                return default  # not a node of this module (one a pass made): nothing to resolve
            for index in range(len(self.module.body)):
                if node in self.found:
                    break
                self._resolve(index)
        return self.found.get(node, default)

    def _members(self) -> dict:
        """id of each node of the module (layout aside) -> its top-level statement's index."""
        if self.members is None:
            self.members = {id(n): index for index, stmt in enumerate(self.module.body)
                            for n in walk(stmt)}
        return self.members

    def __getitem__(self, node: cst.CSTNode):
        found = self.get(node)
        if found is None:
            raise KeyError(node)
        return found

    def _resolve(self, index: int) -> None:
        if index in self.done:
            return
        self.done.add(index)
        alone = self.module.with_changes(body=[self.module.body[index]], header=[], footer=[])
        shift = self.starts[index]
        wrapper = MetadataWrapper(alone, unsafe_skip_copy=True)
        for key, where in wrapper.resolve(PositionProvider).items():
            self.found[key] = CodeRange(CodePosition(where.start.line + shift, where.start.column),
                                        CodePosition(where.end.line + shift, where.end.column))
            self.statement[key] = index


class QualifiedNames:
    """Qualified names of a module's nodes, resolved one top-level statement at a time.

    Resolving a whole module costs ~0.4 ms per line; a gradient needs the names inside a few
    functions. For a node, the top-level statement holding it is resolved in a copy of the module
    whose other statements are reduced to the names they bind (each run of defs, classes and
    plain assignments joined into one ``f = C = x = ...``; imports and other statements as
    _stub leaves them): every module-level binding is still there, in order, so names resolve
    exactly as in the full module.
    """

    def __init__(self, module: cst.Module, positions: Positions) -> None:
        self.module = module
        self.positions = positions
        self.resolved: dict = {}  # statement index -> {node: frozenset of QualifiedName, or lazy}
        self.stubs: Optional[list] = None  # per top-level statement: _binds's names, or its _stub

    def get(self, node: cst.CSTNode, default=None):
        index = self.positions.statement_of(node)
        if index is None:
            return default
        names = self._resolve(index)
        found = names.get(node)
        if found is None:
            return default
        if type(found) is not frozenset:  # the node's scope: its names computed on first question
            got = found.get_qualified_names_for(node)
            found = names[node] = frozenset(got) if got else frozenset()
        return found or default

    def _resolve(self, index: int) -> dict:
        """The statement's nodes -> their qualified names (a frozenset), or the scope that
        gives them (get asks it: most nodes are never asked about). As libcst's
        QualifiedNameProvider, without its pass over every node: it asks the same scopes."""
        if index not in self.resolved:
            if self.stubs is None:
                self.stubs = [_binds(stmt) for stmt in self.module.body]
            body = [*_joined(self.stubs[:index]), self.module.body[index],
                    *_joined(self.stubs[index + 1:])]
            wrapper = MetadataWrapper(self.module.with_changes(body=body), unsafe_skip_copy=True)
            self.resolved[index] = dict(wrapper.resolve(ScopeProvider))
        return self.resolved[index]


def _binds(stmt: cst.CSTNode):
    """The names a top-level statement binds, as a tuple, where it does nothing else that name
    resolution sees (a def, a class, ``name = value``, an expression without ``:=``); else its
    _stub. A name bound by ``def f`` and by ``f = ...`` resolves alike (``f``, a local of the
    module), and one assignment statement costs libcst's scope pass far less than a def."""
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return (stmt.name.value,)
    if isinstance(stmt, cst.SimpleStatementLine):
        names: list = []
        for small in stmt.body:
            if isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Name)
                                                     for t in small.targets):
                names.extend(t.target.value for t in small.targets)
            elif not (isinstance(small, cst.Pass) or (isinstance(small, cst.Expr)
                                                        and not findall(small, m.NamedExpr()))):
                return _stub(stmt)
        return tuple(names)
    return _stub(stmt)


def _joined(stubs: list) -> list:
    """Statements binding what ``stubs`` (from _binds) bind, in order: each run of name tuples as
    one ``a = b = ... = ...``."""
    out: list = []
    run: list = []
    for stub in [*stubs, None]:
        if isinstance(stub, tuple):
            run.extend(stub)
            continue
        if run:
            targets = [cst.AssignTarget(cst.Name(name)) for name in run]
            out.append(cst.SimpleStatementLine([cst.Assign(targets, cst.Ellipsis())]))
            run = []
        if stub is not None:
            out.append(stub)
    return out


_ELLIPSIS = cst.SimpleStatementSuite([cst.Expr(cst.Ellipsis())])


def _stub(stmt: cst.CSTNode) -> cst.CSTNode:
    """A statement reduced to the names it binds: a function or class to a stub, an assignment
    to ``name = ...`` (values do not change how names resolve), an expression to nothing."""
    if isinstance(stmt, cst.FunctionDef):
        return cst.FunctionDef(name=stmt.name, params=cst.Parameters(), body=_ELLIPSIS)
    if isinstance(stmt, cst.ClassDef):
        return cst.ClassDef(name=stmt.name, body=_ELLIPSIS)
    if isinstance(stmt, cst.SimpleStatementLine):
        body = []
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                body.append(small.with_changes(value=cst.Ellipsis()))
            elif isinstance(small, cst.AnnAssign):
                body.append(small.with_changes(value=cst.Ellipsis() if small.value else None))
            elif isinstance(small, cst.Expr) and not findall(small, m.NamedExpr()):
                continue
            else:
                body.append(small)
        return stmt.with_changes(body=body or [cst.Pass()])
    return stmt


@dataclass(frozen=True)
class ParsedModule:
    """A parsed module with its metadata maps (keyed by node)."""

    module: cst.Module
    qualnames: QualifiedNames = field(repr=False)
    positions: Positions = field(repr=False)
    functions: Mapping[str, tuple] = field(default_factory=dict, repr=False)  # name -> defs
    # a statement a pass rewrote (s2sgrad.vjp inside a function) -> the user's statement, whose
    # text the provenance comments quote
    written_as: dict = field(default_factory=dict, repr=False)

    def adopt(self, new: cst.CSTNode, old: cst.CSTNode) -> None:
        """Give ``new``, a rebuilt copy of ``old`` made by a pass, ``old``'s position and
        qualified names (both are keyed by node), so locations and resolution still work, and
        the user's statement ``old`` quotes where a pass wrote it (``written_as``)."""
        pos = self.positions.get(old)
        if pos is None or new is old:
            return
        if self.written_as and old in self.written_as:
            self.written_as[new] = self.written_as[old]
        index = self.positions.statement[old]
        self.positions.found[new] = pos
        self.positions.statement[new] = index
        names = self.qualnames.get(old)
        if names:
            self.qualnames.resolved[index][new] = names


class KeepingTransformer(cst.CSTTransformer):
    """A transformer whose rebuilt nodes keep their originals' metadata (ParsedModule.adopt)."""

    def __init__(self, parsed: ParsedModule) -> None:
        super().__init__()
        self.parsed = parsed

    def on_leave(self, original_node, updated_node):
        result = super().on_leave(original_node, updated_node)
        if isinstance(result, cst.CSTNode):
            self.parsed.adopt(result, original_node)
        return result


@dataclass(frozen=True)
class ParsedFunction:
    """One function definition inside a parsed module."""

    unit: SourceUnit
    parsed: ParsedModule = field(repr=False)
    node: cst.FunctionDef = field(repr=False)

    @property
    def name(self) -> str:
        return self.node.name.value

    def location(self, node: cst.CSTNode) -> Location:
        """The Location of ``node`` (1-based line and column)."""
        pos = self.parsed.positions.get(node)
        if pos is None:
            return location_of(self.unit, 0, 0)
        return location_of(self.unit, pos.start.line, pos.start.column + 1)

    def error(self, node: cst.CSTNode, message: str, hint: str = "") -> TransformError:
        return TransformError(message, self.location(node), hint)

    def qualified_name(self, node: cst.CSTNode) -> Optional[str]:
        """The import-resolved dotted name of a Name/Attribute (``numpy.exp``), or None.

        Local names (parameters, assignments, module-level defs) come back with their scope path
        (``f.<locals>.x``, ``predict``); builtins as ``builtins.abs``.
        """
        found = self.parsed.qualnames.get(node) or frozenset()
        if not found:
            return None
        # Deterministic choice when several bindings reach the name: prefer imports, then by name.
        ordered = sorted(found, key=lambda q: (q.source != QualifiedNameSource.IMPORT, q.name))
        return ordered[0].name


class _Definitions(cst.CSTVisitor):
    """Collects every function definition (nested ones too) by name, in source order."""

    def __init__(self, out: dict, tops: dict) -> None:
        super().__init__()
        self.out = out
        self.tops = tops  # id(def) -> index of the top-level statement holding it
        self.index = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.out.setdefault(node.name.value, []).append(node)
        self.tops[id(node)] = self.index

    # Expressions hold no definitions (lambdas are not defs): skip their subtrees.
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        return False


@functools.lru_cache(maxsize=64)
def parse_module(text: str, path: str) -> ParsedModule:
    """Parse ``text`` and resolve qualified names and positions (cached by text)."""
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        line, column, message = _python_syntax_error(text) or \
            (exc.raw_line, exc.raw_column + 1, exc.message)
        lines = text.splitlines()
        quoted = lines[line - 1] if 0 < line <= len(lines) else ""
        raise TransformError(
            f"syntax error: {message}",
            Location(path, line, column, quoted),
            "fix the syntax error first",
        ) from None
    functions: dict = {}
    tops: dict = {}
    collector = _Definitions(functions, tops)
    for index, stmt in enumerate(module.body):
        collector.index = index
        stmt.visit(collector)
    positions = Positions(module, tops)
    qualnames = QualifiedNames(module, positions)
    return ParsedModule(module=module, qualnames=qualnames, positions=positions,
                        functions={k: tuple(v) for k, v in functions.items()})


def _python_syntax_error(text: str) -> Optional[tuple]:
    """``(line, column, message)`` of Python's own report of the syntax error in ``text``
    (``'(' was never closed`` at the bracket, where libcst reports the next line with the tokens
    it expected), or None when Python compiles it."""
    try:
        ast.parse(text)
    except SyntaxError as exc:
        if exc.lineno:
            return exc.lineno, max(exc.offset or 1, 1), exc.msg
    return None


def _def_start_line(parsed: ParsedModule, node: cst.FunctionDef) -> int:
    parsed.positions.get(node)  # resolves the statement holding the def (decorators included)
    first = node.decorators[0] if node.decorators else node
    return parsed.positions[first].start.line


LAMBDA = "<lambda>"


def _lambda_function(unit: SourceUnit, parsed: ParsedModule) -> ParsedFunction:
    """A lambda on ``unit.def_line`` taking ``unit.params``, read as ``def lambda_<line>(...):
    return <body>``: the body's nodes are the lambda's own (their positions and names resolve
    as written); the def and its return take the lambda's position."""
    found: list = []

    class Lambdas(cst.CSTVisitor):
        def visit_Lambda(self, node: cst.Lambda) -> None:
            found.append(node)

    parsed.module.visit(Lambdas())
    hits = []
    for node in found:
        where = parsed.positions.get(node)
        params = node.params
        names = tuple(p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params))
        if where is not None and where.start.line == unit.def_line and names == unit.params:
            hits.append(node)
    if len(hits) != 1:
        raise TransformError(
            "cannot tell which lambda on this line is the one to differentiate" if hits else
            f"cannot find the lambda of {unit.name} in {unit.path}",
            location_of(unit, unit.def_line, 1),
            "write the function with `def` (or give each lambda on the line other parameter names)")
    node = hits[0]
    returned = cst.Return(value=node.body)
    line = cst.SimpleStatementLine([returned])
    made = cst.FunctionDef(name=cst.Name(f"lambda_{unit.def_line}"), params=node.params,
                           body=cst.IndentedBlock([line]))
    for new in (returned, line, made):
        parsed.adopt(new, node)
    return ParsedFunction(unit=unit, parsed=parsed, node=made)


def find_function(unit: SourceUnit) -> ParsedFunction:
    """Locate the FunctionDef named ``unit.name`` starting at ``unit.def_line`` (a lambda: read
    as a def, _lambda_function)."""
    parsed = parse_module(unit.text, unit.path)
    if unit.name == LAMBDA:
        return _lambda_function(unit, parsed)
    hits = []
    for node in parsed.functions.get(unit.name, ()):
        start = _def_start_line(parsed, node)
        if start <= unit.def_line <= parsed.positions[node].start.line:
            hits.append(node)
    if not hits:
        raise TransformError(
            f"cannot find the definition of {unit.name} in {unit.path}",
            location_of(unit, unit.def_line, 1),
            "was the file edited after it was imported? reload the module",
        )
    return ParsedFunction(unit=unit, parsed=parsed, node=hits[0])

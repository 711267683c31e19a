"""Parse: SourceUnit -> ParsedFunction (the libcst def node plus qualified names and positions).

The whole module is parsed so that imports and aliases resolve statically (``np.exp`` ->
``numpy.exp``); user code is never imported here.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Mapping, Optional

import libcst as cst
import libcst.matchers as m
from libcst.metadata import (
    MetadataWrapper,
    PositionProvider,
    QualifiedNameProvider,
    QualifiedNameSource,
)

from ..errors import Location, TransformError
from .capture import SourceUnit, location_of


@dataclass(frozen=True)
class ParsedModule:
    """A parsed module with its metadata maps (keyed by node)."""

    module: cst.Module
    qualnames: Mapping[cst.CSTNode, frozenset] = field(repr=False)
    positions: Mapping[cst.CSTNode, object] = field(repr=False)
    functions: Mapping[str, tuple] = field(default_factory=dict, repr=False)  # name -> defs


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
        (``f.<locals>.x``, ``helper``); builtins as ``builtins.abs``.
        """
        found = self.parsed.qualnames.get(node) or frozenset()
        if not found:
            return None
        # Deterministic choice when several bindings reach the name: prefer imports, then by name.
        ordered = sorted(found, key=lambda q: (q.source != QualifiedNameSource.IMPORT, q.name))
        return ordered[0].name


@functools.lru_cache(maxsize=64)
def parse_module(text: str, path: str) -> ParsedModule:
    """Parse ``text`` and resolve qualified names and positions (cached by text)."""
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        lines = text.splitlines()
        quoted = lines[exc.raw_line - 1] if 0 < exc.raw_line <= len(lines) else ""
        raise TransformError(
            f"syntax error: {exc.message}",
            Location(path, exc.raw_line, exc.raw_column + 1, quoted),
            "fix the syntax error first",
        ) from None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    resolved = wrapper.resolve_many([QualifiedNameProvider, PositionProvider])
    raw_q = resolved[QualifiedNameProvider]
    qualnames = {}
    for node, value in raw_q.items():
        got = value() if callable(value) else value
        if got:
            qualnames[node] = frozenset(got)
    positions = dict(resolved[PositionProvider])
    functions: dict = {}
    for node in m.findall(module, m.FunctionDef()):
        functions.setdefault(node.name.value, []).append(node)
    return ParsedModule(module=module, qualnames=qualnames, positions=positions,
                        functions={k: tuple(v) for k, v in functions.items()})


def _def_start_line(parsed: ParsedModule, node: cst.FunctionDef) -> int:
    first = node.decorators[0] if node.decorators else node
    return parsed.positions[first].start.line


def find_function(unit: SourceUnit) -> ParsedFunction:
    """Locate the FunctionDef named ``unit.name`` starting at ``unit.def_line``."""
    parsed = parse_module(unit.text, unit.path)
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

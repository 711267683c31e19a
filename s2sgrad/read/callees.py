"""Static callee lookup: a ParsedFunction and the name it calls (``h``, ``mod.h``) -> the
ParsedFunction of the def that name binds to in the source, or None.

A module-level def of the caller's own file, else (for a caller read from a file, the CLI's path)
a def imported from another file of the project, followed through re-exports. Never imports user
code; names bound outside the project (numpy, installed packages) give None.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from . import project
from .capture import SourceUnit, from_file
from .parse import ParsedFunction, ParsedModule, find_function, parse_module


def static_callee(caller: ParsedFunction, callee: str) -> Optional[ParsedFunction]:
    """The def ``callee`` (as written at a call in ``caller``) names in the source, or None."""
    node = _module_def(caller.parsed.module, callee)
    if node is not None:
        return _function_at(caller.unit, caller.parsed, node)
    if caller.unit.live is not None:
        return None
    return _imported_function(caller.unit.path, caller.parsed.module, callee.split("."), 0)


def _module_def(module: cst.Module, name: str) -> Optional[cst.FunctionDef]:
    return next((node for node in module.body
                 if isinstance(node, cst.FunctionDef) and node.name.value == name), None)


def _function_at(unit: SourceUnit, parsed: ParsedModule, node: cst.FunctionDef) -> ParsedFunction:
    first = node.decorators[0] if node.decorators else node
    line = parsed.positions[first].start.line
    return find_function(SourceUnit(unit.text, unit.path, unit.module, node.name.value, line,
                                    unit.sha256, unit.live, arrays=unit.arrays))


def _imported_function(path: str, module: cst.Module, parts: list, depth: int) -> Optional[ParsedFunction]:
    """Follow the import that binds ``parts[0]`` in ``module`` (the file at ``path``) to the def it
    names in another file of the project, through re-exports (``from .core import f`` in a package's
    ``__init__.py``). None for anything outside the project (numpy, installed packages)."""
    binding = project.import_binding(module, parts[0])
    if binding is None or depth > 8:
        return None
    dotted, level, attr = binding
    names = (dotted.split(".") if dotted else []) + ([attr] if attr is not None else []) + parts[1:]
    if len(names) < 2 and level == 0:
        return None
    filename = project.find_module_file(".".join(names[:-1]), level, path)
    if filename is None:
        return None
    text = project.read_text(filename)
    unit = from_file(filename, names[-1], 0, project.module_name(filename), text)
    parsed = parse_module(text, unit.path)
    node = _module_def(parsed.module, names[-1])
    if node is not None:
        return _function_at(unit, parsed, node)
    return _imported_function(filename, parsed.module, names[-1:], depth + 1)

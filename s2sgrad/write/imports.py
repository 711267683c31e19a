"""Imports a generated module needs: SourceUnits' module text + names read -> import lines.

Each global a generated function reads is imported the way the user's module binds it: the user's
own import statement (made absolute), or ``from <module> import NAME`` for the module's own
definitions. Names s2sgrad's header already binds (``np`` as numpy) and builtins need nothing.
"""

from __future__ import annotations

import builtins
import symtable

import libcst as cst

from ..read.project import import_bindings

_HEADER_BINDS = {"np": "import numpy as np", "s2s": "from s2sgrad import runtime as s2s"}


def _absolute(module: str, level: int, name: str) -> str:
    if level == 0:
        return name
    package = module.split(".")
    base = package[: len(package) - level]
    return ".".join(base + ([name] if name else []))


def module_bindings(module_text_node: cst.Module, module_name: str) -> dict:
    """Name -> import line, for every top-level binding of a module: its imports (made absolute)
    and its own definitions (imported from ``module_name``)."""
    out: dict = {}
    for stmt in module_text_node.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            out[stmt.name.value] = f"from {module_name} import {stmt.name.value}"
            continue
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = small.targets if isinstance(small, cst.Assign) else [small]
                for t in targets:
                    target = t.target
                    names = [target] if isinstance(target, cst.Name) else [
                        e.value for e in getattr(target, "elements", []) if isinstance(e.value, cst.Name)]
                    for n in names:
                        out[n.value] = f"from {module_name} import {n.value}"
    for bound, (dotted, level, attr, written) in import_bindings(module_text_node).items():
        if attr is None:
            aliased = dotted != bound  # `import a.b` binds `a` to `a`; `import a.b as m` binds `m`
            out[bound] = f"import {written} as {bound}" if aliased else f"import {written}"
        else:
            source = _absolute(module_name, level, dotted)
            alias = f" as {bound}" if bound != attr else ""
            out[bound] = f"from {source} import {attr}{alias}"
    return out


def free_globals(text: str) -> tuple:
    """Names the generated module ``text`` reads but never binds (sorted): what it must import.
    (Python's own symbol tables: the scoping rules exactly, at C speed.)"""
    top = symtable.symtable(text, "<generated>", "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()
             or s.is_namespace()}
    names: set = set()
    pending = [top]
    while pending:
        table = pending.pop()
        pending.extend(table.get_children())
        for sym in table.get_symbols():
            if not sym.is_referenced():
                continue
            if table is top or sym.is_global():
                names.add(sym.get_name())
    return tuple(sorted(names - bound - set(dir(builtins))))


def import_lines(units: tuple, names: tuple) -> tuple:
    """Import lines for ``names``, bound as the modules of ``units`` (ParsedFunctions) bind them.

    For a function read from disk every global is imported. For a live function the imports of
    other modules are written out, and the user module's own names (which the loader reads from
    where they live each time the code runs: write/binding.py) are listed in a comment.
    """
    lines = set()
    captured: dict = {}
    remaining = [n for n in names if n not in _HEADER_BINDS]
    for pf in units:
        bindings = module_bindings(pf.parsed.module, pf.unit.module)
        own = f"from {pf.unit.module} import "
        for name in list(remaining):
            line = bindings.get(name)
            if line is None:
                continue
            remaining.remove(name)
            if pf.unit.live is not None and line.startswith(own):
                captured.setdefault(pf.unit.module, set()).add(name)
            else:
                lines.add(line)
    if "math" in remaining:  # read by rules' templates (rules/elementwise.py) where no module binds it
        remaining.remove("math")
        lines.add("import math")
    for name in remaining:  # closure values and names the module binds dynamically
        module = units[0].unit.module if units else "?"
        captured.setdefault(module, set()).add(name)
    out = sorted(lines)
    for module in sorted(captured):
        out.append(f"# read from {module} when the code runs: {', '.join(sorted(captured[module]))}")
    return tuple(out)


def module_imports(units: tuple, header: tuple, body: str) -> tuple:
    """The import lines a generated module with ``header`` (comment and import lines) and
    ``body`` (its functions) needs beyond its header, for the functions of ``units``."""
    header_code = "\n".join(line for line in header if not line.startswith("#")) + "\n"
    return import_lines(units, free_globals(header_code + body))

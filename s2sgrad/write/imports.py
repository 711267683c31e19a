"""Imports a generated module needs: SourceUnits' module text + names read -> import lines.

Each global a generated function reads is imported the way the user's module binds it: the user's
own import statement (made absolute), or ``from <module> import NAME`` for the module's own
definitions. Names s2sgrad's header already binds (``np`` as numpy) and builtins need nothing.
"""

from __future__ import annotations

import builtins

import libcst as cst

_HEADER_BINDS = {"np": "import numpy as np", "s2s": "from s2sgrad import runtime as s2s"}


def _absolute(module: str, level: int, name: str) -> str:
    if level == 0:
        return name
    package = module.split(".")
    base = package[: len(package) - level]
    return ".".join(base + ([name] if name else []))


def module_bindings(module_text_node: cst.Module, module_name: str) -> dict:
    """Name -> import line, for every top-level binding of a module."""
    out: dict = {}
    empty = cst.Module([])
    for stmt in module_text_node.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            out[stmt.name.value] = f"from {module_name} import {stmt.name.value}"
            continue
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    dotted = empty.code_for_node(alias.name)
                    if alias.asname is not None:
                        bound = empty.code_for_node(alias.asname.name)
                        out[bound] = f"import {dotted} as {bound}"
                    else:
                        out[dotted.split(".")[0]] = f"import {dotted}"
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                source = empty.code_for_node(small.module) if small.module is not None else ""
                level = len(small.relative)
                source = _absolute(module_name, level, source)
                for alias in small.names:
                    name = empty.code_for_node(alias.name)
                    if alias.asname is not None:
                        bound = empty.code_for_node(alias.asname.name)
                        out[bound] = f"from {source} import {name} as {bound}"
                    else:
                        out[name] = f"from {source} import {name}"
            elif isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                targets = small.targets if isinstance(small, cst.Assign) else [small]
                for t in targets:
                    target = t.target
                    names = [target] if isinstance(target, cst.Name) else [
                        e.value for e in getattr(target, "elements", []) if isinstance(e.value, cst.Name)]
                    for n in names:
                        out[n.value] = f"from {module_name} import {n.value}"
    return out


def import_lines(static_units: list, names: tuple) -> tuple:
    """Sorted, de-duplicated import lines for ``names`` read by the statically read functions."""
    lines = set()
    builtin_names = set(dir(builtins))
    for pf in static_units:
        bindings = module_bindings(pf.parsed.module, pf.unit.module)
        for name in names:
            if name in _HEADER_BINDS:
                continue
            line = bindings.get(name)
            if line is not None:
                lines.add(line)
            elif name not in builtin_names:
                continue
    return tuple(sorted(lines))

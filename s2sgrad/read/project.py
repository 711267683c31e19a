"""Project layout, read statically: paths -> Python files, a file -> its module name, its
``@differentiable`` functions and its ``@register_gradient("name")`` definitions, an import -> the
file that defines the imported function.

Nothing here imports or executes user code: files are read as text and parsed with libcst.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from typing import Iterable, Optional

import libcst as cst
import libcst.matchers as m

from ..errors import Location, TransformError
from .parse import ParsedModule, parse_module

# What ``@differentiable`` may resolve to, whichever way the user imported it.
DECORATOR_NAMES = frozenset({
    "s2sgrad.differentiable",
    "s2sgrad.decorator.differentiable",
    "s2sgrad.api.differentiable",
})

# What ``@register_gradient`` may resolve to.
REGISTER_NAMES = frozenset({"s2sgrad.register_gradient", "s2sgrad.registry.register_gradient"})

_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})


@dataclass(frozen=True)
class Marked:
    """A module-level function decorated with ``@differentiable``.

    ``def_line`` is the line of its first decorator; ``wrt`` is ``None`` when the decorator does not
    name parameters (then the first parameter is meant); ``order`` 2 asks for second derivatives.
    """

    name: str
    def_line: int
    wrt: Optional[tuple]
    params: tuple
    order: int = 1


# ----- files ----------------------------------------------------------------------------------


def python_files(paths: Iterable[str]) -> tuple:
    """Every ``.py`` file named or found below the given paths, sorted, each once.

    Hidden directories (``.git``, ``.venv``), ``__pycache__`` and ``site-packages`` are skipped.
    Raises FileNotFoundError for a path that does not exist.
    """
    found = set()
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS
                                 and not os.path.exists(os.path.join(root, d, "pyvenv.cfg")))
                for name in files:
                    if name.endswith(".py"):
                        found.add(os.path.normpath(os.path.join(root, name)))
        elif os.path.isfile(path):
            found.add(os.path.normpath(path))
        else:
            raise FileNotFoundError(path)
    return tuple(sorted(found, key=lambda p: p.replace(os.sep, "/")))


def module_name(path: str) -> str:
    """The dotted module name of ``path``: its package path while directories hold ``__init__.py``,
    else the file stem (``examples/mlp.py`` -> ``mlp``, ``src/pkg/sub/m.py`` -> ``pkg.sub.m``)."""
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    stem = filename[:-3] if filename.endswith(".py") else filename
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.insert(0, package)
        if not package:
            break
    return ".".join(parts) if parts else os.path.basename(directory)


def package_root(path: str) -> str:
    """The directory from which ``module_name(path)`` is importable."""
    directory = os.path.dirname(os.path.abspath(path))
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return directory


# ----- @differentiable -----------------------------------------------------------------------


def _is_marker(parsed: ParsedModule, expr: cst.BaseExpression) -> bool:
    names = parsed.qualnames.get(expr) or frozenset()
    return any(q.name in DECORATOR_NAMES for q in names)


def _location(parsed: ParsedModule, text: str, path: str, node: cst.CSTNode) -> Location:
    pos = parsed.positions[node].start
    lines = text.splitlines()
    quoted = lines[pos.line - 1] if 0 < pos.line <= len(lines) else ""
    return Location(path, pos.line, pos.column + 1, quoted)


def _options_of(parsed: ParsedModule, text: str, path: str, call: cst.Call) -> tuple:
    """``(wrt, order)`` from ``@differentiable(wrt=..., order=...)``, read without running it."""
    wrt, order = None, 1
    for arg in call.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "order":
            order = _order_of(parsed, text, path, arg)
            continue
        if keyword != "wrt":
            raise TransformError(
                "@differentiable takes the keyword arguments wrt and order",
                _location(parsed, text, path, arg),
                'write @differentiable(wrt=("w", "b")), @differentiable(order=2) or plain @differentiable')
        try:
            value = ast.literal_eval(cst.Module([]).code_for_node(arg.value))
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, str):
            value = (value,)
        if not (isinstance(value, (tuple, list)) and value and all(isinstance(v, str) for v in value)):
            raise TransformError(
                "wrt must be a literal tuple of parameter names (the CLI reads it without running "
                "the file)", _location(parsed, text, path, arg.value),
                'write the names out, e.g. wrt=("w", "b")')
        wrt = tuple(value)
    return wrt, order


def _order_of(parsed: ParsedModule, text: str, path: str, arg: cst.Arg) -> int:
    if m.matches(arg.value, m.Integer(value=m.MatchIfTrue(lambda v: v in ("1", "2")))):
        return int(arg.value.value)
    raise TransformError("order must be the literal 1 or 2 (the CLI reads it without running the "
                         "file)", _location(parsed, text, path, arg.value),
                         "write order=2 for second derivatives")


def marked_functions(text: str, path: str) -> tuple:
    """The module-level functions of ``text`` decorated with ``@differentiable``, in source order.

    Raises TransformError (located) for a syntax error or a decorator argument the CLI cannot read.
    """
    if "differentiable" not in text:
        return ()
    parsed = parse_module(text, path)
    found = []
    for node in parsed.module.body:
        if not isinstance(node, cst.FunctionDef):
            continue
        for decorator in node.decorators:
            expr = decorator.decorator
            if isinstance(expr, cst.Call) and _is_marker(parsed, expr.func):
                wrt, order = _options_of(parsed, text, path, expr)
            elif _is_marker(parsed, expr):
                wrt, order = None, 1
            else:
                continue
            first = node.decorators[0]
            params = tuple(p.name.value for p in (*node.params.params, *node.params.kwonly_params))
            found.append(Marked(node.name.value, parsed.positions[first].start.line, wrt, params, order))
            break
    return tuple(found)


def registered_in_source(functions: tuple) -> tuple:
    """``(qualified name, rule function's name, module)`` for each ``@register_gradient("name")``
    definition at the top level of the modules of ``functions`` (ParsedFunctions), in source
    order, each module read once."""
    found, seen = [], set()
    for pf in functions:
        if pf.unit.path in seen:
            continue
        seen.add(pf.unit.path)
        if "register_gradient" not in pf.unit.text:  # no name can resolve to it: nothing to resolve
            continue
        for node in pf.parsed.module.body:
            if not isinstance(node, cst.FunctionDef):
                continue
            for deco in node.decorators:
                call = deco.decorator
                if isinstance(call, cst.Call) and call.args and \
                        pf.qualified_name(call.func) in REGISTER_NAMES and \
                        isinstance(call.args[0].value, cst.SimpleString):
                    found.append((call.args[0].value.evaluated_value, node.name.value, pf.unit.module))
    return tuple(found)


# ----- imports ---------------------------------------------------------------------------------


def _module_file(directory: str, dotted: str) -> Optional[str]:
    if not dotted:
        candidates = (os.path.join(directory, "__init__.py"),)
    else:
        base = os.path.join(directory, *dotted.split("."))
        candidates = (base + ".py", os.path.join(base, "__init__.py"))
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    return None


def find_module_file(dotted: str, level: int, caller_path: str) -> Optional[str]:
    """The file of the module an import in ``caller_path`` names, when it belongs to the project.

    A relative import (``level`` dots) is resolved from the caller's directory; an absolute one
    from the caller's directory, then from its package root. Installed packages are not searched.
    """
    caller_dir = os.path.dirname(os.path.abspath(caller_path))
    if level > 0:
        directory = caller_dir
        for _ in range(level - 1):
            directory = os.path.dirname(directory)
        return _module_file(directory, dotted)
    for root in dict.fromkeys((caller_dir, package_root(caller_path))):
        found = _module_file(root, dotted)
        if found is not None:
            return found
    return None


def import_bindings(module: cst.Module) -> dict:
    """Every top-level import binding of ``module``: name -> ``(dotted, level, attr)``.

    ``from .a import f`` binds ``f`` to ``("a", 1, "f", "a")``; ``import a.b as m`` binds ``m``
    to ``("a.b", 0, None, "a.b")``; ``import a.b`` binds ``a`` to ``("a", 0, None, "a.b")`` (the
    last item is the module as the statement names it). Later imports win.
    """
    empty = cst.Module([])
    found: dict = {}
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    dotted = empty.code_for_node(alias.name)
                    if alias.asname is not None:
                        found[empty.code_for_node(alias.asname.name)] = (dotted, 0, None, dotted)
                    else:
                        found[dotted.split(".")[0]] = (dotted.split(".")[0], 0, None, dotted)
            elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                dotted = empty.code_for_node(small.module) if small.module is not None else ""
                for alias in small.names:
                    imported = empty.code_for_node(alias.name)
                    bound = (empty.code_for_node(alias.asname.name) if alias.asname is not None
                             else imported)
                    found[bound] = (dotted, len(small.relative), imported, dotted)
    return found


def import_binding(module: cst.Module, name: str) -> Optional[tuple]:
    """How ``module`` binds ``name`` at top level through an import: ``(dotted, level, attr)``
    (see import_bindings), or None."""
    found = import_bindings(module).get(name)
    return None if found is None else found[:3]


def read_text(path: str) -> str:
    """A source file's text (UTF-8, universal newlines, as Python reads a module)."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()

"""Standalone generated files: a generated module's text -> the same text needing only numpy.

``s2sgrad emit --standalone`` passes each generated file through ``standalone_text``: the
``from s2sgrad import runtime as s2s`` line is replaced by a copy of the runtime helpers the file
calls (``s2s.<name>``) and of everything they read in turn (private helpers, constants, the
``GradientError`` class), taken from s2sgrad's own source, so the file imports no part of s2sgrad.
The copies keep their names, docstrings and comments; a name two copied modules (or the
generated code) both define is renamed ``_<module>_<name>`` in the copy that would clash. An
``s2s`` namespace at the end of the copies binds each helper's name, so the generated functions
read exactly as they do in a normal file. Helpers that import scipy lazily still do: imports
inside a function are copied as written (relative ones, to s2sgrad's own modules, become the
copies they name). The order is deterministic: modules in the order they import each other, each
definition where it stands in its module.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import re
from dataclasses import dataclass

_RUNTIME = "s2sgrad.runtime"
_PACKAGE = "s2sgrad"
_RUNTIME_IMPORT = "from s2sgrad import runtime as s2s"
_BANNER = ("# The s2sgrad runtime helpers this file calls, copied from s2sgrad's source "
           "(s2sgrad emit --standalone):\n# this file needs only numpy.")


class StandaloneError(ValueError):
    """A generated module cannot be made standalone (it uses s2sgrad beyond its runtime helpers)."""


@dataclass(frozen=True)
class _Module:
    """One s2sgrad module's source, parsed: its top-level definitions and import bindings."""

    name: str
    lines: tuple  # the source's lines, with their ends
    package: bool  # it is a package (its relative imports start from itself)
    definitions: dict  # name -> top-level ast statement defining it (def, class, assignment)
    imports: dict  # name -> ("s2sgrad", module, attribute) or ("line", import line)


def _import_bindings(module: str, node: ast.stmt, package: bool) -> dict:
    """Name -> binding for one import statement of ``module`` (``package``: it is a package)."""
    out = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            line = f"import {alias.name} as {alias.asname}" if alias.asname else f"import {alias.name}"
            out[bound] = ("line", line)
        return out
    parts = module.split(".")
    if node.level:
        base = parts if package else parts[:-1]
        base = base[: len(base) - node.level + 1]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module
    for alias in node.names:
        bound = alias.asname or alias.name
        if source == _PACKAGE or source.startswith(_PACKAGE + "."):
            out[bound] = (_PACKAGE, source, alias.name)
        elif source != "__future__":
            written = f" as {alias.asname}" if alias.asname else ""
            out[bound] = ("line", f"from {source} import {alias.name}{written}")
    return out


def _parse_module(name: str) -> _Module:
    """The parsed source of s2sgrad module ``name``."""
    live = importlib.import_module(name)
    text = inspect.getsource(live)
    package = hasattr(live, "__path__")
    definitions, imports = {}, {}
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            definitions[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:  # names bound, not attributes set (``E.__module__ = ...``)
                elements = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
                for element in elements:
                    if isinstance(element, ast.Name):
                        definitions[element.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.update(_import_bindings(name, node, package))
    return _Module(name, tuple(text.splitlines(keepends=True)), package, definitions, imports)


def _first_line(node: ast.stmt) -> int:
    """The 1-based first line of a top-level statement, its decorators included."""
    decorators = getattr(node, "decorator_list", ())
    return min([node.lineno] + [d.lineno for d in decorators])


def _local_relative_imports(node: ast.stmt) -> list:
    """The relative (s2sgrad-internal) import statements inside a definition's body."""
    return [sub for sub in ast.walk(node) if isinstance(sub, ast.ImportFrom) and sub.level
            and sub is not node]


class _Copier:
    """Collects the definitions the helpers need, transitively, and writes their copies."""

    def __init__(self) -> None:
        self.modules: dict = {}
        self.needed: dict = {}  # (module, name) -> ast statement
        self.lines: set = set()  # external import lines the copies need

    def module(self, name: str) -> _Module:
        if name not in self.modules:
            self.modules[name] = _parse_module(name)
        return self.modules[name]

    def home(self, name: str) -> tuple:
        """(module, name) of the definition behind ``s2s.<name>``."""
        value = getattr(importlib.import_module(_RUNTIME), name, None)
        if value is None:
            raise StandaloneError(f"the generated file reads s2s.{name}, which s2sgrad's runtime "
                                  f"does not define")
        owner = getattr(value, "__module__", None)
        if owner and owner.startswith(_RUNTIME) and name in self.module(owner).definitions:
            return owner, name
        for module_name in sorted(m for m in _runtime_modules()):
            if name in self.module(module_name).definitions:
                return module_name, name
        raise StandaloneError(f"cannot find the source of s2s.{name} in s2sgrad's runtime")

    def need(self, module_name: str, name: str) -> None:
        """Add ``name`` of ``module_name`` (a definition, or an import of one) and what it reads."""
        module = self.module(module_name)
        binding = module.imports.get(name)
        if binding is not None and name not in module.definitions:
            if binding[0] == "line":
                self.lines.add(binding[1])
            else:
                self.need(binding[1], binding[2])
            return
        if (module_name, name) in self.needed:
            return
        node = module.definitions.get(name)
        if node is None:
            raise StandaloneError(f"cannot copy {module_name}.{name}: it is not a top-level "
                                  f"definition there")
        self.needed[(module_name, name)] = node
        for other in (n for n, v in module.definitions.items() if v is node):
            self.needed[(module_name, other)] = node
        for local in _local_relative_imports(node):
            for _, source, attribute in _import_bindings(module_name, local, module.package).values():
                self.need(source, attribute)
        for read in sorted({sub.id for sub in ast.walk(node) if isinstance(sub, ast.Name)}):
            if read in module.definitions or read in module.imports:
                self.need(module_name, read)


def _runtime_modules() -> tuple:
    """The runtime's submodules' names."""
    package = importlib.import_module(_RUNTIME)
    return tuple(f"{_RUNTIME}.{name}" for name in sorted(vars(package))
                 if inspect.ismodule(getattr(package, name))
                 and getattr(package, name).__name__ == f"{_RUNTIME}.{name}")


def _module_order(copier: _Copier) -> list:
    """The copied modules, each after the s2sgrad modules it imports (ties by name)."""
    names = sorted({module for module, _ in copier.needed})
    deps = {m: {b[1] for b in copier.module(m).imports.values() if b[0] == _PACKAGE} for m in names}
    order: list = []

    def visit(m: str) -> None:  # no cycles: the modules were imported
        for d in sorted(deps[m] & deps.keys()):
            visit(d)
        if m not in order:
            order.append(m)

    for m in names:
        visit(m)
    return order


def _renames(copier: _Copier, taken: set) -> dict:
    """(module, name) -> new name, for copied names that clash with another module's copy or with
    a name the generated code (``taken``) binds."""
    owners: dict = {}
    for module, name in copier.needed:
        owners.setdefault(name, set()).add(module)
    out = {}
    used = set(owners) | taken
    for (module, name) in sorted(copier.needed):
        if len(owners[name]) > 1 or name in taken:
            new = f"_{module.rsplit('.', 1)[-1]}_{name.lstrip('_')}"
            while new in used:
                new += "_"
            used.add(new)
            out[(module, name)] = new
    return out


def _rename_text(lines: list, first: int, node: ast.stmt, names: dict) -> list:
    """The statement's source lines (``lines``, its first at 1-based ``first``) with every
    identifier in ``names`` (old -> new) renamed: names read or bound, parameters, and the name a
    def or class defines; attributes and keyword arguments are another namespace and stay."""
    edits = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in names:
            edits.append((sub.lineno, sub.col_offset, len(sub.id), names[sub.id]))
        elif isinstance(sub, ast.arg) and sub.arg in names:
            edits.append((sub.lineno, sub.col_offset, len(sub.arg), names[sub.arg]))
        elif isinstance(sub, ast.keyword) and sub.arg in names:
            raise StandaloneError(f"cannot rename {sub.arg}: a call passes it as a keyword")
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and sub.name in names:
            line = lines[sub.lineno - first]
            match = re.compile(r"(def|class)\s+(" + re.escape(sub.name) + r")\b").search(
                line.encode("utf-8")[sub.col_offset:].decode("utf-8"))
            start = len(line.encode("utf-8")[:sub.col_offset]) + match.start(2)
            edits.append((sub.lineno, start, len(sub.name), names[sub.name]))
    out = list(lines)
    for lineno, col, width, new in sorted(edits, reverse=True):
        raw = out[lineno - first].encode("utf-8")
        out[lineno - first] = (raw[:col] + new.encode("utf-8") + raw[col + width:]).decode("utf-8")
    return out


def _without_lines(lines: list, first: int, nodes: list) -> list:
    """``lines`` without the lines of the statements ``nodes`` (local relative imports)."""
    dropped = {n for node in nodes for n in range(node.lineno, node.end_lineno + 1)}
    return [line for i, line in enumerate(lines, first) if i not in dropped]


def _copies(copier: _Copier, renames: dict) -> str:
    """The copied definitions' source: module by module, each in its module's order."""
    blocks = []
    for module_name in _module_order(copier):
        module = copier.module(module_name)
        nodes = sorted({id(n): n for (m, _), n in copier.needed.items() if m == module_name}.values(),
                       key=_first_line)
        path = module_name.replace(".", "/") + ".py"
        chunk = f"# from {path}\n"
        previous = None
        for node in nodes:
            first = _first_line(node)
            lines = list(module.lines[first - 1: node.end_lineno])
            names = {name: renames[(module_name, name)] for name, defined in module.definitions.items()
                     if defined is node and (module_name, name) in renames}
            for sub in ast.walk(node):
                read = sub.id if isinstance(sub, ast.Name) else None
                if read is None:
                    continue
                target = _target(copier, module_name, read)
                if target in renames:
                    names[read] = renames[target]
            for local in _local_relative_imports(node):
                for bound, (_, source, attribute) in _import_bindings(module_name, local, module.package).items():
                    target = _target(copier, source, attribute)
                    if target in renames:
                        names[bound] = renames[target]
            lines = _rename_text(lines, first, node, names)
            lines = _without_lines(lines, first, _local_relative_imports(node))
            simple = isinstance(node, (ast.Assign, ast.AnnAssign))
            if previous is not None:
                chunk += "" if simple and previous else "\n\n"
            chunk += "".join(lines).rstrip("\n") + "\n"
            previous = simple
        blocks.append(chunk)
    return "\n\n".join(blocks)


def _target(copier: _Copier, module_name: str, name: str):
    """The (module, name) of the copied definition that ``name`` in ``module_name`` means."""
    module = copier.module(module_name)
    if name in module.definitions:
        return module_name, name
    binding = module.imports.get(name)
    if binding is not None and binding[0] == _PACKAGE:
        return _target(copier, binding[1], binding[2])
    return None


def _helper_reads(tree: ast.Module) -> list:
    """The names the generated module reads as ``s2s.<name>`` (sorted); refuses other uses of ``s2s``."""
    attributes = {id(sub.value) for sub in ast.walk(tree)
                  if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "s2s"}
    for sub in ast.walk(tree):
        if isinstance(sub, ast.Name) and sub.id == "s2s" and id(sub) not in attributes:
            raise StandaloneError(f"line {sub.lineno}: the generated code uses s2s other than as "
                                  f"s2s.<helper>; it cannot be made standalone")
    return sorted({sub.attr for sub in ast.walk(tree) if isinstance(sub, ast.Attribute)
                   and isinstance(sub.value, ast.Name) and sub.value.id == "s2s"})


def _top_level_names(tree: ast.Module) -> set:
    """The names the generated module binds at its top level."""
    out = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        else:
            out.update(sub.id for sub in ast.walk(node)
                       if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store))
    return out


def _imports_s2sgrad(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name == _PACKAGE or a.name.startswith(_PACKAGE + ".") for a in node.names)
    return isinstance(node, ast.ImportFrom) and node.module is not None and (
        node.module == _PACKAGE or node.module.startswith(_PACKAGE + "."))


def _check_imports(tree: ast.Module, text: str) -> None:
    """Raise StandaloneError where the generated code imports s2sgrad other than by its one
    ``from s2sgrad import runtime as s2s`` line."""
    for node in tree.body:
        if _imports_s2sgrad(node) and ast.get_source_segment(text, node) != _RUNTIME_IMPORT:
            raise StandaloneError(f"line {node.lineno}: the generated code imports s2sgrad "
                                  f"({ast.get_source_segment(text, node)}); it cannot be made standalone")
    for node in ast.walk(tree):
        if node not in tree.body and isinstance(node, (ast.Import, ast.ImportFrom)) and _imports_s2sgrad(node):
            raise StandaloneError(f"line {node.lineno}: the generated code imports s2sgrad; it "
                                  "cannot be made standalone")


def standalone_text(text: str) -> str:
    """The generated module ``text`` made standalone: the runtime helpers it calls (and what they
    read) copied in place of its ``from s2sgrad import runtime as s2s``, so it imports only numpy
    (and what the user's code imports); its header as given (the CLI's regenerate command says
    ``--standalone``). Raises StandaloneError when the code uses s2sgrad otherwise."""
    tree = ast.parse(text)
    _check_imports(tree, text)
    helpers = _helper_reads(tree)
    copier = _Copier()
    for name in helpers:
        copier.need(*copier.home(name))
    taken = _top_level_names(tree) - {"s2s"}
    bound_by_user = {}  # name -> the generated module's import line binding it
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) and not _imports_s2sgrad(node):
            for alias in node.names:
                bound_by_user[alias.asname or alias.name.split(".")[0]] = ast.get_source_segment(text, node)
    new_imports = []
    for line in sorted(copier.lines | ({"import types"} if helpers else set())):
        name = _import_name(line)
        if bound_by_user.get(name) == line:
            continue
        if name in taken:
            raise StandaloneError(f"the generated code binds {name}, which the copied runtime "
                                  f"helpers bind by `{line}`")
        new_imports.append(line)
    renames = _renames(copier, taken | {_import_name(line) for line in new_imports})
    block = ""
    if helpers:
        namespace = "".join(f"    {name}={renames.get(copier.home(name), name)},\n" for name in helpers)
        block = (f"{_BANNER}\n\n{_copies(copier, renames)}\n\n\n"
                 f"s2s = types.SimpleNamespace(\n{namespace})\n\n\n")
    lines = text.splitlines(keepends=True)
    prelude = next((i for i, node in enumerate(tree.body)
                    if not isinstance(node, (ast.Import, ast.ImportFrom))), len(tree.body))
    body = _first_line(tree.body[prelude]) - 1 if prelude < len(tree.body) else len(lines)
    header = len(list(itertools.takewhile(lambda line: line.startswith("#"), lines)))
    kept = [line for line in lines[header:body] if line.rstrip("\n") != _RUNTIME_IMPORT]
    head = "".join(lines[:header])
    # the copies' annotations stay unevaluated, as in s2sgrad's own modules
    imports = "from __future__ import annotations\n" + "".join(kept).rstrip("\n") + "\n"
    imports += "".join(f"{line}\n" for line in new_imports)
    out = head + imports + "\n\n" + block + "".join(lines[body:])
    ast.parse(out)  # a standalone file that does not parse is a bug: fail here, loudly
    return out


def _import_name(line: str) -> str:
    (name,) = _import_bindings("", ast.parse(line).body[0], False)
    return name

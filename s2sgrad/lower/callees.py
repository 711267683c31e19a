"""Module-level functions a differentiated function calls (callees), inlined where that is sound
and pays: a ParsedFunction and the name a call reaches -> the ``def`` to inline there, or None (the
call stays a call, and the callee is differentiated as a function of its own, pipeline.py).

A callee is inlined (lower/closures.py writes its body before the statement holding the call, its
parameters bound to the call's arguments, its names renamed apart) when all of these hold:

- it is a ``def`` at the top level of the caller's own file, the only binding of its name there
  (for a live function, the function that name holds at run time is that def, and every global it
  reads is the value the caller sees under that name);
- it is a plain function: not decorated (so never ``custom_gradient``), not async, no ``*args`` or
  ``**kwargs``, literal defaults only, and no gradient registered for it (``register_gradient``);
- its body is straight-line code within a budget of ``BUDGET`` statements: assignments to names,
  ``if`` blocks, returns (no loops, ``with``, ``try``, nested functions, lambdas, comprehensions,
  augmented assignments, or writes into subscripts, attributes or ``out=``, which would change
  what the caller passed);
- it builds no object of a class of its module and calls no method of a value the module binds
  (the passes that read objects run before callees are inlined);
- it calls none of its parameters (a function given to it stays a call, lower/inner.py's and
  lower/closures.py's refusals and inlining of functions passed as values apply there);
- it is not the caller itself or a function being inlined (recursion stays a call, refused where
  it carries a derivative), and the caller binds none of the globals it reads.

The decision is by structure and size, never by name; the inlined statements keep their places
in the callee's own lines, so generated comments quote them and refusals point at them.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

import libcst as cst
import libcst.matchers as m

from .. import registry
from ..read.live import python_function
from ..read.names import name_nodes
from ..read.parse import ParsedFunction
from ..read.paths import display_path
from ..read.project import registered_in_source
from ..read.walk import findall
from .local_scope import _defaults, _literal, _params, _scope

BUDGET = 16  # statements of a callee's body, ``if`` headers counted, that are inlined at most

_NOT_STRAIGHT = (m.Lambda() | m.ListComp() | m.GeneratorExp() | m.DictComp() | m.SetComp()
                 | m.Yield() | m.Await() | m.NamedExpr() | m.FunctionDef() | m.ClassDef())
_MISSING = object()


def inlinable_def(pf: ParsedFunction, name: str) -> Optional[cst.FunctionDef]:
    """The top-level ``def name`` of ``pf``'s file when a call of ``name`` in ``pf`` may inline it
    (the module docstring's conditions that do not depend on the call), else None."""
    node = _only_def(pf.parsed.module, name)
    if node is None or node.decorators or node.asynchronous is not None or name == pf.name:
        return None
    params = node.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None or \
            any(not _literal(d) for d in _defaults(params).values()):
        return None
    if _size(node.body) is None or _size(node.body) > BUDGET or findall(node.body, _NOT_STRAIGHT):
        return None
    names = {p.name.value for p in _params(params)}
    if any(isinstance(call.func, cst.Name) and call.func.value in names
           for call in findall(node.body, m.Call())):
        return None  # it calls what it is given: a function (inlined only given a local one)
    if findall(node.body, m.Arg(keyword=m.Name("out"))):
        return None  # it writes into an array it may have been given
    if _uses_module_objects(pf.parsed.module, node):
        return None  # objects are read where the differentiated function itself uses them
    if _registered(pf, name) or not _same_live_function(pf, name, node):
        return None
    return node


def _uses_module_objects(module: cst.Module, node: cst.FunctionDef) -> bool:
    """Whether ``node`` builds an object of a class of ``module`` (``Affine(...)``) or calls a
    method of a value the module binds by other than an import (``AFFINE.forward(x)``): the passes
    that read objects built in a function and methods of global objects run before callees are
    inlined (pipeline.lower), so such a callee stays a call."""
    classes = {s.name.value for s in module.body if isinstance(s, cst.ClassDef)}
    values = set()
    for line in module.body:
        for small in (line.body if isinstance(line, cst.SimpleStatementLine) else ()):
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else \
                [small.target] if isinstance(small, cst.AnnAssign) else []
            values.update(t.value for t in targets if isinstance(t, cst.Name))
    for call in findall(node.body, m.Call()):
        func = call.func
        if isinstance(func, cst.Name) and func.value in classes:
            return True
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                func.value.value in values | classes:
            return True
    return False


def reads_unbound(fn: cst.FunctionDef, caller_bound: set) -> bool:
    """Whether every global ``fn`` reads is a name the caller does not bind (``caller_bound``:
    its own names and those inlined bodies bound so far), so it reads the same value inlined."""
    return not globals_read(fn) & caller_bound


def _only_def(module: cst.Module, name: str) -> Optional[cst.FunctionDef]:
    """The top-level ``def name`` of ``module`` when nothing else at module level binds ``name``
    (another def, an assignment, an import)."""
    bindings = [node for bound, node in _scope(module).bound if bound == name]
    imported = any(alias.asname is None and cst.Module([]).code_for_node(alias.name) == name
                   for alias in findall(module, m.ImportAlias()))
    if len(bindings) != 1 or imported or not isinstance(bindings[0], cst.FunctionDef):
        return None
    return bindings[0] if any(node is bindings[0] for node in module.body) else None


def _size(suite: cst.BaseSuite) -> Optional[int]:
    """The statements of a straight-line block (``if`` headers counted), or None for a block
    holding any other statement."""
    count = 0
    for line in suite.body:
        if isinstance(line, cst.If):
            inner = [_size(line.body)]
            orelse = line.orelse
            while orelse is not None:
                inner.append(_size(orelse.body))
                orelse = orelse.orelse if isinstance(orelse, cst.If) else None
            if None in inner:
                return None
            count += 1 + sum(inner)
        elif isinstance(line, cst.SimpleStatementLine) and all(_simple(s) for s in line.body):
            count += len(line.body)
        else:
            return None
    return count


def _simple(small: cst.BaseSmallStatement) -> bool:
    """Whether a small statement may be inlined: an assignment to names, a return, ``pass``, a
    docstring."""
    if isinstance(small, cst.Assign):
        return all(_names_only(t.target) for t in small.targets)
    if isinstance(small, cst.AnnAssign):
        return small.value is not None and isinstance(small.target, cst.Name)
    if isinstance(small, cst.Expr):
        return isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))
    return isinstance(small, (cst.Return, cst.Pass))


def _names_only(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(_names_only(e.value) for e in target.elements)
    return isinstance(target, cst.StarredElement) and _names_only(target.value)


def _registered(pf: ParsedFunction, name: str) -> bool:
    """Whether a gradient is registered for the function ``name`` of ``pf``'s module (at run
    time, or by a ``@register_gradient`` definition in its file)."""
    names = {name, f"{pf.unit.module}.{name}"}
    live = pf.unit.live
    if live is not None and name in live:
        value = live[name]
        names.add(f"{getattr(value, '__module__', '')}.{getattr(value, '__name__', '')}")
    return bool(names & set(registry.registered())) or \
        any(found in names for found, _, _ in registered_in_source((pf,)))


def _same_live_function(pf: ParsedFunction, name: str, node: cst.FunctionDef) -> bool:
    """For a live caller: whether ``name`` holds the function ``node`` defines (not one replaced
    at run time; or, where the name is not bound yet, a def further down the file, as
    pipeline._resolve_callee reads it) and each global it reads is what the caller sees under
    that name. Without the live function (the command line), the file says: True."""
    live = pf.unit.live
    if live is None:
        return True
    if name not in live:
        module = sys.modules.get(pf.unit.module)
        scope = getattr(module, "__dict__", None)
        return scope is not None and name not in scope and \
            all(live.get(n, _MISSING) is scope.get(n, _MISSING) for n in globals_read(node))
    fn = live.get(name)
    where = pf.parsed.positions.get(node)
    code = getattr(fn, "__code__", None)
    if python_function(fn) is not fn or code is None or where is None or \
            code.co_firstlineno != where.start.line or \
            display_path(code.co_filename) != pf.unit.path or code.co_freevars:
        return False
    own: Any = getattr(fn, "__globals__", {})
    return all(live.get(n, _MISSING) is own.get(n, _MISSING) for n in code.co_names
               if n in live or n in own)


def globals_read(fn: cst.FunctionDef) -> set:
    """The names ``fn``'s body reads that neither it nor its parameters bind."""
    own = {name for name, _ in _scope(fn.body).bound} | {p.name.value for p in _params(fn.params)}
    return {read.value for read in name_nodes(fn.body, reads_only=True)} - own

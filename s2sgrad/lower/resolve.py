"""What a name in the user's code stands for: a call target -> the dotted name it resolves to
(``numpy.tanh``, ``mymodule.predict``), statically or from the live function; a parameter -> its
default as code."""

from __future__ import annotations

import ast
import cmath
import sys
import types
from typing import Any, Optional

import libcst as cst
import numpy as np

from .. import runtime
from ..read.parse import ParsedFunction
from .scope import read_names
from .text import code


def callee_name(pf: ParsedFunction, func: cst.BaseExpression) -> Optional[str]:
    """The dotted name a call target resolves to, statically or from the live function."""
    name = pf.qualified_name(func)
    if name is not None and "<locals>" not in name:
        return name
    live = pf.unit.live
    text = code(func)
    if live is not None:
        value = _live_lookup(live, text)
        if value is not None:
            return object_name(value) or text
    return name or text


def default_of(pf: ParsedFunction, param: cst.Param) -> Optional[cst.BaseExpression]:
    """A parameter's default as code. Python evaluated it once, when the function was defined;
    generated code evaluates its text when loaded, so the text must give that value: as
    written where it is a literal or reads only what still holds the value the function was
    given; a number's or a string's value where the expression now gives another (a name
    rebound since the def, ``num=num`` in a closure factory, ``__defaults__`` changed); refused,
    located, for any other value a name now read differently held."""
    live = pf.unit.live
    if param.default is None or live is None:
        return param.default
    name = param.name.value
    if name not in pf.unit.defaults:  # (not this unit's function: nothing to compare with)
        return param.default
    value = pf.unit.defaults[name]
    written = param.default
    as_written = _literal_value(written)
    if as_written is not _NOT_LITERAL and _same(as_written, value):
        return written
    reads = read_names(written)
    if all(n in live for n in reads) and not _literal(value) and \
            (not isinstance(written, cst.Name) or live[written.value] is value):
        return written  # (an expression of modules and callables: evaluated again, the same)
    if _literal(value):
        return cst.parse_expression(repr(value))
    raise pf.error(written, f"the default of `{name}` is not the value `{code(written)}` gives "
                   "now (Python evaluated it when the function was defined), and it is not a "
                   "number or string that code could spell",
                   "define the function again, so that its default is what the name holds now, "
                   "or give the default a name that is not rebound")


_NOT_LITERAL = object()


def _literal_value(node: cst.BaseExpression) -> Any:
    """The value of a literal number, string, True, False or None (a sign in front too), else
    _NOT_LITERAL."""
    try:
        found = ast.literal_eval(code(node))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NOT_LITERAL
    return found if _literal(found) else _NOT_LITERAL


def _literal(value: Any) -> bool:
    """A value code can spell exactly by its repr: a finite number, a string, a bool, None."""
    return isinstance(value, (bool, int, float, complex, str, type(None))) and \
        not (isinstance(value, (float, complex)) and not cmath.isfinite(value))


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def is_live_array(pf: ParsedFunction, node: cst.BaseExpression) -> bool:
    """Whether a global the function reads (``A`` in ``A.dot(x)``) is, in the live function, a
    numpy array (or was, for a generated gradient read again): its method calls are array
    methods. Without the live function (the CLI, which never runs the file) nothing is known,
    and such a call is refused as unknown."""
    live = pf.unit.live
    if live is None:
        return isinstance(node, cst.Name) and node.value in pf.unit.arrays
    return isinstance(node, (cst.Name, cst.Attribute)) and \
        isinstance(_live_lookup(live, code(node)), np.ndarray)


def live_arrays(live: Optional[dict]) -> frozenset:
    """The names in a live namespace bound to numpy arrays."""
    return frozenset(n for n, v in (live or {}).items() if isinstance(v, np.ndarray))


def _live_lookup(live: dict, dotted: str) -> Any:
    parts = dotted.split(".")
    if parts[0] not in live:
        return None
    value = live[parts[0]]
    for p in parts[1:]:
        value = getattr(value, p, None)
        if value is None:
            return None
    return value


def object_name(value: Any) -> Optional[str]:
    if isinstance(value, types.ModuleType):
        return value.__name__
    if isinstance(value, types.MethodType):
        owner = _public_instance(value.__self__)
        if owner is not None:  # a method of an object a library exports (scipy.stats.dirichlet)
            return f"{owner}.{value.__name__}"
    module = getattr(value, "__module__", None)
    name = getattr(value, "__name__", None)
    if module and name:
        return f"{_exported_from(module, name, value)}.{name}"
    return None


def _public_module(module: str) -> Optional[types.ModuleType]:
    """The package above the first private part of the module path ``module``
    (``scipy.stats`` for ``scipy.stats._multivariate``), where it is imported; else None."""
    parts = module.split(".")
    private = next((i for i, part in enumerate(parts) if part.startswith("_")), None)
    return sys.modules.get(".".join(parts[:private])) if private else None


def _public_instance(owner: Any) -> Optional[str]:
    """The dotted name under which a library's public module exports the object ``owner`` (an
    instance its private module's class made: ``scipy.stats.dirichlet``), or None."""
    kind = type(owner)
    public = _public_module(getattr(kind, "__module__", "") or "")
    if public is None or isinstance(owner, (type, types.ModuleType)):
        return None
    found = sorted(name for name, held in vars(public).items() if held is owner and not name.startswith("_"))
    return f"{public.__name__}.{found[0]}" if found else None


def _exported_from(module: str, name: str, value: Any) -> str:
    """The module that names ``value``: ``s2sgrad.runtime`` for a runtime helper (defined in one
    of its modules, e.g. ``s2sgrad.runtime.reductions``, and re-exported by the package, which is
    how generated code and the rules name it); for a function a library defines in a private
    module and exports from a public one (``scipy.special._logsumexp.logsumexp`` is
    ``scipy.special.logsumexp``, the name its rule has), the public one: the package above the
    first private part of the path, where it holds the same object; else ``module``."""
    if module.startswith(runtime.__name__ + ".") and getattr(runtime, name, None) is value:
        return runtime.__name__
    public = _public_module(module)
    if public is not None and getattr(public, name, None) is value:
        return public.__name__
    return module

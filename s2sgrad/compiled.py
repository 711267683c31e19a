"""The compiled option (``grad(..., compiled=True)``, the optional extra ``s2sgrad[numba]``): a
generated function for numbers -> the same function compiled by numba, or the reason it stays
Python.

Compiled code pays where numpy cannot be fast: loops on Python floats (`kepler`, a pendulum's
Euler steps), where each operation costs the interpreter tens of nanoseconds and numba's machine
code one. The generated Python stays the source of truth (``s2sgrad.source`` shows it); numba
compiles that function as it is.

Only a function that reads no global but ``math``, ``numpy`` and Python's builtins is compiled:
numba reads a global's value once, when it compiles, while the generated code's Binding gives
it the user's current values before each run (a global changed between calls would be stale).
"""

from __future__ import annotations

import builtins
import dis
import importlib.util
import math
import types
from typing import Any, Callable, Iterator

import numpy as np

from .errors import UsageError

_FIXED = (math, np)  # modules whose values never change under compiled code
INSTALL_HINT = "install the extra: pip install 's2sgrad[numba]'"


def require_numba(what: str) -> None:
    """Raise a UsageError saying ``what`` needs numba, where it is not installed."""
    if importlib.util.find_spec("numba") is None:
        raise UsageError(f"{what}: compiled=True compiles with numba, which is not installed; "
                         f"{INSTALL_HINT}")


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def changing_globals(fn: Callable) -> list:
    """The globals ``fn`` reads whose value may change between calls: all but ``math``,
    ``numpy`` and the builtins it does not shadow."""
    found = set()
    for code in _codes(fn.__code__):
        for instruction in dis.get_instructions(code):
            if instruction.opname not in ("LOAD_GLOBAL", "LOAD_NAME"):
                continue
            name = instruction.argval
            if name in fn.__globals__:
                if not any(fn.__globals__[name] is module for module in _FIXED):
                    found.add(name)
            elif not hasattr(builtins, name):
                found.add(name)
    return sorted(found)


def compile_numba(fn: Callable) -> tuple:
    """``(compiled, "")``: ``fn`` given to ``numba.njit`` (it compiles on the first call, for
    the types of that call's arguments); or ``(None, why)`` where it stays Python."""
    changing = changing_globals(fn)
    if changing:
        return None, (f"{fn.__name__} reads {', '.join(changing)}; compiled code reads only "
                      "math, numpy and Python's builtins (a global may change between calls, "
                      "and s2sgrad's runtime helpers do not compile)")
    import numba  # noqa: PLC0415 - an optional extra, loaded (about 0.3 s) only when asked for

    return numba.njit(fn), ""


def is_compile_error(exc: BaseException) -> bool:
    """Whether ``exc`` is numba's refusal to compile (typing, unsupported code), not an error
    of the computation itself."""
    return any(klass.__module__.startswith("numba") for klass in type(exc).__mro__)


def call_compiled(compiled: Any, python: Callable, args: tuple, kwargs: dict) -> tuple:
    """``(result, compiled)``: ``compiled(*args, **kwargs)``, or where numba cannot compile it,
    ``python``'s result and None (run Python from then on)."""
    try:
        return compiled(*args, **kwargs), compiled
    except Exception as exc:  # noqa: BLE001
        if not is_compile_error(exc):
            raise
        return python(*args, **kwargs), None


__all__ = ["INSTALL_HINT", "call_compiled", "changing_globals", "compile_numba",
           "is_compile_error", "require_numba"]

"""Source capture: a live function or a file on disk -> SourceUnit (module text, path, where the def is).

Nothing here imports or runs user code; for a live function we read what Python already loaded.
"""

from __future__ import annotations

import ast
import hashlib
import linecache
import os
import sys
import types
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from ..errors import Location, TransformError
from .live import _unwrap, check_current, live_names, python_function
from .paths import display_path


@dataclass(frozen=True)
class SourceUnit:
    """The text of the module holding a function, and which function in it is meant.

    ``def_line`` is the 1-based line of the first decorator (or of ``def`` when undecorated), as
    Python's ``co_firstlineno`` reports it. ``live`` holds the function's globals and closure values
    when the unit comes from a live function (used to resolve names the file cannot, and to load).
    ``arrays`` names the globals known to hold numpy arrays where ``live`` is gone (a generated
    gradient read again for second order): their method calls are array methods.
    """

    text: str
    path: str
    module: str
    name: str
    def_line: int
    sha256: str
    live: Optional[Mapping[str, Any]] = field(default=None, compare=False, repr=False)
    defaults: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    arrays: frozenset = field(default=frozenset(), compare=False, repr=False)
    params: tuple = field(default=(), compare=False)  # a lambda's parameters (which one is meant)


PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # s2sgrad/


def internal_file(filename: str) -> bool:
    """True for a file of s2sgrad itself (its frames are kept out of what users see)."""
    return not filename.startswith("<") and os.path.abspath(filename).startswith(PACKAGE_DIR + os.sep)


def _quoted(filename: str, line: int, namespace: Optional[Mapping] = None) -> str:
    lines = linecache.getlines(filename, namespace)
    return lines[line - 1] if 0 < line <= len(lines) else ""


def _column(frame: types.FrameType, line: int) -> int:
    """The 1-based column of the call ``frame`` is executing (Python 3.11+ records it), else of
    the first character of its line."""
    positions = getattr(frame.f_code, "co_positions", None)
    if positions is not None and frame.f_lasti >= 0:
        for index, where in enumerate(positions()):
            if index == frame.f_lasti // 2:
                if where[0] == line and where[2] is not None:
                    return where[2] + 1
                break
    text = _quoted(frame.f_code.co_filename, line, frame.f_globals)
    return len(text) - len(text.lstrip()) + 1


def caller_location() -> Location:
    """Where the user's code called s2sgrad: the innermost frame outside s2sgrad, its line quoted."""
    frame: Optional[types.FrameType] = sys._getframe(1)
    while frame is not None and internal_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return Location("<unknown>", 0, 0, "")
    filename, line = frame.f_code.co_filename, frame.f_lineno
    return Location(display_path(filename), line, _column(frame, line),
                    _quoted(filename, line, frame.f_globals))


def _lambda_column(code: types.CodeType, lines: list) -> int:
    """The 1-based column of the lambda whose code is ``code`` on its first line (1 when unknown)."""
    try:
        tree = ast.parse("".join(lines))
    except (SyntaxError, ValueError):
        return 1
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    found = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda)
             and node.lineno == code.co_firstlineno]
    found.sort(key=lambda node: node.col_offset)
    for node in found:
        args = node.args
        if tuple(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs) == params:
            text = lines[node.lineno - 1].encode()
            return len(text[:node.col_offset].decode(errors="replace")) + 1
    return 1


MADE_ATTR = "__s2sgrad_made__"  # on what s2sgrad returns: how it was made, e.g. "s2sgrad.grad(f)"
SOURCE_ATTR = "__s2sgrad_source__"  # on what s2sgrad returns: the generated text behind it


def check_function(fn: Any) -> None:
    """Refuse, at the user's call, what is not a plain Python function s2sgrad can read: a
    builtin, a ufunc, a bound method, a class, or a function s2sgrad itself returned."""
    fn = _unwrap(fn)
    made = getattr(fn, MADE_ATTR, None)
    if made is not None:
        raise TransformError(
            f"{made} is a function s2sgrad returned that it cannot transform again yet",
            caller_location(),
            "s2sgrad transforms again what grad, value_and_grad, jacfwd, jacrev, hessian and "
            "the decorator return where it can read their generated code again; a pullback of "
            "vjp is not one: transform a function that calls s2sgrad.vjp and then the pullback, "
            "or take jacrev of s2sgrad.grad(f)")
    if isinstance(fn, types.FunctionType) and internal_file(fn.__code__.co_filename):
        raise TransformError(f"{fn.__qualname__} is part of s2sgrad, not a function to differentiate",
                             caller_location(), "pass a function you write with `def`")
    if isinstance(fn, types.MethodType):
        raise TransformError(
            f"{fn.__qualname__} is a bound method; this s2sgrad function takes a plain function",
            caller_location(),
            "s2sgrad.grad and s2sgrad.value_and_grad take bound methods; here, pass a `def` "
            "function that takes the arrays it needs as arguments")
    if not isinstance(fn, types.FunctionType):
        raise TransformError(
            f"s2sgrad differentiates Python functions; got {type(fn).__name__} {fn!r}",
            caller_location(),
            "pass a function defined with `def` in a file; to differentiate a numpy function, "
            "call it inside one (`def f(x): return np.sum(np.sin(x))`)")


def from_function(fn: Any) -> SourceUnit:
    """Capture the module source of a live Python function."""
    fn = _unwrap(fn)
    check_function(fn)
    code = fn.__code__
    filename = code.co_filename
    linecache.checkcache(filename)  # a module reloaded from an edited file: read the new text
    lines = linecache.getlines(filename, fn.__globals__)
    if not lines:
        raise TransformError(
            f"cannot read the source of {fn.__qualname__}: it was not defined in a file",
            Location(display_path(filename), code.co_firstlineno, 1, ""),
            "define the function in a .py file (or a notebook cell) so s2sgrad can read it",
        )
    lambda_params = ()
    if fn.__name__ == "<lambda>":  # read as a def of its body (parse.find_function)
        lambda_params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    else:
        check_current(fn, lines, display_path(filename))
    text = "".join(lines)
    return SourceUnit(
        text=text,
        path=display_path(filename),
        module=fn.__module__ or "__main__",
        name=fn.__name__,
        def_line=code.co_firstlineno,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        live=live_names(fn),
        defaults=parameter_defaults(fn),
        params=lambda_params,
    )


def parameter_defaults(fn: types.FunctionType) -> dict:
    """Parameter name -> default value, for the parameters of ``fn`` that have one."""
    code = fn.__code__
    positional = code.co_varnames[:code.co_argcount]
    values = fn.__defaults__ or ()
    out = dict(zip(positional[len(positional) - len(values):], values))
    out.update(fn.__kwdefaults__ or {})
    return out


def from_file(path: str, name: str, def_line: int, module: str, text: str,
              arrays: frozenset = frozenset()) -> SourceUnit:
    """A unit for a function found statically in a file (the CLI's path; a generated file read
    again, with the globals known to be ``arrays``)."""
    return SourceUnit(
        text=text,
        path=display_path(path),
        module=module,
        name=name,
        def_line=def_line,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        live=None,
        arrays=arrays,
    )


def location_of(unit: SourceUnit, line: int, col: int) -> Location:
    """A Location in ``unit`` with the quoted line."""
    lines = unit.text.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return Location(unit.path, line, col, text)


def is_source_function(value: Any) -> bool:
    """True for a plain Python function whose source s2sgrad may read (not numpy, not s2sgrad)."""
    return python_function(value) is not None

"""Source capture: a live function or a file on disk -> SourceUnit (module text, path, where the def is).

Nothing here imports or runs user code; for a live function we read what Python already loaded.
"""

from __future__ import annotations

import hashlib
import linecache
import os
import types
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from ..errors import Location, TransformError
from .live import _unwrap, check_current, live_names


@dataclass(frozen=True)
class SourceUnit:
    """The text of the module holding a function, and which function in it is meant.

    ``def_line`` is the 1-based line of the first decorator (or of ``def`` when undecorated), as
    Python's ``co_firstlineno`` reports it. ``live`` holds the function's globals and closure values
    when the unit comes from a live function (used to resolve names the file cannot, and to load).
    """

    text: str
    path: str
    module: str
    name: str
    def_line: int
    sha256: str
    live: Optional[Mapping[str, Any]] = field(default=None, compare=False, repr=False)
    defaults: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


def display_path(filename: str) -> str:
    """A path relative to the working directory when it lies below it; never absolute otherwise."""
    if filename.startswith("<"):
        return filename
    try:
        rel = os.path.relpath(filename)
    except ValueError:
        return os.path.basename(filename)
    if rel.startswith(".."):
        return os.path.basename(filename)
    return rel.replace(os.sep, "/")


def from_function(fn: Any) -> SourceUnit:
    """Capture the module source of a live Python function."""
    fn = _unwrap(fn)
    if not isinstance(fn, types.FunctionType):
        raise TransformError(
            f"s2sgrad differentiates Python functions; got {type(fn).__name__} {fn!r}",
            Location("<unknown>", 0, 0, ""),
            "pass a function defined with `def` in a file",
        )
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
    if fn.__name__ == "<lambda>":
        raise TransformError(
            "s2sgrad cannot differentiate a lambda",
            Location(display_path(filename), code.co_firstlineno, 1, lines[code.co_firstlineno - 1]),
            "write the function with `def`",
        )
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
    )


def parameter_defaults(fn: types.FunctionType) -> dict:
    """Parameter name -> default value, for the parameters of ``fn`` that have one."""
    code = fn.__code__
    positional = code.co_varnames[:code.co_argcount]
    values = fn.__defaults__ or ()
    out = dict(zip(positional[len(positional) - len(values):], values))
    out.update(fn.__kwdefaults__ or {})
    return out


def from_file(path: str, name: str, def_line: int, module: str, text: str) -> SourceUnit:
    """A unit for a function found statically in a file (the CLI's path)."""
    return SourceUnit(
        text=text,
        path=display_path(path),
        module=module,
        name=name,
        def_line=def_line,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        live=None,
    )


def location_of(unit: SourceUnit, line: int, col: int) -> Location:
    """A Location in ``unit`` with the quoted line."""
    lines = unit.text.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return Location(unit.path, line, col, text)


def is_source_function(value: Any) -> bool:
    """True for a plain Python function whose source s2sgrad may read (not numpy, not s2sgrad)."""
    value = _unwrap(value)
    if not isinstance(value, types.FunctionType):
        return False
    module = getattr(value, "__module__", "") or ""
    return not (module.split(".")[0] in {"numpy", "s2sgrad", "scipy", "math"})

"""Every refusal s2sgrad makes: TransformError (located, quoted, with a fix) and GradientError (run time)."""

from __future__ import annotations

from typing import Optional

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    """Where a problem is: a display path, a 1-based line, a 1-based column and the line's text."""

    path: str
    line: int
    col: int
    text: str


class TransformError(Exception):
    """A function cannot be differentiated as written.

    The message starts with ``path:line:col:``, quotes the offending line and says what to do instead.
    """

    # The value whose attribute or method the refusal is about (``model`` of ``model.W``, a
    # value carrying a derivative, so one from a differentiated parameter): pytree arguments
    # there (a dataclass, a dict) are read, so the API refuses at a call with arrays there rather
    # than when the transformation is made.
    member_of: Optional[str] = None
    # Whether the refusal is about a value that may be an array (an in-place update of one that
    # another name may share): code made for calls passing numbers there may be made, so the API
    # refuses at a call with arrays there (specialize.py).
    arrays_only: bool = False

    def __init__(self, message: str, location: Location, hint: str = "") -> None:
        self.message = message
        self.location = location
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        return located(self.location, self.message, self.hint)


def located(loc: Location, message: str, hint: str = "") -> str:
    """``path:line:col: message``, the line quoted with a caret under the column, and the hint."""
    lines = [f"{loc.path}:{loc.line}:{loc.col}: {message}"]
    if loc.text:
        stripped = loc.text.rstrip("\n")
        lines.append(f"    {stripped}")
        lines.append("    " + " " * max(loc.col - 1, 0) + "^")
    if hint:
        lines.append(f"  hint: {hint}")
    return "\n".join(lines)


class GradientError(ValueError):
    """A generated gradient was called with values it cannot handle (e.g. a non-scalar loss for grad)."""


class UsageError(TypeError, ValueError):
    """s2sgrad's API was called with an argument it cannot take (a foreign function, a bad name)."""


class ArgumentError(GradientError, UsageError):
    """A value a transformed function cannot take where s2sgrad differentiates (a str, an object
    that is no pytree), refused at the user's call: the message starts with ``path:line:col:``
    of that call, quotes its line and says what to do."""

    def __init__(self, message: str, location: Location, hint: str = "") -> None:
        self.message, self.location, self.hint = message, location, hint
        super().__init__(located(location, message, hint))


class ComputeWarning(UserWarning):
    """A runtime helper converted another library's lazy or device array (dask's, CuPy's) to a numpy
    array: its values were computed and pulled into this process's memory."""


class CompileWarning(UserWarning):
    """``compiled=True``: a generated function runs as Python, not compiled (numba cannot compile
    it, or it reads globals whose values may change between calls); its results are the same."""


# Shown as ``s2sgrad.TransformError`` in tracebacks: the name users import.
TransformError.__module__ = GradientError.__module__ = ArgumentError.__module__ = "s2sgrad"
ComputeWarning.__module__ = CompileWarning.__module__ = "s2sgrad"

"""A function's parameters as the transformations name them: a function and ``argnums`` -> the
names of the parameters they point at (refusing, located, what does not fit), how messages name the
function and where it is defined."""

from __future__ import annotations

import inspect
import linecache
import types
from typing import Callable, Optional, Sequence, Union

from .errors import Location, TransformError, UsageError
from .read.capture import MADE_ATTR, caller_location, check_function, display_path
from .tree_arguments import star_position


def display_name(fun: Callable) -> str:
    """``fun`` as messages name it: its name, or how s2sgrad made it (``s2sgrad.grad(f)``)."""
    return getattr(fun, MADE_ATTR, None) or getattr(fun, "__name__", "the function")


_NAMES: dict = {}  # code object -> its function's parameter names (a plain function's)
_NAMES_MOST = 1024


def param_names(fun: Callable) -> tuple:
    """``fun``'s parameters' names, in inspect.signature's order; () where it has none to read.
    A plain function's (not wrapped, no ``__signature__``) are kept by its code object, which
    alone decides them."""
    plain = type(fun) is types.FunctionType and "__wrapped__" not in fun.__dict__ and \
        "__signature__" not in fun.__dict__
    if plain:
        found = _NAMES.get(fun.__code__)
        if found is not None:
            return found
    try:
        names = tuple(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        return ()
    if plain:
        if len(_NAMES) >= _NAMES_MOST:
            _NAMES.clear()
        _NAMES[fun.__code__] = names
    return names


def wrt_names(fun: Callable, argnums: Union[int, Sequence[int]]) -> tuple:
    """The names of the parameters ``argnums`` points at, after refusing (located at the user's
    call) a ``fun`` s2sgrad cannot read."""
    check_function(fun)  # refuses a builtin, a ufunc, a method, what s2sgrad returned... at the call
    return argnum_names(fun, argnums)


def argnum_names(fun: Callable, argnums: Union[int, Sequence[int]]) -> tuple:
    names = param_names(fun)
    try:
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    except TypeError:
        raise UsageError(f"argnums {argnums!r}: pass a parameter position (0 is the first) or a "
                         "tuple of them") from None
    out = []
    at = star_position(fun)
    star = None if at is None else names[at]
    for n in nums:
        if at is not None and isinstance(n, int) and n < 0:
            raise TransformError(f"argnums {argnums!r}: {getattr(fun, '__name__', fun)!r} takes "
                                 f"*{star}, so a position counted from the end is not known until "
                                 "it is called", def_location(fun), "count argnums from 0")
        if at is not None and isinstance(n, int) and n >= at:
            if star not in out:  # argnums into *args: the arguments passed there, a tuple
                out.append(star)
            continue
        if not isinstance(n, int) or not -len(names) <= n < len(names):
            where = def_location(fun)
            raise TransformError(
                f"argnums {argnums!r} does not fit {getattr(fun, '__name__', fun)!r} (defined at "
                f"{where.path}:{where.line}), which has {len(names)} parameter(s)"
                + (f": {', '.join(names)}" if names else ""),
                caller_location(), "pass argnums as parameter positions (0 is the first)")
        out.append(names[n])
    return tuple(out)


def made_per_call(fun: Callable, wrt: tuple) -> Optional[TransformError]:
    """Where ``fun`` takes ``*args``, what stands for its generated code until a call (the code
    is made for the number of arguments each call passes there: Split); else None."""
    at = star_position(fun)
    if at is None:
        return None
    star = param_names(fun)[at]
    return TransformError(
        f"the generated code of {getattr(fun, '__name__', fun)} is made for the number of "
        f"arguments a call passes to *{star}", def_location(fun),
        "call the function s2sgrad returned; its code for the arrays given is made then")


def positions_of(argnums: Union[int, Sequence[int]]) -> tuple:
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def def_location(fun: Callable) -> Location:
    """Where ``fun`` is defined, its ``def`` line quoted."""
    code = getattr(inspect.unwrap(fun), "__code__", None)
    if code is None:
        return Location("<unknown>", 0, 0, "")
    lines = linecache.getlines(code.co_filename)
    text = lines[code.co_firstlineno - 1] if len(lines) >= code.co_firstlineno else ""
    return Location(display_path(code.co_filename), code.co_firstlineno, 1, text)


__all__ = ["argnum_names", "def_location", "display_name", "made_per_call", "param_names",
           "positions_of", "wrt_names"]

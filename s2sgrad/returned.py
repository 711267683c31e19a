"""What a function s2sgrad returns carries (its generated text, how it was made, the generated
function computing the same: read/live.py's ENTRY_ATTR and TREE_ENTRY_ATTR, and the forward mode a
gradient of one float argument runs), and how a transformation given such a function reads it
again."""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional

from .errors import TransformError
from .read.capture import MADE_ATTR, SOURCE_ATTR, caller_location
from .read.live import ENTRY_ATTR, TREE_ENTRY_ATTR, readable


FORWARD_ATTR = "__s2sgrad_forward__"
NUMBERS_ATTR = "__s2sgrad_numbers__"  # specialize.NumberBuilds: code made for calls passing numbers


def attach(wrapper: Callable, fun: Callable, text: str, forward: Any = None, made: str = "",
            entry: Optional[Callable] = None, tree_entry: Optional[Callable] = None,
            specialized: Any = None) -> Callable:
    """``wrapper`` named as ``fun``, with its generated ``text``, how it was ``made``, and the
    generated ``entry`` function computing the same (what a later transformation reads; for
    pytree arguments, what ``tree_entry`` gives: read/live.py's TREE_ENTRY_ATTR; the code made for
    calls passing numbers: ``specialized``)."""
    functools.update_wrapper(wrapper, fun, assigned=("__module__", "__name__", "__qualname__", "__doc__"))
    del wrapper.__wrapped__
    setattr(wrapper, SOURCE_ATTR, text)
    inner = getattr(fun, MADE_ATTR, None) or getattr(fun, "__qualname__", fun)
    setattr(wrapper, MADE_ATTR, f"{made}({inner})")
    if forward is not None:
        setattr(wrapper, FORWARD_ATTR, forward)
    if entry is not None:
        setattr(wrapper, ENTRY_ATTR, entry)
    if tree_entry is not None:
        setattr(wrapper, TREE_ENTRY_ATTR, tree_entry)
    if specialized is not None:
        setattr(wrapper, NUMBERS_ATTR, specialized)
    return wrapper


def read_again(fun: Callable) -> tuple:
    """``(readable(fun), whether that is generated code s2sgrad returned rather than fun)``."""
    found = readable(fun)
    return found, found is not fun


def again_with_trees(name: str) -> TransformError:
    """The refusal of a transformation of a function s2sgrad returned, called with pytrees."""
    return TransformError(
        f"{name} is a function s2sgrad returned, called here with pytree arguments: of such "
        "functions, s2sgrad transforms again grad and value_and_grad (without has_aux) by jacfwd "
        "and jacrev differentiating the same arguments", caller_location(),
        "transform the original function (s2sgrad.hessian, jacfwd or jacrev of it), or give the "
        "function s2sgrad returned the arrays as separate arguments")


__all__ = ["FORWARD_ATTR", "NUMBERS_ATTR", "again_with_trees", "attach", "read_again"]

"""Runtime helpers for ``with`` blocks in generated code (numpy only; re-exported by
s2sgrad.runtime): ``with m: body`` in a differentiated function is written as ``c = m``,
``s2s.enter_context(c)``, the body, ``s2s.exit_context(c)`` (lower/blocks.py), so the manager
(``np.errstate(...)``) holds around the body's forward code while the body is differentiated as
straight-line code; ``with m as name`` reads what entering gave with ``name = s2s.entered(c)``
(a statement of its own, which a pass may drop when nothing reads ``name``, while entering and
leaving stay). ``s2s.check_class(v, Cls, message)`` is ``assert type(v) is Cls, message`` kept
where it runs. None carries a derivative."""

from __future__ import annotations

__all__ = ["check_class", "enter_context", "entered", "exit_context"]

_ENTERED: dict = {}  # id(manager) -> what its __enter__ gave, while it is entered


def enter_context(manager):
    """Enter ``manager`` (its ``__enter__``), keeping what that gives for ``entered``; returns None."""
    _ENTERED[id(manager)] = manager.__enter__()


def entered(manager):
    """What entering ``manager`` gave (``with m as name``), while it is entered."""
    return _ENTERED.get(id(manager))


def exit_context(manager):
    """Leave ``manager`` as a ``with`` block that ran to its end does; returns None."""
    _ENTERED.pop(id(manager), None)
    manager.__exit__(None, None, None)


def check_class(value, cls, message):
    """``assert type(value) is cls, message`` kept in generated code (lower/statements.py): a
    TypeError unless ``value``'s class is ``cls`` exactly; returns None."""
    if type(value) is not cls:
        raise TypeError(f"{message} (got {type(value).__name__})")

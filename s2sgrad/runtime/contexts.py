"""Runtime helpers for ``with`` blocks in generated code (numpy only; re-exported by
s2sgrad.runtime): ``with m: body`` in a differentiated function is written as ``c = m``,
``s2s.enter_context(c)``, the body, ``s2s.exit_context(c)`` (lower/blocks.py), so the manager
(``np.errstate(...)``) holds around the body's forward code while the body is differentiated as
straight-line code. Neither carries a derivative."""

from __future__ import annotations

__all__ = ["enter_context", "exit_context"]


def enter_context(manager):
    """Enter ``manager`` (its ``__enter__``); returns None."""
    manager.__enter__()


def exit_context(manager):
    """Leave ``manager`` as a ``with`` block that ran to its end does; returns None."""
    manager.__exit__(None, None, None)

"""Every generated name: SSA versions, temporaries, adjoints, generated functions.

A Namer starts from the set of names the user's code reads or writes and never hands one of them
out again. Names come from counters in source order, so they are deterministic.
"""

from __future__ import annotations

import builtins
import keyword
import re
from typing import Iterable

MAX_TEMP = 24

# Names generated modules bind at top level (imports): never given to anything else.
MODULE_NAMES = frozenset({"np", "s2s", "math"})
# Python's builtins, which rule templates call (``sum(parts)``, ``len(xs)``): a temporary named
# ``sum`` would hide one from the lines after it.
BUILTIN_NAMES = frozenset(name for name in dir(builtins) if not name.startswith("_"))


def sanitize(base: str) -> str:
    base = re.sub(r"[^0-9a-zA-Z_]+", "_", base).strip("_") or "t"
    if base[0].isdigit():
        base = "t_" + base
    if keyword.iskeyword(base):
        base += "_"
    return base


class Namer:
    """Hands out fresh names, avoiding ``reserved`` and everything handed out before."""

    def __init__(self, reserved: Iterable[str]) -> None:
        self._used = set(reserved) | MODULE_NAMES | BUILTIN_NAMES
        self._adjoints: dict = {}
        self._discard = "_" if "_" not in self._used else ""

    def reserve(self, name: str) -> None:
        self._used.add(name)

    def fresh(self, base: str) -> str:
        base = sanitize(base)
        if base not in self._used:
            self._used.add(base)
            return base
        n = 2
        while f"{base}_{n}" in self._used:
            n += 1
        name = f"{base}_{n}"
        self._used.add(name)
        return name

    def temp(self, description: str, fallback: str) -> str:
        """A temporary named after the expression it holds, or ``fallback`` when that is too long."""
        description = sanitize(description)
        if len(description) > MAX_TEMP:
            description = sanitize(fallback)
        return self.fresh(description)

    def used(self) -> frozenset:
        """Every name handed out or reserved so far."""
        return frozenset(self._used)

    def adjoint(self, name: str) -> str:
        """The adjoint of ``name`` (``x`` -> ``x_bar``), the same on every call."""
        if name not in self._adjoints:
            self._adjoints[name] = self.fresh(f"{name}_bar")
        return self._adjoints[name]

    def discard(self) -> str:
        """The target of a value nothing reads (``a_bar, _ = ...``): ``_``, unless the code being
        transformed names a value ``_`` (generated code read again does), then a fresh name, so
        a discarded value never overwrites one the code reads later."""
        if not self._discard:
            self._discard = self.fresh("unused")
        return self._discard

    def adjoints(self) -> dict:
        return dict(self._adjoints)

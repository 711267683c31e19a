"""Keeping a loaded generated module current: its namespace, the places the user's values live,
and what its text was specialized on -> a ``Binding`` whose ``ensure()`` (called before generated
code runs) reads those values again and, when the text no longer fits them, rebuilds it in place.

Python reads a global (or a closure cell) when the code runs; so does generated code: ``ensure``
copies each name the text reads from the dict or cell it lives in (the user's module, a closure,
the namespace of generated code it was made from) into the namespace, and checks what the
generation depended on: the identity of every function, callable and module the differentiated
functions read (a helper rebound to another function), the type of every other value (an array's
methods are array methods), and the versions of the generated modules it was made from. When one
changed, ``remake()`` gives the text and values again and they are executed into the same
namespace, the function objects already handed out running the new code (``loader.load``), so
nothing computes with a stale value in silence. One compiled check per binding: a few dict
reads and ``is`` tests per call.
"""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass
from typing import Any, Callable

from ..read.live import BINDING_KEY, binding_of, guard_of
from .loader import load


@dataclass(frozen=True)
class Contents:
    """What one load of a generated module takes: its ``text``; ``values`` for the names it
    reads; ``reads``: ``(holder, name)`` for each of those read again before each run (a dict
    or a cell); ``guards``: ``(holder, name, kind, expected)`` for what the text was specialized
    on (read.live.guard_of); ``deps``: the bindings of the generated code it was made from."""

    text: str
    values: dict
    reads: tuple
    guards: tuple
    deps: tuple


class Binding:
    """A generated module loaded for ``qualname``, kept current (see the module doc).
    ``remake()`` returns its Contents, now."""

    def __init__(self, qualname: str, remake: Callable[[], Contents]) -> None:
        self.qualname = qualname
        self.remake = remake
        self.namespace: dict = {BINDING_KEY: self}
        self.version = 0
        self.deps: tuple = ()
        self.reads: tuple = ()
        self.check: Callable[[], bool] = lambda: True
        self._load(remake())

    def _load(self, contents: Contents) -> None:
        seeded = dict(contents.values)
        load(contents.text, self.qualname, seeded, self.namespace)
        reads = [(holder, name, *guard_of(seeded[name]), True) for holder, name in contents.reads
                 if name in seeded and self.namespace.get(name) is seeded[name]]
        guards = [(*guard, False) for guard in contents.guards]
        self.check = _checker(self.namespace, reads + guards)
        self.reads = contents.reads  # (holder, name) of the user's values it reads
        self.deps = tuple((dep, dep.version) for dep in contents.deps if dep is not self)

    def ensure(self) -> None:
        """Read the user's values again; rebuild when the text was specialized on other ones."""
        for dep, version in self.deps:
            dep.ensure()
            if dep.version != version:
                self.rebuild()
                return
        if not self.check():
            self.rebuild()

    def rebuild(self) -> None:
        self._load(self.remake())
        self.version += 1


def fresh(fn: Any) -> None:
    """Make the generated module ``fn`` belongs to current (nothing for other functions)."""
    binding = binding_of(fn)
    if binding is not None:
        binding.ensure()


def _checker(namespace: dict, entries: list) -> Callable[[], bool]:
    """A compiled ``check()``: for each ``(holder, name, kind, expected, store)`` reads the
    value from its dict or cell (or the field ``name`` of a function: its defaults), returns False when it is not ``expected`` (kind "is") or not of
    type ``expected`` (kind "type"), stores it in ``namespace`` when ``store``; True at the end
    (False for a name gone or a cell emptied)."""
    params, body, seen = ["_ns"], [], set()
    args: list = [namespace]
    for holder, name, kind, expected, store in entries:
        if (id(holder), name) in seen:  # a name read and guarded: one check (reads come first)
            continue
        seen.add((id(holder), name))
        i = len(args)
        params += [f"_h{i}", f"_e{i}"]
        args += [holder, expected]
        read = f"_h{i}.cell_contents" if isinstance(holder, types.CellType) else \
            f"_h{i}.{name}" if isinstance(holder, types.FunctionType) else f"_h{i}[{name!r}]"
        test = f"v is not _e{i}" if kind == "is" else f"type(v) is not _e{i}"
        body += [f"        v = {read}", f"        if {test}:", "            return False"]
        if store:
            body.append(f"        _ns[{name!r}] = v")
    text = (f"def make({', '.join(params)}):\n    def check():\n        try:\n"
            + "\n".join("    " + line for line in body or ["        pass"])
            + "\n        except (KeyError, ValueError):\n            return False\n"
            "        return True\n    return check\n")
    scope: dict = {}
    exec(_check_code(text), scope)
    return scope["make"](*args)


@functools.lru_cache(maxsize=256)
def _check_code(text: str) -> types.CodeType:
    """The compiled text of a ``check()`` maker (the same for every load of one module)."""
    return compile(text, "<s2sgrad-binding>", "exec")


__all__ = ["Binding", "Contents", "fresh"]

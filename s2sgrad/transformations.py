"""The transformation table, the rule table's counterpart: each public transformation by name
(``grad``, ``hessian``, ...) as one record, and the two ways generated code is derived for a live
function. The layers on top fill it when they are imported (api.py and jacobians.py add their
transformations, derive.py its derivations); the passes below read it (lower/inner.py rewrites
``s2sgrad.grad(f, argnums=1)(x, y)`` as a call of the generated function the record's
transformation made), so no pass imports the public API. Takes and returns plain callables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class Transformation:
    """One public transformation: its ``name`` (``s2sgrad.<name>``), ``make(fun, **options)``
    returning the transformed function, and whether it is ``curried`` (made, then called with
    the arguments: ``s2sgrad.grad(f)(x)``) rather than called with them (``s2sgrad.vjp(f, x)``)."""

    name: str
    make: Callable
    curried: bool = True


class TransformationTable:
    """The records by name, and the derivations: ``gradients(fn, wrt)`` (the generated function
    returning ``fn``'s gradients as a tuple, seeded: write/entries.py) and ``forward(fn, wrt)``
    (``fn``'s generated forward mode, ``<f>_jvp``)."""

    def __init__(self) -> None:
        self.records: dict = {}
        self.gradients: Optional[Callable] = None
        self.forward: Optional[Callable] = None

    def add(self, record: Transformation) -> None:
        self.records[record.name] = record

    def curried(self) -> tuple:
        """The names of the transformations made, then called (``s2sgrad.grad(f)(x)``)."""
        return tuple(sorted(n for n, r in self.records.items() if r.curried))

    def derive_with(self, gradients: Callable, forward: Callable) -> None:
        self.gradients, self.forward = gradients, forward

    def make(self, name: str, fun: Any, **options: Any) -> Any:
        return self.records[name].make(fun, **options)


TRANSFORMATIONS = TransformationTable()

__all__ = ["TRANSFORMATIONS", "Transformation", "TransformationTable"]

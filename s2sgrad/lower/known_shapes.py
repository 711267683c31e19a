"""What the rewrites of code made for a call's shapes share (lower/scans.py,
lower/batched_loops.py): a CoreFunction, the shapes its values are known to have and the rule
table -> the names a rewrite adds (fresh, none the function reads or writes) and the known shape
of a name."""

from __future__ import annotations

from typing import Mapping, Optional

from .. import dims
from ..rules.table import RuleTable
from .ir import CoreFunction, defined_names, read_counts
from .naming import Namer


class KnownShapes:
    """``shapes``: names -> known shapes (dims.py); ``scalars``: names known to hold one number;
    ``reads``: how many times each name is read; ``added``: the names ``fresh`` gave."""

    def __init__(self, fn: CoreFunction, shapes: Mapping[str, tuple], table: RuleTable,
                 scalars: frozenset) -> None:
        self.fn, self.shapes, self.table, self.scalars = fn, shapes, table, scalars
        self.reads = read_counts(fn)
        self.namer = Namer(fn.reserved | defined_names(fn.body) | {p.name for p in fn.params})
        self.added: set = set()

    def fresh(self, hint: str) -> str:
        name = self.namer.fresh(hint)
        self.added.add(name)
        return name

    def shape(self, name: str) -> Optional[tuple]:
        """``name``'s shape where it is known (``()`` for one number), else None."""
        if name in self.scalars:
            return ()
        found = self.shapes.get(name)
        return found if isinstance(found, tuple) and dims.known(found) else None

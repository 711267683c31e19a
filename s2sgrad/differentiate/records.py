"""What a forward sweep records for its backward sweep in place of values: shapes and sizes.

The backward sweep unbroadcasts and materializes adjoints with a variable's shape; it names that
shape (``x_shape``) and the forward sweep records ``x.shape`` (or ``np.shape(x)`` when ``x`` may
not be a numpy value) instead of ``x`` itself. Takes the lowered function, the rule table and a
Namer; ``packed(name)`` gives the code the forward sweep records for a residual name.
"""

from __future__ import annotations

from typing import Callable

from ..lower.ir import SUBSCRIPT, CoreFunction, Stmt, Var, flatten
from ..rules.helpers.inplace import TEMPLATE


class Records:
    """Shape and size names of one reverse-mode function, and what proves a value numpy's."""

    def __init__(self, fn: CoreFunction, table, namer, is_callee_call: Callable[[Stmt], bool]) -> None:
        self.table = table
        self.namer = namer
        self.is_callee_call = is_callee_call
        self.shapes: dict = {}  # var -> the name of its shape (all unbroadcasting needs of it)
        self.shape_base: dict = {}  # shape (or size) name -> var
        self.sizes: dict = {}  # var -> the name of its number of elements
        self.stacks: dict = {}  # var -> the name of its rows_shape (a sequence of rows)
        self.params = frozenset(p.name for p in fn.params)
        self.statements_defining: dict = {}
        for stmt in flatten(fn.body):
            for t in stmt.targets:
                self.statements_defining.setdefault(t, []).append(stmt)
        self.array_values: dict = {}
        self.templates: dict = {}  # tape -> the names its backward loop reads only for their shapes
        self.unread: dict = {}  # tape -> the names its backward loop does not read (not recorded)

    def shape_of(self, var: str) -> str:
        """The name the backward sweep uses for ``var``'s shape; for a name bound more than once
        (carried through a loop), ``np.shape(var)`` of the value the backward sweep restores at
        that point: one record would hold only the last value's shape."""
        if self.rebound(var):
            return f"np.shape({var})"
        if var not in self.shapes:
            self.shapes[var] = self.namer.fresh(f"{var}_shape")
            self.shape_base[self.shapes[var]] = var
        return self.shapes[var]

    def size_of(self, var: str) -> str:
        """Like shape_of, for ``var``'s number of elements."""
        if self.rebound(var):
            return _size_record(var)
        if var not in self.sizes:
            self.sizes[var] = self.namer.fresh(f"{var}_size")
            self.shape_base[self.sizes[var]] = var
        return self.sizes[var]

    def rows_shape_of(self, var: str) -> str:
        """Like shape_of, for a sequence whose row adjoints a backward loop stacks: its shape
        where ``var`` is certainly numpy's, else the runtime's rows_shape of it (``(n, None)``
        where its items do not stack into one array: a list of tuples or dicts, arrays of several
        shapes)."""
        if self.numpy_valued(var):
            return self.shape_of(var)
        if self.rebound(var):
            return _rows_record(var)
        if var not in self.stacks:
            self.stacks[var] = self.namer.fresh(f"{var}_rows_shape")
            self.shape_base[self.stacks[var]] = var
        return self.stacks[var]

    def rebound(self, var: str) -> bool:
        """Whether ``var`` is bound more than once (a parameter counts as one binding)."""
        return len(self.statements_defining.get(var, ())) + (var in self.params) > 1

    def shapes_of(self, names: set) -> set:
        """The shape and size names recorded for ``names``."""
        return {shape for shape, base in self.shape_base.items() if base in names}

    def packed(self, name: str) -> str:
        """What the forward sweep records for ``name``: the value, or the shape it stands for
        (``x.shape`` when ``x`` is certainly a numpy array or scalar, else ``np.shape(x)``)."""
        base = self.shape_base.get(name)
        if base is None:
            return name
        if self.stacks.get(base) == name:
            return _rows_record(base)
        field = "size" if self.sizes.get(base) == name else "shape"
        if self.numpy_valued(base):
            return f"{base}.{field}"
        return _size_record(base) if field == "size" else f"np.shape({base})"

    def taped(self, name: str, tape: str, whole: bool = False) -> str:
        """What a loop's tape records for ``name`` each step: ``packed``'s, or a shape template
        (the runtime's ``template(x)``, one element's memory) of a value the backward sweep reads only for
        its type, dtype and shape (a write into the array then changes nothing it reads);
        ``whole``: the tape keeps the value anyway (the next step records it under another name)."""
        if not whole and name not in self.shape_base and name in self.templates.get(tape, ()):
            return template_record(name)
        return self.packed(name)

    def numpy_valued(self, name: str) -> bool:
        """Whether every definition of ``name`` makes a numpy array or numpy scalar: a matrix
        product, a numpy ufunc, a hoisted product, or a row of one (the table says which)."""
        if name not in self.array_values:
            self.array_values[name] = False  # a cycle (a loop-carried name) proves nothing
            defs = self.statements_defining.get(name, [])
            self.array_values[name] = bool(defs) and name not in self.params and \
                all(self._numpy_result(stmt) for stmt in defs)
        return self.array_values[name]

    def _numpy_result(self, stmt: Stmt) -> bool:
        prim = stmt.prim
        if len(stmt.targets) != 1 or self.is_callee_call(stmt):
            return False
        if self.table.gives_array(prim.op):
            return True
        base = prim.args[0] if prim.args else None
        return prim.op == SUBSCRIPT and isinstance(base, Var) and self.numpy_valued(base.name)


def _size_record(name: str) -> str:
    """What a forward sweep records of the number of elements of ``name``, which may not be
    numpy's: the runtime's size of it (from its shape: ``np.size`` would make a dask array
    compute)."""
    return f"s2s.size({name})"


def template_record(name: str) -> str:
    """The record of a value read only for its type, dtype and shape: its shape template (the
    runtime's ``template``, one element's memory)."""
    return f"s2s.{TEMPLATE}({name})"


def _rows_record(name: str) -> str:
    """What a forward sweep records of a sequence of rows ``name`` that may not be numpy's."""
    return f"s2s.rows_shape({name})"

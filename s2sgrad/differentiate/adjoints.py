"""The adjoint environment of one backward sweep: which name holds each variable's adjoint so far,
and the facts that decide how the next contribution is written.

Invariants (each method keeps them):
- ``current[var]`` is the name holding ``var``'s adjoint so far; a variable absent from it has a
  zero adjoint (no line is written for zeros until one is needed);
- ``owned`` holds adjoint names bound to an array only this sweep made and nothing else shares, so
  ``name += ...`` may update it in place; every other contribution rebinds (``x_bar = x_bar + g``);
- ``unstable`` holds adjoint names rebound later (a branch merge, a loop boundary): never aliased
  by another adjoint;
- ``uniform`` holds variables whose adjoint is one number standing for an array of their shape
  (the adjoint of a full sum's operand); ``materialize`` makes it a full array before anything
  that needs one; ``uniform_names`` is every name that ever held such a number.
Takes a Namer (adjoint names), the function's list names, and ``shape_of`` (the name of a
variable's recorded shape); writes lines of code into the lists it is given.
"""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from .simplify import negated
from .templates import needs_parens

def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


class Adjoints:
    """The adjoints of one backward sweep (see the module docstring for the invariants)."""

    def __init__(self, namer, lists: frozenset, shape_of: Callable[[str], str],
                 in_place: bool = True) -> None:
        self.namer = namer
        self.in_place = in_place  # False: no array is owned (complex numbers may be in flight)
        self.lists = lists
        self.shape_of = shape_of
        self.current: dict = {}
        self.unstable: set = set()
        self.owned: set = set()
        self.uniform: set = set()
        self.uniform_names: set = set()

    def has(self, var: str) -> bool:
        return var in self.current

    def consume(self, var: str, held: str) -> None:
        """The definition of ``var`` passed on the adjoint ``held``: it is zero above it."""
        if self.current.get(var) == held:
            del self.current[var]
            self.uniform.discard(var)

    def drop(self, var: str) -> None:
        self.current.pop(var, None)
        self.uniform.discard(var)

    def accumulate(self, lines: list, var: str, expr: cst.BaseExpression,
                   uniform: bool = False, fresh: Optional[bool] = None) -> None:
        """Add ``expr`` to the adjoint of ``var``: ``=`` on the first write (no line at all when
        ``expr`` is another adjoint's stable name), ``x_bar = x_bar + ...`` afterwards.
        ``uniform``: ``expr`` is one number standing for an array of ``var``'s shape; ``fresh``:
        ``expr`` makes an array nothing else holds (its rule says so), else an operation's result
        is taken for one."""
        name = self.namer.adjoint(var)
        if var not in self.current and isinstance(expr, cst.Name) and expr.value not in self.unstable:
            self.current[var] = expr.value
            self._set_uniform(var, expr.value, uniform)
            return
        fresh = self._write(lines, var, name, expr, fresh)
        uniform = uniform and (var not in self.current or var in self.uniform)
        if fresh and not uniform and name not in self.unstable and var not in self.lists and \
                self.in_place:
            self.owned.add(name)
        else:
            self.owned.discard(name)
        self._set_uniform(var, name, uniform)
        self.current[var] = name

    def _write(self, lines: list, var: str, name: str, expr: cst.BaseExpression,
               fresh: Optional[bool]) -> bool:
        """The line adding ``expr`` to ``var``'s adjoint under ``name``; whether it binds an
        array nothing else shares."""
        if var not in self.current:
            lines.append(f"{name} = {_code(expr)}")
            return bool(fresh) or isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation))
        if var in self.lists:
            lines.append(f"{name} = s2s.add({self.current[var]}, {_code(expr)})")
            return False
        unsigned = negated(expr)  # ``+ -e``: ``- e``, one pass fewer
        sign, expr = ("-", unsigned) if unsigned is not None else ("+", expr)
        if self.current[var] == name and name in self.owned:
            lines.append(f"{name} {sign}= {_code(expr)}")  # an array this sweep made and nothing shares
            return True
        rhs = expr
        if needs_parens(expr, inside=sign):
            rhs = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        lines.append(f"{name} = {self.current[var]} {sign} {_code(rhs)}")
        return True

    def _set_uniform(self, var: str, name: str, uniform: bool) -> None:
        if uniform:
            self.uniform.add(var)
            self.uniform_names.add(name)
        else:
            self.uniform.discard(var)

    def materialize(self, lines: list, var: str) -> None:
        """Make ``var``'s adjoint a full array when it is one number standing for one."""
        held = self.current.get(var)
        if held is None or var not in self.uniform:
            return
        name = self.namer.fresh(f"{var}_bar") if held == self.namer.adjoint(var) else \
            self.namer.adjoint(var)
        lines.append(f"{name} = s2s.broadcast({held}, {self.shape_of(var)})")
        self.current[var] = name
        self.owned.discard(name)
        self.uniform.discard(var)

    def materialize_all(self, lines: list) -> None:
        """Before a block boundary: every uniform adjoint becomes a full array."""
        for var in sorted(self.current):
            self.materialize(lines, var)

    def zeros(self, var: str) -> str:
        """Code for the zero adjoint of ``var``."""
        return f"s2s.list_zeros({var})" if var in self.lists else f"s2s.zeros_like({var})"

    def hold(self, lines: list, var: str, accumulator: bool = False) -> str:
        """Make ``var``'s adjoint live in its own name (zeros when it has none yet). An
        ``accumulator`` (only ever added to, never read as an upstream in the block ahead) that
        starts from fresh zeros may be added to in place."""
        name = self.namer.adjoint(var)
        held = self.current.get(var)
        if held is None:
            lines.append(f"{name} = {self.zeros(var)}")
            if accumulator and var not in self.lists and self.in_place:
                self.owned.add(name)
            else:
                self.owned.discard(name)
        elif held != name:
            lines.append(f"{name} = {held}")
            self.owned.discard(name)
        self.current[var] = name
        self.uniform.discard(var)
        self.unstable.add(name)
        return name

    def claim(self, var: str) -> str:
        """``var``'s adjoint is now bound under its own name by a call's result (a callee may
        hand back its upstream itself, so the array is not owned)."""
        name = self.namer.adjoint(var)
        self.current[var] = name
        self.owned.discard(name)
        return name

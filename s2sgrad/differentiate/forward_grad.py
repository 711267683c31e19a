"""Forward mode with one tangent per differentiated parameter, carried side by side: a lowered
function -> the code of ``<name>_forward_grad``, which returns the value and, for each
differentiated parameter, the output's derivative along that parameter's own tangent (given
tangents of 1 and number parameters: the gradient).

The value is computed once; each statement is followed by one tangent line per parameter that
varies it (``E_dM = ...``, ``E_de = ...``), as a person writes the derivatives of a few floats by
hand. Nothing is recorded, so memory is the function's own, where reverse mode keeps a tape of
every step. Each parameter's lines are those forward.py's builder writes differentiating it alone
(its own varied names: a statement that does not depend on a parameter has no line for it); they
share one Namer, so the names never meet.
"""

from __future__ import annotations

from typing import Optional

from ..errors import TransformError
from ..lower.ir import Stmt, flatten
from ..lower.naming import Namer
from ..rules.table import RuleTable
from .factors import shared_factors
from .forward import CalleeLookup, ForwardBuilder, JvpFunction


class ForwardGradBuilder(ForwardBuilder):
    """Builds ``<name>_forward_grad`` for one CoreFunction from one ForwardBuilder per parameter
    of ``wrt``. Used once."""

    def __init__(self, fn, table: RuleTable, wrt: tuple, name: str, kwonly: tuple,
                 constant: frozenset, callee_lookup: Optional[CalleeLookup], shapes: tuple,
                 numbers_only: bool = False, on_numbers: frozenset = frozenset()) -> None:
        namer, early = Namer(fn.reserved | {name}), set()  # one function's names and early lines
        super().__init__(fn, table, wrt, name, kwonly, constant, callee_lookup, shapes,
                         namer=namer, suffix="", early=early, on_numbers=on_numbers)
        self.each = [ForwardBuilder(fn, table, (param,), name, kwonly, constant, callee_lookup,
                                    shapes, namer=namer, suffix=f"_d{param}", early=early,
                                    on_numbers=on_numbers)
                     for param in wrt]
        self.numbers_only = numbers_only
        if numbers_only:
            self.refuse_arrays()

    def refuse_arrays(self) -> None:
        """Refuse (a TransformError at the first statement binding one) where a varied name
        is not known to hold one number (analyze/scalars.known_scalars, with the globals read
        that hold numbers now: ``on_numbers``): there each tangent line may be an array
        operation, where reverse mode's sweep does one per statement."""
        varied = {name for builder in self.each for name in builder.varied}
        where = [(p.name, self.fn.result_origin.location, False) for p in self.fn.params] + \
            [(t, stmt.prim.location or stmt.origin.location, stmt.prim.op == "copy")
             for stmt in flatten(self.fn.body) for t in stmt.targets]
        found = [(name, location) for name, location, copy in sorted(
            where, key=lambda w: (w[2], w[1] is None or w[1].line <= 0))  # stable: in order
            if name in varied and name not in (self.on_numbers or self.scalars)]
        if found:  # where the user's code makes one first (not a copy, nor the lowering's line)
            name, location = found[0]
            raise TransformError(
                f"forward mode of several numbers: `{self.fn.user_names.get(name, name)}` may "
                "hold an array", location,
                "reverse mode runs for such calls; forward mode's code for calls passing "
                "numbers: s2sgrad.source(<grad>, mode='fwd', numbers=(...))")

    def finish(self, code: list) -> list:
        """In code made for numbers (every varied name one number), each product of two names
        that two or more lines of a block hold computed once (differentiate/factors.py)."""
        if not self.numbers_only:
            return code
        primal = frozenset(p.name for p in self.fn.params) | \
            frozenset(t for stmt in flatten(self.fn.body) for t in stmt.targets)
        return shared_factors(code, primal, self.namer.fresh)

    def statement(self, stmt: Stmt) -> list:
        """The statement, with every parameter's tangent lines: those reading the old values
        first, then a user function's jvp per parameter (the values bound by the last one only:
        the others' operands may be its targets), or the statement itself, then the rest."""
        parts = [builder.tangent_part(stmt, binds=False) for builder in self.each]
        joints = [i for i, (_, joint, _) in enumerate(parts) if joint]
        if joints:
            parts[joints[-1]] = self.each[joints[-1]].tangent_part(stmt, binds=True)
        lines = [line for before, _, _ in parts for line in before]
        lines += [joint for _, joint, _ in parts if joint] or self.primal_lines(stmt)
        return lines + [line for _, _, after in parts for line in after]

    def starts(self) -> list:
        return [line for builder in self.each for line in builder.starts()]

    def seeds(self) -> list:
        return [builder.seeds()[0] for builder in self.each]

    def returned_tangent(self) -> str:
        return "(" + "".join(f"{builder.returned_tangent()}, " for builder in self.each).rstrip() + ")"


def forward_grad(fn, table: RuleTable, *, wrt: tuple, name: str, kwonly: tuple = (),
                 constant: frozenset = frozenset(), callee_lookup: Optional[CalleeLookup] = None,
                 shapes: tuple = ({}, frozenset()), numbers_only: bool = False,
                 on_numbers: frozenset = frozenset()) -> JvpFunction:
    """The function ``<name>_forward_grad`` of ``fn`` with respect to ``wrt`` (the arguments
    as forward.forward takes them): it returns ``(value, (derivative along each parameter's
    tangent, ...))``. ``numbers_only``: refused unless every varied name holds one number
    (ForwardGradBuilder.refuse_arrays); ``on_numbers``: as forward.forward's."""
    return ForwardGradBuilder(fn, table, wrt, name, kwonly, constant, callee_lookup, shapes,
                              numbers_only, on_numbers).build()


__all__ = ["ForwardGradBuilder", "forward_grad"]

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

from ..lower.ir import Stmt
from ..lower.naming import Namer
from ..rules.table import RuleTable
from .forward import CalleeLookup, ForwardBuilder, JvpFunction


class ForwardGradBuilder(ForwardBuilder):
    """Builds ``<name>_forward_grad`` for one CoreFunction from one ForwardBuilder per parameter
    of ``wrt``. Used once."""

    def __init__(self, fn, table: RuleTable, wrt: tuple, name: str, kwonly: tuple,
                 constant: frozenset, callee_lookup: Optional[CalleeLookup], shapes: tuple) -> None:
        namer, early = Namer(fn.reserved | {name}), set()  # one function's names and early lines
        super().__init__(fn, table, wrt, name, kwonly, constant, callee_lookup, shapes,
                         namer=namer, suffix="", early=early)
        self.each = [ForwardBuilder(fn, table, (param,), name, kwonly, constant, callee_lookup,
                                    shapes, namer=namer, suffix=f"_d{param}", early=early)
                     for param in wrt]

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
                 shapes: tuple = ({}, frozenset())) -> JvpFunction:
    """The function ``<name>_forward_grad`` of ``fn`` with respect to ``wrt`` (the arguments
    as forward.forward takes them): it returns ``(value, (derivative along each parameter's
    tangent, ...))``."""
    return ForwardGradBuilder(fn, table, wrt, name, kwonly, constant, callee_lookup, shapes).build()


__all__ = ["ForwardGradBuilder", "forward_grad"]

"""The core form: a function as straight-line statements, each one primitive with named operands.

Frozen dataclasses only. Operands are ``Var`` (an SSA name), ``Const`` (a literal, a global, or an
index expression kept verbatim; it may read locals, listed in ``reads``) or ``Seq`` (a tuple/list
display of operands, e.g. the argument of ``np.stack``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

import libcst as cst

from ..errors import Location


@dataclass(frozen=True)
class Origin:
    """The user statement a core statement came from: its text (one line) and location."""

    text: str
    location: Location


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Const:
    node: cst.BaseExpression = field(compare=False)
    code: str = ""
    reads: tuple = ()


@dataclass(frozen=True)
class Seq:
    kind: str  # "list" or "tuple"
    items: tuple


Operand = Union[Var, Const, Seq]


@dataclass(frozen=True)
class Prim:
    """One primitive application. ``op`` is a rule key (``numpy.tanh``, ``operator.mul``,
    ``ndarray.sum``), a user function (``user:<qualname>``) or ``nondiff`` (kept verbatim, no
    derivative). ``args``/``kwargs`` are operands as written at the call."""

    op: str
    args: tuple
    kwargs: tuple = ()  # ((name, Operand), ...)
    location: Optional[Location] = None
    callee: str = ""  # the call target as written (``helper``, ``np.tanh``), for user functions


@dataclass(frozen=True)
class Stmt:
    """``targets = expr``: ``expr`` is the forward code (operands already renamed), ``prim`` its meaning."""

    targets: tuple
    expr: cst.BaseExpression = field(compare=False)
    prim: Prim
    origin: Origin
    unpack: bool = False


@dataclass(frozen=True)
class Param:
    """A parameter of the user function, with its default as code (or None)."""

    name: str
    default: Optional[cst.BaseExpression] = field(default=None, compare=False)


@dataclass(frozen=True)
class CoreFunction:
    """A lowered function: parameters, statements in order, and the returned operand."""

    name: str
    qualname: str
    params: tuple
    body: tuple
    result: Operand
    result_origin: Origin
    reserved: frozenset  # every name the user function reads or writes
    globals_read: tuple  # free names read (module globals, closure values), sorted
    path: str


def operand_vars(op: Operand) -> tuple:
    """Names of the Vars inside an operand (Seq items included), in order."""
    if isinstance(op, Var):
        return (op.name,)
    if isinstance(op, Seq):
        out = []
        for item in op.items:
            out.extend(operand_vars(item))
        return tuple(out)
    return ()


def operand_reads(op: Operand) -> tuple:
    """Every local name an operand reads, including a Const's index reads."""
    if isinstance(op, Var):
        return (op.name,)
    if isinstance(op, Const):
        return op.reads
    out = []
    for item in op.items:
        out.extend(operand_reads(item))
    return tuple(out)


def prim_operands(prim: Prim) -> tuple:
    return tuple(prim.args) + tuple(v for _, v in prim.kwargs)

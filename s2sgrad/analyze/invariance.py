"""Shift invariance: CoreFunction + RuleTable + seeded outputs -> the stabilizing maxima.

A stabilized log-sum-exp or softmax subtracts ``m = np.max(x, ...)`` and adds it back (``m +
log(sum(exp(x - m)))``, ``z - log(sum(exp(z)))`` with ``z = x - m``): the outputs do not depend on
``m`` at all, so its adjoint is zero (up to rounding) and a careful person never computes it. This
analysis proves that for each max/min reduction by abstract interpretation: every value after it is
tracked as independent of ``m``, ``g + c*m`` (``Shift(c)``) or ``g * exp(k*m)`` (``Scale(k)``),
through ``+ - * /``, unary minus, ``exp``, ``log`` and sums along the axes ``m`` is constant on. When
every seeded output is independent of ``m``, ``m`` is returned and gets no adjoint. Anything else
that reads an ``m``-dependent value (another function, a branch, a loop) makes the proof fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from ..lower.binding import bind_arguments
from ..errors import TransformError
from ..lower.ir import Const, CoreFunction, If, Loop, Stmt, Var, flatten, operand_vars, prim_operands
from ..rules.table import RuleTable
from .scalars import is_scalar_literal

_BINARY = frozenset({"add", "sub", "mul", "div"})  # the rules' ``algebra`` the proof reads


@dataclass(frozen=True)
class Shift:
    """``g + c * m``, with ``g`` independent of ``m`` (``c == 0``: independent)."""

    c: int


@dataclass(frozen=True)
class Scale:
    """``g * exp(k * m)``."""

    k: int


_FREE = Shift(0)


def _axis_key(operand) -> Optional[str]:
    """An axis argument as comparable code (``None`` for one that is not a literal)."""
    if isinstance(operand, Const) and not operand.reads:
        return cst.Module([]).code_for_node(operand.node)
    return None


def _nested_reads(fn: CoreFunction) -> set:
    """Names read by statements inside branches and loops, and the branches' conditions."""
    reads: set = set()

    def visit(body: tuple, nested: bool) -> None:
        for node in body:
            if isinstance(node, Stmt):
                if nested:
                    for op in prim_operands(node.prim):
                        reads.update(operand_vars(op))
            elif isinstance(node, If):
                reads.add(node.test)
                visit(node.body, True)
                visit(node.orelse, True)
            elif isinstance(node, Loop):
                visit(node.body, True)
                visit(node.carries, True)

    visit(fn.body, False)
    return reads


class _Proof:
    """Tracks how the values after one extremum ``m`` depend on it."""

    def __init__(self, table: RuleTable, m: str, axes: Optional[str], shape: Optional[str],
                 classes: dict, scalars: frozenset) -> None:
        self.table = table
        self.m = m
        self.axes = axes  # None: m is one number (a full reduction); else the reduced axis code
        self.shape = shape  # the shape class of the reduced array (axes mode), when known
        self.classes = classes
        self.scalars = scalars
        self.values: dict = {m: Shift(1)}

    def aligned(self, op) -> bool:
        """Whether an operand independent of ``m`` may meet an ``m``-dependent one: in axes mode
        only a scalar or an array shaped like the reduced one, so ``m``'s kept axes stay where
        the later sums expect them."""
        if self.axes is None or self.of(op) != _FREE:
            return True
        if isinstance(op, Const):
            return not op.reads and is_scalar_literal(op.node)
        if isinstance(op, Var):
            return op.name in self.scalars or (
                self.shape is not None and self.classes.get(op.name) == self.shape)
        return False

    def of(self, op):
        if isinstance(op, Var):
            return self.values.get(op.name, _FREE)
        if any(name in self.values for name in operand_vars(op)) or \
                (isinstance(op, Const) and any(r in self.values for r in op.reads)):
            return None
        return _FREE

    def step(self, stmt: Stmt):
        """The dependence of ``stmt``'s target, or None when it is not one the proof tracks."""
        prim = stmt.prim
        operands = [self.of(op) for op in prim_operands(prim)]
        if all(v == _FREE for v in operands):
            return _FREE
        if None in operands or len(stmt.targets) != 1:
            return None
        rule = self.table.get(prim.op)
        if rule is None or rule.registered:
            return None  # a user's own derivative: the cancellation need not hold for it
        return self.through(rule, prim, operands)

    def through(self, rule, prim, operands: list):
        """The dependence of a statement's one target on ``m``, from its rule's algebra and
        reduction (rules/table.py), given its operands' dependences (some not free)."""
        algebra, plain = getattr(rule, "algebra", ""), not prim.kwargs
        if algebra in _BINARY and not all(self.aligned(o) for o in prim.args):
            return None
        if algebra in ("add", "sub") and len(prim.args) == 2 and plain:
            a, b = operands
            if isinstance(a, Shift) and isinstance(b, Shift):
                return Shift(a.c + b.c if algebra == "add" else a.c - b.c)
            return None
        if algebra in ("mul", "div") and len(prim.args) == 2 and plain:
            a, b = (Scale(0) if v == _FREE else v for v in operands)
            if isinstance(a, Scale) and isinstance(b, Scale):
                k = a.k + b.k if algebra == "mul" else a.k - b.k
                return _FREE if k == 0 else Scale(k)
            return None
        if (algebra == "neg" or prim.op == "copy") and len(prim.args) == 1:
            (a,) = operands
            return Shift(-a.c) if isinstance(a, Shift) and algebra == "neg" else a
        if algebra in ("exp", "log") and len(prim.args) == 1 and plain:
            (a,) = operands
            if algebra == "exp":
                return Scale(a.c) if isinstance(a, Shift) else None
            return Shift(a.k) if isinstance(a, Scale) else None
        tracked = [v for v in operands if v != _FREE]
        if getattr(rule, "reduction", "") in ("sum", "mean") and len(tracked) == 1 and \
                isinstance(tracked[0], Scale) and self.sums_along_constant_axes(prim):
            return tracked[0]
        return None

    def sums_along_constant_axes(self, prim) -> bool:
        """Whether a sum only adds up elements that share one value of ``m`` and keeps them
        aligned with it."""
        try:
            bound = bind_arguments(self.table.get(prim.op), prim)
        except TransformError:
            return False
        if any(key in bound and _axis_key(bound[key]) != "None" for key in ("dtype", "out")):
            return False  # (a rule without the parameter, the runtime's axis_sum, takes none)
        data = bound.get("a", bound.get("self"))
        if not isinstance(data, Var) or data.name not in self.values:
            return False
        if self.axes is None:
            return True
        return _axis_key(bound.get("axis")) == self.axes and _axis_key(bound.get("keepdims")) == "True"


def _extremum_axes(table: RuleTable, stmt: Stmt) -> tuple:
    """(whether ``stmt`` is a max/min the proof handles, its reduced axis code or None)."""
    prim = stmt.prim
    if getattr(table.get(prim.op), "reduction", "") != "extremum" or len(stmt.targets) != 1:
        return False, None
    try:
        bound = bind_arguments(table.get(prim.op), prim)
    except TransformError:
        return False, None
    axis, keepdims = _axis_key(bound.get("axis")), _axis_key(bound.get("keepdims"))
    if _axis_key(bound.get("out")) != "None":
        return False, None
    if axis == "None":
        return True, None
    if axis is None or keepdims != "True":
        return False, None  # without keepdims, m would broadcast along the wrong axis
    return True, axis


def stabilizers(fn: CoreFunction, table: RuleTable, outputs: tuple, classes: dict,
                scalars: frozenset) -> frozenset:
    """Names of max/min reductions the seeded ``outputs`` provably do not depend on
    (``classes`` and ``scalars`` from analyze.shapes)."""
    top = [node for node in fn.body if isinstance(node, Stmt)]
    counts: dict = {}
    for stmt in flatten(fn.body):
        for t in stmt.targets:
            counts[t] = counts.get(t, 0) + 1
    nested = _nested_reads(fn)
    found = set()
    for index, stmt in enumerate(top):
        handled, axes = _extremum_axes(table, stmt)
        m = stmt.targets[0] if handled else None
        if m is None or counts.get(m) != 1 or m in outputs:
            continue
        data = stmt.prim.args[0] if stmt.prim.args else None
        shape = classes.get(data.name) if isinstance(data, Var) else None
        proof = _Proof(table, m, axes, shape, classes, scalars)
        for later in top[index + 1:]:
            value = proof.step(later)
            if value is None:
                proof = None
                break
            for t in later.targets:
                if value != _FREE:
                    if counts.get(t) != 1:
                        proof = None
                        break
                    proof.values[t] = value
            if proof is None:
                break
        if proof is None or any(n in nested for n in proof.values):
            continue
        if all(proof.values.get(o, _FREE) == _FREE for o in outputs):
            found.add(m)
    return frozenset(found)

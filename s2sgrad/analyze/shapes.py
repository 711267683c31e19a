"""Scalar analysis: CoreFunction -> the names known to hold a scalar (0-d) value.

Used to skip unbroadcasting where no broadcasting can happen: an elementwise operand combined only
with scalars has the output's shape already.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst
import libcst.matchers as m

from ..lower.ir import (
    Const,
    CoreFunction,
    If,
    Loop,
    Seq,
    Stmt,
    Var,
    definition_counts,
    flatten,
    prim_operands,
)

_FULL_REDUCTIONS = frozenset(
    f"{owner}.{name}"
    for owner in ("numpy", "ndarray")
    for name in ("sum", "mean", "var", "std", "max", "min", "amax", "amin", "prod")
)
_SCALAR_FUNCTIONS = frozenset({"builtins.float", "builtins.len", "builtins.int"})
_ELEMENTWISE_PREFIXES = ("operator.", "copy")

_SIZE_READ = (
    m.Subscript(value=m.Attribute(attr=m.Name("shape")))
    | m.Attribute(attr=m.Name("ndim") | m.Name("size"))
    | m.Call(func=m.Name("len"))
)


def is_scalar_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation):
        return is_scalar_literal(node.expression)
    return False


def may_be_array(op, scalars) -> bool:
    """Whether an operand may be an array, and so may broadcast an elementwise output: not a
    name known to hold one number, nor a number, None or a bool literal."""
    if isinstance(op, Var):
        return op.name not in scalars
    if isinstance(op, Const):
        literal = is_scalar_literal(op.node) or op.code in _SCALAR_CONSTANTS or \
            (isinstance(op.node, cst.Name) and op.node.value in ("None", "True", "False"))
        return bool(op.reads) or not literal
    return True


_SCALAR_CONSTANTS = frozenset(f"{module}.{name}" for module in ("math", "np", "numpy")
                              for name in ("pi", "e", "tau", "inf", "nan")) - {"np.tau", "numpy.tau"}


def may_broadcast(operand, bound: dict, scalars) -> bool:
    """Whether an elementwise output may be larger than ``operand`` (one of the operands
    ``bound`` to a rule's parameters): only when another operand may be an array."""
    return any(may_be_array(other, scalars) for other in bound.values()
               if not (other is operand or other == operand))


def _is_scalar_operand(op, scalars: set) -> bool:
    if isinstance(op, Var):
        return op.name in scalars
    if isinstance(op, Const):
        return is_scalar_literal(op.node)
    return False


def _scalar_definition(stmt, scalars: set, elementwise: frozenset) -> bool:
    prim = stmt.prim
    if prim.op in _FULL_REDUCTIONS:
        kwargs = dict(prim.kwargs)
        return len(prim.args) == 1 and "axis" not in kwargs and "keepdims" not in kwargs
    if prim.op.startswith("math.") or prim.op in _SCALAR_FUNCTIONS:
        return True
    if prim.op == "nondiff":
        return m.matches(stmt.expr, _SIZE_READ)
    if prim.op in elementwise or prim.op.startswith(_ELEMENTWISE_PREFIXES):
        operands = list(prim.args) + [v for _, v in prim.kwargs]
        return bool(operands) and prim.op not in ("operator.matmul", "operator.getitem") and \
            all(_is_scalar_operand(o, scalars) for o in operands if not isinstance(o, Seq))
    return False


def known_scalars(fn: CoreFunction, elementwise: frozenset) -> frozenset:
    """Names whose every definition certainly gives a scalar (to a fixed point, from none)."""
    definitions: dict = {}
    for stmt in flatten(fn.body):
        for target in stmt.targets:
            definitions.setdefault(target, []).append(stmt)
    scalars: set = set()
    changed = True
    while changed:
        changed = False
        for name, stmts in definitions.items():
            if name in scalars or any(len(s.targets) != 1 for s in stmts):
                continue
            if all(_scalar_definition(s, scalars, elementwise) for s in stmts):
                scalars.add(name)
                changed = True
    return frozenset(scalars)


# ----- shape classes ---------------------------------------------------------------------------

TOP = "?"  # a shape nothing else is known to share
SCALAR = "()"  # a scalar: broadcasting it against any shape gives that shape
_BOTTOM = None  # not known yet (the fixed point starts optimistic)

_KEPT = "/kept"  # suffix: a keepdims reduction of the class before it

_SLICE0 = re.compile(r"^\[\s*(\d*)\s*:\s*(-\s*\d+)?\s*\]$")


def _is_true(op) -> bool:
    return isinstance(op, Const) and isinstance(op.node, cst.Name) and op.node.value == "True"


def _loop_depths(body: tuple, in_loop: bool, out: dict) -> None:
    for node in body:
        if isinstance(node, Stmt):
            out[node] = in_loop
        elif isinstance(node, If):
            _loop_depths(node.body, in_loop, out)
            _loop_depths(node.orelse, in_loop, out)
        elif isinstance(node, Loop):
            _loop_depths(node.body, True, out)
            _loop_depths(node.carries, True, out)


def _slice_class(base: str, index) -> Optional[str]:
    """The class of ``base[a:-b]`` (a >= 0, b > 0, either left out): its first axis is
    ``max(0, n - a - b)`` long and the others are ``base``'s, so it is named by ``a + b``."""
    if not isinstance(index, Const) or not index.brackets:
        return None
    match = _SLICE0.match(index.brackets)
    if match is None:
        return None
    start = int(match.group(1) or 0)
    stop = -int(match.group(2).replace(" ", "")) if match.group(2) else 0
    return f"{base}[{start + stop}:]"


def shape_classes(fn: CoreFunction, elementwise: frozenset, scalars: frozenset) -> dict:
    """Name -> shape class: two names of one class (other than ``TOP``) certainly hold arrays of
    the same shape whenever they are read, so an elementwise operand whose class is the output's
    needs no unbroadcasting. Classes are rooted in the parameters' shapes on entry and in the
    results of statements that run at most once per call (outside loops, defined once); the
    rest follows from elementwise operations, plain copies, ``x[a:-b]`` slices and keepdims
    reductions (which broadcast back to their operand's class), to a fixed
    point that starts optimistic (sound like constant propagation: every definition of a name
    must give its class)."""
    in_loop: dict = {}
    _loop_depths(fn.body, False, in_loop)
    defined = {t for stmt in in_loop for t in stmt.targets}
    counts = definition_counts(fn.body)
    params = {p.name for p in fn.params}
    env: dict = {}

    def operand_class(op):
        if isinstance(op, Var):
            if op.name in scalars:
                return SCALAR
            if op.name in env:
                return env[op.name]
            if op.name in params or op.name in defined:
                return _BOTTOM
            return TOP  # a loop target or a name bound elsewhere
        if isinstance(op, Const):
            if not op.reads and (is_scalar_literal(op.node) or (
                    isinstance(op.node, cst.Name) and op.node.value in ("None", "True", "False"))):
                return SCALAR
        return TOP

    def evaluate(stmt: Stmt, own: str) -> Optional[str]:
        prim = stmt.prim
        target = stmt.targets[0]
        if target in scalars:
            return SCALAR
        if prim.op == "copy" and len(prim.args) == 1:
            return operand_class(prim.args[0])
        if prim.op in elementwise and \
                prim.op not in ("operator.matmul", "operator.getitem"):
            classes = {operand_class(o) for o in prim_operands(prim)}
            classes.discard(SCALAR)
            classes -= {c for c in classes if c and c.endswith(_KEPT) and c[:-len(_KEPT)] in classes}
            if TOP in classes or len(classes - {_BOTTOM}) > 1:
                return own
            known = classes - {_BOTTOM}
            if known:
                return known.pop()
            return _BOTTOM if classes else SCALAR
        if prim.op in _FULL_REDUCTIONS and prim.args and \
                any(k == "keepdims" and _is_true(v) for k, v in prim.kwargs):
            base = operand_class(prim.args[0])
            if base is _BOTTOM or base not in (TOP, SCALAR):
                # The same rank with ones where reduced: it broadcasts to the base's shape.
                return _BOTTOM if base is _BOTTOM else base + _KEPT
        if prim.op == "operator.getitem" and len(prim.args) == 2:
            base = operand_class(prim.args[0])
            if base is _BOTTOM:
                return _BOTTOM
            if base not in (TOP, SCALAR):
                sliced = _slice_class(base, prim.args[1])
                if sliced is not None:
                    return sliced
        return own

    order = flatten(fn.body)
    for name in params:
        env[name] = f"<{name}>"
    changed = True
    while changed:
        changed = False
        for stmt in order:
            if not stmt.targets:
                continue
            name = stmt.targets[0]
            once = not in_loop[stmt] and counts.get(name, 0) == 1 and name not in params \
                and len(stmt.targets) == 1
            found = evaluate(stmt, f"<{name}>" if once else TOP) if len(stmt.targets) == 1 else TOP
            targets = stmt.targets if found is not _BOTTOM else ()
            for target in targets:
                old = env.get(target, _BOTTOM)
                new = found if old is _BOTTOM or old == found else TOP
                if new != old:
                    env[target] = new
                    changed = True
    return {k: v for k, v in env.items() if v not in (TOP, _BOTTOM)}


def shape_facts(fn: CoreFunction, elementwise: frozenset) -> tuple:
    """(shape classes, known scalars) of ``fn``, given the names of the elementwise rules."""
    scalars = known_scalars(fn, elementwise)
    return shape_classes(fn, elementwise, scalars), scalars

"""Known scalars: CoreFunction -> the names known to hold one number (0-d), and the operand
tests built on them (an elementwise operand combined only with scalars has the output's shape
already, so nothing is summed back to it).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from ..lower.ir import SUBSCRIPT, Const, CoreFunction, Var, definition_counts, flatten
from ..rules.nondiff import SCALAR_CONSTANTS
from ..rules.table import RuleTable


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
        literal = is_scalar_literal(op.node) or op.code in SCALAR_CONSTANTS or \
            (isinstance(op.node, cst.Name) and op.node.value in ("None", "True", "False"))
        return bool(op.reads) or not literal
    return True


def tangent_shaping(reads: frozenset, param: str, bound: dict) -> set:
    """The parameters (of ``bound``) whose shapes a tangent template's value includes, from the
    names it reads where they broadcast: ``g`` stands for ``param``'s tangent (its shape),
    ``ans`` for the output (every operand's)."""
    if "ans" in reads:
        return set(bound)
    return {name for name in bound if name in reads} | ({param} if "g" in reads else set())


def may_broadcast(operand, bound: dict, scalars) -> bool:
    """Whether an elementwise output may be larger than ``operand`` (one of the operands
    ``bound`` to a rule's parameters): only when another operand may be an array."""
    return any(may_be_array(other, scalars) for other in bound.values()
               if not (other is operand or other == operand))


def _is_scalar_operand(op, scalars: set) -> bool:
    if isinstance(op, Var):
        return op.name in scalars
    if isinstance(op, Const):  # a number, np.pi, or a global name taken to hold one (``assumed``)
        return is_scalar_literal(op.node) or (not op.reads and op.code in SCALAR_CONSTANTS) or \
            (isinstance(op.node, cst.Name) and op.node.value in scalars)
    return False


_SHAPE_READ = m.Attribute(attr=m.Name("shape"))


def _shape_tuples(stmts_of: dict, counts: dict) -> frozenset:
    """The names bound once, to a ``.shape`` read (``X_shape = X.shape``, the lowering of
    ``n, d = X.shape``): an item of one at a literal position is one number."""
    return frozenset(name for name, stmts in stmts_of.items()
                     if counts.get(name) == 1 and len(stmts) == 1 and stmts[0].prim.op == "nondiff"
                     and len(stmts[0].targets) == 1 and m.matches(stmts[0].expr, _SHAPE_READ))


def _shape_item(prim, shapes: frozenset) -> bool:
    """``X_shape[0]`` of a name in ``shapes`` (_shape_tuples) at a literal int position."""
    return prim.op == SUBSCRIPT and len(prim.args) == 2 and not prim.kwargs and \
        isinstance(prim.args[0], Var) and prim.args[0].name in shapes and \
        isinstance(prim.args[1], Const) and not prim.args[1].reads and \
        m.matches(prim.args[1].node, m.Integer() | m.UnaryOperation(operator=m.Minus(), expression=m.Integer()))


def _scalar_definition(stmt, scalars: set, table: RuleTable, reductions: bool = True,
                       shapes: frozenset = frozenset()) -> bool:
    prim = stmt.prim
    if _shape_item(prim, shapes):
        return True
    if getattr(table.get(prim.op), "reduction", ""):
        kwargs = dict(prim.kwargs)
        whole = len(prim.args) == 1 and "axis" not in kwargs and "keepdims" not in kwargs
        # without ``reductions``, one of a number alone (numpy's number of the same type)
        return whole and (reductions or _is_scalar_operand(prim.args[0], scalars))
    if table.gives_scalar(prim.op):
        return True
    if prim.op == "nondiff":
        return m.matches(stmt.expr, _SIZE_READ)
    if prim.op == "copy" and len(prim.args) == 1 and isinstance(prim.args[0], Const) and \
            prim.args[0].code == "None" and not prim.args[0].reads:
        return True  # None: what stands in for a name not bound yet (lower/joins.py)
    if prim.op == "copy" or table.broadcasts(prim.op):
        operands = list(prim.args) + [v for _, v in prim.kwargs]
        return bool(operands) and \
            all(_is_scalar_operand(o, scalars) for o in operands)
    return False


def known_scalars(fn: CoreFunction, table: RuleTable, numbers: frozenset = frozenset(),
                  reductions: bool = True, assumed: frozenset = frozenset()) -> frozenset:
    """Names whose every value certainly is a scalar (or None, which stands in for a name not
    bound yet: reading it as a number fails as Python does): the parameters ``numbers`` (the code is
    made for calls that pass them numbers) and the names every definition of which gives a
    scalar when the scalars it reads are scalars. The largest such set (a fixed point from every
    candidate down): sound by induction over the run, since each value is made by one of its
    name's definitions from values made before. A candidate is bound only by one-target
    statements (not by a loop header, an unpacking, or as a parameter not in ``numbers``).
    ``reductions`` False: not the results of reductions of arrays (numbers, so immutable, where the
    values are numpy's; another library's reduction gives a 0-d array, a float32 array's a
    float32), only of numbers. ``assumed``: names the function
    reads and never binds (globals) taken to hold numbers."""
    stmts_of: dict = {}
    for stmt in flatten(fn.body):
        for target in stmt.targets:
            stmts_of.setdefault(target, []).append(stmt)
    counts = definition_counts(fn.body)
    params = {p.name for p in fn.params}
    scalars = {name for name, stmts in stmts_of.items()
               if all(len(s.targets) == 1 for s in stmts) and counts.get(name) == len(stmts)
               and (name not in params or name in numbers)}
    scalars |= numbers & params
    scalars |= assumed - set(stmts_of) - params
    shapes = _shape_tuples(stmts_of, counts)
    changed = True
    while changed:
        changed = False
        for name in sorted(scalars):
            if not all(_scalar_definition(s, scalars, table, reductions, shapes)
                       for s in stmts_of.get(name, ())):
                scalars.discard(name)
                changed = True
    return frozenset(scalars)

"""Batched tangents: the tangent part of a linearized forward-mode function (linearize.py) ->
the same statements carrying many tangents at once, or None where a statement has no batched form;
a backward sweep -> the same sweep carrying many seeds at once.

A Hessian needs the tangent part once per column. Batched, it runs once: each tangent parameter
holds every direction stacked on a new leading axis, and so does every value computed from one;
the values the primal part handed over stay as they are. Each expression reading a batched value
is rewritten by what the rule table says of its function (``Rule.batched``: the call with that
argument batched, a runtime helper of runtime/batching.py), or, for an elementwise function or
operator, by aligning each batched operand to broadcast as one column does (``s2s.lead``). An
operand read twice that way is bound to a name first. Anything else (a call the table has no
batched form of, a batched value in a list, a comparison) refuses the whole part: the Hessian
then runs the tangent part per column, as before.

A backward sweep is linear in its seed: ``batch_backward`` rewrites it the same way for seeds
stacked on a leading axis (a reverse-mode Jacobian's rows, a chunk at a time), in-place updates
of stacked adjoints included.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..lower.naming import Namer
from ..program import Comment, Simple, _dotted, name_reads, qualified
from ..rules.table import POSITIONAL, VARARGS, RuleTable
from .templates import instantiate

_OPERATORS = {cst.Add: "operator.add", cst.Subtract: "operator.sub", cst.Multiply: "operator.mul",
              cst.Divide: "operator.truediv", cst.MatrixMultiply: "operator.matmul",
              cst.Power: "operator.pow", cst.Modulo: "operator.mod"}
_LITERALS = (cst.Integer, cst.Float, cst.Imaginary)
_IN_PLACE = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)


class NotBatched(Exception):
    """A statement of the tangent part has no batched form."""


def batch_statements(items: tuple, tangent: str, batched: tuple, table: RuleTable,
                     taken: frozenset) -> Optional[tuple]:
    """``(items, returned code)``: ``items`` (comments and ``name = expr`` lines) and the
    returned ``tangent`` with the names ``batched`` (the tangent parameters) holding stacked
    tangents, or None. ``taken``: names a new name must not shadow."""
    batcher = _Batcher(table, set(batched), Namer(taken | _all_names(items)))
    out: list = []
    try:
        for item in items:
            out.extend((item,) if isinstance(item, Comment) else batcher.statement(item))
        returned = batcher.returned(cst.parse_expression(tangent), batched[0])
    except NotBatched:
        return None
    return tuple(out), cst.Module([]).code_for_node(returned)


def batch_backward(bwd: cst.FunctionDef, name: str, table: RuleTable) -> Optional[cst.FunctionDef]:
    """The backward sweep ``bwd`` (``def bwd(residuals, seed):``, simple statements ending in
    ``return (adjoints,)``) for many seeds at once: ``def name(residuals, seeds):`` whose
    ``seeds`` hold cotangents stacked on a new leading axis, as does every adjoint computed from
    them (a reverse-mode Jacobian's rows, a chunk at a time). The sweep is linear in its seed:
    each statement reading a stacked value is rewritten as ``batch_statements`` does, an
    in-place update of a stacked adjoint (``a += v``, ``a[i] += v``, ``a[i] = v``) updates every
    row. None where one has no batched form (a loop, a branch, an update of an adjoint that
    holds no stack by a stacked value, ...): the Jacobian then runs one sweep per row."""
    params = bwd.params
    if len(params.params) != 2 or params.kwonly_params or params.posonly_params or \
            isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
        return None
    seed = params.params[1].name.value
    lines = list(bwd.body.body)
    if lines and _docstring(lines[0]):
        lines = lines[1:]
    if not lines or not all(isinstance(line, cst.SimpleStatementLine) for line in lines):
        return None
    taken = frozenset().union(*(name_reads(line) for line in lines), *(
        Simple(small).binds for line in lines for small in line.body if
        not isinstance(small, cst.Return)))
    batcher = _Batcher(table, {seed}, Namer(taken | {p.name.value for p in params.params}))
    body: list = []
    try:
        for line in lines[:-1]:
            out = [cst.SimpleStatementLine([new.node]) for small in line.body
                   for new in batcher.update(small)]
            body += [line.with_changes(body=out[0].body)] if len(out) == 1 else \
                [out[0].with_changes(leading_lines=line.leading_lines), *out[1:]]
        returned = lines[-1].body
        if len(returned) != 1 or not isinstance(returned[0], cst.Return) or \
                not isinstance(returned[0].value, cst.Tuple):
            return None
        value = batcher.returned(returned[0].value, seed)
        body += [cst.SimpleStatementLine([cst.Return(value)])]
    except NotBatched:
        return None
    doc = cst.SimpleStatementLine([cst.Expr(cst.SimpleString(
        f'"""{bwd.name.value} for seeds stacked on a leading axis, as is each adjoint."""'))])
    stacked = params.params[1].with_changes(default=None, equal=cst.MaybeSentinel.DEFAULT)
    return bwd.with_changes(name=cst.Name(name), body=bwd.body.with_changes(body=[doc, *body]),
                            params=params.with_changes(params=[params.params[0], stacked]),
                            leading_lines=())


def _docstring(line: cst.BaseStatement) -> bool:
    return isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and \
        isinstance(line.body[0], cst.Expr) and isinstance(line.body[0].value, cst.SimpleString)


def _all_names(items: tuple) -> frozenset:
    out: set = set()
    for item in items:
        out |= set(item.reads) | set(item.binds)
    return frozenset(out)


def _is_number(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _is_number(node.expression)
    return isinstance(node, _LITERALS)


def _is_plain(node: cst.BaseExpression) -> bool:
    """A name, an attribute of one or a number: cheap and the same when read twice."""
    return _is_number(node) or bool(_dotted(node))


def _first_column(node: cst.BaseExpression) -> cst.Subscript:
    return cst.Subscript(node, [cst.SubscriptElement(cst.Index(cst.Integer("0")))])


def _lead(node: cst.BaseExpression, others: list) -> cst.Call:
    """Stacked ``node`` aligned (the runtime's ``lead``) to broadcast against ``others`` (one
    row's values) as one of its rows does."""
    return _call("s2s.lead", [node, *others])


def _call(func: str, args: list) -> cst.Call:
    return cst.Call(cst.parse_expression(func), [cst.Arg(a) for a in args])


class _Batcher:
    """Rewrites one tangent part, statement by statement; ``batched``: the names holding stacks."""

    def __init__(self, table: RuleTable, batched: set, namer: Namer) -> None:
        self.table, self.batched, self.namer = table, batched, namer
        self.before: list = []  # statements binding operands read twice, for the current line

    def statement(self, item: Simple) -> list:
        node = item.node
        if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and
                isinstance(node.targets[0].target, cst.Name)):
            raise NotBatched
        value, is_batched = self.expr(node.value)
        if is_batched:
            self.batched.add(node.targets[0].target.value)
        out, self.before = self.before + [Simple(node.with_changes(value=value))], []
        return out

    def update(self, node: cst.BaseSmallStatement) -> list:
        """One statement of a backward sweep (batch_backward): as ``statement`` for an
        assignment of a stacked value to a name; an in-place update of a stacked adjoint for every
        row; anything reading no stacked value as it is (the names it binds hold no stack)."""
        if isinstance(node, cst.Del):
            return [Simple(node)]
        item = Simple(node)
        if isinstance(node, cst.AugAssign) or (isinstance(node, cst.Assign) and
                                                isinstance(node.targets[0].target, cst.Subscript)):
            return self.in_place(node)
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0].target, cst.Name):
            if self.reads_batched(node.value):
                return self.statement(item)
            self.batched.discard(node.targets[0].target.value)  # a name bound again, unstacked
            return [item]
        if isinstance(node, (cst.Assign, cst.Expr)) and not self.reads_batched(node):
            return [item]  # (an unpacking's names: none holds a stack, before or after)
        raise NotBatched

    def in_place(self, node) -> list:
        """``a op= v``, ``a[i] op= v`` or ``a[i] = v`` where ``a`` holds a stack: every row
        updated (``v`` aligned to broadcast as it does against one row); where neither ``a`` nor
        ``v`` does, as it is. Refused where only ``v`` does (``a`` would need to become a stack)
        and for an operator other than an elementwise one."""
        assign = isinstance(node, cst.Assign)
        if assign and len(node.targets) != 1:
            raise NotBatched
        target = node.targets[0].target if assign else node.target
        if not assign and not isinstance(node.operator, _IN_PLACE):
            raise NotBatched
        base = target.value if isinstance(target, cst.Subscript) else target
        if not isinstance(base, cst.Name):
            raise NotBatched
        stacked, reads = base.value in self.batched, self.reads_batched(node.value)
        if isinstance(target, cst.Subscript) and any(self.reads_batched(e) for e in target.slice):
            raise NotBatched
        if not stacked:
            if reads:
                raise NotBatched
            return [Simple(node)]
        row = cst.Subscript(base, [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
        if isinstance(target, cst.Subscript):
            elements = _written_out(target.slice)
            if elements is None:
                raise NotBatched
            row = target.with_changes(value=row)
            everything = cst.SubscriptElement(cst.Slice(None, None))
            target = target.with_changes(slice=[everything, *(cst.SubscriptElement(e) for e in elements)])
        value = node.value
        if reads:
            value = _lead(self.expr(value)[0], [row])
        out, self.before = self.before, []
        changed = node.with_changes(targets=[node.targets[0].with_changes(target=target)]) if assign \
            else node.with_changes(target=target)
        return out + [Simple(changed.with_changes(value=value))]

    def returned(self, node: cst.BaseExpression, rows: str) -> cst.BaseExpression:
        """The returned tangent (one, or a tuple of them); a part that reads no stacked value is
        the same for every tangent: stacked as many times as ``rows`` (a tangent parameter)."""
        if isinstance(node, cst.Tuple):
            return node.with_changes(elements=[e.with_changes(value=self.returned(e.value, rows))
                                               for e in node.elements])
        value, is_batched = self.expr(node)
        if is_batched:
            return value
        return _call("s2s.batch_constant", [value, cst.Name(rows)])

    def reads_batched(self, node: cst.CSTNode) -> bool:
        return any(name in self.batched for name in name_reads(node))

    def expr(self, node: cst.BaseExpression) -> tuple:
        """``(node, whether it is batched)``."""
        if not self.reads_batched(node):
            return node, False
        if isinstance(node, cst.Name):
            return node, True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            inner, _ = self.expr(node.expression)
            return node.with_changes(expression=inner), True
        if isinstance(node, cst.BinaryOperation):
            return self.binary(node), True
        if isinstance(node, cst.Call):
            return self.call(node), True
        if isinstance(node, cst.Attribute):
            return self.apply(f"ndarray.{node.attr.value}", [(None, *self.expr(node.value))],
                              None), True
        if isinstance(node, cst.Subscript):
            return self.subscript(node), True
        raise NotBatched

    def binary(self, node: cst.BinaryOperation) -> cst.BaseExpression:
        name = _OPERATORS.get(type(node.operator))
        if name is None:
            raise NotBatched
        left, right = self.expr(node.left), self.expr(node.right)
        if self.table.broadcasts(name):
            left, right = self.aligned([left, right])
            return node.with_changes(left=left, right=right)
        return self.apply(name, [(None, *left), (None, *right)], None)

    def call(self, node: cst.Call) -> cst.BaseExpression:
        args = []
        for arg in node.args:
            value, is_batched = self.expr(arg.value)
            if is_batched and arg.star:
                raise NotBatched
            args.append((arg.keyword.value if arg.keyword else None, value, is_batched, arg))
        name = qualified(node.func)
        if name:
            if self.table.broadcasts(name) and all(a[0] is None and not a[3].star for a in args):
                values = self.aligned([(a[1], a[2]) for a in args])
                return node.with_changes(args=[a[3].with_changes(value=v) for a, v in zip(args, values)])
            return self.apply(name, [(k, v, b) for k, v, b, _ in args], node)
        if isinstance(node.func, cst.Attribute):  # a method: its receiver is the first argument
            receiver = self.expr(node.func.value)
            name = f"ndarray.{node.func.attr.value}"
            if self.table.broadcasts(name) and not args:  # elementwise, of the receiver alone
                return node.with_changes(func=node.func.with_changes(value=receiver[0]))
            return self.apply(name, [(None, *receiver)] + [(k, v, b) for k, v, b, _ in args], node)
        raise NotBatched

    def apply(self, name: str, args: list, node: Optional[cst.Call]) -> cst.BaseExpression:
        """The rule ``name``'s batched template for the one batched argument of ``args``
        (``(keyword or None, node, batched)``)."""
        rule = self.table.get(name)
        if rule is None or (node is not None and any(a.star for a in node.args)):
            raise NotBatched
        mapping, batched, defaulted = _bind(rule, args)
        templates = dict(rule.batched)
        if len(batched) != 1 or batched[0] not in templates:
            raise NotBatched
        mapping["t"] = mapping.pop(batched[0])
        return instantiate(templates[batched[0]], mapping, frozenset(defaulted))

    def aligned(self, operands: list) -> list:
        """Elementwise operands ``(node, batched)``: each batched one aligned to broadcast
        against the others as one column does. An operand read twice that way (an unbatched one
        beside a batched one, a batched one beside another) is bound to a name first."""
        stacks = sum(1 for _, is_batched in operands if is_batched)
        plain = [self.plain(node, is_batched) if stacks > is_batched and not _is_number(node)
                 else (node, is_batched) for node, is_batched in operands]
        out = []
        for i, (node, is_batched) in enumerate(plain):
            if not is_batched:
                out.append(node)
                continue
            others = [_first_column(o) if b else o for j, (o, b) in enumerate(plain)
                      if j != i and not _is_number(o)]
            out.append(_lead(node, others) if others else node)
        return out

    def plain(self, node: cst.BaseExpression, is_batched: bool) -> tuple:
        """``(node, batched)`` with ``node`` bound to a new name first unless it is plain."""
        if _is_plain(node):
            return node, is_batched
        name = self.namer.fresh("batched" if is_batched else "operand")
        self.before.append(Simple(cst.Assign([cst.AssignTarget(cst.Name(name))], node)))
        if is_batched:
            self.batched.add(name)
        return cst.Name(name), is_batched

    def subscript(self, node: cst.Subscript) -> cst.BaseExpression:
        """``t[index]`` -> ``t[:, index]`` where the index is written out (numbers, slices,
        ``None``, ``...``) and numpy places the result's axes alike: every element but slices,
        ``...`` and ``None`` side by side; an index held by a name (an int, an array, a slice or
        a tuple of them) -> ``s2s.batch_getitem(t, index)``, which looks at it when it runs."""
        value, is_batched = self.expr(node.value)
        if not is_batched or any(self.reads_batched(e) for e in node.slice):
            raise NotBatched
        elements = _written_out(node.slice)
        if elements is None:
            parts = [_index_value(e.slice) for e in node.slice]
            index = parts[0] if len(parts) == 1 else cst.Tuple([cst.Element(p) for p in parts])
            return _call("s2s.batch_getitem", [value, index])
        kinds = [isinstance(e, cst.Slice) or _none_or_ellipsis(e) for e in elements]
        indexes = [i for i, k in enumerate(kinds) if not k]
        if indexes and indexes[-1] - indexes[0] + 1 != len(indexes):
            raise NotBatched
        everything = cst.SubscriptElement(cst.Slice(None, None))
        return node.with_changes(value=value, slice=[
            everything, *(cst.SubscriptElement(e) for e in elements)])


def _written_out(elements) -> Optional[list]:
    """The index's elements (a tuple display spliced), each a slice or an ``Index`` of a number,
    ``None`` or ``...``; None where one is anything else."""
    out: list = []
    for element in elements:
        index = element.slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Tuple):
            out.extend(cst.Index(e.value) for e in index.value.elements)
        else:
            out.append(index)
    for index in out:
        if isinstance(index, cst.Slice):
            continue
        if not (_is_number(index.value) or _none_or_ellipsis(index)):
            return None
    return out


def _index_value(index: cst.BaseSlice) -> cst.BaseExpression:
    """One element of an index as a value: ``a:b`` -> ``slice(a, b, None)``."""
    if isinstance(index, cst.Index):
        if isinstance(index.value, cst.StarredElement):
            raise NotBatched
        return index.value
    bounds = [index.lower, index.upper, index.step]
    return _call("slice", [b if b is not None else cst.Name("None") for b in bounds])


def _none_or_ellipsis(index: cst.BaseSlice) -> bool:
    return isinstance(index, cst.Index) and (
        isinstance(index.value, cst.Ellipsis) or
        (isinstance(index.value, cst.Name) and index.value.value == "None"))


def _bind(rule, args: list) -> tuple:
    """``(mapping, batched parameters, defaulted parameters)`` of ``args`` bound to ``rule``'s
    parameters (``mapping``: parameter -> node)."""
    positional = [(v, b) for k, v, b in args if k is None]
    keywords = {k: (v, b) for k, v, b in args if k is not None}
    mapping, batched, defaulted = {}, [], []
    index = 0
    for p in rule.params:
        if p.kind == VARARGS:
            rest, index = positional[index:], len(positional)
            if any(b for _, b in rest):
                raise NotBatched
            value = (cst.Tuple([cst.Element(v) for v, _ in rest]), False)
        elif p.kind == POSITIONAL and index < len(positional):
            value, index = positional[index], index + 1
        elif p.name in keywords:
            value = keywords.pop(p.name)
        elif p.default is not None:
            value = (cst.parse_expression(p.default), False)
            defaulted.append(p.name)
        else:
            raise NotBatched
        mapping[p.name] = value[0]
        if value[1]:
            batched.append(p.name)
    if index < len(positional) or keywords:
        raise NotBatched
    return mapping, batched, defaulted

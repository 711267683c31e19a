"""Reverse mode of one statement: its rule's (or its callee's, or a registered gradient's)
contributions to the adjoints of its operands (a mixin of ReverseBuilder, differentiate/reverse.py).

Each contribution is the rule's template instantiated with the statement's operands, the output
adjoint ``g`` and ``ans``; an elementwise rule's contribution is summed back to its operand's shape
where broadcasting may have happened; a full sum passes its adjoint on as one number standing
for an array. Uses the builder's ``adj`` (adjoints), ``rec`` (records), ``namer``, ``table``,
``shape_of``, ``classes``/``scalars`` (shape facts) and, in loops, ``collecting``.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..analyze.scalars import may_broadcast
from ..analyze.integers import literal_int
from ..analyze.shapes import SCALAR, summed_axes
from .reuse import reuse_forward
from ..lower.ir import SUBSCRIPT, Const, Prim, Seq, Stmt, Var, operand_node, operand_vars
from ..read.names import name_nodes
from ..lower.binding import bind_arguments, defaulted_params
from ..program import unpack_target
from .simplify import simplify, unbroadcast_call
from .templates import instantiate
from .vjp_types import CalleeCall


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def basic_getitem(prim: Prim) -> bool:
    """``x[i]`` with an index of integers and slices only."""
    return prim.op == SUBSCRIPT and len(prim.args) == 2 and \
        isinstance(prim.args[1], Const) and prim.args[1].basic


def _same_twice(rule, wanted: list, contribution, g: str) -> bool:
    """Whether an elementwise rule's two contributions go to one name and are the same
    expression (``a * a``: ``g * a`` twice; ``a + a``): then it is added once, doubled, one
    array operation fewer (doubling is exact, so the sum is the same number)."""
    if not getattr(rule, "elementwise", False) or len(wanted) != 2:
        return False
    (_, first, a), (_, second, b) = wanted
    if not (isinstance(a, Var) and a == b):
        return False
    return _code(contribution(first, g)) == _code(contribution(second, g))


def _without_new_axes(index) -> Optional[str]:
    """For a basic index of new axes (``None``), whole slices and ``...``, with one new axis
    or more: the index taking the new axes away again (``[:, None, :]`` -> ``":, 0"``); else None."""
    if not (isinstance(index, Const) and index.basic):
        return None
    node = index.node
    items = [e.value for e in node.elements] if isinstance(node, cst.Tuple) else [node]
    kept, new = [], False
    for item in items:
        if isinstance(item, cst.Name) and item.value == "None":
            kept.append("0")
            new = True
        elif isinstance(item, cst.Ellipsis):
            kept.append("...")
        elif isinstance(item, cst.Call) and isinstance(item.func, cst.Name) and item.func.value == "slice" \
                and len(item.args) == 3 and all(isinstance(a.value, cst.Name) and a.value.value == "None"
                                                 for a in item.args):
            kept.append(":")
        else:
            return None
    while kept and kept[-1] == ":" and "..." not in kept:  # (after ``...``, the axes count from the end)
        kept.pop()
    return ", ".join(kept) if new else None


class Contributions:
    """A statement's contributions to its operands' adjoints (mixed into ReverseBuilder)."""

    def uniform_sum(self, lines: list, stmt: Stmt, rule, g: str) -> bool:
        """``s = np.sum(a)``: ``a``'s adjoint is ``g`` itself, standing for an array of ``a``'s
        shape, when ``a``'s shape class is known (the rules that read it multiply it out); where
        ``a`` is a number (known scalar), ``g`` is its adjoint."""
        prim = stmt.prim
        reduction = getattr(rule, "reduction", "")
        mean = reduction == "mean"
        if reduction not in ("sum", "mean") or len(prim.args) != 1 or prim.kwargs:
            return False
        operand = prim.args[0]
        if not (isinstance(operand, Var) and self.active(operand.name)):
            return False
        if operand.name in self.scalars and operand.name not in self.fn.lists:
            self.adj.accumulate(lines, operand.name, cst.Name(g))  # the sum of a number is itself
            return True
        if self.classes.get(operand.name) in (None, "()") or operand.name in self.fn.lists:
            return False
        # np.mean(a): the same number over a's size (recorded, not a itself)
        share = cst.parse_expression(f"{g} / {self.size_of(operand.name)}") if mean else cst.Name(g)
        self.adj.accumulate(lines, operand.name, share, uniform=True)
        return True

    def rule_backward(self, stmt: Stmt, rule, g: str, displays: Optional[tuple] = None) -> list:
        """The contributions of ``stmt`` (upstream adjoint ``g``) by its rule's templates;
        ``displays``: for a result unpacked from a rule with several outputs, the nodes ``g`` and
        ``ans`` stand for (the displays of the targets' adjoints and of the targets)."""
        prim, target = stmt.prim, stmt.targets[0]
        bound = bind_arguments(rule, prim)
        self.refuse_missing_templates(stmt, rule, bound)
        defaulted = defaulted_params(rule, prim)

        def contribution(template: str, upstream: str,
                         written: Optional[dict] = None) -> cst.BaseExpression:
            mapping = {"g": displays[0], "ans": displays[1]} if displays is not None else \
                {"g": cst.Name(upstream), "ans": cst.Name(target)}
            mapping.update({name: operand_node(op) for name, op in bound.items()})
            mapping.update(written or {})
            return reuse_forward(simplify(instantiate(template, mapping, defaulted)), stmt,
                                 self.places, self.definitions)

        ranked = self.ranked_templates(rule, prim, target)
        wanted = [(param, ranked.get(param, template), bound.get(param)) for param, template in rule.vjps
                  if bound.get(param) is not None
                  and any(self.active(n) for n in operand_vars(bound[param]))]
        lines: list = []
        g, kinds = (g, {}) if displays is not None else \
            self.upstream_kinds(lines, stmt, wanted, bound, contribution, g)
        wanted = self.together_backward(lines, rule, wanted, kinds, contribution, g)
        doubled = _same_twice(rule, wanted, contribution, g)
        if doubled:
            wanted = wanted[:1]
        for param, template, operand in wanted:
            if prim.op == SUBSCRIPT and isinstance(operand, Var) and (
                    self.new_axes(lines, stmt, operand.name, bound.get("index"), g)
                    or self.collect_row(lines, stmt, operand.name, bound.get("index"), g)
                    or self.scatter(lines, operand.name, bound.get("index"), g)):
                continue
            if isinstance(operand, Var) and self.batch(lines, operand.name, rule, param, bound, g):
                continue
            expr = self.kept_share(rule, prim, operand, g) or contribution(template, g)
            if doubled:  # ``a * a``: the one contribution, twice
                expr = simplify(cst.BinaryOperation(expr, cst.Add(), expr))
            if isinstance(operand, Var):
                if rule.elementwise and self.may_broadcast(operand, bound, target):
                    # (a known scalar, a number a call passes among them, is 0-d whatever its class)
                    own = SCALAR if operand.name in self.scalars else self.classes.get(operand.name)
                    axes = summed_axes(own, self.classes.get(target))
                    shape = None if axes else cst.parse_expression(self.shape_of(operand.name))
                    expr = self.dotted(expr, axes, target, g) or \
                        unbroadcast_call(expr, shape, operand.name, axes)
                self.adj.accumulate(lines, operand.name, expr, uniform=kinds.get(param) == "uniform",
                                    fresh=getattr(rule, "fresh_adjoints", False) or None)
            elif isinstance(operand, Seq) and self.each_item(lines, stmt, rule, param, operand,
                                                             contribution, g):
                continue
            elif isinstance(operand, Seq):
                parts = self.namer.fresh(f"{param}_bar")
                lines.append(f"{parts} = {_code(expr)}")
                self.distribute(lines, stmt, operand, parts)
        return lines

    def ranked_templates(self, rule, prim, target: str) -> dict:
        """The rule's templates for the ranks its positional operands are known to have
        (Rule.ranked), by parameter; none where the upstream is one number standing for an array."""
        names = [a.name if isinstance(a, Var) else a.node.value if isinstance(a, Const) and
                 isinstance(a.node, cst.Name) and not a.reads else None for a in prim.args]
        if not getattr(rule, "ranked", ()) or target in self.adj.uniform or prim.kwargs or None in names:
            return {}
        shapes = [self.classes.get(name) for name in names]  # (a global array's: its name)
        if not all(isinstance(s, tuple) for s in shapes):
            return {}
        ranks = tuple(len(s) for s in shapes)
        return {param: template for param, at, template in rule.ranked if at == ranks}

    def together_backward(self, lines: list, rule, wanted: list, kinds: dict, contribution,
                          g: str) -> list:
        """Where two or more of the parameters a rule gives adjoints of at once (Rule.together)
        need one, ``a_bar, b_bar = <its template>`` (``_`` for one that needs none); returns the
        entries of ``wanted`` left to their own templates."""
        params, template = rule.together or ((), "")
        group = {param: operand for param, _, operand in wanted if param in params}
        if len(group) < 2 or any(not isinstance(op, Var) or kinds.get(param) == "uniform"
                                 for param, op in group.items()):
            return wanted
        lines += self.receive([group.get(param) for param in params], _code(contribution(template, g)))
        return [entry for entry in wanted if entry[0] not in group]

    def refuse_missing_templates(self, stmt: Stmt, rule, bound: dict) -> None:
        """Refuse an active argument for a parameter the rule has no template for."""
        with_template = {param for param, _ in rule.vjps} | set(getattr(rule, "constant_in", ()))
        for name, operand in bound.items():
            if name not in with_template and any(self.active(n) for n in operand_vars(operand)):
                raise self.located(
                    stmt, f"s2sgrad has no derivative of `{rule.name}` with respect to `{name}`",
                    f"pass a constant for `{name}`, wrap it in s2sgrad.stop_gradient(...) if its "
                    "gradient is not wanted, or give a rule with s2sgrad.register_gradient")

    def upstream_kinds(self, lines: list, stmt: Stmt, wanted: list, bound: dict, contribution,
                       g: str) -> tuple:
        """``(g, kinds)``: when the upstream ``g`` is one number standing for an array, what
        each contribution is (param -> ``"uniform"`` | ``"full"``); when one needs a full array,
        ``g`` becomes one first (and ``kinds`` is empty)."""
        target = stmt.targets[0]
        if target not in self.adj.uniform or basic_getitem(stmt.prim):
            return g, {}  # a scatter into zeros: one number fills its slots as well as an array
        kinds = {param: self.uniform_kind(operand, bound, target, contribution(template, g), g)
                 for param, template, operand in wanted}
        if None in kinds.values():
            self.adj.materialize(lines, target)
            return self.adj.current[target], {}
        return g, kinds

    def uniform_kind(self, operand, bound: dict, target: str, expr: cst.BaseExpression,
                     g: str) -> Optional[str]:
        """What an elementwise rule's contribution ``expr`` is when its upstream ``g`` is one
        number standing for an array of ``target``'s shape: ``"uniform"`` (it reads only
        scalars besides ``g``), ``"full"`` (it reads an array of that shape, so it has it), or
        None when ``g`` must first become an array."""
        if not isinstance(operand, Var) or self.may_broadcast(operand, bound, target):
            return None
        reads = self.local_reads(expr) - {g}
        if reads <= self.scalars:
            return "uniform"
        shape = self.classes.get(target)
        if shape is not None and any(self.classes.get(r) == shape for r in reads):
            return "full"
        return None

    def local_reads(self, expr: cst.BaseExpression) -> set:
        """The function's own names ``expr`` reads (not attribute fields, not keywords)."""
        return {n.value for n in name_nodes(expr, reads_only=True) if n.value in self.definitions}

    def may_broadcast(self, operand: Var, bound: dict, target: str) -> bool:
        """Whether the output of an elementwise statement may be larger than ``operand``."""
        same = self.classes.get(operand.name)
        if same is not None and same == self.classes.get(target):
            return False
        widened = getattr(self.classes, "widened", {}).get(operand.name)
        if widened is not None and widened == self.classes.get(target):
            return False  # an array of the target's shape, or a literal no adjoint reaches
        return may_broadcast(operand, bound, self.scalars)

    def each_item(self, lines: list, stmt: Stmt, rule, param: str, seq: Seq, contribution,
                  g: str) -> bool:
        """Where only some items of ``seq`` (a ``*args`` parameter's list) need an adjoint and the
        rule gives one item's alone (``Rule.each``), those items' contributions, one each; False
        where the whole list's template is wanted."""
        template = dict(getattr(rule, "each", ())).get(param)
        if template is None or any(isinstance(item, Seq) for item in seq.items):
            return False
        active = [i for i, item in enumerate(seq.items)
                  if isinstance(item, Var) and self.active(item.name)]
        if len(active) == len(seq.items):
            return False
        for i in active:
            expr = contribution(template, g, {"index": cst.Integer(str(i))})
            self.adj.accumulate(lines, seq.items[i].name, expr)
        return True

    def distribute(self, lines: list, stmt: Stmt, seq: Seq, parts: str) -> None:
        """Add ``parts[i]`` (the adjoint of a list or tuple display) to each of its items."""
        for i, item in enumerate(seq.items):
            if isinstance(item, Var) and self.active(item.name):
                self.adj.accumulate(lines, item.name, cst.parse_expression(f"{parts}[{i}]"))
            elif isinstance(item, Seq) and any(self.active(n) for n in operand_vars(item)):
                raise self.located(stmt, "nested sequences of differentiated values are "
                                   "not supported here", "pass a flat list of arrays")

    def registered_backward(self, stmt: Stmt, rule, g: str) -> list:
        """A user-registered gradient: ``rule(g, ans, *args, **kwargs)``, one adjoint per
        positional argument, checked like a custom_gradient's."""
        prim = stmt.prim
        args = [_code(operand_node(a)) for a in prim.args]
        kwargs = [f"{k}={_code(operand_node(v))}" for k, v in prim.kwargs]
        call = f"{rule.function}({', '.join([g, stmt.targets[0], *args, *kwargs])})"
        for op in prim.args:
            if not isinstance(op, Var) and any(self.active(n) for n in operand_vars(op)):
                raise self.located(stmt, "a registered gradient takes plain names as arguments",
                                   "assign the list or tuple to a name first")
        wanted = [op if isinstance(op, Var) and self.active(op.name) else None for op in prim.args]
        if not any(wanted):
            return []
        primals = ", ".join(args) + ("," if len(args) == 1 else "")
        labels = ", ".join(repr(a) for a in args) + ("," if len(args) == 1 else "")
        return self.receive(wanted, f"s2s.custom_result({rule.name!r}, {call}, ({primals}), "
                                    f"({labels}))")

    def receive(self, wanted: list, call: str) -> list:
        """``slots = call`` where ``call`` returns one adjoint per entry of ``wanted`` (a Var to
        add it to, a name to bind it to, or None to drop it): first writes land in the adjoint's
        own name."""
        slots = []
        pending = []
        claimed: set = set()
        for op in wanted:
            if op is None:
                slots.append(self.namer.discard())
            elif isinstance(op, str):
                slots.append(op)  # a name the caller reads itself
            elif op.name in self.adj.current or op.name in claimed:
                tmp = self.namer.fresh(f"{op.name}_bar")
                slots.append(tmp)
                pending.append((op.name, tmp))
            else:
                slots.append(self.namer.adjoint(op.name))
                claimed.add(op.name)
        lines = [f"{unpack_target(slots)} = {call}"]
        for var in sorted(claimed):
            self.adj.claim(var)
        for var, tmp in pending:
            self.adj.accumulate(lines, var, cst.Name(tmp))
        return lines

    def dotted(self, expr: cst.BaseExpression, axes: Optional[tuple], target: str,
               g: str) -> Optional[cst.BaseExpression]:
        """A number's contribution ``g * v`` to an elementwise product with a vector (``w[k] *
        x[k:k + m]``), summed over the vector's one axis: ``np.dot(g, v)`` where both factors
        certainly have the vector's known shape (the upstream ``g`` a whole array, ``v`` of its
        class): one product and sum in one call, no array of the products; else None."""
        shape = self.classes.get(target)
        if axes != ((0,), ()) or not (isinstance(shape, tuple) and len(shape) == 1) or \
                target in self.adj.uniform or not isinstance(expr, cst.BinaryOperation) or \
                not isinstance(expr.operator, cst.Multiply) or expr.lpar:
            return None
        factors = (expr.left, expr.right)
        if not all(isinstance(f, cst.Name) and not f.lpar and
                   (f.value == g or (f.value not in self.scalars and self.classes.get(f.value) == shape))
                   for f in factors):
            return None
        return cst.Call(cst.Attribute(cst.Name("np"), cst.Name("dot")), [cst.Arg(f) for f in factors])

    def kept_share(self, rule, prim, operand, g: str) -> Optional[cst.BaseExpression]:
        """``s = np.sum(a, axis=k, keepdims=True)`` (``np.mean`` over one axis ``k`` written as a
        literal) where ``a`` (an array of a known shape class) already has an adjoint that is a
        whole array: ``g`` itself (``g / a.shape[k]``), added to it as it is (numpy broadcasts
        it over the reduced axes: no helper spreading it first); else None."""
        reduction = getattr(rule, "reduction", "")
        if reduction not in ("sum", "mean") or not isinstance(operand, Var) or \
                operand.name in self.fn.lists or self.classes.get(operand.name) in (None, SCALAR) or \
                not self.adj.has(operand.name) or operand.name in self.adj.uniform:
            return None  # (an array of a class: its adjoint so far is one of its shape)
        kwargs = dict(prim.kwargs)
        keep = kwargs.get("keepdims")
        if not (isinstance(keep, Const) and isinstance(keep.node, cst.Name) and keep.node.value == "True"):
            return None
        if reduction == "sum":
            return cst.Name(g)
        axis = kwargs.get("axis", prim.args[1] if len(prim.args) > 1 else None)
        at = literal_int(axis.node) if isinstance(axis, Const) else None
        if at is None or len(prim.args) > 2 or set(kwargs) - {"axis", "keepdims"}:
            return None  # (a dtype or out given: the helper's way)
        return cst.parse_expression(f"{g} / {operand.name}.shape[{at}]")

    def new_axes(self, lines: list, stmt: Stmt, var: str, index, g: str) -> bool:
        """``x[:, None]``, ``x[None]``, ``x[..., None, :]``: an index of new axes, whole slices
        and ``...`` only holds ``x``'s elements as they are, so ``x``'s adjoint is the view of
        ``g`` without the new axes (``g[:, 0]``; ``g`` itself where ``g`` is one number
        standing for an array)."""
        inverse = _without_new_axes(index)
        if inverse is None or var in self.fn.lists:
            return False
        if stmt.targets[0] in self.adj.uniform:
            self.adj.accumulate(lines, var, cst.Name(g), uniform=True)
        else:
            self.adj.accumulate(lines, var, cst.parse_expression(f"{g}[{inverse}]"))
        return True

    def scatter(self, lines: list, var: str, index, g: str) -> bool:
        """``x_bar[i] += g`` for a basic index into an adjoint array this sweep owns."""
        name = self.adj.current.get(var)
        if not (isinstance(index, Const) and index.basic and index.brackets
                and name == self.namer.adjoint(var) and name in self.adj.owned):
            return False
        lines.append(f"{name}{index.brackets} += {g}")
        return True

    def callee_backward(self, stmt: Stmt, callee: CalleeCall, g: str) -> list:
        bound = {}
        prim = stmt.prim
        positional = [p for p in callee.params if p not in callee.kwonly]
        for name, op in zip(positional, prim.args):
            bound[name] = op
        for key, op in prim.kwargs:
            bound[key] = op
        wanted, displays = [], []
        for name, has_adjoint in zip(callee.params, callee.returns_adjoint):
            operand = bound.get(name)
            if has_adjoint and isinstance(operand, Seq) and any(
                    self.active(n) for n in operand_vars(operand)):
                parts = self.namer.fresh(f"{name}_bar")
                displays.append((operand, parts))
                wanted.append(parts)
                continue
            ok = has_adjoint and isinstance(operand, Var) and self.active(operand.name)
            wanted.append(operand if ok else None)
        lines = self.receive(wanted, f"{callee.bwd_name}({self.residuals_of(stmt)}, {g})")
        for seq, parts in displays:
            self.distribute(lines, stmt, seq, parts)
        return lines

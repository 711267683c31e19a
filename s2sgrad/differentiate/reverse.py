"""Reverse mode: CoreFunction + Activity + RuleTable -> VjpFunction (forward blocks, backward blocks).

The forward sweep is the lowered statements as written. The backward sweep visits them in exact
reverse order; each differentiable statement whose output has an adjoint contributes to the adjoints
of its active operands through its rule's templates. The first contribution to an adjoint is a
plain ``=``; later ones accumulate. Statements with no adjoint to pass on emit nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import libcst as cst

from ..analyze.activity import Activity
from ..analyze.shapes import is_scalar_literal, known_scalars
from ..errors import TransformError
from ..lower.ir import Const, CoreFunction, Origin, Prim, Seq, Stmt, Var, operand_vars
from ..lower.naming import Namer
from ..rules.table import KEYWORD, POSITIONAL, VARARGS, Rule, RuleTable
from .simplify import simplify
from .templates import instantiate, needs_parens


@dataclass(frozen=True)
class Block:
    """Statements (code lines) generated for one source statement, with that statement's text."""

    origin: str
    lines: tuple


@dataclass(frozen=True)
class HelperCall:
    """What the caller needs to know about a transformed user function it calls."""

    vjp_name: str
    params: tuple  # parameter names, in order
    kwonly: tuple  # names of keyword-only parameters
    defaults: tuple  # parameter names that have defaults
    returns_adjoint: tuple  # per parameter: True when its pullback returns an adjoint (not None)


@dataclass(frozen=True)
class VjpFunction:
    """One generated ``<name>_vjp`` with its nested pullback."""

    source_name: str
    vjp_name: str
    pullback_name: str
    params_code: str
    forward: tuple
    result_code: str
    seed: str
    seed_unpack: str  # a line unpacking a tuple seed, or ""
    backward: tuple
    returns: tuple  # code of each returned adjoint
    wrt: tuple
    top_level: bool


HelperLookup = Callable[[Prim, Stmt], Optional[HelperCall]]


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def operand_node(op) -> cst.BaseExpression:
    if isinstance(op, Var):
        return cst.Name(op.name)
    if isinstance(op, Const):
        return op.node
    elements = [cst.Element(operand_node(i)) for i in op.items]
    if op.kind == "list":
        return cst.List(elements)
    if len(elements) == 1:
        return cst.Tuple([elements[0].with_changes(comma=cst.Comma())])
    return cst.Tuple(elements)


def bind_arguments(rule: Rule, prim: Prim) -> dict:
    """Map each rule parameter to the operand passed for it (or a Const of its default)."""
    bound: dict = {}
    positional = list(prim.args)
    for p in rule.params:
        if p.kind == POSITIONAL:
            if positional:
                bound[p.name] = positional.pop(0)
        elif p.kind == VARARGS:
            bound[p.name] = Seq("tuple", tuple(positional))
            positional = []
    if positional:
        raise _binding_error(prim, rule, f"too many positional arguments for {rule.name}")
    names = {p.name for p in rule.params}
    for key, value in prim.kwargs:
        if key not in names:
            # Keywords the rule does not model (out=, where=, casting=) would change the meaning.
            raise _binding_error(prim, rule, f"{rule.name} is not differentiable with `{key}=`")
        bound[key] = value
    for p in rule.params:
        if p.name not in bound:
            if p.default is None and p.kind != VARARGS:
                raise _binding_error(prim, rule, f"{rule.name} needs argument `{p.name}`")
            code = p.default if p.default is not None else "()"
            node = cst.parse_expression(code)
            bound[p.name] = Const(node, code, ())
    return bound


def _default_operands(rule: Rule, prim: Prim) -> list:
    """The Const operands ``bind_arguments`` made from defaults (parameters the call left out)."""
    given = len(prim.args)
    keywords = {k for k, _ in prim.kwargs}
    out = []
    positional = [p for p in rule.params if p.kind == POSITIONAL]
    for i, p in enumerate(rule.params):
        if p.kind == VARARGS:
            continue
        index = positional.index(p) if p in positional else None
        if (index is None or index >= given) and p.name not in keywords and p.default is not None:
            out.append(Const(cst.parse_expression(p.default), p.default, ()))
    return out


def _binding_error(prim: Prim, rule: Rule, message: str) -> TransformError:
    from ..errors import Location

    loc = prim.location or Location("<unknown>", 0, 0, "")
    return TransformError(message, loc, "call it with the arguments numpy documents, or "
                          "give it a rule with s2sgrad.register_gradient")


class ReverseBuilder:
    """Builds the VjpFunction for one CoreFunction. Used once."""

    def __init__(self, fn: CoreFunction, activity: Activity, table: RuleTable, wrt: tuple,
                 has_aux: bool, top_level: bool, helper_lookup: HelperLookup,
                 vjp_name: str, pullback_name: str) -> None:
        self.fn = fn
        self.activity = activity
        self.table = table
        self.wrt = wrt
        self.has_aux = has_aux
        self.top_level = top_level
        self.helper_lookup = helper_lookup
        self.vjp_name = vjp_name
        self.pullback_name = pullback_name
        self.namer = Namer(fn.reserved | {vjp_name, pullback_name})
        self.current: dict = {}  # var -> the name holding its adjoint so far
        self.pullbacks: dict = {}  # stmt index -> pullback name of a helper call
        elementwise = frozenset(name for name, rule in table.rules.items() if rule.elementwise)
        self.scalars = known_scalars(fn, elementwise)

    # ----- accumulation ------------------------------------------------------------------------

    def accumulate(self, lines: list, var: str, expr: cst.BaseExpression) -> None:
        """Add ``expr`` to the adjoint of ``var``: ``=`` on the first write (or no line at all
        when ``expr`` is just another adjoint's name), ``x_bar = x_bar + ...`` afterwards."""
        if var not in self.current:
            if isinstance(expr, cst.Name):
                self.current[var] = expr.value
                return
            name = self.namer.adjoint(var)
            lines.append(f"{name} = {_code(expr)}")
        else:
            name = self.namer.adjoint(var)
            rhs = expr
            if needs_parens(expr, inside="+"):
                rhs = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            lines.append(f"{name} = {self.current[var]} + {_code(rhs)}")
        self.current[var] = name

    def mark_written(self, var: str) -> str:
        """Give ``var`` its own adjoint name, written by the caller's next line."""
        name = self.namer.adjoint(var)
        self.current[var] = name
        return name

    # ----- forward -----------------------------------------------------------------------------

    def forward_line(self, index: int, stmt: Stmt) -> str:
        prim = stmt.prim
        targets = ", ".join(stmt.targets)
        helper = self.helper_for(prim, stmt)
        if helper is not None:
            call = stmt.expr
            assert isinstance(call, cst.Call)
            new_call = call.with_changes(func=cst.Name(helper.vjp_name))
            pullback = self.namer.fresh(f"{prim.callee.rsplit('.', 1)[-1]}_pullback")
            self.pullbacks[index] = pullback
            return f"{targets}, {pullback} = {_code(new_call)}"
        if not stmt.targets:
            return _code(stmt.expr)
        return f"{targets} = {_code(stmt.expr)}"

    def helper_for(self, prim: Prim, stmt: Stmt) -> Optional[HelperCall]:
        if prim.op in self.table.nondiff or self.table.get(prim.op) is not None:
            return None
        if prim.op.startswith(("ndarray.", "operator.", "numpy.", "math.", "builtins.")):
            return None
        if prim.op in ("copy", "nondiff"):
            return None
        if not any(self.activity.is_active(n) for op in prim.args for n in operand_vars(op)) and \
                not any(self.activity.is_active(n) for _, op in prim.kwargs for n in operand_vars(op)):
            return None
        return self.helper_lookup(prim, stmt)

    # ----- backward ----------------------------------------------------------------------------

    def backward_lines(self, index: int, stmt: Stmt) -> list:
        prim = stmt.prim
        lines: list = []
        if prim.op in self.table.nondiff or prim.op.startswith("numpy.random.") or prim.op == "nondiff":
            return lines
        outs = [t for t in stmt.targets if t in self.current]
        if not outs:
            return lines
        target = stmt.targets[0]
        g = self.current[target]
        if index in self.pullbacks:
            return self.helper_backward(index, stmt, g)
        rule = self.table.get(prim.op)
        if rule is None:
            self.refuse_unknown(stmt)
            return lines
        bound = bind_arguments(rule, prim)
        defaults = _default_operands(rule, prim)
        for param, template in rule.vjps:
            operand = bound.get(param)
            if operand is None:
                continue
            active = [n for n in operand_vars(operand) if self.activity.is_active(n)]
            if not active:
                continue
            mapping = {"g": cst.Name(g), "ans": cst.Name(target)}
            mapping.update({name: operand_node(op) for name, op in bound.items()})
            defaulted = {name for name, op in bound.items() if op in defaults}
            expr = simplify(instantiate(template, mapping, defaulted))
            if isinstance(operand, Var):
                if rule.elementwise and _may_broadcast(operand, bound, self.scalars):
                    expr = cst.Call(
                        cst.Attribute(cst.Name("s2s"), cst.Name("unbroadcast")),
                        [cst.Arg(expr), cst.Arg(cst.Name(operand.name))],
                    )
                self.accumulate(lines, operand.name, expr)
            elif isinstance(operand, Seq):
                parts = self.namer.fresh(f"{param}_bar")
                lines.append(f"{parts} = {_code(expr)}")
                for i, item in enumerate(operand.items):
                    if isinstance(item, Var) and self.activity.is_active(item.name):
                        self.accumulate(lines, item.name, cst.parse_expression(f"{parts}[{i}]"))
                    elif isinstance(item, Seq) and any(self.activity.is_active(n)
                                                       for n in operand_vars(item)):
                        raise self.located(stmt, "nested sequences of differentiated values are "
                                           "not supported here", "pass a flat list of arrays")
        return lines

    def helper_backward(self, index: int, stmt: Stmt, g: str) -> list:
        helper = self.helper_lookup(stmt.prim, stmt)
        assert helper is not None
        bound = self.bind_helper(helper, stmt)
        slots = []
        pending = []
        claimed: set = set()
        for name, has_adjoint in zip(helper.params, helper.returns_adjoint):
            operand = bound.get(name)
            if has_adjoint and isinstance(operand, Var) and self.activity.is_active(operand.name):
                if operand.name in self.current or operand.name in claimed:
                    tmp = self.namer.fresh(f"{operand.name}_bar")
                    slots.append(tmp)
                    pending.append((operand.name, tmp))
                else:
                    slots.append(self.namer.adjoint(operand.name))
                    claimed.add(operand.name)
            else:
                slots.append("_")
        lines = [f"{_unpack(slots)} = {self.pullbacks[index]}({g})"]
        for var in sorted(claimed):
            self.mark_written(var)
        for var, tmp in pending:
            self.accumulate(lines, var, cst.Name(tmp))
        return lines

    def bind_helper(self, helper: HelperCall, stmt: Stmt) -> dict:
        prim = stmt.prim
        bound = {}
        positional = [p for p in helper.params if p not in helper.kwonly]
        for name, op in zip(positional, prim.args):
            bound[name] = op
        for key, op in prim.kwargs:
            bound[key] = op
        return bound

    def refuse_unknown(self, stmt: Stmt) -> None:
        prim = stmt.prim
        name = prim.op
        if name.startswith("ndarray."):
            what = f"the method `.{name.split('.', 1)[1]}`"
        else:
            what = f"`{name}`"
        raise self.located(
            stmt,
            f"no derivative rule for {what}, and it has no Python source s2sgrad can read",
            f"give it a rule with s2sgrad.register_gradient({name!r}), or rewrite the "
            "expression with supported numpy functions",
        )

    def located(self, stmt: Stmt, message: str, hint: str) -> TransformError:
        loc = stmt.prim.location or stmt.origin.location
        return TransformError(message, loc, hint)

    # ----- assembly ----------------------------------------------------------------------------

    def build(self) -> VjpFunction:
        fn = self.fn
        forward = _blocks([(s.origin, [self.forward_line(i, s)]) for i, s in enumerate(fn.body)])
        seed, seed_unpack = self.seed()
        backward_parts = []
        if seed_unpack:
            backward_parts.append((fn.result_origin, [seed_unpack]))
        for i in range(len(fn.body) - 1, -1, -1):
            stmt = fn.body[i]
            lines = self.backward_lines(i, stmt)
            if lines:
                backward_parts.append((stmt.origin, lines))
        backward = _blocks(backward_parts)
        returns = []
        for name in self.wrt:
            if name in self.current:
                adj = self.current[name]
                returns.append(f"s2s.like({adj}, {name})" if self.top_level else adj)
            else:
                returns.append(f"s2s.zeros_like({name})" if self.top_level else "None")
        return VjpFunction(
            source_name=fn.name,
            vjp_name=self.vjp_name,
            pullback_name=self.pullback_name,
            params_code=self.params_code(),
            forward=forward,
            result_code=_code(operand_node(fn.result)),
            seed=seed,
            seed_unpack="",
            backward=backward,
            returns=tuple(returns),
            wrt=self.wrt,
            top_level=self.top_level,
        )

    def seed(self) -> tuple:
        """The pullback's parameter (the output adjoint) and, for tuple outputs, its unpacking."""
        result = self.fn.result
        if isinstance(result, Var):
            return self.mark_written(result.name), ""
        if isinstance(result, Seq):
            if self.has_aux:
                first = result.items[0]
                if isinstance(first, Var):
                    return self.mark_written(first.name), ""
                return self.namer.fresh(f"{self.fn.name}_bar"), ""
            seed = self.namer.fresh(f"{self.fn.name}_bar")
            slots = []
            for item in result.items:
                if isinstance(item, Var) and item.name not in self.current:
                    slots.append(self.mark_written(item.name))
                else:
                    slots.append("_")
            return seed, f"{_unpack(slots)} = {seed}"
        return self.namer.fresh(f"{self.fn.name}_bar"), ""

    def params_code(self) -> str:
        parts = []
        kwonly_started = False
        for p in self.fn.params:
            if p.name in getattr(self, "_kwonly", ()) and not kwonly_started:
                parts.append("*")
                kwonly_started = True
            if p.default is not None:
                parts.append(f"{p.name}={_code(p.default)}")
            else:
                parts.append(p.name)
        return ", ".join(parts)


def _may_broadcast(operand: Var, bound: dict, scalars: frozenset) -> bool:
    """Whether an elementwise output may be larger than ``operand``: only when another operand
    may be an array (scalars and scalar literals never broadcast anything)."""
    for other in bound.values():
        if other is operand or other == operand:
            continue
        if isinstance(other, Var):
            if other.name not in scalars:
                return True
        elif isinstance(other, Const):
            if other.reads or not (is_scalar_literal(other.node) or _is_none(other.node)):
                return True
        else:
            return True
    return False


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in ("None", "True", "False")


def _unpack(slots: list) -> str:
    if len(slots) == 1:
        return f"({slots[0]},)"
    return ", ".join(slots)


def _blocks(parts: list) -> tuple:
    """Merge consecutive parts from the same source statement into one Block."""
    blocks = []
    for origin, lines in parts:
        text = origin.text if isinstance(origin, Origin) else str(origin)
        if blocks and blocks[-1][0] is origin:
            blocks[-1][1].extend(lines)
        else:
            blocks.append((origin, list(lines)))
    return tuple(Block(o.text, tuple(ls)) for o, ls in blocks)


def reverse(fn: CoreFunction, activity: Activity, table: RuleTable, *, wrt: tuple, has_aux: bool,
            top_level: bool, helper_lookup: HelperLookup, vjp_name: str,
            pullback_name: str, kwonly: tuple = ()) -> VjpFunction:
    """Build the vjp function (forward sweep plus nested pullback) of ``fn``."""
    builder = ReverseBuilder(fn, activity, table, wrt, has_aux, top_level, helper_lookup,
                             vjp_name, pullback_name)
    builder._kwonly = kwonly
    return builder.build()

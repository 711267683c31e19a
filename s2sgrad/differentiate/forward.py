"""Forward mode: a lowered function -> the code of ``<name>_jvp``, which returns the value and the
tangent of the output along the tangents of the differentiated parameters.

Takes a CoreFunction, the rule table and the parameters to differentiate; returns a JvpFunction
(code items and the returned expressions) for codegen. Each statement is followed by its tangent
line (``y_dot = ...``); loops and branches stay as written and carry tangents like values, so
nothing is recorded and memory stays that of the function itself.

Tangent rules come from the rule table, by the route each rule declares (Rule.tangent_route): its
own tangent templates (``Rule.jvps``: max/min, linalg.inv and det, and the functions of complex
numbers that are not holomorphic, such as ``real``, ``conj`` and ``abs``), else
- a function linear in some parameters (``Rule.linear``: sums, reshapes, indexing, joins, and
  products, which are linear in each factor): the same call with each varied argument replaced by
  its tangent in turn, summed;
- an elementwise rule: the Jacobian is diagonal, so its reverse template with the output adjoint
  ``g`` replaced by the operand's tangent is that operand's tangent contribution (broadcasting
  applies as in the primal).
Anything else is refused with its location (the API then uses reverse mode where it chose
forward mode itself)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import libcst as cst
import libcst.matchers as m

from ..analyze.activity import refuse_constant_subscripts, varied_names
from ..analyze.scalars import may_be_array, may_broadcast, tangent_shaping
from ..errors import TransformError
from ..lower.ir import If, Loop, Seq, Stmt, Var, binding_counts, operand_node, operand_vars, prim_operands
from ..lower.naming import Namer
from ..rules.elementwise import MATH_TWINS
from ..rules.helpers.containers import TREE_ZEROS
from ..rules.table import RuleTable
from ..lower.binding import bind_arguments, defaulted_params
from .binding import keeping_consumed
from ..program import Comment, ElseHeader, IfHeader, Nest, has_statements, lift, unpack_target
from .compositions import compositions
from .dead import without_dead_code
from .repeats import without_repeats
from .reuse import block_places, reuse_beside
from .fold import fold, line_read_counts
from .simplify import divided_once, doubled, negated, simplify
from .templates import instantiate, needs_parens
from .unknown import called_value, no_rule, object_member

@dataclass(frozen=True)
class JvpFunction:
    """One generated ``<name>_jvp`` function."""

    source_name: str
    name: str
    params_code: str  # the primal's parameters, then one tangent per differentiated parameter
    code: tuple  # program items
    value: str  # the returned value's code
    tangent: str  # the returned tangent's code
    wrt: tuple
    tangent_params: tuple = ()  # the tangent parameter of each name in wrt
    primal_params: tuple = ()  # the primal's parameters as code (``x``, ``f_bar=1.0``)


# (prim, stmt, choose) -> (jvp function name, ((param, its tangent parameter), ...)) or None, where
# choose(params of the callee) gives the callee's parameters that receive tangents at this call.
CalleeLookup = Callable[..., Optional[tuple]]


class ForwardBuilder:
    """Builds the JvpFunction for one CoreFunction. Used once."""

    def __init__(self, fn, table: RuleTable, wrt: tuple, name: str, kwonly: tuple,
                 constant: frozenset, callee_lookup: Optional[CalleeLookup], shapes: tuple,
                 namer: Optional[Namer] = None, suffix: str = "_dot",
                 early: Optional[set] = None, on_numbers: frozenset = frozenset()) -> None:
        self.fn = fn
        self.classes, self.scalars = shapes
        # made for calls passing numbers (which fall back to the sweeps where it raises): the names
        # holding numbers at such calls (the globals' values now included), whose numpy functions
        # are computed with math's (``math.cos(x)``: as_math); empty for code made for arrays
        self.on_numbers = on_numbers
        self.callee_lookup = callee_lookup
        self.kwonly = kwonly
        self.constant = constant
        self.table = table
        self.wrt = wrt
        self.name = name
        self.namer = namer or Namer(fn.reserved | {name})
        self.varied = varied_names(fn, wrt, table, constant)
        refuse_constant_subscripts(fn, self.varied)
        # the tangent of each varied name (``suffix`` empty: none, a builder of builders)
        self.tangents = {n: self.namer.fresh(f"{n}{suffix}") for n in sorted(self.varied)} \
            if suffix else {}
        # np.log(f(x)), 1 / (1 + np.exp(-x)): chains whose last value's tangent is one function's
        # of x (the values inside keep their tangents only where something else reads them)
        self.compositions = compositions(fn, table)
        # a tangent reads the values statements of its block compute (``np.cos(x)``: ``cos_x``);
        # a later one's primal line then goes before the tangent line (``early``: their ids,
        # shared by builders writing one function's lines)
        self.early = set() if early is None else early
        self.places = block_places(fn.body)
        self.definitions = binding_counts(fn)

    # ----- code ------------------------------------------------------------------------------

    def code(self, body: tuple) -> list:
        out: list = []
        last = None
        for stmt in body:
            if stmt.origin is not last and not (isinstance(stmt, Stmt) and stmt.implicit):
                out.append(Comment(stmt.origin.text))
                last = stmt.origin
            if isinstance(stmt, Stmt):
                out.extend(self.statement(stmt))
            elif isinstance(stmt, If):
                out.append(Nest(IfHeader(cst.Name(stmt.test)), tuple(self.code(stmt.body))))
                orelse = self.code(stmt.orelse)
                if has_statements(orelse):
                    out.append(Nest(ElseHeader(), tuple(orelse)))
            else:
                out.append(self.loop(stmt))
        return out

    def loop(self, loop: Loop) -> Nest:
        body = self.code(loop.body)
        body.extend(item for item in self.code(loop.carries)
                    if not isinstance(item, Comment))
        return Nest(loop.header, tuple(body))

    def statement(self, stmt: Stmt) -> list:
        before, joint, after = self.tangent_part(stmt)
        return [*before, *([joint] if joint else self.primal_lines(stmt)), *after]

    def primal_lines(self, stmt: Stmt, early: bool = False) -> list:
        """The statement as written (none for one the lowering implied, or written ``early``,
        before a tangent line of an earlier statement that reads it)."""
        if id(stmt) in self.early and not early:
            return []
        written = unpack_target(stmt.targets) if stmt.unpack else ", ".join(stmt.targets)
        prim = stmt.prim
        twin = MATH_TWINS.get(prim.op) if self.on_numbers else None
        if twin and len(prim.args) == 1 and not prim.kwargs and not may_be_array(prim.args[0], self.on_numbers):
            expr = cst.Call(cst.parse_expression(twin), [cst.Arg(operand_node(prim.args[0]))])
        else:
            expr = keeping_consumed(stmt.expr, self.rule_for(prim))
        return [] if stmt.implicit else [f"{written} = {_code(expr)}" if stmt.targets else _code(expr)]

    def tangent_part(self, stmt: Stmt, binds: bool = True) -> tuple:
        """``(before, joint, after)``: the tangent lines that go before the statement (``x =
        f(x)``: they read the old ``x``) and after it, and ``joint``, a line computing the value
        and the tangent together (a user function's jvp), which replaces the statement ("" where
        there is none; ``binds`` False: its values go to discarded names)."""
        targets = [t for t in stmt.targets if t in self.varied]
        if not targets:
            return [], "", []
        if not self.table.differentiable(stmt.prim.op) or \
                set(stmt.targets) <= self.constant or \
                not any(self.is_active(op) for op in prim_operands(stmt.prim)):
            # a zero derivative (np.floor, comparisons, constants) into a name others vary
            return [], "", [f"{self.tangents[t]} = {self.zero(t)}" for t in targets]
        if self.is_user_call(stmt.prim):
            return [], self.callee_call(stmt, binds), []
        if len(stmt.targets) > 1 or stmt.unpack:
            return [], "", [self.unpacked_tangents(stmt)]
        target = targets[0]
        tangent, later = reuse_beside(self.tangent_of(stmt, target), stmt, self.places,
                                      self.definitions)
        if self.on_numbers:
            tangent = as_math(tangent, self.on_numbers)
        lines = [f"{self.tangents[target]} = {_code(tangent)}"]
        for item in reversed(later):  # their primal lines, before the tangent line reading them
            if id(item) not in self.early:
                self.early.add(id(item))
                lines[:0] = self.primal_lines(item, early=True)
        operands = {n for op in prim_operands(stmt.prim) for n in operand_vars(op)}
        if target in operands:  # ``x = f(x)``: the tangent reads the old x, so it goes first
            rule = self.rule_for(stmt.prim)
            if rule is not None and any("ans" in t for _, t in getattr(rule, "vjps", ())):
                raise self.refuse(stmt, "rebinding an operand's own name here")
            return lines, "", []
        return [], "", lines

    def unpacked_tangents(self, stmt: Stmt) -> str:
        """``a_dot, b_dot = <tangent>`` for ``a, b = f(...)`` where ``f`` is linear in its varied
        operands (the tangent is a value of the same structure), else a refusal."""
        rule = self.rule_for(stmt.prim)
        routes = ("linear", "own") if getattr(rule, "several", False) else ("linear",)
        if rule is None or rule.tangent_route not in routes or \
                any(t in operand_vars(op) for op in prim_operands(stmt.prim) for t in stmt.targets):
            reason = f" ({rule.reverse_only})" if getattr(rule, "reverse_only", "") else ""
            raise self.refuse(stmt, f"unpacking the result of `{stmt.prim.op}`{reason}")
        discard = self.namer.discard()
        names = unpack_target(self.tangents.get(t, discard) if t in self.varied else discard
                              for t in stmt.targets)
        return f"{names} = {_code(self.tangent_of(stmt, stmt.targets[0]))}"

    def tangent_of(self, stmt: Stmt, target: str) -> cst.BaseExpression:
        """The tangent of ``stmt``'s one target by its rule's route (rules/table.py: own templates,
        linear, elementwise); zero, whatever the route, where it varies only where constant."""
        prim = stmt.prim
        if prim.op == "copy" and isinstance(prim.args[0], Var):
            return cst.Name(self.tangents[prim.args[0].name])
        if prim.op == "copy" and isinstance(prim.args[0], Seq):  # ``parts = [a, b]``
            return self.sequence_tangent(stmt, prim.args[0])
        if stmt in self.compositions and self.compositions[stmt][1].elementwise and \
                self.is_active(self.compositions[stmt][0].prim.args[0]):
            whole, composed = self.compositions[stmt]  # one function's tangent of the chain's operand
            return self.elementwise(whole, composed, target)
        rule = self.rule_for(prim)
        constant = set(getattr(rule, "constant_in", ()))
        active = {i for i, op in enumerate(prim.args) if self.is_active(op)} - \
            rule_positions(rule, constant, len(prim.args))
        active_keywords = any(self.is_active(v) for k, v in prim.kwargs if k not in constant)
        if constant and not active and not active_keywords:  # varied only where it is constant
            return cst.parse_expression(self.zero(target))
        if getattr(rule, "jvps", ()):  # the rule states its tangents (not derived from g)
            return self.own_templates(stmt, rule, dict(rule.jvps), target)
        if getattr(rule, "joint_jvp", ""):
            return self.joint(stmt, rule)
        linear = rule.linear_positions(len(prim.args)) if rule is not None else frozenset()
        if linear and active <= linear and not active_keywords:
            if getattr(rule, "several", False) and len(active) > 1:  # a sum of tuples would join them
                raise self.refuse(stmt, f"`{prim.op}` varied in more than one argument")
            return _sum([self.linear_part(stmt, i) for i in sorted(active)])
        if getattr(rule, "elementwise", False):
            return self.elementwise(stmt, rule, target)
        reason = f" ({rule.reverse_only})" if getattr(rule, "reverse_only", "") else ""
        if rule is None and prim.op.startswith("builtins."):  # reverse mode has none either
            raise no_rule(stmt, self.table, self.varied.__contains__)
        raise object_member(stmt) or called_value(stmt, self.varied.__contains__) or \
            self.refuse(stmt, f"`{prim.op}`{reason}")

    def linear_part(self, stmt: Stmt, position: int) -> cst.BaseExpression:
        """The call with its operand at ``position`` replaced by that operand's tangent (a list
        or tuple display by the display of its items' tangents, zeros for constant items)."""
        operand = stmt.prim.args[position]
        if not isinstance(operand, Seq):
            return self.replaced(stmt, position)
        return self.replaced(stmt, position, self.sequence_tangent(stmt, operand))

    def own_templates(self, stmt: Stmt, rule, templates: dict, target: str) -> cst.BaseExpression:
        """The sum of the rule's own tangent templates (``rule.jvps``) over the varied parameters."""
        bound = bind_arguments(rule, stmt.prim)
        defaulted = defaulted_params(rule, stmt.prim)
        parts = []
        for param, operand in bound.items():
            if not self.is_active(operand) or param in rule.constant_in:
                continue
            if param not in templates or not isinstance(operand, (Var, Seq)):
                raise self.refuse(stmt, f"`{rule.name}` with respect to `{param}`")
            mapping = {name: operand_node(op) for name, op in bound.items()}
            tangent = self.sequence_tangent(stmt, operand) if isinstance(operand, Seq) else \
                cst.Name(self.tangents[operand.name])  # a list display: its items' tangents
            mapping.update({"t": tangent, "ans": self.answer(stmt, target)})
            parts.append(instantiate(templates[param], mapping, defaulted))
        if getattr(rule, "several", False) and len(parts) > 1:  # a sum of tuples would join them
            outputs = _sum_outputs(parts)
            if outputs is None:
                raise self.refuse(stmt, f"`{rule.name}` varied in more than one argument")
            return outputs
        return _sum(parts)

    def answer(self, stmt: Stmt, target: str) -> cst.BaseExpression:
        """What ``ans`` stands for in a tangent template: the target, or, for a result unpacked
        from a rule with several outputs, the display of the targets (``ans[1]`` reads the second)."""
        if len(stmt.targets) > 1 or stmt.unpack:
            return cst.Tuple([cst.Element(cst.Name(t), comma=cst.Comma()) for t in stmt.targets],
                             lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return cst.Name(target)

    def joint(self, stmt: Stmt, rule) -> cst.BaseExpression:
        """A join's tangent: its joint template with each parameter replaced by its tangent (a
        sequence by its items' tangents), zeros for a constant one, itself where the rule is
        constant in it."""
        bound = bind_arguments(rule, stmt.prim)
        mapping = {}
        for param, operand in bound.items():
            if param in rule.constant_in:
                mapping[param] = operand_node(operand)
            elif isinstance(operand, Seq):
                mapping[param] = self.sequence_tangent(stmt, operand)
            elif self.is_active(operand):
                mapping[param] = cst.Name(self.tangents[operand.name])
            else:
                mapping[param] = cst.parse_expression(f"s2s.zeros_like({_code(operand_node(operand))})")
        return instantiate(rule.joint_jvp, mapping, defaulted_params(rule, stmt.prim))

    def sequence_tangent(self, stmt: Stmt, operand: Seq) -> cst.BaseExpression:
        """The display of a list or tuple display's items' tangents (zeros for constant items)."""
        if any(self.is_active(item) and not isinstance(item, Var) for item in operand.items):
            raise self.refuse(stmt, f"`{stmt.prim.op}` of nested sequences")
        items = [cst.Element(cst.Name(self.tangents[item.name]) if self.is_active(item) else
                             cst.parse_expression(f"s2s.zeros_like({_code(operand_node(item))})"))
                 for item in operand.items]
        return cst.List(items) if operand.kind == "list" else cst.Tuple(items)

    def rule_for(self, prim):
        """The table's rule for ``prim``: by its name, or as ``module.name`` for a function of the
        user's own module (a registered gradient)."""
        rule = self.table.get(prim.op)
        if rule is None and "." not in prim.op and self.fn.module:
            rule = self.table.get(f"{self.fn.module}.{prim.op}")
        return rule

    def is_user_call(self, prim) -> bool:
        """A call of something that is neither a rule's function nor numpy's or s2sgrad's own
        (the reverse builder's test): a user function, when its source can be found."""
        return self.rule_for(prim) is None and prim.op not in ("copy", "nondiff") and \
            not self.table.is_library(prim.op)

    def callee_call(self, stmt: Stmt, binds: bool = True) -> str:
        """``y, y_dot = g_jvp(a, b, a_dot=a_dot)``: a user function called here, in forward
        mode with respect to the parameters that receive varied values (``(p, q), (p_dot, _) =``
        when its result is unpacked; ``binds`` False: the values to discarded names)."""
        prim = stmt.prim
        call = stmt.expr
        tangents: dict = {}

        def choose(params: tuple) -> tuple:
            for i, op in enumerate(prim.args):
                if i < len(params) and self.is_active(op):
                    tangents[params[i]] = op
            for key, op in prim.kwargs:
                if key in params and self.is_active(op):
                    tangents[key] = op
            return tuple(p for p in params if p in tangents)

        found = self.callee_lookup(prim, stmt, choose) if self.callee_lookup else None
        if not (found and isinstance(call, cst.Call) and all(isinstance(op, (Var, Seq)) for op in tangents.values())):
            raise called_value(stmt, self.varied.__contains__) or \
                self.refuse(stmt, f"calls to `{prim.callee}` (no source s2sgrad can read)", self.table.suggest(prim.op))
        name, pairs = found
        args = [*call.args[:-1], call.args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)] \
            if call.args else []
        for param, tangent_param in pairs:  # a tuple display's tangent: its items' tangents
            op = tangents[param]
            args.append(cst.Arg(self.sequence_tangent(stmt, op) if isinstance(op, Seq) else
                                cst.Name(self.tangents[op.name]), keyword=cst.Name(tangent_param)))
        new = call.with_changes(func=cst.Name(name), args=args)
        values = stmt.targets if binds else [self.namer.discard()] * len(stmt.targets)
        if len(stmt.targets) == 1 and not stmt.unpack:
            return f"{values[0]}, {self.tangents[stmt.targets[0]]} = {_code(new)}"
        tangents = unpack_target(self.tangents.get(t, self.namer.discard()) for t in stmt.targets)
        return f"({unpack_target(values)}), ({tangents}) = {_code(new)}"

    def zero(self, name: str) -> str:
        """The zero tangent of the value ``name`` holds: ``0.0`` for a known scalar (a number
        needs no call), else ``s2s.zeros_like(name)``, of its shape and type."""
        return "0.0" if name in self.scalars else f"s2s.zeros_like({name})"

    def is_active(self, op) -> bool:
        return any(n in self.varied for n in operand_vars(op))

    def elementwise(self, stmt: Stmt, rule, target: str) -> cst.BaseExpression:
        bound = bind_arguments(rule, stmt.prim)
        defaulted = defaulted_params(rule, stmt.prim)
        templates = dict(rule.vjps)
        parts = []
        full = False  # whether some varied operand has the output's shape
        shaping: set = set()  # the parameters whose shapes the tangent's shape includes
        for param, operand in bound.items():
            if not self.is_active(operand) or param in rule.constant_in:
                continue
            if param not in templates or isinstance(operand, Seq):
                raise self.refuse(stmt, f"`{rule.name}` with respect to `{param}`")
            mapping = {"g": cst.Name(self.tangents[operand.name]), "ans": cst.Name(target)}
            mapping.update({name: operand_node(op) for name, op in bound.items()})
            parts.append(simplify(instantiate(templates[param], mapping, defaulted)))
            full = full or not self.may_broadcast(operand, bound, target)
            shaping |= tangent_shaping(self.table.broadcast_reads(templates[param]), param, bound)
        shared = divided_once(parts)  # a quotient's two tangents divided once
        tangent = _sum(parts) if shared is None else cst.BinaryOperation(
            _sum(shared[0]).with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]),
            cst.Divide(), shared[1])
        if full or all(self.is_active(op) or name in shaping or not may_be_array(op, self.scalars)
                       for name, op in bound.items()):
            return tangent  # it has the output's shape: it includes the shape of every operand
            # that may be an array (a tangent has its primal's shape), or the output's
        # every varied operand may be smaller than the output (x[0] + np.zeros(4)): the tangent
        # takes the output's shape, as later indexing and reductions expect
        return cst.parse_expression(f"s2s.broadcast({_code(tangent)}, np.shape({target}))")

    def may_broadcast(self, operand: Var, bound: dict, target: str) -> bool:
        """Whether the output of an elementwise statement may be larger than ``operand``."""
        same = self.classes.get(operand.name)
        if same is not None and same == self.classes.get(target):
            return False
        return may_broadcast(operand, bound, self.scalars)

    def replaced(self, stmt: Stmt, position: int, new=None) -> cst.BaseExpression:
        """The statement's expression with operand ``position`` replaced by its tangent (or by
        ``new``)."""
        operand = stmt.prim.args[position]
        if new is None:
            if not isinstance(operand, Var):
                raise self.refuse(stmt, "lists and tuples of differentiated values")
            new = cst.Name(self.tangents[operand.name])
        expr = stmt.expr
        method = stmt.prim.op.startswith("ndarray.")
        if isinstance(expr, cst.BinaryOperation) and position in (0, 1):
            return expr.with_changes(**{("left" if position == 0 else "right"): new})
        if isinstance(expr, (cst.Subscript, cst.Attribute)) and position == 0:
            return expr.with_changes(value=new)
        if isinstance(expr, cst.Call):
            if method and isinstance(expr.func, cst.Attribute):
                if position == 0:
                    return expr.with_changes(func=expr.func.with_changes(value=new))
                position -= 1
            args = list(expr.args)
            if position < len(args) and args[position].keyword is None and not args[position].star:
                args[position] = args[position].with_changes(value=new)
                return expr.with_changes(args=args)
        raise self.refuse(stmt, f"`{stmt.prim.op}` written this way")

    def refuse(self, stmt: Stmt, what: str, hint: str = "") -> TransformError:
        """The refusal of ``stmt``; ``hint``: the table's advice where it has some (odeint's), else reverse mode."""
        loc = stmt.prim.location or stmt.origin.location
        return TransformError(f"forward mode (jvp) does not support {what} yet", loc,
                              hint or "use s2sgrad.grad or s2sgrad.vjp (reverse mode) for this function")

    # ----- assembly ----------------------------------------------------------------------------

    def build(self) -> JvpFunction:
        fn = self.fn
        code = self.starts() + self.code(fn.body)
        value = _code(operand_node(fn.result))
        tangent = self.returned_tangent()
        returned = line_read_counts((value, tangent))
        names = [p.name for p in fn.params]
        code = without_dead_code(lift(code), returned, self.table.array_methods(), names)
        code = self.finish(fold(list(without_repeats(code, names)), returned))
        params = []
        for p in fn.params:
            if p.name in self.kwonly and "*" not in params:
                params.append("*")
            params.append(p.name if p.default is None else f"{p.name}={_code(p.default)}")
        if "*" not in params and self.wrt and any(p.default is not None for p in fn.params):
            params.append("*")  # after parameters with defaults, the tangents go by keyword
        primal = tuple(p for p in params if p != "*")
        params += self.seeds()
        return JvpFunction(fn.name, self.name, ", ".join(params), tuple(code), value, tangent,
                           self.wrt, tuple(self.seeds()), primal)

    def finish(self, code: list) -> list:
        """The function's code, folded, as the builder hands it over (ForwardGradBuilder's
        code for numbers shares its factors)."""
        return code

    def starts(self) -> list:
        """A parameter given no tangent that the body makes vary starts from a zero tangent."""
        return [f"{self.tangents[p.name]} = {self.zero(p.name)}" for p in self.fn.params
                if p.name in self.varied and p.name not in self.wrt]

    def seeds(self) -> list:
        """The tangent parameters: one per differentiated parameter."""
        return [self.tangents[n] for n in self.wrt]

    def returned_tangent(self) -> str:
        return self.result_tangent(self.fn.result)

    def result_tangent(self, result) -> str:
        """The returned value's tangent, of the value's structure (a tuple's a tuple: zeros of
        that structure where the value does not vary, the runtime's ``tree_zeros``)."""
        if isinstance(result, Var):
            if result.name in self.varied:
                return self.tangents[result.name]
            return "0.0" if result.name in self.scalars else f"s2s.{TREE_ZEROS}({result.name})"
        if isinstance(result, Seq):
            items = [self.result_tangent(item) for item in result.items]
            if result.kind == "list":  # the tangent has the value's structure
                return "[" + ", ".join(items) + "]"
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return f"s2s.{TREE_ZEROS}({_code(operand_node(result))})"


def rule_positions(rule, names: set, count: int) -> set:
    """The positions, among ``count`` positional arguments, bound to the parameters ``names``
    (a ``*operands`` parameter there: every position from its own on)."""
    if rule is None or not names:
        return set()
    out = set()
    for i, p in enumerate(rule.params[:count]):
        if p.name in names and p.kind == "positional":
            out.add(i)
        elif p.name in names and p.kind == "varargs":
            out.update(range(i, count))
    return out


def _sum(parts: list) -> cst.BaseExpression:
    parts = [p.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
             if len(parts) > 1 and needs_parens(p, "+") else p for p in parts]
    out = parts[0]
    for part in parts[1:]:  # ``a - b`` for ``a + -b``: the same number, one negation fewer
        unsigned = negated(part)
        out = cst.BinaryOperation(out, cst.Add(), part) if unsigned is None else \
            cst.BinaryOperation(out, cst.Subtract(), unsigned)
    return doubled(out) if len(parts) == 2 else out  # t * t: t_dot * t + t_dot * t


def _sum_outputs(parts: list) -> Optional[cst.BaseExpression]:
    """The tangent of a function with several outputs varied in several arguments: the tuple of
    the per-output sums, where every part is a tuple display of one length; None otherwise."""
    if not all(isinstance(p, cst.Tuple) for p in parts) or \
            len({len(p.elements) for p in parts}) != 1:
        return None
    columns = zip(*[[e.value for e in p.elements] for p in parts])
    return cst.Tuple([cst.Element(_sum(list(column)), comma=cst.Comma()) for column in columns],
                     lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


class _AsMath(cst.CSTTransformer):
    def __init__(self, scalars: frozenset) -> None:
        super().__init__()
        self.scalars = scalars

    def number(self, node: cst.BaseExpression) -> bool:
        """Whether ``node`` is arithmetic of known scalars and number literals."""
        if isinstance(node, cst.Name):
            return node.value in self.scalars
        if isinstance(node, (cst.Integer, cst.Float)):
            return True
        if isinstance(node, cst.UnaryOperation):
            return self.number(node.expression)
        if isinstance(node, cst.BinaryOperation):
            return self.number(node.left) and self.number(node.right)
        if isinstance(node, cst.Call):  # one already math's
            return m.matches(node.func, m.Attribute(value=m.Name("math"))) and \
                all(self.number(arg.value) for arg in node.args)
        return False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        func = updated.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value == "np" and len(updated.args) == 1
                and updated.args[0].keyword is None and not updated.args[0].star):
            return updated
        twin = MATH_TWINS.get(f"numpy.{func.attr.value}")
        if twin is None or not self.number(updated.args[0].value):
            return updated
        return updated.with_changes(func=cst.parse_expression(twin))


def as_math(expr: cst.BaseExpression, scalars: frozenset) -> cst.BaseExpression:
    """``expr`` with each ``np.<f>(v)`` of arithmetic of the known scalars ``scalars`` (and
    number literals) written ``math.<f>(v)`` where math has the same function (MATH_TWINS), in
    code made for calls passing numbers: a tangent template's ``np.cos(x)`` of a float costs
    twenty times math's."""
    return expr.visit(_AsMath(frozenset(scalars)))


def forward(fn, table: RuleTable, *, wrt: tuple, name: str, kwonly: tuple = (),
            constant: frozenset = frozenset(),
            callee_lookup: Optional[CalleeLookup] = None, shapes: tuple = ({}, frozenset()),
            on_numbers: frozenset = frozenset()) -> JvpFunction:
    """The forward-mode function of ``fn`` with respect to ``wrt`` (``kwonly``: the names of its
    keyword-only parameters; ``constant``: names whose tangent provably cancels in the output,
    such as stabilizing maxima, given none; ``callee_lookup``: the forward mode of user functions
    it calls; ``shapes``: shape classes and known scalars from analyze.shapes; ``on_numbers``:
    for code made for calls passing numbers, which fall back to the sweeps where it raises, the
    names holding numbers there)."""
    return ForwardBuilder(fn, table, wrt, name, kwonly, constant, callee_lookup, shapes,
                          on_numbers=on_numbers).build()

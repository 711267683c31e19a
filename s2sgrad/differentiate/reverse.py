"""Reverse mode: CoreFunction + Activity + RuleTable -> VjpFunction (a forward and a backward sweep).

The forward sweep is the lowered statements as written, plus recording: per loop iteration the
values its backward sweep needs (``loop1_tape``), per branch the values the branch's backward needs
(``if1_saved``); it returns the value and the residuals. The backward sweep visits the statements
in exact reverse order; each differentiable statement whose output has an adjoint contributes to
the adjoints of its active operands through its rule's templates. The first contribution to an
adjoint is a plain ``=``; later ones accumulate; statements with no adjoint to pass on emit
nothing. A backward loop replays the forward loop's records in reverse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Optional

import libcst as cst
import libcst.matchers as m

from ..analyze.activity import Activity, refuse_constant_subscripts
from ..analyze.shapes import may_broadcast, shape_facts
from ..errors import TransformError
from ..lower.ir import (
    Const,
    CoreFunction,
    If,
    Loop,
    Prim,
    Seq,
    SUBSCRIPT,
    Stmt,
    Var,
    defined_names,
    definition_counts,
    flatten,
    operand_node,
    operand_reads,
    operand_vars,
    prim_operands,
)
from ..lower.naming import Namer
from ..read.names import name_nodes
from ..registry import RegisteredRule
from ..rules.table import RuleTable
from .binding import bind_arguments, defaulted_params
from .code import Nest, Restore, code_reads, has_statements, unpack_target
from .fold import fold, line_read_counts
from .release import release
from .simplify import simplify
from .templates import instantiate, needs_parens
from .unknown import no_rule


@dataclass(frozen=True)
class HelperCall:
    """What the caller needs to know about a transformed user function it calls."""

    fwd_name: str
    bwd_name: str
    params: tuple  # parameter names, in order
    kwonly: tuple  # names of keyword-only parameters
    returns_adjoint: tuple  # per parameter: True when the backward returns an adjoint (not None)


@dataclass(frozen=True)
class VjpFunction:
    """One generated ``<name>_fwd`` / ``<name>_bwd`` pair."""

    source_name: str
    fwd_name: str
    bwd_name: str
    params_code: str
    forward: tuple  # code (str | Nest)
    result_code: str
    residuals: tuple  # names the forward hands to the backward
    residuals_param: str
    seed: str
    backward: tuple  # code (str | Nest)
    returns: tuple  # code of each returned adjoint
    wrt: tuple
    top_level: bool
    residual_targets: tuple = ()  # the backward's names for the residuals, when not the same
    releases_residuals: bool = False  # the backward frees residuals early: drop the tuple first


@dataclass
class Collecting:
    """What one backward loop collects per iteration, for one pass after it: the ``a @ W``
    contributions of accumulators (``products``: var -> upstream and left-operand lists) and the
    adjoints of rows read at the loop ``counter`` (``rows``: var -> list)."""

    products: dict
    rows: dict
    counter: str  # the name counting iterations from 0 ("" when the loop has none)
    statements: frozenset  # ids of the loop body's top-level statements (run every iteration)
    defined: frozenset = frozenset()  # names the loop body defines
    right: dict = field(default_factory=dict)  # var -> right operand's code, once one was collected
    row_reader: dict = field(default_factory=dict)  # var -> id of the statement whose rows collect


HelperLookup = Callable[[Prim, Stmt], Optional[HelperCall]]


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _reads(statements) -> set:
    reads: set = set()
    for stmt in statements:
        for op in prim_operands(stmt.prim):
            reads.update(operand_reads(op))
    return reads


def level_names(body: tuple) -> set:
    """Names bound after ``body`` ran, at its own level: what its statements assign, its compound
    statements' tapes and records, what its loops carry (at any depth, when the name was bound
    before at this level: a carried name keeps a value on every path), and names a nested block
    assigns that a later statement of ``body`` (at any depth) reads, so the forward sweep itself
    needs them bound there."""
    names: set = set()
    bound: set = set()
    for index, stmt in enumerate(body):
        if isinstance(stmt, Stmt):
            names.update(stmt.targets)
            bound.update(stmt.targets)
            continue
        if isinstance(stmt, If):
            names.update((stmt.test, stmt.saved))
        else:
            names.update((stmt.tape, stmt.trips, stmt.entry))
            names.update(t for carry in stmt.carries for t in carry.targets)  # bound before, too
        names |= _carried_within(stmt) & bound
        later = _reads(flatten(body[index + 1:]))
        names |= defined_names((stmt,)) & later
        bound |= defined_names((stmt,))
    return names


def _carried_within(stmt) -> set:
    """Names the loops inside a compound statement (at any depth) carry."""
    found: set = set()
    blocks = (stmt.body, stmt.orelse) if isinstance(stmt, If) else (stmt.body,)
    for block in blocks:
        for inner in block:
            if isinstance(inner, Loop):
                found.update(t for carry in inner.carries for t in carry.targets)
            if isinstance(inner, (If, Loop)):
                found |= _carried_within(inner)
    return found


class ReverseBuilder:
    """Builds the VjpFunction for one CoreFunction. Used once."""

    def __init__(self, fn: CoreFunction, activity: Activity, table: RuleTable, wrt: tuple,
                 has_aux: bool, top_level: bool, helper_lookup: HelperLookup,
                 fwd_name: str, bwd_name: str, kwonly: tuple = (),
                 shapes: Optional[tuple] = None) -> None:
        refuse_constant_subscripts(fn, activity.varied)
        self.fn = fn
        self.activity = activity
        self.table = table
        self.wrt = wrt
        self.has_aux = has_aux
        self.top_level = top_level
        self.helper_lookup = helper_lookup
        self.fwd_name = fwd_name
        self.bwd_name = bwd_name
        self.kwonly = kwonly
        self.module = fn.module
        self.namer = Namer(fn.reserved | {fwd_name, bwd_name})
        self.current: dict = {}  # var -> the name holding its adjoint so far
        self.unstable: set = set()  # adjoint names that are rebound later (never aliased)
        self.owned: set = set()  # adjoint names holding an array only this sweep made (+= is safe)
        # Names whose adjoint is one number that stands for an array of their shape (the adjoint
        # of a full sum's operand, and what elementwise rules make of it with scalars).
        self.uniform: set = set()
        self.uniform_names: set = set()  # every name that held a uniform adjoint
        self.collecting: Optional[Collecting] = None  # in a backward loop: what it collects
        self.helper_res: dict = {}  # Stmt -> name of the helper's residuals at that call
        self.shapes: dict = {}  # var -> the name of its shape (all unbroadcasting needs of it)
        self.shape_base: dict = {}  # shape (or size) name -> var
        self.sizes: dict = {}  # var -> the name of its number of elements
        self.loop_records: dict = {}  # Loop -> (record names, uses a tape)
        self.loop_entries: dict = {}  # Loop -> carried names restored from before the loop
        self.if_records: dict = {}  # If -> (then names, else names)
        self.classes, self.scalars = shapes or shape_facts(fn, table)
        self.definitions = definition_counts(fn.body)
        self.definitions_params = {p.name for p in fn.params}
        self.statements_defining: dict = {}
        for stmt in flatten(fn.body):
            for t in stmt.targets:
                self.statements_defining.setdefault(t, []).append(stmt)
        self.array_values: dict = {}
        for p in fn.params:
            self.definitions[p.name] = self.definitions.get(p.name, 0) + 1

    def local_to(self, blocks: tuple) -> set:
        """Names every definition of which lies inside ``blocks`` (their adjoints end there)."""
        inside: dict = {}
        for block in blocks:
            for k, v in definition_counts(block).items():
                inside[k] = inside.get(k, 0) + v
        return {k for k, v in inside.items() if self.definitions.get(k, 0) == v}

    # ----- adjoints ----------------------------------------------------------------------------

    def active(self, name: str) -> bool:
        return self.activity.is_active(name)

    def accumulate(self, lines: list, var: str, expr: cst.BaseExpression,
                   uniform: bool = False) -> None:
        """Add ``expr`` to the adjoint of ``var``: ``=`` on the first write (no line at all when
        ``expr`` is another adjoint's stable name), ``x_bar = x_bar + ...`` afterwards.
        ``uniform``: ``expr`` is one number standing for an array of ``var``'s shape."""
        name = self.namer.adjoint(var)
        if var not in self.current:
            if isinstance(expr, cst.Name) and expr.value not in self.unstable:
                self.current[var] = expr.value
                if uniform:
                    self.uniform.add(var)
                    self.uniform_names.add(expr.value)
                else:
                    self.uniform.discard(var)
                return
            lines.append(f"{name} = {_code(expr)}")
            fresh = isinstance(expr, (cst.BinaryOperation, cst.UnaryOperation)) or \
                m.matches(expr, m.Call(func=m.Attribute(m.Name("s2s"), m.Name("getitem_vjp"))))
        elif var in self.fn.lists:
            lines.append(f"{name} = s2s.add({self.current[var]}, {_code(expr)})")
            fresh = False
        elif self.current[var] == name and name in self.owned:
            lines.append(f"{name} += {_code(expr)}")  # an array this sweep made and nothing shares
            fresh = True
        else:
            rhs = expr
            if needs_parens(expr, inside="+"):
                rhs = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            lines.append(f"{name} = {self.current[var]} + {_code(rhs)}")
            fresh = True
        uniform = uniform and (var not in self.current or var in self.uniform)
        if fresh and not uniform and name not in self.unstable and var not in self.fn.lists:
            self.owned.add(name)
        else:
            self.owned.discard(name)
        if uniform:
            self.uniform.add(var)
            self.uniform_names.add(name)
        else:
            self.uniform.discard(var)
        self.current[var] = name

    def materialize(self, lines: list, var: str) -> None:
        """Make ``var``'s adjoint a full array when it is one number standing for one."""
        held = self.current.get(var)
        if held is None or var not in self.uniform:
            return
        name = self.namer.fresh(f"{var}_bar") if held == self.namer.adjoint(var) else \
            self.namer.adjoint(var)
        lines.append(f"{name} = s2s.broadcast({held}, {self.shape_of(var)})")
        self.current[var] = name
        self.owned.discard(name)
        self.uniform.discard(var)

    def materialize_all(self, lines: list) -> None:
        """Before a block boundary: every uniform adjoint becomes a full array."""
        for var in sorted(self.current):
            self.materialize(lines, var)

    def uniform_sum(self, lines: list, stmt: Stmt, rule, g: str) -> bool:
        """``s = np.sum(a)``: ``a``'s adjoint is ``g`` itself, standing for an array of ``a``'s
        shape, when ``a``'s shape class is known (the rules that read it multiply it out)."""
        prim = stmt.prim
        reduction = getattr(rule, "reduction", "")
        mean = reduction == "mean"
        if reduction not in ("sum", "mean") or len(prim.args) != 1 or prim.kwargs:
            return False
        operand = prim.args[0]
        if not (isinstance(operand, Var) and self.active(operand.name)):
            return False
        if self.classes.get(operand.name) in (None, "()") or operand.name in self.fn.lists:
            return False
        # np.mean(a): the same number over a's size (recorded, not a itself)
        share = cst.parse_expression(f"{g} / {self.size_of(operand.name)}") if mean else cst.Name(g)
        self.accumulate(lines, operand.name, share, uniform=True)
        return True

    def batch(self, lines: list, var: str, expr: cst.BaseExpression) -> bool:
        """In a backward loop, ``W_bar += s2s.matmul_vjp_b(g, a, W)`` for an accumulator ``W``
        becomes two appends; the loop's end adds all of them in one matrix product."""
        collecting = self.collecting
        lists = collecting.products.get(var) if collecting else None
        call = m.Call(func=m.Attribute(m.Name("s2s"), m.Name("matmul_vjp_b")),
                      args=[m.Arg(keyword=None)] * 3)
        if lists is None or not m.matches(expr, call) or self.current.get(var) != self.namer.adjoint(var):
            return False
        g, a, b = (_code(arg.value) for arg in expr.args)
        if collecting.right.setdefault(var, b) != b:
            return False
        lines.append(f"{lists[0]}.append({g})")
        lines.append(f"{lists[1]}.append({a})")
        return True

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
        return may_broadcast(operand, bound, self.scalars)

    def shape_of(self, var: str) -> str:
        """The name the backward sweep uses for ``var``'s shape; the forward sweep records
        ``np.shape(var)`` under it, so the value itself need not be kept for that. A row read at
        the loop counter of an array made before the loop has that array's shape less its first
        axis (``xs_shape[1:]``): one record before the loop, none per iteration."""
        row = self.row_shape(var)
        if row is not None:
            return row
        if var not in self.shapes:
            self.shapes[var] = self.namer.fresh(f"{var}_shape")
            self.shape_base[self.shapes[var]] = var
        return self.shapes[var]

    def row_shape(self, var: str) -> Optional[str]:
        collecting = self.collecting
        defs = self.statements_defining.get(var, [])
        if collecting is None or not collecting.counter or len(defs) != 1 or \
                id(defs[0]) not in collecting.statements:
            return None
        prim = defs[0].prim
        if prim.op != SUBSCRIPT or len(prim.args) != 2 or \
                not isinstance(prim.args[0], Var) or not isinstance(prim.args[1], Const) or \
                prim.args[1].brackets != f"[{collecting.counter}]":
            return None
        base = prim.args[0].name
        if base in collecting.defined or base in self.fn.lists or not self.numpy_valued(base):
            return None
        return f"{self.shape_of(base)}[1:]"

    def size_of(self, var: str) -> str:
        """Like shape_of, for ``var``'s number of elements."""
        if var not in self.sizes:
            self.sizes[var] = self.namer.fresh(f"{var}_size")
            self.shape_base[self.sizes[var]] = var
        return self.sizes[var]

    def packed(self, name: str) -> str:
        """What the forward sweep records for ``name``: the value, or the shape it stands for
        (``x.shape`` when ``x`` is certainly a numpy array or scalar, else ``np.shape(x)``)."""
        base = self.shape_base.get(name)
        if base is None:
            return name
        field = "size" if self.sizes.get(base) == name else "shape"
        return f"{base}.{field}" if self.numpy_valued(base) else f"np.{field}({base})"

    def numpy_valued(self, name: str) -> bool:
        """Whether every definition of ``name`` makes a numpy array or numpy scalar: a matrix
        product, an elementwise numpy function (a ufunc), a hoisted product, or a row of one."""
        if name not in self.array_values:
            self.array_values[name] = False  # a cycle (a loop-carried name) proves nothing
            defs = self.statements_defining.get(name, [])
            self.array_values[name] = bool(defs) and name not in self.definitions_params and \
                all(self._numpy_result(stmt) for stmt in defs)
        return self.array_values[name]

    def _numpy_result(self, stmt: Stmt) -> bool:
        prim = stmt.prim
        if len(stmt.targets) != 1 or self.helper_for(stmt) is not None:
            return False
        if self.table.gives_array(prim.op):
            return True
        base = prim.args[0] if prim.args else None
        return prim.op == SUBSCRIPT and isinstance(base, Var) and \
            self.numpy_valued(base.name)

    def zeros(self, var: str) -> str:
        """Code for the zero adjoint of ``var``."""
        return f"s2s.list_zeros({var})" if var in self.fn.lists else f"s2s.zeros_like({var})"

    def hold(self, lines: list, var: str, accumulator: bool = False) -> str:
        """Make ``var``'s adjoint live in its own name (zeros when it has none yet). An
        ``accumulator`` (only ever added to, never read as an upstream in the block ahead) that
        starts from fresh zeros may be added to in place."""
        name = self.namer.adjoint(var)
        held = self.current.get(var)
        if held is None:
            lines.append(f"{name} = {self.zeros(var)}")
            if accumulator and var not in self.fn.lists:
                self.owned.add(name)
            else:
                self.owned.discard(name)
        elif held != name:
            lines.append(f"{name} = {held}")
            self.owned.discard(name)
        self.current[var] = name
        self.uniform.discard(var)
        self.unstable.add(name)
        return name

    # ----- helpers (user functions) --------------------------------------------------------------

    def rule_for(self, prim: Prim):
        """The table's rule for ``prim``: by its name, or by ``module.name`` for a function of
        the user's own module."""
        rule = self.table.get(prim.op)
        if rule is None and "." not in prim.op and self.module:
            rule = self.table.get(f"{self.module}.{prim.op}")
        return rule

    def helper_for(self, stmt: Stmt) -> Optional[HelperCall]:
        prim = stmt.prim
        if prim.op in self.table.nondiff or self.rule_for(prim) is not None:
            return None
        if self.table.is_library(prim.op):
            return None
        if prim.op in ("copy", "nondiff") or not any(self.active(t) for t in stmt.targets):
            return None
        return self.helper_lookup(prim, stmt)

    def residuals_of(self, stmt: Stmt) -> str:
        if stmt not in self.helper_res:
            base = stmt.prim.callee.rsplit(".", 1)[-1]
            self.helper_res[stmt] = self.namer.fresh(f"{base}_res")
        return self.helper_res[stmt]

    # ----- forward -----------------------------------------------------------------------------

    def forward_line(self, stmt: Stmt) -> str:
        targets = ", ".join(stmt.targets)
        helper = self.helper_for(stmt)
        if helper is not None:
            call = stmt.expr
            assert isinstance(call, cst.Call)
            new_call = call.with_changes(func=cst.Name(helper.fwd_name))
            if len(stmt.targets) > 1:
                targets = f"({targets})"
            return f"{targets}, {self.residuals_of(stmt)} = {_code(new_call)}"
        if not stmt.targets:
            return _code(stmt.expr)
        return f"{targets} = {_code(stmt.expr)}"

    def forward_code(self, body: tuple) -> list:
        out: list = []
        last = None
        for stmt in body:
            origin = stmt.origin
            if isinstance(stmt, Stmt) and stmt.implicit:
                continue
            if origin is not last:
                out.append(f"# {origin.text}")
                last = origin
            if isinstance(stmt, Stmt):
                out.append(self.forward_line(stmt))
            elif isinstance(stmt, If):
                out.extend(self.forward_if(stmt))
            else:
                out.extend(self.forward_loop(stmt))
        return out

    def forward_if(self, node: If) -> list:
        then_names, else_names = self.if_records.get(node, ((), ()))
        then_code = self.forward_code(node.body)
        else_code = self.forward_code(node.orelse)
        if then_names or else_names:
            for names, code in ((then_names, then_code), (else_names, else_code)):
                items = ", ".join(self.packed(n) for n in names) + ("," if len(names) == 1 else "")
                code.append(f"{node.saved} = ({items})")
        out = [Nest(f"if {node.test}:", tuple(then_code))]
        if has_statements(else_code):
            out.append(Nest("else:", tuple(else_code)))
        return out

    def forward_loop(self, loop: Loop) -> list:
        record = self.loop_records.get(loop)
        body = self.forward_code(loop.body)
        out: list = []
        entry = self.loop_entries.get(loop)
        if entry:
            out.append(f"{loop.entry} = ({', '.join(entry)}{',' if len(entry) == 1 else ''})")
        if record is not None:
            names, tape = record
            if tape:
                out.append(f"{loop.tape} = []")
                packed = [self.packed(n) for n in names]
                item = packed[0] if len(packed) == 1 else "(" + ", ".join(packed) + ")"
                body.append(f"{loop.tape}.append({item})")
            else:
                out.append(f"{loop.trips} = 0")
                body.append(f"{loop.trips} += 1")
        carries = self.forward_code(loop.carries)
        body.extend(line for line in carries if not (isinstance(line, str) and line.startswith("#")))
        out.append(Nest(loop.header, tuple(body)))
        return out

    # ----- backward ----------------------------------------------------------------------------

    def backward_code(self, body: tuple) -> list:
        """The backward sweep of ``body``: its statements in reverse, one comment per source statement."""
        parts: list = []
        for stmt in reversed(body):
            if isinstance(stmt, Stmt):
                lines = self.backward_stmt(stmt)
            elif isinstance(stmt, If):
                lines = self.backward_if(stmt)
            else:
                lines = self.backward_loop(stmt)
            if lines:
                if parts and parts[-1][0] is stmt.origin:
                    parts[-1][1].extend(lines)
                else:
                    parts.append((stmt.origin, list(lines)))
        out: list = []
        for origin, lines in parts:
            out.append(f"# {origin.text}")
            out.extend(lines)
        return out

    def backward_stmt(self, stmt: Stmt) -> list:
        prim = stmt.prim
        lines: list = []
        if not self.table.differentiable(prim.op):
            return lines
        if not any(t in self.current for t in stmt.targets):
            return lines
        target = stmt.targets[0]
        consumed = {t: self.current.get(t) for t in stmt.targets}
        if not any(self.active(n) for op in prim_operands(prim) for n in operand_vars(op)):
            for t, g in consumed.items():  # nothing to pass on: the operands carry no derivative
                if g is not None:
                    del self.current[t]
                    self.uniform.discard(t)
            return lines
        helper = self.helper_for(stmt)
        rule = None if helper is not None else self.rule_for(prim)
        if helper is not None or not (getattr(rule, "elementwise", False) or _basic_getitem(prim))\
                or isinstance(rule, RegisteredRule):
            for t in stmt.targets:
                self.materialize(lines, t)
        if helper is not None:
            if len(stmt.targets) > 1:
                g = "(" + ", ".join(self.current.get(t) or f"s2s.zeros_like({t})"
                                    for t in stmt.targets) + ")"
            else:
                g = self.current[target]
            lines += self.helper_backward(stmt, helper, g)
        else:
            if rule is None:
                self.refuse_unknown(stmt)
            if len(stmt.targets) > 1:
                raise self.located(stmt, f"unpacking the result of `{prim.op}` is not "
                                   "differentiable yet", "index the result instead")
            if isinstance(rule, RegisteredRule):
                lines += self.registered_backward(stmt, rule, self.current[target])
            elif not self.uniform_sum(lines, stmt, rule, self.current[target]):
                lines += self.rule_backward(stmt, rule, self.current[target])
        for t, g in consumed.items():
            if g is not None and self.current.get(t) == g:
                del self.current[t]  # this definition's adjoint is consumed
                self.uniform.discard(t)
        return lines

    def rule_backward(self, stmt: Stmt, rule, g: str) -> list:
        prim = stmt.prim
        target = stmt.targets[0]
        lines: list = []
        bound = bind_arguments(rule, prim)
        defaulted = defaulted_params(rule, prim)
        with_template = {param for param, _ in rule.vjps}
        for name, operand in bound.items():
            if name not in with_template and any(self.active(n) for n in operand_vars(operand)):
                raise self.located(
                    stmt, f"s2sgrad has no derivative of `{rule.name}` with respect to `{name}`",
                    f"pass a constant for `{name}`, wrap it in s2sgrad.stop_gradient(...) if its "
                    "gradient is not wanted, or give a rule with s2sgrad.register_gradient")
        def contribution(template):
            mapping = {"g": cst.Name(g), "ans": cst.Name(target)}
            mapping.update({name: operand_node(op) for name, op in bound.items()})
            return simplify(instantiate(template, mapping, defaulted))

        wanted = [(param, template, bound.get(param)) for param, template in rule.vjps
                  if bound.get(param) is not None
                  and any(self.active(n) for n in operand_vars(bound[param]))]
        kinds = {}  # param -> "uniform" | "full" (when g is one number standing for an array)
        if target in self.uniform and _basic_getitem(prim):
            kinds = {}  # a scatter into zeros: one number fills its slots as well as an array
        elif target in self.uniform:
            for param, template, operand in wanted:
                kinds[param] = self.uniform_kind(operand, bound, target, contribution(template), g)
            if None in kinds.values():
                self.materialize(lines, target)
                g = self.current[target]
                kinds = {}
        for param, template, operand in wanted:
            if prim.op == SUBSCRIPT and isinstance(operand, Var) and (
                    self.collect_row(lines, stmt, operand.name, bound.get("index"), g)
                    or self.scatter(lines, operand.name, bound.get("index"), g)):
                continue
            expr = contribution(template)
            if isinstance(operand, Var) and self.batch(lines, operand.name, expr):
                continue
            if isinstance(operand, Var):
                if rule.elementwise and self.may_broadcast(operand, bound, target):
                    expr = cst.Call(
                        cst.Attribute(cst.Name("s2s"), cst.Name("unbroadcast")),
                        [cst.Arg(expr), cst.Arg(cst.parse_expression(self.shape_of(operand.name)))],
                    )
                self.accumulate(lines, operand.name, expr, uniform=kinds.get(param) == "uniform")
            elif isinstance(operand, Seq):
                parts = self.namer.fresh(f"{param}_bar")
                lines.append(f"{parts} = {_code(expr)}")
                self.distribute(lines, stmt, operand, parts)
        return lines

    def distribute(self, lines: list, stmt: Stmt, seq: Seq, parts: str) -> None:
        """Add ``parts[i]`` (the adjoint of a list or tuple display) to each of its items."""
        for i, item in enumerate(seq.items):
            if isinstance(item, Var) and self.active(item.name):
                self.accumulate(lines, item.name, cst.parse_expression(f"{parts}[{i}]"))
            elif isinstance(item, Seq) and any(self.active(n) for n in operand_vars(item)):
                raise self.located(stmt, "nested sequences of differentiated values are "
                                   "not supported here", "pass a flat list of arrays")

    def registered_backward(self, stmt: Stmt, rule: RegisteredRule, g: str) -> list:
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
                slots.append("_")
            elif isinstance(op, str):
                slots.append(op)  # a name the caller reads itself
            elif op.name in self.current or op.name in claimed:
                tmp = self.namer.fresh(f"{op.name}_bar")
                slots.append(tmp)
                pending.append((op.name, tmp))
            else:
                slots.append(self.namer.adjoint(op.name))
                claimed.add(op.name)
        lines = [f"{unpack_target(slots)} = {call}"]
        for var in sorted(claimed):
            self.current[var] = self.namer.adjoint(var)
            self.owned.discard(self.current[var])  # a helper may hand back its upstream itself
        for var, tmp in pending:
            self.accumulate(lines, var, cst.Name(tmp))
        return lines

    def collect_row(self, lines: list, stmt: Stmt, var: str, index, g: str) -> bool:
        """In a backward loop over ``range(n)`` or ``enumerate``, the adjoint of the row
        ``A[t]`` read once per iteration (a statement at the body's top level, indexed by the
        loop's own counter) is appended to a list; the rows are stacked once after the loop."""
        collecting = self.collecting
        rows = collecting.rows.get(var) if collecting else None
        if rows is None or not (isinstance(index, Const) and index.brackets == f"[{collecting.counter}]"):
            return False
        if id(stmt) not in collecting.statements or self.current.get(var) != self.namer.adjoint(var) \
                or stmt.targets[0] in self.uniform:
            return False
        if collecting.row_reader.setdefault(var, id(stmt)) != id(stmt):
            return False  # one row per iteration: a second reader scatters instead
        lines.append(f"{rows}.append({g})")
        return True

    def scatter(self, lines: list, var: str, index, g: str) -> bool:
        """``x_bar[i] += g`` for a basic index into an adjoint array this sweep owns."""
        name = self.current.get(var)
        if not (isinstance(index, Const) and index.basic and index.brackets
                and name == self.namer.adjoint(var) and name in self.owned):
            return False
        lines.append(f"{name}{index.brackets} += {g}")
        return True

    def helper_backward(self, stmt: Stmt, helper: HelperCall, g: str) -> list:
        bound = {}
        prim = stmt.prim
        positional = [p for p in helper.params if p not in helper.kwonly]
        for name, op in zip(positional, prim.args):
            bound[name] = op
        for key, op in prim.kwargs:
            bound[key] = op
        wanted, displays = [], []
        for name, has_adjoint in zip(helper.params, helper.returns_adjoint):
            operand = bound.get(name)
            if has_adjoint and isinstance(operand, Seq) and any(
                    self.active(n) for n in operand_vars(operand)):
                parts = self.namer.fresh(f"{name}_bar")
                displays.append((operand, parts))
                wanted.append(parts)
                continue
            ok = has_adjoint and isinstance(operand, Var) and self.active(operand.name)
            wanted.append(operand if ok else None)
        lines = self.receive(wanted, f"{helper.bwd_name}({self.residuals_of(stmt)}, {g})")
        for seq, parts in displays:
            self.distribute(lines, stmt, seq, parts)
        return lines

    def backward_if(self, node: If) -> list:
        lines: list = []
        self.materialize_all(lines)
        return lines + self.backward_if_body(node)

    def backward_if_body(self, node: If) -> list:
        entry = dict(self.current)
        entry_owned = set(self.owned)
        then_code = self.backward_code(node.body)
        self.materialize_all(then_code)
        then_state, then_owned = self.current, self.owned
        self.current, self.owned = dict(entry), set(entry_owned)
        else_code = self.backward_code(node.orelse)
        self.materialize_all(else_code)
        else_state = self.current
        self.owned &= then_owned  # in place only where both paths made the array
        # Adjoints born inside the branches end there; one that flowed in (from uses after the
        # `if`) survives on a path that does not redefine its name.
        local = self.local_to((node.body, node.orelse)) - set(entry)
        merged = {}
        for var in sorted((set(then_state) | set(else_state)) - local):
            a, b = then_state.get(var), else_state.get(var)
            if a == b:
                merged[var] = a
                continue
            name = self.namer.adjoint(var)
            for code, state in ((then_code, then_state), (else_code, else_state)):
                if state.get(var) != name:
                    code.append(f"{name} = {state[var]}" if var in state
                                else f"{name} = {self.zeros(var)}")
            merged[var] = name
            self.unstable.add(name)
            self.owned.discard(name)
        self.current = merged
        then_names = tuple(sorted(code_reads(then_code) & self.level_names(node.body)))
        else_names = tuple(sorted(code_reads(else_code) & self.level_names(node.orelse)))
        if not (has_statements(then_code) or has_statements(else_code)):
            return []
        self.if_records[node] = (then_names, else_names)
        if then_names:
            then_code.insert(0, f"{unpack_target(then_names)} = {node.saved}")
        if else_names:
            else_code.insert(0, f"{unpack_target(else_names)} = {node.saved}")
        out = [Nest(f"if {node.test}:", tuple(then_code))]
        if has_statements(else_code):
            out.append(Nest("else:", tuple(else_code)))
        return out

    def backward_loop(self, loop: Loop) -> list:
        inside = loop.body + loop.carries
        local = defined_names(loop.body) | set(loop.targets)
        carried = {s.targets[0] for s in loop.carries}
        reads = set()
        for stmt in flatten(inside):
            for op in prim_operands(stmt.prim):
                reads.update(operand_vars(op))
        # Adjoints that cross iterations: of values read from outside the loop, of carried values,
        # and of loop values read after the loop (only the last iteration's gets that adjoint).
        escaping = {v for v in local if v in self.current}
        boundary = sorted(v for v in (reads - local) | carried | escaping if self.active(v))
        accumulators = (reads - local) - carried - escaping
        lines: list = []
        self.materialize_all(lines)
        for var in boundary:
            self.hold(lines, var, accumulator=var in accumulators)
        everywhere, inside_counts = definition_counts(self.fn.body), definition_counts(loop.body)
        params = {p.name for p in self.fn.params}
        own = [v for v in sorted(escaping & set(boundary))  # defined in this loop only
               if v not in params and
               everywhere.get(v, 0) == inside_counts.get(v, 0) + (v in loop.targets)]
        firsts = self.last_iteration_adjoints(lines, own)
        entry = dict(self.current)
        outer = self.collecting
        batchable = [v for v in boundary if v in accumulators and v not in self.fn.lists]
        counter = _row_counter(loop)
        self.collecting = collecting = Collecting(
            products={v: (self.namer.fresh(f"{v}_bar_upstreams"), self.namer.fresh(f"{v}_bar_lefts"))
                      for v in batchable},
            rows={v: self.namer.fresh(f"{v}_bar_rows") for v in batchable} if counter else {},
            counter=counter,
            statements=frozenset(id(s) for s in loop.body if isinstance(s, Stmt)),
            defined=frozenset(definition_counts(loop.body)))
        body_code = self.backward_code(inside)
        self.collecting = outer
        self.materialize_all(body_code)
        for var in boundary:
            if var in firsts:
                self.current[var] = self.namer.adjoint(var)  # set again at the top of the body
            else:
                self.hold(body_code, var)
        body_code[:0] = [line for var in sorted(firsts) for line in firsts[var]]
        self.current = {k: v for k, v in self.current.items() if k in entry}
        names = tuple(sorted(code_reads(body_code) & (self.level_names(inside) | set(loop.targets))))
        # Carried names the records do not restore come back from a copy taken before the loop:
        # the backward sweep of what precedes the loop reads their values from then.
        restore = tuple(sorted(carried - set(names)))
        if not has_statements(body_code):
            names = ()
        else:
            self.loop_records[loop] = (names, bool(names))
        self.loop_entries[loop] = restore
        after = [Restore(loop, restore, loop.entry)] if restore else []
        if not has_statements(body_code):
            return lines + after
        if names:
            target = names[0] if len(names) == 1 else unpack_target(names)
            header = f"for {target} in reversed({loop.tape}):"
        else:
            header = f"for _ in range({loop.trips}):"
        summed: list = []
        for var in sorted(set(collecting.right) | set(collecting.row_reader)):
            zeros = f"{self.namer.adjoint(var)} = {self.zeros(var)}"
            if zeros in lines and self.namer.adjoint(var) not in code_reads(body_code):
                lines.remove(zeros)  # every contribution was collected: they make the adjoint
                del self.current[var]
            if var in collecting.right:
                upstreams, lefts = collecting.products[var]
                lines.append(f"{upstreams} = []")
                lines.append(f"{lefts} = []")
                self.accumulate(summed, var, cst.parse_expression(
                    f"s2s.matmul_vjp_b_sum({upstreams}, {lefts}, {collecting.right[var]})"))
            if var in collecting.row_reader:
                rows = collecting.rows[var]
                lines.append(f"{rows} = []")
                self.accumulate(summed, var, cst.parse_expression(
                    f"s2s.stack_rows({rows}, {self.shape_of(var)})"))
        lines.append(Nest(header, tuple(body_code)))
        return lines + after + summed

    def last_iteration_adjoints(self, lines: list, escaping: list) -> dict:
        """A loop's own value read after the loop gets that adjoint in the last iteration only:
        kept aside before the backward loop, handed over in its first pass, zeros (shaped like
        that iteration's value: a list may grow by another count each time) in the others.
        Returns the lines that start the backward body, per name."""
        firsts = {}
        for var in escaping:
            name = self.namer.adjoint(var)
            kept = self.namer.fresh(f"{var}_bar_after_loop")
            lines.append(f"{kept} = {name}")
            firsts[var] = [f"{name} = {self.zeros(var)} if {kept} is None else {kept}",
                           f"{kept} = None"]
            self.owned.discard(name)
        return firsts

    def prune_restores(self, code: list, returns: list) -> list:
        """Keep, of each top-level Restore, the names code after it reads (inside loops every
        restore stays: the next iteration runs code written above it)."""
        out = []
        for index, item in enumerate(code):
            if not isinstance(item, Restore):
                out.append(item)
                continue
            later = code_reads(code[index + 1:]) | code_reads(returns)
            kept = tuple(n for n in item.names if n in later)
            self.loop_entries[item.loop] = kept
            if kept:
                out.append(Restore(item.loop, kept, item.entry))
        return out

    def level_names(self, body: tuple, extra: frozenset = frozenset()) -> set:
        """level_names, plus the residuals of helper calls made at that level and the shapes of
        the names bound there (or in ``extra``)."""
        helpers = {self.helper_res[s] for s in body if isinstance(s, Stmt) and s in self.helper_res}
        names = level_names(body) | helpers | set(extra)
        return names | {shape for shape, base in self.shape_base.items() if base in names}

    def refuse_unknown(self, stmt: Stmt) -> None:
        """Refuse the first statement, in source order, that has no rule and no source (the
        backward sweep meets the last one first)."""
        first = next((s for s in flatten(self.fn.body) if s is stmt or self.unknown(s)), stmt)
        raise no_rule(first, self.table)

    def unknown(self, stmt: Stmt) -> bool:
        prim = stmt.prim
        return self.table.differentiable(prim.op) and any(map(self.active, stmt.targets)) \
            and any(self.active(n) for op in prim_operands(prim) for n in operand_vars(op)) and \
            self.rule_for(prim) is None and self.helper_for(stmt) is None

    def located(self, stmt: Stmt, message: str, hint: str) -> TransformError:
        loc = stmt.prim.location or stmt.origin.location
        return TransformError(message, loc, hint)

    # ----- assembly ----------------------------------------------------------------------------

    def seed(self) -> tuple:
        """The backward's output-adjoint parameter and, for tuple outputs, its unpacking line."""
        result = self.fn.result
        name = self.fn.name
        if isinstance(result, Var):
            adjoint = self.namer.adjoint(result.name)
            self.current[result.name] = adjoint
            return adjoint, []
        if isinstance(result, Seq):
            if self.has_aux:
                first = result.items[0]
                if isinstance(first, Var):
                    adjoint = self.namer.adjoint(first.name)
                    self.current[first.name] = adjoint
                    return adjoint, []
                return self.namer.fresh(f"{name}_bar"), []
            seed = self.namer.fresh(f"{name}_bar")
            later: list = []
            target = self.seed_target(result, later)
            return seed, [f"{target} = {seed}"] + later
        return self.namer.fresh(f"{name}_bar"), []

    def seed_target(self, seq: Seq, later: list) -> str:
        """The unpacking target for the cotangent of a returned tuple (nested tuples nest); a
        name returned twice gets a second slot that ``later`` adds to its adjoint."""
        slots = []
        for item in seq.items:
            if isinstance(item, Seq):
                slots.append(f"({self.seed_target(item, later)})")
            elif isinstance(item, Var) and item.name not in self.current:
                slots.append(self.namer.adjoint(item.name))
                self.current[item.name] = slots[-1]
            elif isinstance(item, Var):
                slots.append(self.namer.fresh(f"{item.name}_bar"))
                later.extend(self.accumulate_lines(item.name, slots[-1]))
            else:
                slots.append("_")
        return unpack_target(slots)

    def accumulate_lines(self, var: str, expr: str) -> list:
        lines: list = []
        self.accumulate(lines, var, cst.parse_expression(expr))
        return lines

    def build(self) -> VjpFunction:
        fn = self.fn
        for stmt in flatten(fn.body):  # name helper residuals in source order
            if self.helper_for(stmt) is not None:
                self.residuals_of(stmt)
        seed, seed_unpack = self.seed()
        backward = self.backward_code(fn.body)
        backward[:0] = seed_unpack
        if not self.top_level:  # a helper hands its adjoints to code that expects full arrays
            for name in self.wrt:
                self.materialize(backward, name)
        returns = []
        for name in self.wrt:
            if name in self.current:
                adj = self.current[name]
                returns.append(f"s2s.like({adj}, {name})" if self.top_level else adj)
            else:
                returns.append(f"s2s.zeros_like({name})" if self.top_level else "None")
        backward = self.prune_restores(backward, returns)
        # the parameters, and the returned names (bound when the function returns, wherever a
        # branch assigned them), can always be recorded at the end of the forward sweep
        visible = self.level_names(fn.body, frozenset(p.name for p in fn.params) |
                                   frozenset(operand_vars(fn.result)))
        residuals = tuple(sorted((code_reads(backward) | code_reads(returns)) & visible))
        scalars = self.uniform_names | set(self.scalars) | {self.namer.adjoint(v) for v in self.scalars}
        backward = fold(backward, line_read_counts(returns), frozenset(scalars))
        packed = tuple(self.packed(n) for n in residuals)
        kept = {p.name for p in fn.params} | scalars | set(self.shape_base) | {seed}
        backward, released = release(backward, residuals, frozenset(kept), returns)
        result_code = _code(operand_node(fn.result))
        forward = fold(self.forward_code(fn.body), line_read_counts(packed + (result_code,)))
        return VjpFunction(
            source_name=fn.name,
            fwd_name=self.fwd_name,
            bwd_name=self.bwd_name,
            params_code=self.params_code(),
            forward=tuple(forward),
            result_code=result_code,
            residuals=packed,
            residual_targets=residuals,
            residuals_param=self.namer.fresh("residuals"),
            seed=seed,
            backward=tuple(backward),
            returns=tuple(returns),
            wrt=self.wrt,
            top_level=self.top_level,
            releases_residuals=bool(released & set(residuals)),
        )

    def params_code(self) -> str:
        parts = []
        kwonly_started = False
        for p in self.fn.params:
            if p.name in self.kwonly and not kwonly_started:
                parts.append("*")
                kwonly_started = True
            parts.append(f"{p.name}={_code(p.default)}" if p.default is not None else p.name)
        return ", ".join(parts)


def _row_counter(loop: Loop) -> str:
    """The name counting a loop's iterations from 0 by 1 (``for t in range(n)``, the index of
    ``enumerate``), or "" when there is none."""
    match = re.fullmatch(r"for (\w+) in range\(([^,]*)\):", loop.header)
    if match and len(loop.targets) == 1:
        return match.group(1)
    match = re.fullmatch(r"for (\w+), .* in enumerate\(.*\):", loop.header)
    if match and loop.targets and loop.targets[0] == match.group(1):
        return match.group(1)
    return ""


def _basic_getitem(prim: Prim) -> bool:
    """``x[i]`` with an index of integers and slices only."""
    return prim.op == SUBSCRIPT and len(prim.args) == 2 and \
        isinstance(prim.args[1], Const) and prim.args[1].basic


def reverse(fn: CoreFunction, activity: Activity, table: RuleTable, *, wrt: tuple, has_aux: bool,
            top_level: bool, helper_lookup: HelperLookup, fwd_name: str, bwd_name: str,
            kwonly: tuple = (), shapes: Optional[tuple] = None) -> VjpFunction:
    """Build the forward and backward sweeps of ``fn``. ``shapes``: its (shape classes, known
    scalars) when the caller has them (analyze.shapes.shape_facts)."""
    return ReverseBuilder(fn, activity, table, wrt, has_aux, top_level, helper_lookup,
                          fwd_name, bwd_name, kwonly, shapes).build()

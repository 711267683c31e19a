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

from typing import Optional

import libcst as cst

from ..analyze.activity import Activity, refuse_constant_subscripts
from ..analyze.dtypes import may_hold_complex
from ..analyze.shapes import SCALAR, counters, part_shape, shape_facts
from .reuse import block_places
from ..errors import TransformError
from ..lower.ir import CoreFunction, If, Prim, Seq, Stmt, Var, binding_counts, definition_counts, flatten, \
    operand_node, operand_vars, prim_operands
from ..lower.naming import Namer
from ..rules.table import RuleTable
from .adjoints import Adjoints
from .binding import keeping_consumed
from .blocks import BlockSweeps
from ..program import Comment, Simple, code_reads, lift, unpack_target
from ..rules.helpers.containers import POP_LAST
from ..rules.helpers.inplace import SETITEM, SETITEM_INTO, SETITEM_VALUE_VJP
from .contributions import Contributions, basic_getitem
from .fold import fold, line_read_counts, move_signs
from .inverses import shared_inverses
from .scales import scaled_products
from .growth import append_in_place, pop_in_place
from .plain_writes import Plain, subscript
from .writes_in_place import drop_unread_records, shape_only_reads, shape_only_records, write_in_place
from .. import dims
from .records import Records, template_record
from .compositions import compositions
from .updates import index_updates
from .release import release
from .unknown import no_rule
from .vjp_types import Collecting, CalleeCall, CalleeLookup, VjpFunction

__all__ = ["CalleeCall", "VjpFunction", "reverse"]


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


class ReverseBuilder(Contributions, BlockSweeps):
    """Builds the VjpFunction for one CoreFunction. Used once."""

    def __init__(self, fn: CoreFunction, activity: Activity, table: RuleTable, wrt: tuple,
                 has_aux: bool, top_level: bool, callee_lookup: CalleeLookup,
                 fwd_name: str, bwd_name: str, kwonly: tuple = (),
                 shapes: Optional[tuple] = None, final: bool = False) -> None:
        refuse_constant_subscripts(fn, activity.varied)
        self.fn = fn
        self.final = final  # code no transformation reads again (made for a call's shapes)
        self.activity = activity
        self.table = table
        self.wrt = wrt
        self.has_aux = has_aux
        self.top_level = top_level
        self.callee_lookup = callee_lookup
        self.fwd_name = fwd_name
        self.bwd_name = bwd_name
        self.kwonly = kwonly
        self.module = fn.module
        self.namer = Namer(fn.reserved | {fwd_name, bwd_name})
        self.adj = Adjoints(self.namer, fn.lists, self.shape_of, in_place=not may_hold_complex(fn, table))
        self.rec = Records(fn, table, self.namer, lambda stmt: self.callee_for(stmt) is not None)
        self.collecting: Optional[Collecting] = None  # in a backward loop: what it collects
        self.callee_residuals: dict = {}  # Stmt -> name of the callee's residuals at that call
        self.loop_records: dict = {}  # Loop -> (record names, uses a tape)
        self.loop_saved: dict = {}  # Loop -> carried names restored from before the loop
        self.if_records: dict = {}  # If -> (then names, else names)
        self.classes, self.scalars = shapes or shape_facts(fn, table)
        self.definitions = binding_counts(fn)
        self.places = block_places(fn.body)  # where each statement lies (reuse.py)
        self._appends: Optional[dict] = None
        # writes adding into what they read (updates.py), and the reads whose share is left in
        # the adjoint of what they read (``t``: no adjoint of its own once its write is passed)
        self.updates = index_updates(fn, table, self.index_numbers(), self.known_arrays())
        # np.log(f(x)), 1 / (1 + np.exp(-x)): chains read as one function of x
        self.compositions = compositions(fn, table)
        self.passed: set = set()

    def local_to(self, blocks: tuple) -> set:
        """Names every definition of which lies inside ``blocks`` (their adjoints end there)."""
        inside: dict = {}
        for block in blocks:
            for k, v in definition_counts(block).items():
                inside[k] = inside.get(k, 0) + v
        return {k for k, v in inside.items() if self.definitions.get(k, 0) == v}

    # ----- adjoints ----------------------------------------------------------------------------

    def active(self, name: str) -> bool:
        return name not in self.passed and self.activity.is_active(name)

    def shape_of(self, var: str) -> str:
        """The name the backward sweep uses for ``var``'s shape; the forward sweep records
        ``np.shape(var)`` under it, so the value itself need not be kept for that. A row read at
        the loop counter of an array made before the loop has that array's shape less its first
        axis (``xs_shape[1:]``): one record before the loop, none per iteration. A value known
        to be 0-d (its shape class) has the shape ``()``: nothing to record. A value of a
        known shape (code made for a shape signature) has a parameter's of that shape, recorded
        once per call, or its ones written out."""
        known = self.classes.get(var)
        if known == SCALAR:
            return "()"
        if isinstance(known, tuple):
            if all(dim == 1 for dim in known):
                return repr(known)
            for param in self.fn.params:
                if param.name != var and self.classes.get(param.name) == known and \
                        not self.rec.rebound(param.name):
                    return self.rec.shape_of(param.name)
        row = self.row_shape(var)
        return row if row is not None else self.rec.shape_of(var)

    def size_of(self, var: str) -> str:
        """The name the backward sweep uses for ``var``'s number of elements: of a parameter of
        the same known shape where there is one (recorded once per call, and ``var`` may then
        be freed after its last use in the forward sweep), else ``var``'s own record."""
        known = self.classes.get(var)
        if isinstance(known, tuple) and dims.known(known):
            for param in self.fn.params:
                if param.name != var and self.classes.get(param.name) == known and \
                        not self.rec.rebound(param.name):
                    return self.rec.size_of(param.name)
        return self.rec.size_of(var)

    # ----- callees (user functions) --------------------------------------------------------------

    def rule_for(self, prim: Prim):
        """The table's rule for ``prim``: by its name, or by ``module.name`` for a function of
        the user's own module."""
        rule = self.table.get(prim.op)
        if rule is None and "." not in prim.op and self.module:
            rule = self.table.get(f"{self.module}.{prim.op}")
        return rule

    def callee_for(self, stmt: Stmt) -> Optional[CalleeCall]:
        prim = stmt.prim
        if prim.op in self.table.nondiff or self.rule_for(prim) is not None:
            return None
        if self.table.is_library(prim.op):
            return None
        if prim.op in ("copy", "nondiff") or not any(self.active(t) for t in stmt.targets):
            return None
        return self.callee_lookup(prim, stmt)

    def residuals_of(self, stmt: Stmt) -> str:
        if stmt not in self.callee_residuals:
            base = stmt.prim.callee.rsplit(".", 1)[-1]
            self.callee_residuals[stmt] = self.namer.fresh(f"{base}_res")
        return self.callee_residuals[stmt]

    # ----- forward -----------------------------------------------------------------------------

    def forward_line(self, stmt: Stmt) -> str:
        targets = unpack_target(stmt.targets) if stmt.unpack else ", ".join(stmt.targets)
        callee = self.callee_for(stmt)
        if callee is not None:
            call = stmt.expr
            assert isinstance(call, cst.Call)
            new_call = call.with_changes(func=cst.Name(callee.fwd_name))
            if len(stmt.targets) > 1:
                targets = f"({targets})"
            return f"{targets}, {self.residuals_of(stmt)} = {_code(new_call)}"
        expr = keeping_consumed(stmt.expr, self.rule_for(stmt.prim))
        if not stmt.targets:
            return _code(expr)
        return f"{targets} = {_code(expr)}"

    def forward_code(self, body: tuple) -> list:
        out: list = []
        last = None
        for stmt in body:
            origin = stmt.origin
            if isinstance(stmt, Stmt) and stmt.implicit:
                continue
            if origin is not last:
                out.append(Comment(origin.text))
                last = origin
            if isinstance(stmt, Stmt):
                out.append(self.forward_line(stmt))
            elif isinstance(stmt, If):
                out.extend(self.forward_if(stmt))
            else:
                out.extend(self.forward_loop(stmt))
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
            out.append(Comment(origin.text))
            out.extend(lines)
        return out

    def backward_stmt(self, stmt: Stmt) -> list:
        prim = stmt.prim
        lines: list = []
        if not self.table.differentiable(prim.op):
            for t in stmt.targets:  # defined with no derivative: its adjoint is zero above here
                self.adj.drop(t)
            return lines
        if not any(t in self.adj.current for t in stmt.targets):
            return lines
        consumed = {t: self.adj.current.get(t) for t in stmt.targets}
        if not any(self.active(n) for op in prim_operands(prim) for n in operand_vars(op)):
            for t, g in consumed.items():  # nothing to pass on: the operands carry no derivative
                if g is not None:
                    self.adj.drop(t)
            return lines
        callee = self.callee_for(stmt)
        rule = None if callee is not None else self.rule_for(prim)
        if callee is not None or not (getattr(rule, "elementwise", False) or basic_getitem(prim))\
                or getattr(rule, "registered", False):
            for t in stmt.targets:
                self.adj.materialize(lines, t)
        if callee is not None:
            lines += self.callee_backward(stmt, callee, self.upstream_of_targets(stmt))
        else:
            lines += self.primitive_backward(stmt, rule)
        for t, g in consumed.items():
            if g is not None:
                self.adj.consume(t, g)  # this definition's adjoint is consumed
        return lines

    def upstream_of_targets(self, stmt: Stmt) -> str:
        """The adjoint of a callee call's result: of its one target, or a tuple (zeros where a
        target has none) when the result is unpacked."""
        if len(stmt.targets) == 1 and not stmt.unpack:
            return self.adj.current[stmt.targets[0]]
        return "(" + ", ".join(self.adj.current.get(t) or f"s2s.zeros_like({t})"
                               for t in stmt.targets) + ("," if len(stmt.targets) == 1 else "") + ")"

    def primitive_backward(self, stmt: Stmt, rule) -> list:
        """The contributions of a primitive with a rule (a table's, or a registered gradient)."""
        if rule is None:
            self.refuse_unknown(stmt)
        lines: list = []
        if (len(stmt.targets) > 1 or stmt.unpack) and rule.several:
            return self.rule_backward(stmt, rule, "", self.output_displays(stmt))
        if len(stmt.targets) > 1 or stmt.unpack:
            if rule.elementwise or rule.registered or any("ans" in t for _, t in rule.vjps):
                raise self.located(stmt, f"unpacking the result of `{stmt.prim.op}` is not "
                                   "differentiable yet", "index the result instead")
            g = self.namer.fresh(f"{stmt.targets[0]}_parts_bar")  # the result's adjoint, a tuple
            lines.append(f"{g} = {self.upstream_of_targets(stmt)}")
            return lines + self.rule_backward(stmt, rule, g)
        g = self.adj.current[stmt.targets[0]]
        if stmt.targets[0] in self.appends() and self.append_backward(lines, stmt, g):
            return lines
        if stmt.prim.op in _INDEX_WRITES and self.setitem_backward(lines, stmt, g):
            return lines
        if getattr(rule, "result_shape", None) in dims.TAKES_ITEMS and self.joined_backward(lines, stmt, g):
            return lines
        if rule.registered:
            return self.registered_backward(stmt, rule, g)
        if stmt in self.compositions:  # the chain's adjoint given to its operand at once
            whole, composed = self.compositions[stmt]
            return lines + self.rule_backward(whole, composed, g)
        if not self.uniform_sum(lines, stmt, rule, g):
            lines += self.rule_backward(stmt, rule, g)
        return lines

    def output_displays(self, stmt: Stmt) -> tuple:
        """``(g, ans)`` of a result unpacked from a rule with several outputs: the display of the
        targets' adjoints (a zero array where a target has none) and the display of the targets."""
        return cst.parse_expression(self.upstream_of_targets(stmt)), \
            _display([cst.Name(t) for t in stmt.targets])

    def refuse_unknown(self, stmt: Stmt) -> None:
        """Refuse the first statement, in source order, that has no rule and no source (the
        backward sweep meets the last one first)."""
        first = next((s for s in flatten(self.fn.body) if s is stmt or self.unknown(s)), stmt)
        raise no_rule(first, self.table, self.active)

    def unknown(self, stmt: Stmt) -> bool:
        prim = stmt.prim
        return self.table.differentiable(prim.op) and any(map(self.active, stmt.targets)) \
            and any(self.active(n) for op in prim_operands(prim) for n in operand_vars(op)) and \
            self.rule_for(prim) is None and self.callee_for(stmt) is None

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
            self.adj.current[result.name] = adjoint
            return adjoint, []
        if isinstance(result, Seq):
            if self.has_aux:
                first = result.items[0]
                if isinstance(first, Var):
                    adjoint = self.namer.adjoint(first.name)
                    self.adj.current[first.name] = adjoint
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
            elif isinstance(item, Var) and item.name not in self.adj.current:
                slots.append(self.namer.adjoint(item.name))
                self.adj.current[item.name] = slots[-1]
            elif isinstance(item, Var):
                slots.append(self.namer.fresh(f"{item.name}_bar"))
                later.extend(self.accumulate_lines(item.name, slots[-1]))
            else:
                slots.append(self.namer.discard())
        return unpack_target(slots)

    def accumulate_lines(self, var: str, expr: str) -> list:
        lines: list = []
        self.adj.accumulate(lines, var, cst.parse_expression(expr))
        return lines

    def build(self) -> VjpFunction:
        fn = self.fn
        for stmt in flatten(fn.body):  # name callee residuals in source order
            if self.callee_for(stmt) is not None:
                self.residuals_of(stmt)
        seed, seed_unpack = self.seed()
        backward = self.backward_code(fn.body)
        backward[:0] = seed_unpack
        if not self.top_level:  # a callee hands its adjoints to code that expects full arrays
            for name in self.wrt:
                self.adj.materialize(backward, name)
        returns = self.returned_adjoints()
        backward = self.prune_restores(list(lift(backward)), returns)
        residuals = self.residual_names(backward, returns)
        scalars = self.adj.uniform_names | set(self.scalars) | {self.namer.adjoint(v) for v in self.scalars}
        backward = fold(backward, line_read_counts(returns), frozenset(scalars))
        if self.final:  # (the helpers taking an inverse given have no rules)
            backward = shared_inverses(backward, self.table, *self.matrices(), self.namer.fresh)
        backward = scaled_products(backward, self.known_shapes(), self.numbers(), line_read_counts(returns),
                                   self.table)
        packed = tuple(self.rec.packed(n) for n in residuals)
        kept = {p.name for p in fn.params} | scalars | set(self.rec.shape_base) | {seed}
        backward = list(pop_in_place(tuple(backward), frozenset(residuals) | {seed}, tuple(returns)))
        arrays, numbers = self.known_arrays(), self.index_numbers()
        adjoints = frozenset(name for var, name in self.namer.adjoints().items() if var in arrays) \
            - self.adj.uniform_names if self.adj.in_place else frozenset()
        backward = list(write_in_place(tuple(backward), frozenset(residuals) | {seed}, tuple(returns),
                                       Plain(adjoints, numbers)))
        backward = move_signs(backward, line_read_counts(returns), frozenset(scalars))
        self.rec.templates = shape_only_records(tuple(backward), tuple(returns))
        backward, self.rec.unread = drop_unread_records(tuple(backward))
        backward = list(backward)
        backward, released = release(backward, residuals, frozenset(kept), returns)
        # in code no transformation reads again, a value the sweep reads only for its type, dtype
        # and shape is handed over as a template (one element's memory): the forward sweep's array
        # is freed when it returns (read again, the template would carry a zero tangent)
        params = {p.name for p in fn.params}
        templated = shape_only_reads(tuple(backward), tuple(returns), [
            n for n in residuals if n not in params and self.rec.packed(n) == n]) if self.final else ()
        packed = tuple(template_record(n) if n in templated else self.rec.packed(n) for n in residuals)
        result_code = _code(operand_node(fn.result))
        forward = fold(lift(self.forward_code(fn.body)), line_read_counts(packed + (result_code,)))
        forward = write_in_place(forward, frozenset(p.name for p in fn.params), packed + (result_code,),
                                 Plain(arrays, numbers))
        forward = append_in_place(forward, self.appends(), frozenset(p.name for p in fn.params),
                                  packed + (result_code,))
        return VjpFunction(
            source_name=fn.name, fwd_name=self.fwd_name, bwd_name=self.bwd_name,
            params_code=self.params_code(), forward=tuple(forward), result_code=result_code,
            residuals=packed, residual_targets=residuals,
            residuals_param=self.namer.fresh("residuals"), seed=seed, backward=tuple(backward),
            returns=tuple(returns), wrt=self.wrt, top_level=self.top_level,
            releases_residuals=bool(released & set(residuals)),
        )

    def known_shapes(self) -> dict:
        """The names of the sweeps whose shapes are known (code made for a call's shapes): the
        function's names of a known shape, and their adjoints (but one holding a number that
        stands for the array)."""
        known = {name: found for name, found in self.classes.items()
                 if isinstance(found, tuple) and dims.known(found) and name not in self.fn.lists}
        for var, name in self.namer.adjoints().items():
            if var in known and name not in self.adj.uniform_names:
                known[name] = known[var]
        return known

    def numbers(self) -> frozenset:
        """The names of the sweeps that hold one number (or a 0-d array) wherever they are read:
        the known scalars and the names of shape class ``()``, their adjoints, and the recorded
        sizes (not the adjoints that stand for an array by one number at some point only)."""
        names = set(self.scalars) | {name for name, found in self.classes.items() if found == SCALAR}
        adjoints = self.namer.adjoints()
        return frozenset(names | {adjoints[name] for name in names if name in adjoints} |
                         set(self.rec.sizes.values()))

    def matrices(self) -> tuple:
        """``(links, ranks)`` for differentiate/inverses.py: the names the function binds once,
        at its top level, to a copy of another name bound once or to the transpose of such a
        matrix (``L_T = L.T``) -> ``(that name, transposed)``; the names whose number of axes is
        known (code made for a call's shapes)."""
        ranks = {name: len(found) for name, found in self.classes.items()
                 if isinstance(found, tuple) and name not in self.fn.lists}
        bound = binding_counts(self.fn)
        links = {}
        for stmt in self.fn.body:
            if not (isinstance(stmt, Stmt) and len(stmt.targets) == 1 and bound.get(stmt.targets[0]) == 1
                    and len(stmt.prim.args) == 1 and not stmt.prim.kwargs
                    and isinstance(stmt.prim.args[0], Var) and bound.get(stmt.prim.args[0].name) == 1):
                continue  # (both names bound once: each one value wherever the sweep reads it)
            source = stmt.prim.args[0].name
            if stmt.prim.op == "copy":
                links[stmt.targets[0]] = (source, False)
            elif self.table.reverses_axes(stmt.prim.op) and ranks.get(source) == 2:
                links[stmt.targets[0]] = (source, True)
        return links, ranks

    def known_arrays(self) -> frozenset:
        """The names certainly holding a numpy array: of a known shape with an axis or more
        (code made for a call's shapes, or arrays made of literal lengths), not lists."""
        return frozenset(name for name, found in self.classes.items()
                         if isinstance(found, tuple) and found and name not in self.fn.lists)

    def index_numbers(self) -> frozenset:
        """The names certainly holding one number (an index's ints): known scalars, loop counters."""
        return frozenset(self.scalars) | counters(self.fn)

    def appends(self) -> dict:
        """Each ``list.append`` statement's target -> the list name it extends."""
        if self._appends is None:
            self._appends = {stmt.targets[0]: stmt.prim.args[0].name for stmt in flatten(self.fn.body)
                             if stmt.prim.op == "list.append" and len(stmt.targets) == 1
                             and isinstance(stmt.prim.args[0], Var)}
        return self._appends

    def append_backward(self, lines: list, stmt: Stmt, g: str) -> bool:
        """``lst_2 = lst + [item]``'s contributions from its adjoint list ``g`` in O(1): the last
        adjoint popped from ``g`` (the runtime's split_last), which is then ``lst``'s adjoint
        (growth.pop_in_place passes a copy where the sweep cannot show it owns ``g``). False
        where ``lst`` carries no derivative or ``item`` is a display (the rule's templates then)."""
        base, item = stmt.prim.args
        if not self.active(base.name) or isinstance(item, Seq):
            return False  # a display's items take their adjoints by the rule's templates
        last = self.namer.fresh(f"{stmt.targets[0]}_last_bar")
        held = base.name in self.adj.current
        rest = self.namer.fresh(f"{base.name}_rest_bar") if held else self.namer.adjoint(base.name)
        lines.append(Simple(cst.Assign(
            [cst.AssignTarget(cst.Tuple([cst.Element(cst.Name(rest)), cst.Element(cst.Name(last))],
                                        lpar=[], rpar=[]))],
            cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(POP_LAST)), [cst.Arg(cst.Name(g))]))))
        if held:
            self.adj.accumulate(lines, base.name, cst.Name(rest))
        else:
            self.adj.claim(base.name)
        if isinstance(item, Var) and self.active(item.name):
            self.adj.accumulate(lines, item.name, cst.Name(last))
        return True

    def setitem_backward(self, lines: list, stmt: Stmt, g: str) -> bool:
        """``x_2 = setitem(x, index, value)``'s contributions by its rule's templates, the value's
        first (``setitem_value_vjp``, a copy of the written part), then ``x``'s (``setitem(g, index,
        0.0)``), which writes_in_place makes a zeroing in place of ``g`` where nothing reads ``g``
        after it. False where ``x`` carries no derivative or ``value`` is a display."""
        prim = stmt.prim
        if len(prim.args) != 3 or prim.kwargs:
            return False
        base, index, value = prim.args
        if not isinstance(base, Var) or not self.active(base.name) or isinstance(value, Seq):
            return False
        g_node, index_node = cst.Name(g), operand_node(index)
        read = self.updates.get(stmt)
        if read is not None and isinstance(value, Var) and self.active(value.name):
            # x[I] += e: x's adjoint is g itself, the read's share of it left in place; the
            # value's is g[I], a view where both are arrays of the read's known shape (the
            # in-place writes into g wait until it is read: writes_in_place)
            known = self.classes.get(read)
            part = subscript(g_node, index_node, self.index_numbers()) \
                if isinstance(known, tuple) and self.classes.get(value.name) == known else None
            self.adj.accumulate(lines, value.name, part if part is not None else
                                _helper(SETITEM_VALUE_VJP, g_node, index_node, operand_node(value)))
            self.passed.add(read)
            self.adj.accumulate(lines, base.name, g_node)
            return True
        if isinstance(value, Var) and self.active(value.name):
            self.adj.accumulate(lines, value.name, self.written_part(base.name, index, value.name, g_node))
        self.adj.accumulate(lines, base.name, _helper(SETITEM, g_node, index_node, cst.Float("0.0")))
        return True

    def written_part(self, base: str, index, value: str, g_node: cst.Name) -> cst.BaseExpression:
        """The adjoint of the value ``x[index] = value`` writes, from the result's ``g``: a copy of
        ``g[index]`` (``g[1:-1].copy()``) where ``x`` certainly is a numpy array, the index is
        basic and ``value`` has the written part's known shape (no broadcasting, no position
        written twice); else ``setitem_value_vjp``, which finds out when the code runs."""
        written = part_shape(self.classes.get(base), index, self.index_numbers())
        held = self.classes.get(value)
        part = subscript(g_node, operand_node(index), self.index_numbers()) \
            if base in self.known_arrays() and written is not None and \
            (held == written or (held == SCALAR and written == ())) else None
        if part is None:
            return _helper(SETITEM_VALUE_VJP, g_node, operand_node(index), cst.Name(value))
        return cst.Call(cst.Attribute(part, cst.Name("copy")), [])

    def joined_backward(self, lines: list, stmt: Stmt, g: str) -> bool:
        """``np.concatenate([a, b, c])`` or ``np.stack([a, b])`` (axis 0) of names of known
        shapes (code made for a call's shapes): each item's adjoint is its part of the result's
        adjoint ``g``, a slice or a row of it (``g[1:-1]``, ``g[-1:]``, ``g[0]``), where the
        parts' bounds are literals or literals before the end (dims.split_points); False
        otherwise (the rule's helper splits by the items' recorded shapes)."""
        prim = stmt.prim
        if prim.kwargs or len(prim.args) != 1 or not isinstance(prim.args[0], Seq) or \
                stmt.targets[0] not in self.known_arrays():
            return False
        items = prim.args[0].items
        shapes = [self.classes.get(item.name) if isinstance(item, Var) else None for item in items]
        if not all(isinstance(shape, tuple) and shape and dims.known(shape) for shape in shapes):
            return False
        if self.rule_for(prim).result_shape is dims.stacked:
            parts = [f"{g}[{k}]" for k in range(len(items))]
        else:
            points = dims.split_points([shape[0] for shape in shapes], self.classes[stmt.targets[0]][0])
            if points is None:
                return False
            parts = [f"{g}[{'' if a is None else a}:{'' if b is None else b}]" for a, b in points]
        for item, part in zip(items, parts):
            if self.active(item.name):
                self.adj.accumulate(lines, item.name, cst.parse_expression(part))
        return True

    def returned_adjoints(self) -> list:
        """The code of each differentiated parameter's adjoint, as the backward returns it."""
        returns = []
        for name in self.wrt:
            if name in self.adj.current:
                adj = self.adj.current[name]
                returns.append(f"s2s.like({adj}, {name})" if self.top_level else adj)
            else:
                returns.append(f"s2s.zeros_like({name})" if self.top_level else "None")
        return returns

    def residual_names(self, backward: list, returns: list) -> tuple:
        """The names the backward reads that the forward sweep binds at its own level: the
        parameters, and the returned names (bound when the function returns, wherever a branch
        assigned them), can always be recorded at its end."""
        fn = self.fn
        visible = self.level_names(fn.body, frozenset(p.name for p in fn.params) |
                                   frozenset(operand_vars(fn.result)))
        return tuple(sorted((code_reads(backward) | code_reads(returns)) & visible))

    def params_code(self) -> str:
        parts = []
        kwonly_started = False
        for p in self.fn.params:
            if p.name in self.kwonly and not kwonly_started:
                parts.append("*")
                kwonly_started = True
            parts.append(f"{p.name}={_code(p.default)}" if p.default is not None else p.name)
        return ", ".join(parts)


def reverse(fn: CoreFunction, activity: Activity, table: RuleTable, *, wrt: tuple, has_aux: bool,
            top_level: bool, callee_lookup: CalleeLookup, fwd_name: str, bwd_name: str,
            kwonly: tuple = (), shapes: Optional[tuple] = None, final: bool = False) -> VjpFunction:
    """Build the forward and backward sweeps of ``fn``. ``shapes``: its (shape classes, known
    scalars) when the caller has them (analyze.shapes.shape_facts); ``final``: code no
    transformation reads again (made for a call's shapes)."""
    return ReverseBuilder(fn, activity, table, wrt, has_aux, top_level, callee_lookup,
                          fwd_name, bwd_name, kwonly, shapes, final).build()


# The index writes' primitives: the lowering's, and the runtime helpers' when generated code is read again.
_INDEX_WRITES = frozenset({"s2s." + SETITEM, "s2sgrad.runtime." + SETITEM, "s2sgrad.runtime." + SETITEM_INTO})


def _helper(name: str, *args: cst.BaseExpression) -> cst.Call:
    """``s2s.<name>(*args)``."""
    return cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(name)), [cst.Arg(a) for a in args])


def _display(items: list) -> cst.Tuple:
    """The tuple display of ``items`` (nodes)."""
    elements = [cst.Element(item) for item in items]
    if len(elements) == 1:
        elements = [cst.Element(items[0], comma=cst.Comma())]
    return cst.Tuple(elements, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

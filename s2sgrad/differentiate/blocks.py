"""Reverse mode of branches and loops: the forward sweep's records and the backward sweep's
replay (a mixin of ReverseBuilder, differentiate/reverse.py).

A branch records, per path, the values its backward path reads (``if1_saved``); a loop records
per iteration what its backward body reads (``loop1_tape``), or counts its iterations when
nothing is needed. A backward loop replays the records in reverse; while it runs, ``collecting``
gathers the contributions one pass after the loop adds at once (the per-step products of an
accumulator, the rows read at the loop counter). Uses the builder's ``adj`` (adjoints), ``rec``
(records), ``namer``, ``fn`` and its backward/forward code of blocks.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from ..lower.ir import (
    SUBSCRIPT,
    Const,
    If,
    Loop,
    Stmt,
    Var,
    defined_names,
    definition_counts,
    flatten,
    operand_node,
    operand_reads,
    operand_vars,
    prim_operands,
    reads_counter,
)
from ..program import Comment, ElseHeader, IfHeader, Nest, Restore, code_reads, has_statements, \
    unpack_target
from ..program import header as program_header
from .templates import instantiate
from .vjp_types import Collecting, StepSum


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
            names.update((stmt.tape, stmt.trips, stmt.saved))
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


class BlockSweeps:
    """Branches and loops in both sweeps (mixed into ReverseBuilder)."""

    def forward_if(self, node: If) -> list:
        then_names, else_names = self.if_records.get(node, ((), ()))
        then_code = self.forward_code(node.body)
        else_code = self.forward_code(node.orelse)
        if then_names or else_names:
            for names, code in ((then_names, then_code), (else_names, else_code)):
                items = ", ".join(self.rec.packed(n) for n in names) + ("," if len(names) == 1 else "")
                code.append(f"{node.saved} = ({items})")
        out = [Nest(IfHeader(cst.Name(node.test)), tuple(then_code))]
        if has_statements(else_code):
            out.append(Nest(ElseHeader(), tuple(else_code)))
        return out

    def forward_loop(self, loop: Loop) -> list:
        record = self.loop_records.get(loop)
        body = self.forward_code(loop.body)
        out: list = []
        kept = self.loop_saved.get(loop)
        if kept:
            out.append(f"{loop.saved} = ({', '.join(kept)}{',' if len(kept) == 1 else ''})")
        if record is not None:
            names, tape = record
            names = [n for n in names if n not in self.rec.unread.get(loop.tape, ())]
            if tape:
                out.append(f"{loop.tape} = []")
                # a value the loop carries into a name the tape records whole is recorded anyway
                carried = {c.prim.args[0].name for c in loop.carries if isinstance(c, Stmt) and
                           c.prim.op == "copy" and c.prim.args and isinstance(c.prim.args[0], Var)
                           and c.targets and c.targets[0] in names
                           and c.targets[0] not in self.rec.templates.get(loop.tape, ())}
                packed = [self.rec.taped(n, loop.tape, whole=n in carried) for n in names]
                # (no name the backward loop reads: one None a step, which it counts)
                item = "None" if not packed else packed[0] if len(packed) == 1 else "(" + ", ".join(packed) + ")"
                body.append(f"{loop.tape}.append({item})")
            else:
                out.append(f"{loop.trips} = 0")
                body.append(f"{loop.trips} += 1")
        carries = self.forward_code(loop.carries)
        body.extend(line for line in carries if not isinstance(line, Comment))
        out.append(Nest(loop.header, tuple(body)))
        return out

    def backward_if(self, node: If) -> list:
        lines: list = []
        self.adj.materialize_all(lines)
        return lines + self.backward_if_body(node)

    def backward_if_body(self, node: If) -> list:
        before = dict(self.adj.current)
        owned_before = set(self.adj.owned)
        then_code = self.backward_code(node.body)
        self.adj.materialize_all(then_code)
        then_state, then_owned = self.adj.current, self.adj.owned
        self.adj.current, self.adj.owned = dict(before), set(owned_before)
        else_code = self.backward_code(node.orelse)
        self.adj.materialize_all(else_code)
        else_state = self.adj.current
        self.adj.owned &= then_owned  # in place only where both paths made the array
        # Adjoints born inside the branches end there; one that flowed in (from uses after the
        # `if`) survives on a path that does not redefine its name.
        local = self.local_to((node.body, node.orelse)) - set(before)
        self.adj.current = self.merged_adjoints(local, (then_code, then_state), (else_code, else_state))
        then_names = tuple(sorted(code_reads(then_code) & self.level_names(node.body)))
        else_names = tuple(sorted(code_reads(else_code) & self.level_names(node.orelse)))
        if not (has_statements(then_code) or has_statements(else_code)):
            return []
        self.if_records[node] = (then_names, else_names)
        if then_names:
            then_code.insert(0, f"{unpack_target(then_names)} = {node.saved}")
        if else_names:
            else_code.insert(0, f"{unpack_target(else_names)} = {node.saved}")
        out = [Nest(IfHeader(cst.Name(node.test)), tuple(then_code))]
        if has_statements(else_code):
            out.append(Nest(ElseHeader(), tuple(else_code)))
        return out

    def merged_adjoints(self, local: set, *paths: tuple) -> dict:
        """The adjoints after a branch, from each path's ``(code, adjoints)``: one that differs
        between the paths is bound to the variable's own adjoint name at the end of each."""
        merged = {}
        states = [state for _, state in paths]
        moves: list = [[] for _ in paths]  # per path: (adjoint name, the name it takes or None)
        for var in sorted(set().union(*states) - local):
            held = {state.get(var) for state in states}
            if len(held) == 1:
                merged[var] = held.pop()
                continue
            name = self.namer.adjoint(var)
            for path_moves, state in zip(moves, states):
                if state.get(var) != name:
                    path_moves.append((var, name, state.get(var)))
            merged[var] = name
            self.adj.unstable.add(name)
            self.adj.owned.discard(name)
        for (code, _), path_moves in zip(paths, moves):
            code.extend(self.parallel_moves(path_moves))
        return merged

    def parallel_moves(self, moves: list) -> list:
        """Lines binding each ``(var, name, held)``'s adjoint ``name`` to ``held`` (zeros when
        None) as if all at once: a line runs before any line that rebinds the name it reads (one
        path may alias ``z``'s adjoint to ``a_bar`` while ``a_bar`` becomes zeros); a cycle reads
        a copy."""
        pending = list(moves)
        lines: list = []
        while pending:
            reads = {held for _, _, held in pending}
            free = [move for move in pending if move[1] not in reads]
            if not free:  # a cycle: keep one name's value before it is rebound
                var, name, _ = pending[0]
                kept = self.namer.fresh(f"{var}_bar_before")
                lines.append(f"{kept} = {name}")
                pending = [(v, n, kept if h == name else h) for v, n, h in pending]
                continue
            for var, name, held in free:
                lines.append(f"{name} = {held}" if held is not None else f"{name} = {self.adj.zeros(var)}")
            pending = [move for move in pending if move not in free]
        return lines

    def backward_loop(self, loop: Loop) -> list:
        """The backward loop replaying ``loop``'s records, with what it needs before and after."""
        inside = loop.body + loop.carries
        boundary, accumulators, carried, own = self.loop_boundary(loop)
        lines: list = []
        self.adj.materialize_all(lines)
        zero_lines = {}  # var -> the index in lines of its zeros (dropped when all is collected)
        for var in boundary:
            if not self.adj.has(var):
                zero_lines[var] = len(lines)
            self.adj.hold(lines, var, accumulator=var in accumulators)
        firsts = self.last_iteration_adjoints(lines, own)
        before = dict(self.adj.current)
        body_code, collecting = self.collected_body(loop, inside, boundary, accumulators)
        self.adj.materialize_all(body_code)
        for var in boundary:
            if var in firsts:
                self.adj.current[var] = self.namer.adjoint(var)  # set again at the top of the body
            else:
                self.adj.hold(body_code, var)
        body_code[:0] = [line for var in sorted(firsts) for line in firsts[var]]
        self.adj.current = {k: v for k, v in self.adj.current.items() if k in before}
        names, restore = self.loop_record(loop, inside, body_code, carried)
        after = [Restore(loop, restore, loop.saved)] if restore else []
        if not has_statements(body_code):
            return lines + after
        summed = self.after_loop_sums(lines, zero_lines, collecting, body_code)
        if names:
            target = names[0] if len(names) == 1 else unpack_target(names)
            header = program_header(f"for {target} in reversed({loop.tape}):")
        else:
            header = program_header(f"for {self.namer.discard()} in range({loop.trips}):")
        lines.append(Nest(header, tuple(body_code)))
        return lines + after + summed

    def loop_boundary(self, loop: Loop) -> tuple:
        """``(boundary, accumulators, carried, own)``: the active names whose adjoints cross
        iterations (of values read from outside the loop, of carried values, and of loop values
        read after the loop, whose adjoint only the last iteration gets), those only ever added
        to, the carried names, and the loop's own values read after it."""
        local = defined_names(loop.body) | set(loop.targets)
        carried = {s.targets[0] for s in loop.carries}
        reads = set()
        for stmt in flatten(loop.body + loop.carries):
            for op in prim_operands(stmt.prim):
                reads.update(operand_vars(op))
        escaping = {v for v in local if self.adj.has(v)}
        boundary = sorted(v for v in (reads - local) | carried | escaping if self.active(v))
        accumulators = (reads - local) - carried - escaping
        everywhere, inside_counts = definition_counts(self.fn.body), definition_counts(loop.body)
        params = {p.name for p in self.fn.params}
        own = [v for v in sorted(escaping & set(boundary))  # defined in this loop only
               if v not in params and
               everywhere.get(v, 0) == inside_counts.get(v, 0) + (v in loop.targets)]
        return boundary, accumulators, carried, own

    def collected_body(self, loop: Loop, inside: tuple, boundary: list, accumulators: set) -> tuple:
        """The backward body of ``loop``, and what it collected for one pass after the loop."""
        outer = self.collecting
        batchable = [v for v in boundary if v in accumulators and v not in self.fn.lists]
        counter = loop.counter()
        self.collecting = collecting = Collecting(
            batchable=frozenset(batchable),
            rows={v: self.namer.fresh(f"{v}_bar_rows") for v in batchable} if counter else {},
            counter=counter,
            statements=frozenset(id(s) for s in loop.body if isinstance(s, Stmt)),
            defined=frozenset(definition_counts(loop.body)))
        body_code = self.backward_code(inside)
        self.collecting = outer
        return body_code, collecting

    def loop_record(self, loop: Loop, inside: tuple, body_code: list, carried: set) -> tuple:
        """``(names, restore)``: what each iteration records for the backward body, and the
        carried names restored instead from a copy taken before the loop (the backward sweep of
        what precedes the loop reads their values from then)."""
        names = tuple(sorted(code_reads(body_code) & (self.level_names(inside) | set(loop.targets))))
        restore = tuple(sorted(carried - set(names)))
        if not has_statements(body_code):
            names = ()
        else:
            self.loop_records[loop] = (names, bool(names))
        self.loop_saved[loop] = restore
        return names, restore

    def after_loop_sums(self, lines: list, zero_lines: dict, collecting: Collecting,
                        body_code: list) -> list:
        """The lists a backward loop fills (started in ``lines``) and the one pass after it that
        adds them to their adjoints; an adjoint made of collected contributions alone starts
        from them (its zeros are dropped from ``lines``)."""
        summed: list = []
        dropped = set()
        for var in sorted(set(collecting.sums) | set(collecting.row_reader)):
            if var in zero_lines and self.namer.adjoint(var) not in code_reads(body_code):
                dropped.add(zero_lines[var])  # every contribution was collected
                self.adj.drop(var)
            step = collecting.sums.get(var)
            if step is not None:
                lines.extend([f"{step.upstreams} = []", f"{step.others} = []"])
                self.adj.accumulate(summed, var, instantiate(step.template, {
                    "gs": cst.Name(step.upstreams), "others": cst.Name(step.others),
                    step.param: cst.Name(var)}))
            if var in collecting.row_reader:
                rows = collecting.rows[var]
                lines.append(f"{rows} = []")
                self.adj.accumulate(summed, var, cst.parse_expression(
                    f"s2s.stack_rows({rows}, {self.rec.rows_shape_of(var)})"))
        lines[:] = [line for index, line in enumerate(lines) if index not in dropped]
        return summed

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
            firsts[var] = [f"{name} = {self.adj.zeros(var)} if {kept} is None else {kept}",
                           f"{kept} = None"]
            self.adj.owned.discard(name)
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
            self.loop_saved[item.loop] = kept
            if kept:
                out.append(Restore(item.loop, kept, item.saved))
        return out

    def level_names(self, body: tuple, extra: frozenset = frozenset()) -> set:
        """level_names, plus the residuals of callee calls made at that level and the shapes of
        the names bound there (or in ``extra``)."""
        callees = {self.callee_residuals[s] for s in body if isinstance(s, Stmt) and s in self.callee_residuals}
        names = level_names(body) | callees | set(extra)
        return names | self.rec.shapes_of(names)

    def row_shape(self, var: str) -> Optional[str]:
        collecting = self.collecting
        defs = self.rec.statements_defining.get(var, [])
        if collecting is None or not collecting.counter or len(defs) != 1 or \
                id(defs[0]) not in collecting.statements:
            return None
        prim = defs[0].prim
        if prim.op != SUBSCRIPT or len(prim.args) != 2 or \
                not isinstance(prim.args[0], Var) or not isinstance(prim.args[1], Const) or \
                not reads_counter(prim.args[1], collecting.counter):
            return None
        base = prim.args[0].name
        if base in collecting.defined or base in self.fn.lists or not self.rec.numpy_valued(base):
            return None
        return f"{self.shape_of(base)}[1:]"

    def collect_row(self, lines: list, stmt: Stmt, var: str, index, g: str) -> bool:
        """In a backward loop over ``range(n)`` or ``enumerate``, the adjoint of the row
        ``A[t]`` read once per iteration (a statement at the body's top level, indexed by the
        loop's own counter) is appended to a list; the rows are stacked once after the loop."""
        collecting = self.collecting
        rows = collecting.rows.get(var) if collecting else None
        if rows is None or not reads_counter(index, collecting.counter):
            return False
        if id(stmt) not in collecting.statements or self.adj.current.get(var) != self.namer.adjoint(var) \
                or stmt.targets[0] in self.adj.uniform:
            return False
        if collecting.row_reader.setdefault(var, id(stmt)) != id(stmt):
            return False  # one row per iteration: a second reader scatters instead
        lines.append(f"{rows}.append({g})")
        return True

    def batch(self, lines: list, var: str, rule, param: str, bound: dict, g: str) -> bool:
        """In a backward loop, a product's contribution to an accumulator ``var`` (passed for
        ``param``, the rule has a step sum for it) becomes two appends: the upstream and the
        other factor; one call after the loop adds them all (blocks.after_loop_sums)."""
        collecting = self.collecting
        template = dict(getattr(rule, "step_sums", ())).get(param)
        if collecting is None or template is None or var not in collecting.batchable or \
                self.adj.current.get(var) != self.namer.adjoint(var):
            return False
        others = [p for p in bound if p != param]
        if len(others) != 1 or not set(bound) <= set(rule.linear):
            return False  # only the two factors are passed
        step = collecting.sums.get(var)
        if step is None:
            side = "lefts" if rule.linear.index(param) == 1 else "rights"
            step = collecting.sums[var] = StepSum(template, param, self.namer.fresh(f"{var}_bar_upstreams"),
                                                  self.namer.fresh(f"{var}_bar_{side}"))
        elif (step.template, step.param) != (template, param):
            return False  # another product of it: added per iteration
        lines.append(f"{step.upstreams}.append({g})")
        lines.append(f"{step.others}.append({_code(operand_node(bound[others[0]]))})")
        return True

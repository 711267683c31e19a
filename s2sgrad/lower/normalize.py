"""Normalize: ParsedFunction -> CoreFunction (one primitive per statement, SSA names, origins).

Nested expressions are split into temporaries named after what they hold (``h_times_w``); the
outermost expression of a statement keeps the user's target name. A name assigned twice gets a new
version (``h``, ``h_2``) so the backward sweep can still read every value it needs. Parts that
cannot carry a derivative (shapes, comparisons, index expressions) stay verbatim.
"""

from __future__ import annotations

import cmath

import re

import types
from typing import Any, Optional

import libcst as cst
import libcst.matchers as m

from .. import runtime
from ..read.names import name_nodes
from ..read.parse import ParsedFunction
from .ir import Const, CoreFunction, If, Loop, Origin, Param, Prim, Seq, Stmt, Var, operand_node
from .naming import Namer

BINARY_OPS = {
    cst.Add: ("operator.add", "plus", "total"),
    cst.Subtract: ("operator.sub", "minus", "difference"),
    cst.Multiply: ("operator.mul", "times", "product"),
    cst.Divide: ("operator.truediv", "over", "ratio"),
    cst.FloorDivide: ("operator.floordiv", "floordiv", "quotient"),
    cst.Modulo: ("operator.mod", "mod", "remainder"),
    cst.Power: ("operator.pow", "pow", "power"),
    cst.MatrixMultiply: ("operator.matmul", "matmul", "matmul"),
}

UNARY_OPS = {
    cst.Minus: ("operator.neg", "neg"),
    cst.Plus: ("operator.pos", "pos"),
}

# Attributes of an array that carry no derivative; reading them is kept verbatim.
NONDIFF_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "itemsize", "nbytes", "strides"})

LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString,
            cst.FormattedString)


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _one_line(text: str) -> str:
    """A statement's text on one line (for a provenance comment): ``y = (a\n + b)`` -> ``y = (a + b)``."""
    text = " ".join(text.split())
    return re.sub(r" ([)\]}])", r"\1", re.sub(r"([(\[{]) ", r"\1", text))


class _OneLine(cst.CSTTransformer):
    """Line breaks (and comments) inside brackets become one space: a statement written over
    several lines stays valid once lowering drops its outer parentheses."""

    def leave_ParenthesizedWhitespace(self, original, updated) -> cst.BaseParenthesizableWhitespace:
        return cst.SimpleWhitespace(" ")


def one_line(node: cst.CSTNode) -> cst.CSTNode:
    """``node`` with the whitespace inside its brackets on one line."""
    return node.visit(_OneLine())


class _Renamer(_OneLine):
    """Renames local Names (not attribute fields, not keyword names) through ``mapping``."""

    def __init__(self, mapping: dict) -> None:
        self.mapping = mapping
        self.reads: list = []

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        new = self.mapping.get(original.value)
        if new is None:
            return updated
        if new not in self.reads:
            self.reads.append(new)
        return updated.with_changes(value=new)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)


class Lowering:
    """Lowers one function. Holds the per-function naming state; used once."""

    def __init__(self, pf: ParsedFunction, nondiff: frozenset) -> None:
        self.pf = pf
        self.nondiff = nondiff
        self.body: list = []
        self.env: dict = {}  # user name -> current SSA name
        self.origin: Optional[Origin] = None
        self.locals = _assigned_names(pf.node)
        self.globals_read: set = set()
        self.namer = Namer(_all_names(pf.node))
        self.temps: set = set()
        self.if_count = 0
        self.loop_count = 0
        self.lists: set = set()  # names known to hold Python lists or tuples
        self.inplace: list = []  # (new name, updated name, Location): see CoreFunction.inplace
        self.user_names: dict = {}  # SSA name -> the user's name it versions

    # ----- names -------------------------------------------------------------------------------

    def callee_name(self, func: cst.BaseExpression) -> Optional[str]:
        """The dotted name a call target resolves to, statically or from the live function."""
        name = self.pf.qualified_name(func)
        if name is not None and "<locals>" not in name:
            return name
        live = self.pf.unit.live
        text = _code(func)
        if live is not None:
            value = _live_lookup(live, text)
            if value is not None:
                return _object_name(value) or text
        return name or text

    # ----- statements ----------------------------------------------------------------------------

    def emit(self, targets: tuple, expr: cst.BaseExpression, prim: Prim, unpack: bool = False) -> None:
        assert self.origin is not None
        self.body.append(Stmt(targets, one_line(expr), prim, self.origin, unpack))

    def bind(self, user_name: str) -> str:
        """A fresh SSA version for an assignment to ``user_name``."""
        name = self.namer.fresh(user_name) if user_name in self.env else user_name
        if name == user_name:
            self.namer.reserve(name)
        self.env[user_name] = name
        self.user_names[name] = user_name
        return name

    def lower(self) -> CoreFunction:
        node = self.pf.node
        params = []
        for p in list(node.params.params) + list(node.params.kwonly_params):
            default = self.default_of(p)
            params.append(Param(p.name.value, default))
            self.env[p.name.value] = p.name.value
            self.namer.reserve(p.name.value)
            if default is not None:
                self.globals_read.update(read_names(default))
        statements = _statements(node.body)
        result = None
        result_origin = None
        for i, stmt in enumerate(statements):
            if m.matches(stmt, m.Return()):
                self.origin = self.origin_of(stmt)
                result = self.lower_return(stmt)
                result_origin = self.origin
                continue
            self.lower_any(stmt, is_first=(i == 0))
        if result is None:
            raise self.pf.error(node, f"{node.name.value} does not return a value",
                                "end the function with `return <value>`")
        return CoreFunction(
            name=node.name.value,
            qualname=node.name.value,
            params=tuple(params),
            body=tuple(self.body),
            result=result,
            result_origin=result_origin,
            reserved=self.namer.used(),
            globals_read=tuple(sorted(self.globals_read)),
            path=self.pf.unit.path,
            module=self.pf.unit.module,
            lists=frozenset(self.lists),
            inplace=tuple(self.inplace),
            user_names=dict(self.user_names),
        )

    def default_of(self, param: cst.Param) -> Optional[cst.BaseExpression]:
        """A parameter's default as code: as written, or, when it reads a name the function
        cannot see when it runs (``num=num`` in a closure factory), the value it had."""
        live = self.pf.unit.live
        if param.default is None or live is None or all(n in live for n in read_names(param.default)):
            return param.default
        value = self.pf.unit.defaults.get(param.name.value)
        if isinstance(value, (bool, int, float, complex, str, type(None))) and \
                not (isinstance(value, (float, complex)) and not cmath.isfinite(value)):
            return cst.parse_expression(repr(value))
        raise self.pf.error(param.default, f"the default of `{param.name.value}` reads names from "
                            "the enclosing function, and its value is not a number or string",
                            "pass the value as an argument, or read it from the closure in the body")

    def origin_of(self, stmt: cst.CSTNode) -> Origin:
        text = _one_line(_code(one_line(stmt)).strip())  # comments inside brackets left out
        return Origin(text, self.pf.location(stmt))

    def lower_any(self, stmt: cst.CSTNode, is_first: bool = False) -> None:
        """Lower one statement (simple or compound) into ``self.body``."""
        if isinstance(stmt, cst.If):
            self.lower_if(stmt)
        elif isinstance(stmt, cst.For):
            self.lower_for(stmt)
        elif isinstance(stmt, cst.While):
            self.lower_while(stmt)
        else:
            self.origin = self.origin_of(stmt)
            self.lower_statement(stmt, is_first)

    def lower_block(self, statements: list, prologue: tuple = (), start=None) -> tuple:
        """Lower ``statements`` into a new block (``prologue`` statements first, then what
        ``start()`` emits)."""
        saved_body, saved_origin = self.body, self.origin
        self.body = list(prologue)
        if start is not None:
            start()
        for stmt in statements:
            self.lower_any(stmt)
        block = tuple(self.body)
        self.body, self.origin = saved_body, saved_origin
        return block

    def header_origin(self, text: str, node: cst.CSTNode) -> Origin:
        return Origin(_one_line(text), self.pf.location(node))

    def condition(self, test: cst.BaseExpression, name: str) -> str:
        """The name holding the value of a branch condition (recorded for the backward sweep)."""
        if isinstance(test, cst.Name) and test.value in self.env:
            return self.env[test.value]
        if not (self.is_nondiff(test) or self.is_constant(test)):
            held = self.operand(test)
            if isinstance(held, Var):
                return held.name
            test = held.node
        expr, _ = self.verbatim(test)
        target = self.namer.fresh(name)
        self.emit((target,), expr, Prim("nondiff", (), location=self.pf.location(test)))
        return target

    def join(self, before: dict, branches: list) -> list:
        """Join the environments at the end of alternative blocks: for every name a branch
        assigned, a join name and, per branch, the copy into it. Returns the copies per branch.

        A name first bound in some branches only keeps its name, and the other branches bind it
        to None, so that every later statement (and the backward sweep) can name it safely."""
        names = sorted({k for env in branches for k, v in env.items() if before.get(k) != v})
        copies: list = [[] for _ in branches]
        joined = dict(before)
        for name in names:
            versions = [env.get(name) for env in branches]
            distinct = sorted({v for v in versions if v is not None})
            if name not in before and len(distinct) == 1:
                target = distinct[0]
            elif len(distinct) == 1 and None not in versions:
                joined[name] = distinct[0]
                continue
            else:
                target = self.namer.fresh(name)
            self.user_names[target] = name
            for env, out in zip(branches, copies):
                source = env.get(name)
                if source == target:
                    continue
                if source is None:  # unbound on this path: None stands in
                    none = cst.Name("None")
                    out.append(Stmt((target,), none, Prim("copy", (Const(none, "None"),)),
                                    self.origin))
                    continue
                out.append(Stmt((target,), cst.Name(source), Prim("copy", (Var(source),)),
                                self.origin))
                if source in self.lists:
                    self.lists.add(target)
            joined[name] = target
        self.env = joined
        return copies

    def lower_if(self, node: cst.If, keyword: str = "if") -> None:
        self.if_count += 1
        n = self.if_count
        origin = self.header_origin(f"{keyword} {_code(node.test)}:", node)
        self.origin = origin
        test = self.condition(node.test, f"cond{n}")
        saved = self.namer.fresh(f"if{n}_saved")
        before = dict(self.env)
        body = self.lower_block(_statements(node.body))
        env_then = self.env
        self.env = dict(before)
        if isinstance(node.orelse, cst.If):
            saved_body = self.body
            self.body = []
            self.lower_if(node.orelse, keyword="elif")
            orelse = tuple(self.body)
            self.body = saved_body
        elif node.orelse is not None:
            orelse = self.lower_block(_statements(node.orelse.body))
        else:
            orelse = ()
        env_else = self.env
        self.env = before
        self.origin = origin
        then_copies, else_copies = self.join(before, [env_then, env_else])
        self.body.append(If(test, body + tuple(then_copies), orelse + tuple(else_copies), saved,
                            origin))

    def bind_conditional_locals(self, body: cst.BaseSuite) -> None:
        """Bind to None, before a loop, each new name its body assigns only inside a nested block:
        an iteration that skips the assignment must see the previous iteration's value, so the
        name is carried around the loop like any other."""
        names = set()
        for stmt in _statements(body):
            if isinstance(stmt, (cst.If, cst.For, cst.While)):
                names |= _targets_in(stmt)
        for name in sorted(names - set(self.env)):
            none = cst.Name("None")
            self.emit((self.bind(name),), none, Prim("copy", (Const(none, "None"),)))

    def loop_carries(self, before: dict, origin: Origin) -> tuple:
        """Copies that hand a loop's new values of pre-existing names to the next iteration."""
        carries = []
        for name in sorted(k for k in before if self.env.get(k) != before[k]):
            carries.append(Stmt((before[name],), cst.Name(self.env[name]),
                                Prim("copy", (Var(self.env[name]),)), origin))
            if self.env[name] in self.lists:
                self.lists.add(before[name])
            self.env[name] = before[name]
        return tuple(carries)

    def lower_while(self, node: cst.While) -> None:
        self.loop_count += 1
        n = self.loop_count
        origin = self.header_origin(f"while {_code(node.test)}:", node)
        self.origin = origin
        if not (self.is_nondiff(node.test) or self.is_constant(node.test)
                or isinstance(node.test, cst.Name)):
            raise self.pf.error(node.test, "a while condition must be a comparison or a name",
                                "compare explicitly, e.g. `while np.sum(x) > tol:`")
        test, _ = self.verbatim(node.test)
        tape = self.namer.fresh(f"loop{n}_tape")
        self.bind_conditional_locals(node.body)
        before = dict(self.env)
        body = self.lower_block(_statements(node.body))
        self.origin = origin
        carries = self.loop_carries(before, origin)
        self.body.append(Loop(f"while {_code(test)}:", (), body, carries, tape, origin,
                              self.namer.fresh(f"loop{n}_trips"), self.namer.fresh(f"loop{n}_entry")))
        if node.orelse is not None:
            for stmt in _statements(node.orelse.body):
                self.lower_any(stmt)

    def lower_for(self, node: cst.For) -> None:
        self.loop_count += 1
        n = self.loop_count
        origin = self.header_origin(f"for {_code(node.target)} in {_code(node.iter)}:", node)
        self.origin = origin
        tape = self.namer.fresh(f"loop{n}_tape")
        self.bind_conditional_locals(node.body)
        index_name, start, elem_target, seq_node = self.loop_parts(node)
        before = dict(self.env)
        if index_name is None and (self.is_nondiff(node.iter) or self.is_constant(node.iter)):
            iter_code, _ = self.verbatim(node.iter)
            targets = tuple(self.bind(n_.value) for n_ in m.findall(node.target, m.Name()))
            target_code = _code(node.target.visit(_Renamer(self.env)))
            header = f"for {target_code} in {_code(iter_code)}:"
            body = self.lower_block(_statements(node.body))
        else:
            header, targets, body = self.lower_sequence_loop(node, n, index_name, start,
                                                             elem_target, seq_node)
        self.origin = origin
        carries = self.loop_carries(before, origin)
        self.body.append(Loop(header, targets, body, carries, tape, origin,
                              self.namer.fresh(f"loop{n}_trips"), self.namer.fresh(f"loop{n}_entry")))
        if node.orelse is not None:
            for stmt in _statements(node.orelse.body):
                self.lower_any(stmt)

    def loop_parts(self, node: cst.For) -> tuple:
        """``(index name, start, element target, sequence)`` of a for header: the index and its
        start come from ``enumerate(seq[, start])`` unpacked into two targets, else None."""
        it = node.iter
        if m.matches(it, m.Call(func=m.Name("enumerate"))) and 1 <= len(it.args) <= 2 and \
                m.matches(node.target, m.Tuple(elements=[m.Element(m.Name()), m.DoNotCare()])):
            seq_arg = it.args[0]
            start = it.args[1].value if len(it.args) == 2 else None
            if seq_arg.keyword is not None or (len(it.args) == 2 and it.args[1].keyword not in
                                               (None,) and it.args[1].keyword.value != "start"):
                raise self.pf.error(it, "enumerate() takes a sequence and an optional start here",
                                    "write `for i, x in enumerate(xs, start):`")
            return node.target.elements[0].value.value, start, node.target.elements[1].value, \
                seq_arg.value
        return None, None, node.target, it

    def loop_sequences(self, node: cst.For, elem_target, seq_node) -> tuple:
        """The sequences a loop walks (several for ``zip``) and one target per sequence."""
        if m.matches(seq_node, m.Call(func=m.Name("zip"))):
            if any(a.keyword is not None or a.star for a in seq_node.args):
                raise self.pf.error(seq_node, "zip() with keywords or starred sequences is not supported",
                                    "list the sequences: `zip(xs, ys)`")
            seqs = [self.operand(a.value) for a in seq_node.args]
            elems = [e.value for e in elem_target.elements] if isinstance(
                elem_target, (cst.Tuple, cst.List)) else None
            if elems is None or len(elems) != len(seqs):
                raise self.pf.error(node.target, "unpack zip() into one name per sequence",
                                    "write `for a, b in zip(xs, ys):`")
            return seqs, elems
        return [self.operand(seq_node)], [elem_target]

    def lower_sequence_loop(self, node, n, index_name, start, elem_target, seq_node) -> tuple:
        """A loop over sequences as ``for index, elems in enumerate(seq):``, each element bound
        by an implicit read ``seq[index]``; a tuple element is unpacked at the top of the body."""
        seqs, elems = self.loop_sequences(node, elem_target, seq_node)
        for e in elems:
            if not (isinstance(e, cst.Name) or m.matches(e, m.Tuple() | m.List()) and all(
                    isinstance(x.value, cst.Name) for x in e.elements)):
                raise self.pf.error(e, "loop targets must be names or tuples of names",
                                    "unpack inside the loop body instead")
        index = self.bind(index_name) if index_name and start is None \
            else self.namer.fresh(f"loop{n}_index")
        prologue, names, unpacks = [], [], []
        for seq, e in zip(seqs, elems):
            name = self.bind(e.value) if isinstance(e, cst.Name) else self.namer.fresh(f"loop{n}_item")
            names.append(name)
            if not isinstance(e, cst.Name):
                unpacks.append((e, name))
            prologue.append(self.loop_item(seq, index, name))
        seq_code = _code(self.operand_node(seqs[0])) if len(seqs) == 1 else \
            "zip(" + ", ".join(_code(self.operand_node(q)) for q in seqs) + ")"
        elem_code = names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"
        header = f"for {index}, {elem_code} in enumerate({seq_code}):"
        body = self.lower_block(_statements(node.body), tuple(prologue),
                                lambda: self.loop_unpacks(index_name, start, index, unpacks))
        return header, (index, *names), body

    def loop_item(self, seq: Any, index: str, name: str) -> Stmt:
        """The implicit ``name = seq[index]`` a loop header binds."""
        index_const = Const(cst.Name(index), index, (index,), f"[{index}]", True)
        expr = cst.Subscript(self.operand_node(seq), [cst.SubscriptElement(cst.Index(cst.Name(index)))])
        item_op = "list.getitem" if (isinstance(seq, Var) and seq.name in self.lists) or \
            isinstance(seq, Seq) else "operator.getitem"
        return Stmt((name,), expr, Prim(item_op, (seq, index_const), location=self.origin.location),
                    self.origin, implicit=True)

    def loop_unpacks(self, index_name, start, index: str, unpacks: list) -> None:
        """Statements at the top of a loop body: the user's counter when ``enumerate`` has a
        start, and the unpacking of tuple elements."""
        if index_name and start is not None:
            expr = cst.BinaryOperation(cst.Name(index), cst.Add(), self.verbatim(start)[0])
            self.emit((self.bind(index_name),), expr, Prim("nondiff", (), location=self.origin.location))
        for target, name in unpacks:
            self.assign(target, cst.Name(name), source=Var(name))

    def lower_return(self, stmt: cst.Return) -> Any:
        if stmt.value is None:
            raise self.pf.error(stmt, "a differentiated function must return a value",
                                "return the value to differentiate")
        return self.operand(stmt.value, target=self.pf.node.name.value)

    def lower_statement(self, stmt: cst.BaseSmallStatement, is_first: bool) -> None:
        if isinstance(stmt, cst.Pass):
            return
        if isinstance(stmt, cst.Expr):
            if is_first and isinstance(stmt.value, (cst.SimpleString, cst.ConcatenatedString)):
                return  # docstring
            value = stmt.value
            if m.matches(value, m.Call(func=m.Attribute(value=m.Name()))) and \
                    value.func.value.value in self.env:
                owner, method = value.func.value.value, value.func.attr.value
                if method == "append" and len(value.args) == 1 and value.args[0].keyword is None:
                    self.lower_append(owner, value.args[0].value, stmt)
                    return
                raise self.pf.error(value, f"the in-place method `.{method}()` on `{owner}` is not "
                                    "supported in a differentiated function",
                                    f"assign a new value instead: `{owner} = ...`")
            expr, reads = self.verbatim(stmt.value)
            self.emit((), expr, Prim("nondiff", (), location=self.pf.location(stmt)))
            return
        if isinstance(stmt, cst.Assert):
            return  # checks on values do not change the gradient; the forward call keeps them
        if isinstance(stmt, cst.AugAssign):
            target = stmt.target
            op_type = type(stmt.operator).__name__.replace("Assign", "")
            binop = cst.BinaryOperation(left=target, operator=getattr(cst, op_type)(),
                                        right=stmt.value)
            before = self.env.get(target.value) if isinstance(target, cst.Name) else None
            self.assign(target, binop)
            if before is not None and self.env.get(target.value) != before:
                self.inplace.append((self.env[target.value], before, self.pf.location(stmt)))
            return
        if isinstance(stmt, cst.AnnAssign):
            self.assign(stmt.target, stmt.value)
            return
        if isinstance(stmt, cst.Assign):
            value_node = stmt.value
            first, *rest = [t.target for t in stmt.targets]
            self.assign(first, value_node)
            for other in rest:
                self.assign(other, first)
            return
        raise self.pf.error(stmt, f"unsupported statement: {_one_line(_code(stmt))}")

    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression, source: Any = None) -> None:
        """``target = value``; ``source`` is ``value`` already lowered, when it is."""
        if isinstance(target, cst.Name):
            op = self.operand(value, target=target.value)
            if isinstance(op, Var) and op.name == self.env.get(target.value):
                return  # the value was already written to the target (or `x = x`)
            self.copy_to(target.value, op)
            return
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) \
                and target.value.value in self.env:
            base = Var(self.env[target.value.value])
            held = self.operand(value)
            _, index = self.index(target)
            name = self.bind(target.value.value)
            self.inplace.append((name, base.name, self.pf.location(target)))
            call = cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name("setitem")),
                            [cst.Arg(cst.Name(base.name)), cst.Arg(index.node),
                             cst.Arg(self.operand_node(held))])
            self.emit((name,), call, Prim("s2s.setitem", (base, index, held),
                                          location=self.pf.location(target)))
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(elements):
                ops = [self.operand(e.value) for e in value.elements]
                for el, op in zip(elements, ops):
                    self.copy_to(el.value, op)
                return
            if isinstance(value, cst.Call) and not self.is_nondiff(value) and \
                    all(isinstance(e, cst.Name) for e in elements):
                self.lower_call(value, None, unpack_to=tuple(e.value for e in elements))
                return
            source = self.operand(value) if source is None else source
            op = "list.getitem" if isinstance(source, Var) and source.name in self.lists \
                else "operator.getitem"
            for i, el in enumerate(elements):
                index = cst.Integer(str(i))
                name = self.bind(el.value)
                expr = self.subscript_expr(source, index)
                self.emit((name,), expr, Prim(op, (source, Const(index, str(i))),
                                              location=self.pf.location(el)))
            return
        if isinstance(target, cst.Subscript):
            raise self.pf.error(target, "only a local array can be written by index (`y[i] = ...`)",
                                "copy it into a local name first: `y = y.copy(); y[i] = ...`")
        raise self.pf.error(target, "only names and tuples of names can be assigned here",
                            "assign to a new name instead")

    def lower_append(self, owner: str, item_node: cst.BaseExpression, stmt: cst.CSTNode) -> None:
        """``lst.append(v)`` as ``lst_2 = lst + [v]``: a new list, so every version stays intact."""
        base = Var(self.env[owner])
        item = self.operand(item_node)
        name = self.bind(owner)
        self.inplace.append((name, base.name, self.pf.location(stmt)))
        expr = cst.BinaryOperation(cst.Name(base.name), cst.Add(),
                                   cst.List([cst.Element(self.operand_node(item))]))
        self.emit((name,), expr, Prim("list.append", (base, item), location=self.pf.location(stmt)))
        self.lists.add(name)

    def copy_to(self, user_name: str, op: Any) -> None:
        """``user_name = op`` where ``op`` is an already-lowered operand."""
        if isinstance(op, Var) and self.body and isinstance(self.body[-1], Stmt) \
                and op.name in self.body[-1].targets \
                and self._is_temp(op.name) and len(self.body[-1].targets) == 1:
            # Rename the temporary that holds the value to the user's name.
            last = self.body.pop()
            name = self.bind(user_name)
            self.body.append(Stmt((name,), last.expr, last.prim, last.origin, last.unpack))
            return
        name = self.bind(user_name)
        self.emit((name,), self.operand_node(op), Prim("copy", (op,), location=self.origin.location))
        if isinstance(op, Seq) or (isinstance(op, Var) and op.name in self.lists):
            self.lists.add(name)

    def _is_temp(self, name: str) -> bool:
        return name in self.temps

    # ----- expressions ---------------------------------------------------------------------------

    def verbatim(self, node: cst.BaseExpression) -> tuple:
        """``node`` with locals renamed to their SSA names, and the names it reads."""
        renamer = _Renamer({k: v for k, v in self.env.items()})
        new = node.visit(renamer)
        for name in read_names(node):
            if name not in self.env and name not in self.locals:
                self.globals_read.add(name)
        return new, tuple(renamer.reads)

    def is_constant(self, node: cst.BaseExpression) -> bool:
        """A literal, a global name, a module attribute, or a display of those."""
        if isinstance(node, LITERALS):
            return True
        if isinstance(node, cst.Name):
            return node.value not in self.locals
        if isinstance(node, cst.Attribute):
            return self.is_constant(node.value)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
            return isinstance(node.expression, LITERALS) or self.is_constant(node.expression)
        if isinstance(node, (cst.Tuple, cst.List)):
            return all(self.is_constant(e.value) for e in node.elements
                       if not isinstance(e, cst.StarredElement))
        return False

    def is_nondiff(self, node: cst.BaseExpression) -> bool:
        """An expression whose value carries no derivative: kept verbatim as one statement."""
        if isinstance(node, (cst.Comparison, cst.BooleanOperation)):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Not, cst.BitInvert)):
            return True
        if isinstance(node, cst.Attribute) and node.attr.value in NONDIFF_ATTRIBUTES \
                and not self.is_constant(node.value):
            return True
        if isinstance(node, cst.Subscript):
            return self.is_nondiff(node.value)
        if isinstance(node, cst.Call):
            if isinstance(node.func, cst.Attribute) and not self.is_constant(node.func.value):
                return f"ndarray.{node.func.attr.value}" in self.nondiff
            return self.callee_name(node.func) in self.nondiff
        return False

    def operand(self, node: cst.BaseExpression, target: Optional[str] = None) -> Any:
        """Lower ``node`` to an operand, emitting statements for its parts."""
        if isinstance(node, cst.Name) and node.value in self.locals:
            if node.value not in self.env:
                raise self.pf.error(node, f"`{node.value}` is read before it is assigned")
            return Var(self.env[node.value])
        if self.is_constant(node):
            new, reads = self.verbatim(node)
            return Const(new, _code(new), reads)
        if isinstance(node, (cst.Tuple, cst.List)):
            kind = "tuple" if isinstance(node, cst.Tuple) else "list"
            items = []
            for el in node.elements:
                if isinstance(el, cst.StarredElement):
                    raise self.pf.error(el, "starred elements are not supported",
                                        "list the elements explicitly")
                items.append(self.operand(el.value))
            return Seq(kind, tuple(items))
        name = None
        if self.is_nondiff(node):
            expr, reads = self.verbatim(node)
            name = self.new_target(target, _describe_verbatim(expr), "value")
            self.emit((name,), expr, Prim("nondiff", (), location=self.pf.location(node)))
            return Var(name)
        if isinstance(node, cst.BinaryOperation):
            op, word, fallback = BINARY_OPS[type(node.operator)]
            left = self.operand(node.left)
            right = self.operand(node.right)
            expr = node.with_changes(left=self.operand_node(left), right=self.operand_node(right),
                                     lpar=[], rpar=[])
            if isinstance(left, Const) and not isinstance(right, Const) and \
                    op in ("operator.mul", "operator.add"):
                desc = f"{_short(right)}_{word}_{_short(left)}"
            else:
                desc = f"{_short(left)}_{word}_{_short(right)}"
            return self.emit_prim(target, desc, fallback, expr, Prim(op, (left, right),
                                  location=self.pf.location(node)))
        if isinstance(node, cst.UnaryOperation) and type(node.operator) in UNARY_OPS:
            op, word = UNARY_OPS[type(node.operator)]
            inner = self.operand(node.expression)
            expr = node.with_changes(expression=self.operand_node(inner), lpar=[], rpar=[])
            return self.emit_prim(target, f"{word}_{_short(inner)}", word, expr,
                                  Prim(op, (inner,), location=self.pf.location(node)))
        if isinstance(node, cst.Call):
            return self.lower_call(node, target)
        if isinstance(node, cst.IfExp):
            return self.lower_ifexp(node, target)
        if isinstance(node, cst.Attribute):
            value = self.operand(node.value)
            expr = node.with_changes(value=self.operand_node(value), lpar=[], rpar=[])
            attr = node.attr.value
            return self.emit_prim(target, f"{_short(value)}_{attr}", attr, expr,
                                  Prim(f"ndarray.{attr}", (value,), location=self.pf.location(node)))
        if isinstance(node, cst.Subscript):
            value = self.operand(node.value)
            index_node, index = self.index(node)
            expr = self.subscript_expr(value, index_node)
            desc = f"{_short(value)}_{_describe_slice(index_node)}"
            if isinstance(value, Var) and isinstance(index.node, (cst.SimpleString, cst.ConcatenatedString)):
                self.lists.add(value.name)  # indexed by a string key: a dict
            op = "list.getitem" if isinstance(value, Var) and value.name in self.lists \
                else "operator.getitem"
            return self.emit_prim(target, desc, "item", expr,
                                  Prim(op, (value, index), location=self.pf.location(node)))
        raise self.pf.error(node, f"unsupported expression: {_one_line(_code(node))}",
                            "rewrite it with supported operations (see the README)")

    def lower_ifexp(self, node: cst.IfExp, target: Optional[str]) -> Var:
        """``a if c else b`` as a branch whose arms write one join name."""
        self.if_count += 1
        n = self.if_count
        test = self.condition(node.test, f"cond{n}")
        saved = self.namer.fresh(f"if{n}_saved")
        before = dict(self.env)
        arms = []
        for expr in (node.body, node.orelse):
            self.env = dict(before)
            saved_body = self.body
            self.body = []
            op = self.operand(expr)
            arms.append((tuple(self.body), op))
            self.body = saved_body
        self.env = before
        name = self.new_target(target, f"{_short(arms[0][1])}_or_{_short(arms[1][1])}", "choice")
        blocks = [block + (Stmt((name,), self.operand_node(op), Prim("copy", (op,)), self.origin),)
                  for block, op in arms]
        self.body.append(If(test, blocks[0], blocks[1], saved, self.origin))
        return Var(name)

    def index(self, node: cst.Subscript) -> tuple:
        """The index of a subscript as one verbatim Const; complex parts are hoisted first."""
        elements = []
        for el in node.slice:
            inner = el.slice
            if isinstance(inner, cst.Index) and not self._simple_index(inner.value):
                held = self.operand(inner.value)
                inner = inner.with_changes(value=self.operand_node(held))
            elif isinstance(inner, cst.Slice):
                parts = {}
                for field_name in ("lower", "upper", "step"):
                    part = getattr(inner, field_name)
                    if part is not None and not self._simple_index(part):
                        parts[field_name] = self.operand_node(self.operand(part))
                if parts:
                    inner = inner.with_changes(**parts)
            elements.append(el.with_changes(slice=inner))
        index_sub = node.with_changes(slice=elements)
        renamed, reads = self.verbatim(index_sub)
        if len(renamed.slice) == 1 and isinstance(renamed.slice[0].slice, cst.Index):
            index_node = renamed.slice[0].slice.value
        else:
            index_node = cst.Tuple([cst.Element(_slice_to_expr(e.slice)) for e in renamed.slice])
        brackets = _code(renamed)[len(_code(renamed.value)):]
        basic = all(_basic_element(e.slice) for e in renamed.slice)
        return renamed, Const(index_node, _code(index_node), reads, brackets, basic)

    def _simple_index(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, (cst.Name, cst.Integer)) or self.is_constant(node):
            return True
        if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Name)):
            return True
        if isinstance(node, cst.BinaryOperation):
            return self._simple_index(node.left) and self._simple_index(node.right) and \
                not isinstance(node.operator, cst.MatrixMultiply)
        return False

    def subscript_expr(self, value: Any, index: Any) -> cst.BaseExpression:
        if isinstance(index, cst.Subscript):
            return index.with_changes(value=self.operand_node(value), lpar=[], rpar=[])
        return cst.Subscript(self.operand_node(value), [cst.SubscriptElement(cst.Index(index))])

    def lower_call(self, node: cst.Call, target: Optional[str], unpack_to: tuple = ()) -> Var:
        args = []
        kwargs = []
        new_args = []
        for a in node.args:
            if a.star:
                raise self.pf.error(a, "star-arguments (*args, **kwargs) are not supported",
                                    "pass the arguments one by one")
            op = self.operand(a.value)
            new_args.append(a.with_changes(value=self.operand_node(op)))
            if a.keyword is None:
                args.append(op)
            else:
                kwargs.append((a.keyword.value, op))
        func = node.func
        if isinstance(func, cst.Attribute) and not self.is_constant(func.value):
            owner = self.operand(func.value)
            method = func.attr.value
            func_new = func.with_changes(value=self.operand_node(owner))
            expr = node.with_changes(func=func_new, args=new_args, lpar=[], rpar=[])
            desc = f"{_short(owner)}_{method}"
            return self.emit_prim(target, desc, method, expr,
                                  Prim(f"ndarray.{method}", (owner, *args), tuple(kwargs),
                                       location=self.pf.location(node)))
        callee = self.callee_name(func)
        func_new, _ = self.verbatim(func)
        expr = node.with_changes(func=func_new, args=new_args, lpar=[], rpar=[])
        short_fn = callee.rsplit(".", 1)[-1]
        first = _short(args[0]) if args else ""
        desc = f"{short_fn}_{first}" if first else short_fn
        prim = Prim(callee, tuple(args), tuple(kwargs), location=self.pf.location(node),
                    callee=_code(func))
        if unpack_to:
            names = tuple(self.bind(n) for n in unpack_to)
            self.emit(names, expr, prim, unpack=True)
            return Var(names[0])
        return self.emit_prim(target, desc, short_fn, expr, prim)

    def new_target(self, target: Optional[str], desc: str, fallback: str) -> str:
        if target is not None:
            return self.bind(target)
        name = self.namer.temp(desc, fallback)
        self.temps.add(name)
        return name

    def emit_prim(self, target, desc, fallback, expr, prim) -> Var:
        name = self.new_target(target, desc, fallback)
        self.emit((name,), expr, prim)
        return Var(name)

    def operand_node(self, op: Any) -> cst.BaseExpression:
        return operand_node(op)


def read_names(node: cst.CSTNode) -> list:
    """Names ``node`` reads, in order: not attribute fields (``np.exp``'s ``exp``), not keywords."""
    return [n.value for n in name_nodes(node, reads_only=True)]


def _literal_int(node) -> bool:
    if isinstance(node, cst.Integer):
        return True
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
        and isinstance(node.expression, cst.Integer)


def _basic_element(element: cst.BaseSlice) -> bool:
    """An index part that can only select (never gather): an integer literal, a slice, None, ..."""
    if isinstance(element, cst.Slice):
        return True  # slice bounds can only be integers (or None)
    value = element.value
    return _literal_int(value) or m.matches(value, m.Name("None") | m.Ellipsis())


def _slice_to_expr(inner: cst.BaseSlice) -> cst.BaseExpression:
    if isinstance(inner, cst.Index):
        return inner.value
    none = cst.Name("None")
    return cst.Call(cst.Name("slice"), [cst.Arg(inner.lower or none), cst.Arg(inner.upper or none),
                                        cst.Arg(inner.step or none)])


def _describe_slice(sub: cst.Subscript) -> str:
    parts = []
    for el in sub.slice:
        text = _code(el.slice).replace(" ", "")
        parts.append(text.replace(":", "_").replace("-", "neg") or "all")
    return "_".join(parts)


def _short(op: Any) -> str:
    if isinstance(op, Var):
        return op.name
    if isinstance(op, Const):
        return _describe_verbatim(op.node)
    return "items"


def _describe_verbatim(node: cst.CSTNode) -> str:
    text = _code(node)
    text = text.replace(".", "_").replace("-", "neg").replace(":", "_")
    return text


def _statements(block: cst.BaseSuite) -> list:
    """The statements of a suite: small statements split out, compound ones kept whole."""
    if isinstance(block, cst.SimpleStatementSuite):
        return list(block.body)
    out = []
    for line in block.body:
        if isinstance(line, cst.SimpleStatementLine):
            out.extend(line.body)
        else:
            out.append(line)
    return out


def _targets_in(node: cst.CSTNode) -> set:
    """Names assigned anywhere in ``node`` (assignments and loop targets)."""
    names = set()
    for found in m.findall(node, m.AssignTarget() | m.AugAssign() | m.AnnAssign() | m.For()):
        target = found.target
        if isinstance(target, (cst.Name, cst.Tuple, cst.List)):
            names |= {n.value for n in m.findall(target, m.Name())}
    return names


def _assigned_names(fn: cst.FunctionDef) -> frozenset:
    names = {p.name.value for p in list(fn.params.params) + list(fn.params.kwonly_params)}
    if fn.params.star_arg and isinstance(fn.params.star_arg, cst.Param):
        names.add(fn.params.star_arg.name.value)
    if fn.params.star_kwarg:
        names.add(fn.params.star_kwarg.name.value)
    for node in m.findall(fn.body, m.AssignTarget() | m.AugAssign() | m.AnnAssign()):
        tgt = node.target
        for n in m.findall(tgt, m.Name()):
            if isinstance(tgt, cst.Name) or m.matches(tgt, m.Tuple() | m.List()):
                names.add(n.value)
    for node in m.findall(fn.body, m.For()):
        for n in m.findall(node.target, m.Name()):
            names.add(n.value)
    return frozenset(names)


def _all_names(fn: cst.FunctionDef) -> set:
    """Every name the function binds or reads (attribute fields like ``np.mean``'s ``mean`` and
    keyword names are not names: temporaries may take them)."""
    return set(read_names(fn))


def _live_lookup(live: dict, dotted: str) -> Any:
    parts = dotted.split(".")
    if parts[0] not in live:
        return None
    value = live[parts[0]]
    for p in parts[1:]:
        value = getattr(value, p, None)
        if value is None:
            return None
    return value


def _object_name(value: Any) -> Optional[str]:
    if isinstance(value, types.ModuleType):
        return value.__name__
    module = getattr(value, "__module__", None)
    name = getattr(value, "__name__", None)
    if module and name:
        return f"{_exported_from(module, name, value)}.{name}"
    return None


def _exported_from(module: str, name: str, value: Any) -> str:
    """The module that names ``value``: ``s2sgrad.runtime`` for a runtime helper (defined in one
    of its modules, e.g. ``s2sgrad.runtime.reductions``, and re-exported by the package, which is
    how generated code and the rules name it), else ``module``."""
    if module.startswith(runtime.__name__ + ".") and getattr(runtime, name, None) is value:
        return runtime.__name__
    return module


def lower_function(pf: ParsedFunction, nondiff: frozenset) -> CoreFunction:
    """Lower ``pf`` to the core form; ``nondiff`` names functions kept verbatim (no derivative)."""
    return Lowering(pf, nondiff).lower()

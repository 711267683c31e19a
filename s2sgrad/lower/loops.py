"""``for`` and ``while`` loops: a Context and a loop -> one Loop in ``ctx.body`` (its header code,
the names the header binds, its body, and the carries that hand new values to the next iteration).

A loop over values that carry no derivative (``range(n)``) keeps its header; a loop over sequences
(``for x in xs``, ``enumerate``, ``zip``) becomes ``for i, x in enumerate(xs):`` with ``x`` bound by
an implicit ``xs[i]``. The loop's ``else:`` block is the caller's (blocks.lower_any), and nested
blocks are lowered by the ``lower_block(ctx, statements, prologue, start)`` it passes.
"""

from __future__ import annotations

from typing import Any

import libcst as cst
import libcst.matchers as m

from .assignments import assign, copy_to
from .context import BlockLowerer, Context
from .expressions import operand
from ..program import ForHeader, WhileHeader
from .ir import (Const, Loop, Origin, OtherHeader, Prim, RangeHeader, Seq, SequenceHeader, Stmt, Var,
                 operand_node)
from .joins import bind_conditional_locals, bind_loop_locals_bound_again, loop_carries
from .kinds import is_verbatim
from .scope import statements_of
from .text import Renamer, code
from ..read.walk import findall


def lower_while(ctx: Context, node: cst.While, lower_block: BlockLowerer) -> None:
    ctx.loop_count += 1
    n = ctx.loop_count
    origin = ctx.header_origin(f"while {code(node.test)}:", node)
    ctx.origin = origin
    if not (is_verbatim(ctx, node.test) or isinstance(node.test, cst.Name)):
        raise ctx.pf.error(node.test, "a while condition must be a comparison or a name",
                           "compare explicitly, e.g. `while np.sum(x) > tol:`")
    test, _ = ctx.verbatim(node.test)
    tape = ctx.namer.fresh(f"loop{n}_tape")
    bind_conditional_locals(ctx, node.body)
    bind_loop_locals_bound_again(ctx, node)
    before = dict(ctx.env)
    ctx.loop_depth += 1
    body = lower_block(ctx, statements_of(node.body))
    ctx.loop_depth -= 1
    _append_loop(ctx, n, (WhileHeader(test), (), body, OtherHeader()), before, tape, origin)


def lower_for(ctx: Context, node: cst.For, lower_block: BlockLowerer) -> None:
    ctx.loop_count += 1
    n = ctx.loop_count
    origin = ctx.header_origin(f"for {code(node.target)} in {code(node.iter)}:", node)
    ctx.origin = origin
    tape = ctx.namer.fresh(f"loop{n}_tape")
    bind_conditional_locals(ctx, node.body)
    bind_loop_locals_bound_again(ctx, node)
    parts = loop_parts(ctx, node)
    before = dict(ctx.env)
    ctx.loop_depth += 1
    if parts[0] is None and is_verbatim(ctx, node.iter):
        lowered = _lower_value_loop(ctx, node, lower_block)
    else:
        lowered = lower_sequence_loop(ctx, node, n, parts, lower_block)
    ctx.loop_depth -= 1
    _append_loop(ctx, n, lowered, before, tape, origin)


def _append_loop(ctx: Context, n: int, lowered: tuple, before: dict, tape: str,
                 origin: Origin) -> None:
    """Append the Loop: ``lowered`` is its ``(header, targets, body, typed header)``; ``before``
    the environment at its start, which the carries restore."""
    header, targets, body, kind = lowered
    ctx.origin = origin
    carried = sorted(k for k in before if ctx.env.get(k) != before[k])
    carries = loop_carries(ctx, before, origin)
    ctx.body.append(Loop(header, targets, body, carries, tape, origin,
                         ctx.namer.fresh(f"loop{n}_trips"), ctx.namer.fresh(f"loop{n}_saved"), kind))
    if ctx.loop_depth:
        # inside another loop, what this one carries changes there too: a new name after it
        # makes the enclosing loop carry it (its carries compare names before and after)
        for name in carried:
            copy_to(ctx, name, Var(ctx.env[name]))


def _lower_value_loop(ctx: Context, node: cst.For, lower_block: BlockLowerer) -> tuple:
    """``(header, targets, body, typed header)`` of a loop over values that carry no derivative:
    the header as written, its names renamed (a RangeHeader for ``for t in range(...)``)."""
    iter_code, _ = ctx.verbatim(node.iter)
    targets = tuple(ctx.bind(n_.value) for n_ in findall(node.target, m.Name()))
    header = ForHeader(node.target.visit(Renamer(ctx.env)), iter_code)
    kind = OtherHeader()
    if isinstance(node.target, cst.Name) and m.matches(iter_code, m.Call(func=m.Name("range"))) and \
            all(a.keyword is None and not a.star for a in iter_code.args):
        kind = RangeHeader(targets[0], tuple(a.value for a in iter_code.args))
    return header, targets, lower_block(ctx, statements_of(node.body)), kind


def loop_parts(ctx: Context, node: cst.For) -> tuple:
    """``(index name, start, element target, sequence)`` of a for header: the index and its
    start come from ``enumerate(seq[, start])`` unpacked into two targets, else None."""
    it = node.iter
    if m.matches(it, m.Call(func=m.Name("enumerate"))) and 1 <= len(it.args) <= 2 and \
            m.matches(node.target, m.Tuple(elements=[m.Element(m.Name()), m.DoNotCare()])):
        seq_arg = it.args[0]
        start = it.args[1].value if len(it.args) == 2 else None
        if seq_arg.keyword is not None or (len(it.args) == 2 and it.args[1].keyword not in
                                           (None,) and it.args[1].keyword.value != "start"):
            raise ctx.pf.error(it, "enumerate() takes a sequence and an optional start here",
                               "write `for i, x in enumerate(xs, start):`")
        return node.target.elements[0].value.value, start, node.target.elements[1].value, \
            seq_arg.value
    return None, None, node.target, it


def loop_sequences(ctx: Context, node: cst.For, elem_target, seq_node) -> tuple:
    """The sequences a loop walks (several for ``zip``), one target per sequence, and per
    sequence the dict value read at the top of the body, ``(target, dict Var)``, or None (a dict
    or its view is walked by its keys, see _walked)."""
    if m.matches(seq_node, m.Call(func=m.Name("zip"))):
        if any(a.keyword is not None or a.star for a in seq_node.args):
            raise ctx.pf.error(seq_node, "zip() with keywords or starred sequences is not supported",
                               "list the sequences: `zip(xs, ys)`")
        elems = [e.value for e in elem_target.elements] if isinstance(
            elem_target, (cst.Tuple, cst.List)) else None
        if elems is None or len(elems) != len(seq_node.args):
            raise ctx.pf.error(node.target, "unpack zip() into one name per sequence",
                               "write `for a, b in zip(xs, ys):`")
        walked = [_walked(ctx, a.value, e, node.body) for a, e in zip(seq_node.args, elems)]
    else:
        walked = [_walked(ctx, seq_node, elem_target, node.body)]
    return [w[0] for w in walked], [w[1] for w in walked], [w[2] for w in walked]


def _walked(ctx: Context, seq_node: cst.BaseExpression, elem, body: cst.BaseSuite) -> tuple:
    """``(sequence operand, its element target, a dict value to read or None)`` of one sequence
    a loop walks. A dict (``d``, ``d.keys()``, ``d.values()``, ``d.items()``) is walked by its
    keys (the runtime's ``keys(d)``: no derivative, in insertion order, as Python walks it), and a value
    ``d[key]`` is read at the top of the body: the value's adjoint goes to its key. ``d`` is a
    dict where it was made by a dict display, or where ``body`` indexes it by the loop's own
    target (``for k in d: ... d[k]``: a parameter; a list walked so holds indices, with no
    derivative, and ``keys`` walks it alike)."""
    view = "keys"
    if m.matches(seq_node, m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("keys") |
                                                   m.Name("values") | m.Name("items")), args=[])) \
            and seq_node.func.value.value in ctx.locals:
        view, seq_node = seq_node.func.attr.value, seq_node.func.value
    elif not (isinstance(seq_node, cst.Name) and seq_node.value in ctx.env and (
            ctx.env[seq_node.value] in ctx.dicts or _indexed_by_target(body, seq_node, elem))) and \
            not (isinstance(seq_node, cst.Subscript) and _indexed_by_target(body, seq_node, elem)):
        return operand(ctx, seq_node), elem, None
    held = operand(ctx, seq_node)
    if not isinstance(held, Var):
        raise ctx.pf.error(seq_node, "only a dict held by a name can be walked here",
                           "assign the dict to a name first")
    ctx.lists.add(held.name)
    ctx.dicts.add(held.name)
    keys = ctx.namer.fresh(f"{held.name}_keys")
    call = cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name("keys")), [cst.Arg(cst.Name(held.name))])
    ctx.emit((keys,), call, Prim("nondiff", (), location=ctx.origin.location))
    if view == "keys":
        return Var(keys), elem, None
    if view == "items":
        if not m.matches(elem, m.Tuple(elements=[m.Element(m.Name()), m.DoNotCare()]) |
                         m.List(elements=[m.Element(m.Name()), m.DoNotCare()])):
            raise ctx.pf.error(elem, "unpack a dict's items into a key and a value",
                               "write `for k, v in d.items():`")
        return Var(keys), elem.elements[0].value, (elem.elements[1].value, held)
    return Var(keys), None, (elem, held)


def _indexed_by_target(body: cst.BaseSuite, seq: cst.BaseExpression, elem) -> bool:
    """Whether ``body`` reads ``seq[elem]`` (``elem`` a name; ``seq`` a name, or a chain such as
    ``p[0]["w"]`` the body reads the same way): the loop walks ``seq``'s keys."""
    if not isinstance(elem, cst.Name):
        return False
    read = m.Subscript(slice=[m.SubscriptElement(slice=m.Index(value=m.Name(elem.value)))])
    walked = code(seq)
    return any(code(found.value) == walked for found in findall(body, read))


def lower_sequence_loop(ctx: Context, node: cst.For, n: int, parts: tuple,
                        lower_block: BlockLowerer) -> tuple:
    """A loop over sequences as ``for index, elems in enumerate(seq):``, each element bound
    by an implicit read ``seq[index]``; a tuple element is unpacked at the top of the body.
    ``parts`` are loop_parts' ``(index name, start, element target, sequence)``."""
    index_name, start, elem_target, seq_node = parts
    backwards = _reversed_operand(ctx, seq_node)  # the index counts up; items are xs[-1 - index]
    seqs, elems, values = loop_sequences(ctx, node, elem_target, backwards or seq_node)
    for e in elems + [v[0] for v in values if v]:
        if not (e is None or isinstance(e, cst.Name) or m.matches(e, m.Tuple() | m.List()) and all(
                isinstance(x.value, cst.Name) for x in e.elements)):
            raise ctx.pf.error(e, "loop targets must be names or tuples of names",
                               "unpack inside the loop body instead")
    index = ctx.bind(index_name) if index_name and start is None \
        else ctx.namer.fresh(f"loop{n}_index")
    prologue, names, unpacks, reads = [], [], [], []
    for seq, e, value in zip(seqs, elems, values):
        name = ctx.bind(e.value) if isinstance(e, cst.Name) else \
            ctx.namer.fresh(f"loop{n}_key" if e is None else f"loop{n}_item")
        names.append(name)
        if e is not None and not isinstance(e, cst.Name):
            unpacks.append((e, name))
        if value is not None:
            reads.append((*value, name))
        prologue.append(loop_item(ctx, seq, index, name, backwards is not None))
    body = lower_block(ctx, statements_of(node.body), tuple(prologue),
                       lambda: loop_unpacks(ctx, index_name, start, index, unpacks, reads))
    return _enumerate_header(index, names, seqs, backwards is not None), (index, *names), body, \
        SequenceHeader(index, tuple(names), tuple(seqs))


def _reversed_operand(ctx: Context, seq_node: cst.BaseExpression):
    """``xs`` for a loop over ``reversed(xs)`` (as generated backward loops walk their tapes),
    else None."""
    if m.matches(seq_node, m.Call(func=m.Name("reversed"), args=[m.Arg(keyword=None, star="")])) \
            and ctx.callee_name(seq_node.func) == "builtins.reversed":
        return seq_node.args[0].value
    return None


def _enumerate_header(index: str, names: list, seqs: list, backwards: bool = False) -> ForHeader:
    """``for index, name in enumerate(seq):`` (``(a, b)`` and ``zip(xs, ys)`` for several;
    ``reversed(seq)`` walking it backwards)."""
    walked = operand_node(seqs[0]) if len(seqs) == 1 else \
        _call("zip", *(operand_node(q) for q in seqs))
    walked = _call("reversed", walked) if backwards else walked
    items = cst.Name(names[0]) if len(names) == 1 else \
        cst.Tuple([cst.Element(cst.Name(n)) for n in names])
    target = cst.Tuple([cst.Element(cst.Name(index)), cst.Element(items)], lpar=[], rpar=[])
    return ForHeader(target, _call("enumerate", walked))


def _call(name: str, *args: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.Name(name), [cst.Arg(a) for a in args])


def loop_item(ctx: Context, seq: Any, index: str, name: str, backwards: bool = False) -> Stmt:
    """The implicit ``name = seq[index]`` a loop header binds (``seq[-1 - index]`` walking it
    backwards)."""
    position = cst.parse_expression(f"-1 - {index}") if backwards else cst.Name(index)
    index_const = Const(position, code(position), (index,), f"[{code(position)}]", True)
    expr = cst.Subscript(operand_node(seq), [cst.SubscriptElement(cst.Index(position))])
    item_op = "list.getitem" if (isinstance(seq, Var) and seq.name in ctx.lists) or \
        isinstance(seq, Seq) else "operator.getitem"
    return Stmt((name,), expr, Prim(item_op, (seq, index_const), location=ctx.origin.location),
                ctx.origin, implicit=True)


def loop_unpacks(ctx: Context, index_name, start, index: str, unpacks: list,
                 reads: list = ()) -> None:
    """Statements at the top of a loop body: the user's counter when ``enumerate`` has a
    start, the unpacking of tuple elements, and each dict value ``target = d[key]`` of
    ``reads`` (``(target, dict Var, key name)``)."""
    if index_name and start is not None:
        expr = cst.BinaryOperation(cst.Name(index), cst.Add(), ctx.verbatim(start)[0])
        ctx.emit((ctx.bind(index_name),), expr, Prim("nondiff", (), location=ctx.origin.location))
    for target, name in unpacks:
        assign(ctx, target, cst.Name(name), source=Var(name))
    for target, held, key in reads:
        key_const = Const(cst.Name(key), key, (key,), f"[{key}]", True)
        name = ctx.bind(target.value) if isinstance(target, cst.Name) else \
            ctx.namer.fresh(f"{held.name}_value")
        ctx.emit((name,), cst.Subscript(cst.Name(held.name), [cst.SubscriptElement(cst.Index(
            cst.Name(key)))]), Prim("list.getitem", (held, key_const), location=ctx.origin.location))
        if not isinstance(target, cst.Name):
            assign(ctx, target, cst.Name(name), source=Var(name))

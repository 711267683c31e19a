"""Expressions: a Context and a user expression -> an operand (Var, Const or Seq), emitting into
``ctx.body`` one statement per operator, call, attribute, subscript or kept-verbatim part.

Nested expressions are split into temporaries named after what they hold (``h_times_w``); with a
``target`` the outermost one is written to the user's name instead. ``a if c else b`` becomes a
branch, and a branch condition a recorded name (``condition``).
"""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst

from .context import Context
from .describe import describe_slice, describe_verbatim, short
from .index_parts import basic_element, slice_to_expr
from .ir import Const, If, Prim, Seq, Stmt, Var, operand_node
from .kinds import is_constant, is_nondiff, is_simple_index, is_verbatim
from .resolve import is_live_array
from .text import code, one_line_text
from .writes import find_write, reads_locals

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


def operand(ctx: Context, node: cst.BaseExpression, target: Optional[str] = None) -> Any:
    """Lower ``node`` to an operand, emitting statements for its parts."""
    if isinstance(node, cst.Name) and node.value in ctx.locals:
        if node.value not in ctx.env:
            raise ctx.unassigned(node)
        return Var(ctx.env[node.value])
    if is_constant(ctx, node):
        new, reads = ctx.verbatim(node)
        return Const(new, code(new), reads)
    if isinstance(node, (cst.Tuple, cst.List)):
        return _display(ctx, node)
    if isinstance(node, cst.Call):
        _refuse_nested_write(ctx, node)
    if is_nondiff(ctx, node):
        expr, reads = ctx.verbatim(node)
        name = ctx.new_target(target, describe_verbatim(expr), "value")
        called = ctx.callee_name(node.func) if isinstance(node, cst.Call) else None
        ctx.emit((name,), expr, Prim("nondiff", (), location=ctx.pf.location(node),
                                     callee=called or ""))  # what the shape analysis reads
        return Var(name)
    lower = _lowerer(node)
    if lower is not None:
        return lower(ctx, node, target)
    raise ctx.pf.error(node, f"unsupported expression: {one_line_text(code(node))}",
                       "rewrite it with supported operations (see the README)")


def _refuse_nested_write(ctx: Context, node: cst.Call) -> None:
    """A call that writes into an argument is lowered only as a statement of its own."""
    found = find_write(ctx, node)  # dict lookups; the walk of reads_locals only where it writes
    if found is not None and (found.write is not None or found.out is not None) \
            and reads_locals(ctx, node):
        raise ctx.pf.error(node, f"`{one_line_text(code(node))}` writes into an argument; s2sgrad "
                           "differentiates such a call only as a statement of its own",
                           "make the call its own statement (`np.exp(x, out=y)`, "
                           "`np.copyto(y, x)`), then read the array it wrote")


def _lowerer(node: cst.BaseExpression) -> Any:
    """The function that lowers an operator, call, attribute or subscript, else None."""
    if isinstance(node, cst.UnaryOperation) and type(node.operator) not in UNARY_OPS:
        return None
    return next((lower for kind, lower in _LOWERERS if isinstance(node, kind)), None)


def _display(ctx: Context, node: cst.BaseExpression) -> Seq:
    """A tuple or list display of operands (``np.stack([a, b])``'s argument)."""
    kind = "tuple" if isinstance(node, cst.Tuple) else "list"
    items = []
    for el in node.elements:
        if isinstance(el, cst.StarredElement):
            raise ctx.pf.error(el, "starred elements are not supported",
                               "list the elements explicitly")
        items.append(_item(ctx, el.value))
    return Seq(kind, tuple(items))


def _item(ctx: Context, node: cst.BaseExpression) -> Any:
    """An item of a display: an operand, where a display nested in it (``[(W1, b1), (W2, b2)]``)
    is a statement of its own, ``W1_b1 = (W1, b1)``: every display the core holds is flat, so
    both modes treat a nested one as the list of named sequences it is."""
    item = operand(ctx, node)
    if not isinstance(item, Seq):
        return item
    name = ctx.namer.temp("_".join(short(i) for i in item.items), "items")
    ctx.temps.add(name)
    ctx.emit((name,), operand_node(item), Prim("copy", (item,), location=ctx.pf.location(node)))
    ctx.lists.add(name)
    return Var(name)


def _dict(ctx: Context, node: cst.Dict, target: Optional[str]) -> Var:
    """A dict display with constant keys: ``s2s.dict_of((keys...), (values...))``, a helper
    with a rule (linear in the values), so generated code that builds a dict is read again."""
    keys, values = [], []
    for el in node.elements:
        if not isinstance(el, cst.DictElement):
            raise ctx.pf.error(el, "`**` in a dict display is not supported",
                               "list the keys and values explicitly")
        if not is_constant(ctx, el.key):
            raise ctx.pf.error(el.key, "a dict display's keys must be constants here",
                               "use string or number keys")
        keys.append(operand(ctx, el.key))
        values.append(_item(ctx, el.value))
    args = (Seq("tuple", tuple(keys)), Seq("tuple", tuple(values)))
    expr = cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name("dict_of")),
                    [cst.Arg(operand_node(a)) for a in args])
    made = ctx.emit_prim(target, "dict", "dict", expr,
                         Prim("s2sgrad.runtime.dict_of", args, location=ctx.pf.location(node)))
    ctx.lists.add(made.name)  # its adjoint adds key by key (s2s.add)
    ctx.dicts.add(made.name)
    return made


def _binary(ctx: Context, node: cst.BinaryOperation, target: Optional[str]) -> Var:
    op, word, fallback = BINARY_OPS[type(node.operator)]
    left = operand(ctx, node.left)
    right = operand(ctx, node.right)
    if _is_list(ctx, left) or _is_list(ctx, right):
        return _list_concat(ctx, node, left, right, target)
    expr = node.with_changes(left=operand_node(left), right=operand_node(right), lpar=[], rpar=[])
    if isinstance(left, Const) and not isinstance(right, Const) and \
            op in ("operator.mul", "operator.add"):
        desc = f"{short(right)}_{word}_{short(left)}"
    else:
        desc = f"{short(left)}_{word}_{short(right)}"
    return ctx.emit_prim(target, desc, fallback, expr,
                         Prim(op, (left, right), location=ctx.pf.location(node)))


def _is_list(ctx: Context, op: Any) -> bool:
    """A value the lowering knows is a Python list (a display, or a name built from one)."""
    return (isinstance(op, Var) and op.name in ctx.lists) or (isinstance(op, Seq) and op.kind == "list")


def _list_concat(ctx: Context, node: cst.BinaryOperation, left: Any, right: Any,
                 target: Optional[str]) -> Var:
    """``lst + [a, b]`` (lst a list): a new list, one ``list.append`` per item (what the lowering
    of ``lst.append(a)`` gives, and what generated code writes for it); any other arithmetic
    with a list is refused rather than taken for numpy's."""
    if not (isinstance(node.operator, cst.Add) and isinstance(left, Var) and left.name in ctx.lists
            and isinstance(right, Seq) and right.kind == "list" and right.items):
        raise ctx.pf.error(node, f"`{one_line_text(code(node))}` is arithmetic on a Python list, "
                           "which s2sgrad differentiates only as `lst + [item, ...]` or "
                           "`lst.append(item)`", "build the list with `.append`, or use np.array "
                           "or np.concatenate for arrays")
    base = left
    for k, item in enumerate(right.items):
        expr = cst.BinaryOperation(cst.Name(base.name), cst.Add(),
                                   cst.List([cst.Element(operand_node(item))]))
        last = k == len(right.items) - 1
        base = ctx.emit_prim(target if last else None, f"{short(left)}_appended", "appended", expr,
                             Prim("list.append", (base, item), location=ctx.pf.location(node)))
        ctx.lists.add(base.name)
    return base


def _unary(ctx: Context, node: cst.UnaryOperation, target: Optional[str]) -> Var:
    op, word = UNARY_OPS[type(node.operator)]
    inner = operand(ctx, node.expression)
    expr = node.with_changes(expression=operand_node(inner), lpar=[], rpar=[])
    return ctx.emit_prim(target, f"{word}_{short(inner)}", word, expr,
                         Prim(op, (inner,), location=ctx.pf.location(node)))


def _attribute(ctx: Context, node: cst.Attribute, target: Optional[str]) -> Var:
    value = operand(ctx, node.value)
    expr = node.with_changes(value=operand_node(value), lpar=[], rpar=[])
    attr = node.attr.value
    return ctx.emit_prim(target, f"{short(value)}_{attr}", attr, expr,
                         Prim(f"ndarray.{attr}", (value,), location=ctx.pf.location(node)))


def _subscript(ctx: Context, node: cst.Subscript, target: Optional[str]) -> Var:
    joined = _indexed_call(ctx, node, target)
    if joined is not None:
        return joined
    value = operand(ctx, node.value)
    index_node, index_op = index(ctx, node)
    expr = subscript_expr(value, index_node)
    desc = f"{short(value)}_{describe_slice(index_node)}"
    if isinstance(value, Var) and isinstance(index_op.node, (cst.SimpleString, cst.ConcatenatedString)):
        ctx.lists.add(value.name)  # indexed by a string key: a dict
    op = "list.getitem" if isinstance(value, Var) and value.name in ctx.lists \
        else "operator.getitem"
    return ctx.emit_prim(target, desc, "item", expr,
                         Prim(op, (value, index_op), location=ctx.pf.location(node)))


def _indexed_call(ctx: Context, node: cst.Subscript, target: Optional[str]) -> Optional[Var]:
    """An indexing of an object whose rule says it is a function's call (``np.r_[a, b]``:
    Rule.indexed) as that call on the index's items, one tuple, a slice item the object indexed
    by it alone (``np.r_[x, 1:10]``: ``np.r_[1:10]``, a constant); None for any other subscript,
    and for one whose items hold a string (a directive: a constant index, as before)."""
    rule = ctx.table.indexed_call(ctx.callee_name(node.value) or "") \
        if ctx.table is not None and is_constant(ctx, node.value) else None
    if rule is None or len(node.slice) < 2 and isinstance(node.slice[0].slice, cst.Slice) or any(
            isinstance(el.slice, cst.Index) and isinstance(el.slice.value, (cst.SimpleString, cst.ConcatenatedString))
            for el in node.slice):
        return None
    items = Seq("tuple", tuple(
        _item(ctx, el.slice.value) if isinstance(el.slice, cst.Index) else
        _item(ctx, node.with_changes(slice=[el.with_changes(comma=cst.MaybeSentinel.DEFAULT)], lpar=[], rpar=[]))
        for el in node.slice))
    helper = rule.name.rpartition(".")[2]
    expr = cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(helper)), [cst.Arg(operand_node(items))])
    return ctx.emit_prim(target, helper, helper, expr, Prim(rule.name, (items,), location=ctx.pf.location(node)))


def lower_ifexp(ctx: Context, node: cst.IfExp, target: Optional[str]) -> Var:
    """``a if c else b`` as a branch whose arms write one join name."""
    ctx.if_count += 1
    n = ctx.if_count
    test = condition(ctx, node.test, f"cond{n}")
    saved = ctx.namer.fresh(f"if{n}_saved")
    before = dict(ctx.env)
    arms = []
    for expr in (node.body, node.orelse):
        ctx.env = dict(before)
        arms.append(ctx.collect(lambda: operand(ctx, expr)))
    ctx.env = before
    name = ctx.new_target(target, f"{short(arms[0][1])}_or_{short(arms[1][1])}", "choice")
    blocks = [block + (Stmt((name,), operand_node(op), Prim("copy", (op,)), ctx.origin),)
              for block, op in arms]
    ctx.body.append(If(test, blocks[0], blocks[1], saved, ctx.origin))
    return Var(name)


def condition(ctx: Context, test: cst.BaseExpression, name: str) -> str:
    """The name holding the value of a branch condition (recorded for the backward sweep)."""
    if isinstance(test, cst.Name) and test.value in ctx.env:
        return ctx.env[test.value]
    if not is_verbatim(ctx, test):
        held = operand(ctx, test)
        if isinstance(held, Var):
            return held.name
        test = held.node
    expr, _ = ctx.verbatim(test)
    target = ctx.namer.fresh(name)
    ctx.emit((target,), expr, Prim("nondiff", (), location=ctx.pf.location(test)))
    return target


def index(ctx: Context, node: cst.Subscript) -> tuple:
    """The index of a subscript as one verbatim Const; complex parts are hoisted first."""
    elements = [el.with_changes(slice=_hoist_index_parts(ctx, el.slice)) for el in node.slice]
    renamed, reads = ctx.verbatim(node.with_changes(slice=elements))
    if len(renamed.slice) == 1 and isinstance(renamed.slice[0].slice, cst.Index):
        index_node = renamed.slice[0].slice.value
    else:
        index_node = cst.Tuple([cst.Element(slice_to_expr(e.slice)) for e in renamed.slice])
    bare = renamed.with_changes(lpar=[], rpar=[])  # (``-(x[1, 2])``: the parentheses are not the index's)
    brackets = code(bare)[len(code(bare.value)):]
    basic = all(basic_element(e.slice) for e in renamed.slice)
    return renamed, Const(index_node, code(index_node), reads, brackets, basic)


def _hoist_index_parts(ctx: Context, inner: cst.BaseSlice) -> cst.BaseSlice:
    """One index element with its parts that are not simple lowered to operands first."""
    if isinstance(inner, cst.Index) and not is_simple_index(ctx, inner.value):
        held = operand(ctx, inner.value)
        return inner.with_changes(value=operand_node(held))
    if isinstance(inner, cst.Slice):
        parts = {}
        for field_name in ("lower", "upper", "step"):
            part = getattr(inner, field_name)
            if part is not None and not is_simple_index(ctx, part):
                parts[field_name] = operand_node(operand(ctx, part))
        if parts:
            return inner.with_changes(**parts)
    return inner


def subscript_expr(value: Any, index_node: Any) -> cst.BaseExpression:
    """``value[index]`` as code: a renamed Subscript gets ``value`` as its base."""
    if isinstance(index_node, cst.Subscript):
        return index_node.with_changes(value=operand_node(value), lpar=[], rpar=[])
    return cst.Subscript(operand_node(value), [cst.SubscriptElement(cst.Index(index_node))])


def lower_call(ctx: Context, node: cst.Call, target: Optional[str], unpack_to: tuple = ()) -> Var:
    """A call as one statement; with ``unpack_to``, a function call's result is unpacked into
    new versions of those user names."""
    folded = _pairwise(ctx, node)
    if folded is not None:
        return lower_call(ctx, folded, target, unpack_to)
    respelled = _respelled(ctx, node)
    if respelled is not None:
        return _emit_call(ctx, node, target, unpack_to, *respelled)
    args, kwargs, new_args = _call_args(ctx, node)
    func = node.func
    if isinstance(func, cst.Attribute) and (not is_constant(ctx, func.value)
                                            or is_live_array(ctx.pf, func.value)):
        owner = operand(ctx, func.value)
        method = func.attr.value
        func_new = func.with_changes(value=operand_node(owner))
        expr = node.with_changes(func=func_new, args=new_args, lpar=[], rpar=[])
        return ctx.emit_prim(target, f"{short(owner)}_{method}", method, expr,
                             Prim(f"ndarray.{method}", (owner, *args), tuple(kwargs),
                                  location=ctx.pf.location(node)))
    return _emit_call(ctx, node, target, unpack_to, args, kwargs, new_args)


def _emit_call(ctx: Context, node: cst.Call, target: Optional[str], unpack_to: tuple,
               args: list, kwargs: list, new_args: list) -> Var:
    """The statement of a function's call with these operands (``new_args``: as code)."""
    func = node.func
    callee = ctx.callee_name(func)
    func_new, _ = ctx.verbatim(func)
    expr = node.with_changes(func=func_new, args=new_args, lpar=[], rpar=[])
    called = operand(ctx, func) if isinstance(func, cst.Name) and func.value in ctx.locals else None
    prim = Prim(callee, tuple(args), tuple(kwargs), location=ctx.pf.location(node),
                callee=code(func), called_value=called)
    short_fn = callee.rsplit(".", 1)[-1]
    if unpack_to:
        names = tuple(ctx.bind(n) for n in unpack_to)
        ctx.emit(names, expr, prim, unpack=True)
        return Var(names[0])
    first = short(args[0]) if args else ""
    desc = f"{short_fn}_{first}" if first else short_fn
    return ctx.emit_prim(target, desc, short_fn, expr, prim)


def _pairwise(ctx: Context, node: cst.Call) -> Optional[cst.Call]:
    """A call of a pairwise rule's function (rules/builtins.py: ``max(a, b, c)``) with more than
    two arguments, as the fold ``max(max(a, b), c)`` (None when it is not one); its one-iterable
    form (``max(xs)``) refused with the rule's advice."""
    rule = ctx.table.get(ctx.callee_name(node.func) or "") if ctx.table is not None else None
    if rule is None or not rule.pairwise or any(a.keyword is not None or a.star for a in node.args):
        return None
    if len(node.args) == 1:
        raise ctx.pf.error(node, f"`{code(node.func)}(...)` of one argument (an iterable) is not "
                           "supported in a differentiated function", rule.pairwise)
    if len(node.args) <= 2:
        return None
    first = node.with_changes(args=[a.with_changes(comma=cst.MaybeSentinel.DEFAULT)
                                    for a in node.args[:2]], lpar=[], rpar=[])
    ctx.pf.parsed.adopt(first, node)
    folded = node.with_changes(args=[cst.Arg(first), *node.args[2:]])
    ctx.pf.parsed.adopt(folded, node)
    return folded


def _respelled(ctx: Context, node: cst.Call) -> Optional[tuple]:
    """``(positional operands, keyword operands, the Args as code)`` of a call written in
    another form its function takes, in the form its rule reads (Rule.respell: np.einsum's
    interleaved form in its subscripts form); None for any other call. Each argument the new
    form keeps is lowered once; a runtime helper it calls on them is a statement of its own."""
    rule = ctx.table.get(ctx.callee_name(node.func) or "") if ctx.table is not None else None
    if rule is None or rule.respell is None or any(a.star for a in node.args):
        return None
    positional = [a.value for a in node.args if a.keyword is None]
    spelled = rule.respell(tuple(code(v) for v in positional))
    if spelled is None:
        return None
    lowered: dict = {}

    def item(spec: Any) -> Any:
        if isinstance(spec, int):
            if spec not in lowered:
                lowered[spec] = operand(ctx, positional[spec])
            return lowered[spec]
        if isinstance(spec, str):
            return operand(ctx, cst.parse_expression(spec))
        helper, helper_args = spec
        ops = tuple(item(a) for a in helper_args)
        expr = cst.Call(cst.Attribute(cst.Name("s2s"), cst.Name(helper)),
                        [cst.Arg(operand_node(o)) for o in ops])
        return ctx.emit_prim(None, helper, helper, expr, Prim(f"s2sgrad.runtime.{helper}", ops,
                                                              location=ctx.pf.location(node)))

    args = [item(spec) for spec in spelled]
    kwargs = [(a.keyword.value, operand(ctx, a.value)) for a in node.args if a.keyword is not None]
    new_args = [cst.Arg(operand_node(o)) for o in args] + \
        [cst.Arg(operand_node(o), keyword=cst.Name(k)) for k, o in kwargs]
    return args, kwargs, new_args


def _call_args(ctx: Context, node: cst.Call) -> tuple:
    """``(positional operands, (keyword, operand) pairs, the Args as code)`` of a call."""
    args, kwargs, new_args = [], [], []
    for a in node.args:
        if a.star:
            raise ctx.pf.error(a, "star-arguments (*args, **kwargs) are not supported",
                               "pass the arguments one by one")
        op = operand(ctx, a.value)
        new_args.append(a.with_changes(value=operand_node(op)))
        if a.keyword is None:
            args.append(op)
        else:
            kwargs.append((a.keyword.value, op))
    return args, kwargs, new_args


_LOWERERS = (
    (cst.BinaryOperation, _binary),
    (cst.UnaryOperation, _unary),
    (cst.Call, lower_call),
    (cst.IfExp, lower_ifexp),
    (cst.Attribute, _attribute),
    (cst.Subscript, _subscript),
    (cst.Dict, _dict),
)

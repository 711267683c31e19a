"""The generated function that stands for what grad or value_and_grad returned, when the module's
``<f>_grad`` is not it: a generated first-order module's text, the name of its ``<f>_grad``, and
what the API returns -> the text with one function appended that returns exactly that, and its
name (None when ``<f>_grad`` is not of the shape codegen writes).

``<f>_grad`` returns the gradient (one array for one differentiated parameter, else a tuple).
``value_and_grad`` returns the value too, ``has_aux`` the auxiliary value, and argnums ``(0,)`` a
tuple of one gradient. The function appended runs the two sweeps as ``<f>_grad`` does, keeping
the forward sweep's value::

    def f_value_and_grad(x, f_bar=1.0):
        value, residuals = f_fwd(x)
        return value, f_bwd(residuals, f_bar)[0]

A transformation of the API's function then reads that function (s2sgrad reads what it writes).
``jacobian_entry`` does the same for jacfwd (and hessian, which is jacfwd of grad): a generated
forward-mode module and its ``<f>_jvp`` -> a function with a loop per differentiated input, one
``<f>_jvp`` sweep per element along the unit tangents, joined into a block by ``s2s.columns_block``
(a runtime helper with rules in both modes, so the Jacobian function is differentiated again);
``reverse_jacobian_entry`` for jacrev: a backward sweep per element of the output, its gradients
the rows of the blocks (``s2s.rows_block``), or, where the sweep has a batched form
(differentiate/batching.batch_backward) and the value is one array, a sweep per chunk of unit
cotangents (``s2s.unit_chunks``, joined by ``s2s.row_chunks_block``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from ..differentiate.batching import batch_backward
from ..flatten import functions_of, read_gradient
from ..lower.naming import Namer
from ..rules import DEFAULT_TABLE


@dataclass(frozen=True)
class Returns:
    """What the API's function returns: the value with the gradient (``value``), the auxiliary
    value (``aux``), one gradient rather than a tuple (``single``)."""

    value: bool
    aux: bool
    single: bool

    def suffix(self) -> str:
        return "value_and_grad" if self.value else "grad_and_aux" if self.aux else "grads"

    def describe(self, name: str, wrt: str) -> str:
        if self.value:
            what = f"Value of {name} (with its auxiliary value)" if self.aux else f"Value of {name}"
            return f"{what} and its gradient with respect to {wrt}."
        if self.aux:
            return f"Gradient of {name} with respect to {wrt}, and its auxiliary value."
        return f"Gradient of {name} with respect to {wrt}, as a tuple."


def _statement(node: cst.BaseSmallStatement) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([node])


def _result(returns: Returns, value: str, grads: cst.BaseExpression) -> cst.BaseExpression:
    if returns.single:
        grads = cst.Subscript(grads, [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
    if returns.value:
        return cst.Tuple([cst.Element(cst.Name(value)), cst.Element(grads)], lpar=[], rpar=[])
    if returns.aux:
        aux = cst.Subscript(cst.Name(value), [cst.SubscriptElement(cst.Index(cst.Integer("1")))])
        return cst.Tuple([cst.Element(grads), cst.Element(aux)], lpar=[], rpar=[])
    return grads


def api_entry(text: str, grad_name: str, source_name: str, wrt: tuple,
              returns: Returns) -> Optional[tuple]:
    """``(text with the function appended, its name)``, or None (see the module doc)."""
    found = read_gradient(text, grad_name)
    if found is None:
        return None
    _, functions, grad, (fwd, bwd, args, seed, _) = found
    params = {p.name.value for p in grad.params.params + grad.params.kwonly_params}
    namer = Namer(params | set(functions))
    name = namer.fresh(f"{source_name}_{returns.suffix()}")
    value, residuals = namer.fresh("value"), namer.fresh("residuals")
    unpack = cst.Assign([cst.AssignTarget(cst.Tuple([cst.Element(cst.Name(value)),
                                                     cst.Element(cst.Name(residuals))]))],
                        cst.Call(fwd.name, args))
    grads = cst.Call(bwd.name, [cst.Arg(cst.Name(residuals)), cst.Arg(cst.Name(seed))])
    doc = cst.Expr(cst.SimpleString(f'"""{returns.describe(source_name, ", ".join(wrt))}"""'))
    body = [_statement(doc), _statement(unpack),
            _statement(cst.Return(_result(returns, value, grads)))]
    new = grad.with_changes(name=cst.Name(name), body=grad.body.with_changes(body=body),
                            leading_lines=())
    return _formatted(text, cst.Module([new]).code), name


def tuple_items(function: cst.FunctionDef, position: int) -> Optional[int]:
    """How many items the ``position``-th element of what ``function`` returns has, where every
    ``return`` writes it as a tuple display (``return (a, b), (a_dot, b_dot)``); None else."""
    counts = set()
    for node in _returns(function.body):
        value = node.value
        item = value.elements[position].value if isinstance(value, cst.Tuple) and \
            len(value.elements) > position else None
        if not isinstance(item, cst.Tuple) or any(isinstance(e, cst.StarredElement)
                                                   for e in item.elements):
            return None
        counts.add(len(item.elements))
    return counts.pop() if len(counts) == 1 else None


def _returns(node: cst.CSTNode) -> list:
    """The return statements of a function body (not of functions defined inside it)."""
    found = []
    for child in node.children:
        if isinstance(child, cst.Return):
            found.append(child)
        elif not isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            found.extend(_returns(child))
    return found


def _items(name: str, outputs: Optional[int]) -> list:
    """One name for a one-array output, else one per item: ``x_columns_0``, ``x_columns_1``."""
    return [name] if outputs is None else [f"{name}_{i}" for i in range(outputs)]


def _layout(blocks: list, single: bool, outputs: Optional[int]) -> str:
    """``blocks[j][i]`` (input j, output item i) laid out as JAX does: per output item (when the
    output is a tuple), then per input (when argnums is a tuple). An output the code does not
    show as a tuple may still be a pytree, its blocks trees of its structure: the runtime lays
    those out (``s2s.outputs_outermost``)."""
    if outputs is None:
        return blocks[0][0] if single else f"s2s.outputs_outermost({_tuple([b[0] for b in blocks])})"
    per_output = [[b[i] for b in blocks] for i in range(len(blocks[0]))]  # an item may be a
    # pytree the code does not show (a gradient's tuple): the runtime lays its blocks out too
    return _tuple([row[0] if single else f"s2s.outputs_outermost({_tuple(row)})"
                   for row in per_output])


def _tuple(items: list) -> str:
    """A tuple display (no trailing comma but for one item: black keeps it on one line)."""
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def jacobian_entry(text: str, jvp_name: str, source_name: str, wrt: tuple, tangents: tuple,
                   single: bool, outputs: Optional[int] = None,
                   parts: tuple = ("", "")) -> Optional[tuple]:
    """``(text with <f>_jacfwd appended, its name)`` for the jvp function ``jvp_name`` of
    ``text`` whose tangent parameters are ``tangents`` (of the parameters ``wrt``; one block
    each, a tuple of blocks unless ``single``), or None for parameters of another form. Its
    value is one array, or a tuple of ``outputs`` items (read from the jvp's returns if None).
    ``parts``: the jvp's values function and its tangent part for many tangents at once
    (compose.forward_parts), which a single-array value runs on chunks of unit tangents (one
    sweep per chunk, not per element); ("", "") where there are none."""
    module = cst.parse_module(text)
    functions = functions_of(module)
    jvp = functions.get(jvp_name)
    if jvp is None or jvp.params.posonly_params or jvp.params.star_kwarg or \
            isinstance(jvp.params.star_arg, cst.Param):
        return None
    primal = [p for p in jvp.params.params if p.name.value not in tangents]
    keywords = [p for p in jvp.params.kwonly_params if p.name.value not in tangents]
    named = [p.name.value for p in jvp.params.params + jvp.params.kwonly_params]
    if named != [p.name.value for p in primal + keywords] + list(tangents):
        return None
    primal, keywords = _last_without_comma(primal, keywords)
    outputs = outputs if outputs is not None else tuple_items(jvp, 1)
    names = [p.name.value for p in primal] + [f"{p.name.value}={p.name.value}" for p in keywords]
    namer = Namer(set(names) | set(functions) | set(tangents))
    name = namer.fresh(f"{source_name}_jacfwd")
    lines, blocks = [], []
    values_name, tangents_name = parts
    if values_name and tangents_name and outputs is None:
        values = namer.fresh("values")
        lines.append(f"{values} = {values_name}({', '.join(names)})[1]")
        for j, param in enumerate(wrt):
            units, chunks = namer.fresh(f"{param}_units"), namer.fresh(f"{param}_chunks")
            along = ", ".join(units if i == j else f"s2s.batch_constant(s2s.zeros_like({w}), {units})"
                              for i, w in enumerate(wrt))
            lines += [f"{chunks} = []", f"for {units} in s2s.unit_chunks({param}):",
                      f"    {chunks}.append({tangents_name}({values}, {along}))"]
            blocks.append([f"s2s.chunks_block({chunks}, {param})"])
        how = "the values once, then the tangent part per chunk of unit tangents"
    else:
        for j, param in enumerate(wrt):
            unit = namer.fresh(f"{param}_unit")
            along = ", ".join(f"{t}={unit if i == j else f's2s.zeros_like({w})'}"
                              for i, (w, t) in enumerate(zip(wrt, tangents)))
            loop, columns = _column_loop(namer, param, unit,
                                         f"{jvp_name}({', '.join(names)}, {along})[1]", outputs)
            lines += loop
            blocks.append([f"s2s.columns_block({c}, np.shape({param}))" for c in columns])
        how = "one forward sweep per element"
    doc = f'"""Jacobian of {source_name} with respect to {", ".join(wrt)}: {how}."""'
    return _appended(text, name, _signature(jvp, primal, keywords), doc, lines,
                     _layout(blocks, single, outputs)), name


def _last_without_comma(primal: list, keywords: list) -> tuple:
    """The parameter lists with no trailing comma after the last (black would keep one
    parameter per line)."""
    last = keywords if keywords else primal
    if last:
        last[-1] = last[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return primal, keywords


def _column_loop(namer: Namer, param: str, unit: str, call: str, outputs: Optional[int]) -> tuple:
    """``(lines, lists)``: the loop that collects ``call``'s tangent (one list, or one per item
    of a tuple of ``outputs``) along each unit tangent ``unit`` of ``param``."""
    columns = [namer.fresh(n) for n in _items(f"{param}_columns", outputs)]
    lines = [f"{c} = []" for c in columns] + [f"for {unit} in s2s.basis({param}):"]
    if outputs is None:
        return lines + [f"    {columns[0]}.append({call})"], columns
    items = [namer.fresh(n) for n in _items(f"{param}_column", outputs)]
    lines.append(f"    {', '.join(items)} = {call}")
    return lines + [f"    {c}.append({item})" for c, item in zip(columns, items)], columns


def reverse_jacobian_entry(text: str, grad_name: str, source_name: str, wrt: tuple,
                           single: bool, outputs: Optional[int] = None) -> Optional[tuple]:
    """``(text with <f>_jacrev appended, its name)``: per element of the output (of each item
    of a tuple output, read from the forward sweep's returns), a forward and a backward sweep
    (which consumes its residuals) seeded with that element's unit, the gradients kept as rows
    of the blocks; where the backward sweep has a batched form and the value is one array when
    it runs, a sweep per chunk of those units instead (_row_chunks). None where ``grad_name`` is
    not of codegen's shape."""
    found = read_gradient(text, grad_name)
    if found is None or not (found[2].params.params or found[2].params.kwonly_params):
        return None
    _, functions, grad, (fwd, bwd, args, _, _) = found
    primal, keywords = list(grad.params.params), list(grad.params.kwonly_params)
    if keywords:  # the seed parameter is the last
        keywords.pop()
    else:
        primal.pop()
    primal, keywords = _last_without_comma(primal, keywords)
    outputs = outputs if outputs is not None else tuple_items(fwd, 0)
    namer = Namer({p.name.value for p in grad.params.params} | set(functions))
    name = namer.fresh(f"{source_name}_jacrev")
    value, seed, grads = namer.fresh("value"), namer.fresh("seed"), namer.fresh("grads")
    call = cst.Module([]).code_for_node(cst.Call(fwd.name, args))
    values = [value] if outputs is None else [f"{value}[{i}]" for i in range(outputs)]
    rows_bwd = batch_backward(bwd, namer.fresh(f"{bwd.name.value}_rows"), DEFAULT_TABLE) \
        if outputs is None else None
    rows = [[namer.fresh(n) for n in _items(f"{w}_rows", outputs)] for w in wrt]
    lines = [f"{value} = {call}[0]", *(f"{r} = []" for per_input in rows for r in per_input)]
    for i, item in enumerate(values):
        seeds = seed if outputs is None else _tuple(
            [seed if k == i else f"s2s.zeros_like({other})" for k, other in enumerate(values)])
        lines += [f"for {seed} in s2s.basis({item}):",
                  f"    {grads} = {bwd.name.value}({call}[1], {seeds})",
                  *(f"    {per_input[i]}.append({grads}[{k}])" for k, per_input in enumerate(rows))]
    blocks = [[f"s2s.rows_block({r}, s2s.output_shapes({item}))" for r, item in zip(per_input, values)]
              for per_input in rows]
    doc = (f'"""Jacobian of {source_name} with respect to {", ".join(wrt)}: one backward '
           'sweep per element of its value."""')
    if rows_bwd is not None:
        # the value's shape is known when it runs: a pytree value takes one sweep per element,
        # one array (or number) a sweep per chunk of its elements
        lines = [lines[0], f"if s2s.tree_output({value}):",
                 *(f"    {line}" for line in lines[1:]), f"    return {_layout(blocks, single, outputs)}"]
        return _row_chunks(text, grad, (primal, keywords), rows_bwd, (lines, call, value, seed),
                           namer, name, source_name, wrt, single), name
    return _appended(text, name, _signature(grad, primal, keywords), doc, lines,
                     _layout(blocks, single, outputs)), name


def _row_chunks(text: str, grad: cst.FunctionDef, params: tuple, rows_bwd: cst.FunctionDef,
                names: tuple, namer: Namer, name: str, source_name: str, wrt: tuple,
                single: bool) -> str:
    """``text`` with the backward sweep for many seeds ``rows_bwd`` and ``<f>_jacrev`` using it
    appended: after ``names[0]`` (the value's line, then what a pytree value runs), a forward
    sweep and a backward sweep per chunk of unit cotangents of a one-array output (the sweep
    consumes its residuals, so each chunk runs its own forward sweep)."""
    lines, call, value, seeds = names
    grads = namer.fresh("grads")
    chunks = [namer.fresh(f"{w}_chunks") for w in wrt]
    lines = [*lines, *(f"{c} = []" for c in chunks),
             f"for {seeds} in s2s.unit_chunks({value}):",
             f"    {grads} = {rows_bwd.name.value}({call}[1], {seeds})",
             *(f"    {c}.append({grads}[{k}])" for k, c in enumerate(chunks))]
    blocks = [[f"s2s.row_chunks_block({c}, np.shape({value}), {w})"] for c, w in zip(chunks, wrt)]
    doc = (f'"""Jacobian of {source_name} with respect to {", ".join(wrt)}: one backward '
           'sweep per chunk of its elements (per element for a pytree value)."""')
    with_rows = _formatted(text, cst.Module([rows_bwd]).code)
    return _appended(with_rows, name, _signature(grad, *params), doc, lines,
                     _layout(blocks, single, None))


def hessian_entry(text: str, calls: dict, source_name: str, wrt: tuple,
                  single: bool) -> Optional[tuple]:
    """``(text with <f>_hessian appended, its name)``: the Hessian of ``source_name`` with respect
    to ``wrt`` from a second-order module's functions ``calls`` (derive.CALLS["rev2"] -> name):
    the values its tangent part reads, once (``hvp_values``), then per input that part for its
    unit tangents, a chunk of them at a time where it has a batched form (``hvp_tangents``), one
    at a time else (``hvp_tangent``), or the whole product per unit where it does not split
    (``hvp``). Blocks ``[i][j]`` of shape ``x_i.shape + x_j.shape`` (one block when ``single``);
    None where the gradient is not of codegen's shape."""
    found = read_gradient(text, calls["grad"])
    if found is None or not calls.get("hvp"):
        return None
    _, functions, grad, _ = found
    primal, keywords = list(grad.params.params), list(grad.params.kwonly_params)
    seed = (keywords or primal).pop()  # the seed parameter is the last
    primal, keywords = _last_without_comma(primal, keywords)
    names = [p.name.value for p in primal] + [f"{p.name.value}={p.name.value}" for p in keywords]
    namer = Namer({p.name.value for p in grad.params.params + grad.params.kwonly_params} |
                  set(functions) | {seed.name.value})
    name = namer.fresh(f"{source_name}_hessian")
    lines: list = []
    parts = _tangent_part(calls, names, wrt, namer, lines, functions)
    if parts is None:
        return None
    blocks = [_hessian_column_loop(namer, lines, wrt, j, parts) for j in range(len(wrt))]
    how = {"batched": "then its tangent part for a chunk of unit tangents at a time",
           "one": "then its tangent part for one unit tangent at a time",
           "whole": "one Hessian-vector product per unit tangent"}[parts[0]]
    doc = (f'"""Hessian of {source_name} with respect to {", ".join(wrt)}: forward mode over its '
           f'gradient{", the values once, " if parts[0] != "whole" else ", "}{how}."""')
    return _appended(text, name, _signature(grad, primal, keywords), doc, lines,
                     _hessian_layout(blocks, single)), name


def tangent_gradient_hessian_entry(text: str, grad_name: str, source_name: str, wrt: tuple,
                                   tangents: tuple, single: bool) -> Optional[tuple]:
    """``(text with <f>_hessian appended, its name)``: the Hessian of ``source_name`` by reverse
    mode over its forward mode, from ``text``, the generated gradient ``grad_name`` of its jvp
    function (whose tangent parameters are ``tangents``, of ``wrt``): per unit tangent, one
    forward sweep of the jvp and one backward sweep seeded on its tangent output, whose
    gradients are ``H`` times that unit; None where ``grad_name`` is not of codegen's shape."""
    found = read_gradient(text, grad_name)
    if found is None:
        return None
    _, functions, grad, (fwd, bwd, args, seed, _) = found
    kept = [p for p in grad.params.params + grad.params.kwonly_params
            if p.name.value not in tangents and p.name.value != seed]
    primal = [p for p in kept if p in grad.params.params]
    keywords = [p for p in kept if p in grad.params.kwonly_params]
    primal, keywords = _last_without_comma(primal, keywords)
    namer = Namer({p.name.value for p in grad.params.params + grad.params.kwonly_params} |
                  set(functions) | {seed})
    name = namer.fresh(f"{source_name}_hessian")
    call = cst.Module([]).code_for_node(cst.Call(fwd.name, args))
    grads = namer.fresh("grads")
    lines, blocks = [], []
    for j, param in enumerate(wrt):
        unit = namer.fresh(f"{param}_unit")
        columns = [namer.fresh(n) for n in _items(f"{param}_columns", len(wrt))]
        lines += [f"{c} = []" for c in columns] + [f"for {unit} in s2s.basis({param}):"]
        lines += [f"    {t} = {unit if k == j else f's2s.zeros_like({w})'}"
                  for k, (w, t) in enumerate(zip(wrt, tangents))]
        lines.append(f"    {grads} = {bwd.name.value}({call}[1], (0.0, 1.0))")
        lines += [f"    {c}.append({grads}[{i}])" for i, c in enumerate(columns)]
        blocks.append([f"s2s.columns_block({c}, np.shape({param}))" for c in columns])
    doc = (f'"""Hessian of {source_name} with respect to {", ".join(wrt)}: reverse mode over its '
           'forward mode, one backward sweep per unit tangent."""')
    return _appended(text, name, _signature(grad, primal, keywords), doc, lines,
                     _hessian_layout(blocks, single)), name


def _tangent_part(calls: dict, names: list, wrt: tuple, namer: Namer, lines: list,
                  functions: dict) -> Optional[tuple]:
    """``(kind, call(units, j))``: how the Hessian function gets the products along the tangents
    ``units`` of input ``j`` (the other inputs' tangents zero), with the line computing the
    values once appended to ``lines`` where the forward mode splits."""
    def along(units: str, j: int, zero: str) -> list:
        return [units if k == j else zero.format(w) for k, w in enumerate(wrt)]

    if calls.get("hvp_values"):
        values = namer.fresh("values")
        lines.append(f"{values} = {calls['hvp_values']}({', '.join(names)})[1]")
        if calls.get("hvp_tangents"):
            return "batched", lambda units, j: (
                f"{calls['hvp_tangents']}({', '.join([values, *along(units, j, 's2s.batch_constant(s2s.zeros_like({0}), ' + units + ')')])})")
        return "one", lambda units, j: (
            f"{calls['hvp_tangent']}({', '.join([values, *along(units, j, 's2s.zeros_like({0})')])})")
    hvp = functions.get(calls["hvp"])
    tangents = [p.name.value for p in hvp.params.kwonly_params][-len(wrt):] if hvp else []
    if len(tangents) != len(wrt):
        return None
    return "whole", lambda units, j: (f"{calls['hvp']}({', '.join(names)}, " + ", ".join(
        f"{t}={a}" for t, a in zip(tangents, along(units, j, 's2s.zeros_like({0})'))) + ")")


def _hessian_column_loop(namer: Namer, lines: list, wrt: tuple, j: int, parts: tuple) -> list:
    """Append the loop over input ``j``'s unit tangents (chunks of them for a batched tangent
    part) to ``lines``; return the blocks ``[i][j]`` it makes, one per input ``i``."""
    kind, call = parts
    param, count = wrt[j], len(wrt)
    outputs = None if count == 1 else count
    if kind == "batched":
        units = namer.fresh(f"{param}_units")
        chunks = [namer.fresh(n) for n in _items(f"{param}_chunks", outputs)]
        items = [namer.fresh(n) for n in _items(f"{param}_chunk", outputs)]
        lines += [f"{c} = []" for c in chunks] + [f"for {units} in s2s.unit_chunks({param}):",
                                                  f"    {', '.join(items)} = {call(units, j)}"]
        lines += [f"    {c}.append({item})" for c, item in zip(chunks, items)]
        return [f"s2s.chunks_block({c}, {param})" for c in chunks]
    unit = namer.fresh(f"{param}_unit")
    loop, columns = _column_loop(namer, param, unit, call(unit, j), outputs)
    lines += loop
    return [f"s2s.columns_block({c}, np.shape({param}))" for c in columns]


def hvp_entry(text: str, hvp_name: str, source_name: str, wrt: tuple,
              single: bool) -> Optional[tuple]:
    """``(text with <f>_hvp appended, its name)``: the Hessian of ``source_name`` times
    ``tangents`` by forward mode over its gradient, a call of the generated Hessian-vector product
    ``hvp_name`` (one keyword-only tangent parameter per name of ``wrt``) with ``tangents`` (one
    array for ``single``, else a tuple of one per name, the product a tuple alike); None for
    parameters of another form."""
    module = cst.parse_module(text)
    functions = functions_of(module)
    hvp = functions.get(hvp_name)
    if hvp is None or hvp.params.posonly_params or hvp.params.star_kwarg or \
            isinstance(hvp.params.star_arg, cst.Param) or len(hvp.params.kwonly_params) != len(wrt):
        return None
    tangents = [p.name.value for p in hvp.params.kwonly_params]
    names = [p.name.value for p in hvp.params.params]
    if _TANGENTS in names or _TANGENTS in tangents or _TANGENTS in functions:
        return None
    name = Namer(set(names) | set(functions) | set(tangents)).fresh(f"{source_name}_hvp")
    along = [f"{t}={_TANGENTS}" if single else f"{t}={_TANGENTS}[{k}]" for k, t in enumerate(tangents)]
    call = f"{hvp_name}({', '.join(names + along)})"
    params = cst.Module([]).code_for_node(hvp.params.with_changes(
        kwonly_params=[cst.Param(cst.Name(_TANGENTS))], star_arg=cst.ParamStar()))
    doc = (f'"""The Hessian of {source_name} with respect to {", ".join(wrt)} times {_TANGENTS}: '
           'forward mode over its gradient."""')
    return _appended(text, name, params, doc, [],
                     f"({call},)" if len(wrt) == 1 and not single else call), name


def tangent_gradient_hvp_entry(text: str, grad_name: str, source_name: str, wrt: tuple,
                               tangents: tuple, single: bool) -> Optional[tuple]:
    """``(text with <f>_hvp appended, its name)``: as hvp_entry, by reverse mode over the forward
    mode (``text``: the generated gradient ``grad_name`` of its jvp function, whose tangent
    parameters are ``tangents``, of ``wrt``): one forward sweep of the jvp along ``tangents`` and
    one backward sweep seeded on its tangent output; None where ``grad_name`` is not of codegen's
    shape."""
    found = read_gradient(text, grad_name)
    if found is None:
        return None
    _, functions, grad, (fwd, bwd, args, seed, _) = found
    kept = [p for p in grad.params.params + grad.params.kwonly_params
            if p.name.value not in tangents and p.name.value != seed]
    taken = {p.name.value for p in grad.params.params + grad.params.kwonly_params} | set(functions)
    if _TANGENTS in taken:
        return None
    name = Namer(taken | {seed}).fresh(f"{source_name}_hvp")
    lines = [f"{t} = {_TANGENTS}" if single else f"{t} = {_TANGENTS}[{k}]"
             for k, t in enumerate(tangents)]
    call = cst.Module([]).code_for_node(cst.Call(fwd.name, args))
    grads = f"{bwd.name.value}({call}[1], (0.0, 1.0))"
    doc = (f'"""The Hessian of {source_name} with respect to {", ".join(wrt)} times {_TANGENTS}: '
           'reverse mode over its forward mode."""')
    return _appended(text, name, _tangents_signature(grad, kept), doc,
                     lines, f"{grads}[0]" if single else f"tuple({grads})"), name


def gradient_hvp_entry(text: str, grad_name: str, source_name: str, wrt: tuple,
                       single: bool) -> Optional[tuple]:
    """``(text with <f>_hvp appended, its name)``: as hvp_entry, by reverse mode over the
    generated gradient (``text``: the gradient's generated reverse mode, ``grad_name`` its
    ``<f>_grad``), its output seeded with ``tangents`` (the Hessian is symmetric); None where
    ``grad_name`` is not of codegen's shape."""
    found = read_gradient(text, grad_name)
    if found is None:
        return None
    _, functions, grad, (fwd, bwd, args, seed, _) = found
    kept = [p for p in grad.params.params + grad.params.kwonly_params if p.name.value != seed]
    taken = {p.name.value for p in grad.params.params + grad.params.kwonly_params} | set(functions)
    if _TANGENTS in taken:
        return None
    name = Namer(taken).fresh(f"{source_name}_hvp")
    given = _TANGENTS if single or len(wrt) > 1 else f"{_TANGENTS}[0]"
    call = cst.Module([]).code_for_node(cst.Call(fwd.name, args))
    grads = f"{bwd.name.value}({call}[1], {given})"
    doc = (f'"""The Hessian of {source_name} with respect to {", ".join(wrt)} times {_TANGENTS}: '
           'reverse mode over its gradient."""')
    return _appended(text, name, _tangents_signature(grad, kept), doc,
                     [], f"{grads}[0]" if single else f"tuple({grads})"), name


def _tangents_signature(grad: cst.FunctionDef, kept: list) -> str:
    """The parameter list of an appended Hessian-vector product: ``grad``'s parameters ``kept``,
    its keyword-only ones after a bare ``*`` with ``tangents`` last."""
    primal = [p for p in kept if p in grad.params.params]
    keywords = [p for p in kept if p in grad.params.kwonly_params]
    tangents = cst.Param(cst.Name(_TANGENTS))
    return _signature(grad, *_last_without_comma(primal, keywords + [tangents]))


# The keyword-only parameter of a generated Hessian-vector product: the tangents it multiplies.
_TANGENTS = "tangents"


def _signature(function: cst.FunctionDef, primal: list, keywords: list) -> str:
    """The parameter list of an appended function: ``function``'s with ``primal`` and keyword-only
    ``keywords`` (a bare ``*`` before them where there are any)."""
    return cst.Module([]).code_for_node(function.params.with_changes(
        params=primal, kwonly_params=keywords,
        star_arg=cst.ParamStar() if keywords else cst.MaybeSentinel.DEFAULT))


def _hessian_layout(blocks: list, single: bool) -> str:
    """``blocks[j][i]`` (unit tangents of input j, gradient i) as the Hessian's ``[i][j]``."""
    if single:
        return blocks[0][0]
    count = len(blocks)
    return _tuple([_tuple([blocks[j][i] for j in range(count)]) for i in range(count)])


def _appended(text: str, name: str, params: str, doc: str, lines: list, result: str) -> str:
    """``text`` with ``def name(params):`` appended: ``doc``, ``lines``, ``return result``."""
    body = "\n".join(f"    {line}" for line in [doc, *lines, f"return {result}"])
    return _formatted(text, f"def {name}({params}):\n{body}\n")


def _formatted(text: str, function: str) -> str:
    import black

    from .codegen import BLACK_MODE

    return text + "\n\n" + black.format_str(function, mode=BLACK_MODE)


__all__ = ["Returns", "api_entry", "gradient_hvp_entry", "hessian_entry", "hvp_entry", "jacobian_entry", "reverse_jacobian_entry", "tangent_gradient_hessian_entry", "tangent_gradient_hvp_entry",
           "tuple_items"]

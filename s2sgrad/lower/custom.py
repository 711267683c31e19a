"""custom_gradient: a decorated ParsedFunction -> its forward and backward sweeps (a VjpFunction).

The forward sweep is the user's body as written, minus the definition of ``grad_fn``; it returns
the value and the names ``grad_fn`` captures, as they are when the function returns (Python's late
binding). The backward sweep binds ``grad_fn``'s parameter (``dy``) to the upstream adjoint and
runs ``grad_fn``'s own code, fenced by comments that name the function; its result goes through
``s2s.custom_result``, which checks the count and shapes and turns ``None`` into zeros. Nothing in
the forward body is differentiated.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst
import libcst.matchers as m

from ..differentiate.reverse import VjpFunction
from ..program import Comment, Verbatim, lift, unpack_target
from ..read.parse import ParsedFunction
from .naming import Namer
from .scope import read_names, statements_of
from .structure import structure
from ..read.walk import findall

CUSTOM_DECORATORS = frozenset({"s2sgrad.custom_gradient", "s2sgrad.custom.custom_gradient"})


def _code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def is_custom_def(pf: ParsedFunction) -> bool:
    """Whether the definition carries ``@s2sgrad.custom_gradient`` (resolved statically)."""
    for deco in pf.node.decorators:
        if pf.qualified_name(deco.decorator) in CUSTOM_DECORATORS:
            return True
    return False


def _lines(node: cst.CSTNode) -> list:
    """A statement of the user's, kept as written."""
    return [Verbatim(node)]


def _assigned(node: cst.CSTNode) -> set:
    names = set()
    for target in findall(node, m.AssignTarget() | m.AugAssign() | m.AnnAssign() | m.For()):
        tgt = target.target
        names |= {n.value for n in findall(tgt, m.Name())}
    for d in findall(node, m.FunctionDef()):
        names.add(d.name.value)
    return names


class _GradFn:
    """The grad closure: its parameters, its body (None for a lambda) and how to call it."""

    def __init__(self, params: list, body: Optional[list], lambda_body: Optional[cst.CSTNode],
                 definition: Optional[cst.CSTNode], node: cst.CSTNode) -> None:
        self.params = params
        self.body = body
        self.lambda_body = lambda_body
        self.definition = definition
        self.node = node


def _grad_params(pf: ParsedFunction, params: cst.Parameters, name: str) -> list:
    names = [p.name.value for p in list(params.posonly_params) + list(params.params)]
    kwonly = [p.name.value for p in params.kwonly_params]
    if "variables" in names + kwonly:
        node = next(p for p in list(params.params) + list(params.kwonly_params)
                    if p.name.value == "variables")
        raise pf.error(node, f"{name} declares `variables`, TensorFlow's argument for "
                       "tf.Variables, which has no meaning for numpy code",
                       "remove the `variables` parameter; return one gradient per positional "
                       "parameter instead")
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
        raise pf.error(params, f"{name} must take one upstream gradient per output, by name",
                       "write `def grad(dy):` (or one parameter per output)")
    if not names:
        raise pf.error(params, f"{name} takes no upstream gradient", "write `def grad(dy):`")
    return names


def find_grad_fn(pf: ParsedFunction, statements: list) -> tuple:
    """(value expression, _GradFn, forward statements) of a custom_gradient body, or a located error."""
    fn = pf.node
    name = fn.name.value
    for y in findall(fn.body, m.Yield() | m.Await()):
        raise pf.error(y, f"custom_gradient function {name} cannot be a generator",
                       "return (value, grad_fn)")
    last = statements[-1] if statements else fn
    if not (isinstance(last, cst.Return) and isinstance(last.value, cst.Tuple)
            and len(last.value.elements) == 2):
        raise pf.error(last, f"custom_gradient function {name} must end with "
                       "`return value, grad_fn`", "return the value and the gradient function")
    value, grad_expr = (e.value for e in last.value.elements)
    if isinstance(grad_expr, cst.Lambda):
        grad = _GradFn(_grad_params(pf, grad_expr.params, "grad_fn"), None, grad_expr.body, None,
                       grad_expr)
        forward = list(statements[:-1])
    elif isinstance(grad_expr, cst.Name):
        grad, forward = _named_grad_fn(pf, statements[:-1], grad_expr, value)
    else:
        raise pf.error(grad_expr, f"the second element returned by {name} is not a function",
                       "return `value, grad_fn` where grad_fn is a def or lambda in the body")
    for stmt in forward:
        if findall(stmt, m.Return()) and not isinstance(stmt, cst.FunctionDef):
            raise pf.error(stmt, f"custom_gradient function {name} must return once, at the end",
                           "compute the value, then `return value, grad_fn`")
    return value, grad, forward


def _named_grad_fn(pf: ParsedFunction, statements: list, grad_expr: cst.Name, value) -> tuple:
    """``(_GradFn, forward statements)`` for ``return value, grad_fn`` where grad_fn is a def or
    a lambda bound in the body, which must not escape it."""
    name, gname = pf.node.name.value, grad_expr.value
    grad, forward = None, []
    for stmt in statements:
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == gname:
            grad = _grad_function(pf, stmt)
        elif m.matches(stmt, m.Assign(targets=[m.AssignTarget(m.Name(gname))], value=m.Lambda())):
            lam = stmt.value
            grad = _GradFn(_grad_params(pf, lam.params, gname), None, lam.body, stmt, lam)
        else:
            forward.append(stmt)
    if grad is None:
        raise pf.error(grad_expr, f"`{gname}` returned by {name} is not a function defined in "
                       f"{name}", f"define it inside {name}: `def {gname}(dy): ...`")
    for n in [n for stmt in forward for n in findall(stmt, m.Name(gname))] + \
            list(findall(value, m.Name(gname))):
        raise pf.error(n, f"grad_fn `{gname}` escapes {name}: it may only be returned",
                       "do not store, pass or call the gradient function")
    return grad, forward


def _grad_function(pf: ParsedFunction, node: cst.FunctionDef) -> _GradFn:
    for nl in findall(node, m.Nonlocal()):
        raise pf.error(nl, f"grad_fn {node.name.value} writes `nonlocal` names",
                       "compute new values in grad_fn and return them instead")
    for y in findall(node.body, m.Yield()):
        raise pf.error(y, f"grad_fn {node.name.value} cannot be a generator", "return the gradients")
    params = _grad_params(pf, node.params, node.name.value)
    body = _flat_body(node)
    if body is None and not node.decorators and not findall(node.body, m.FunctionDef() | m.Lambda()):
        body = _flat_body(structure(node))  # early returns (control flow on dy): one exit
    if body is not None:
        return _GradFn(params, body, None, None, node)
    return _GradFn(params, None, None, node, node)


def _flat_body(node: cst.FunctionDef) -> Optional[list]:
    """The statements of an undecorated grad_fn that returns once, at its end (inlined as they
    are: generated code stays in the subset s2sgrad reads again), else None."""
    body = statements_of(node.body)
    returns = findall(node.body, m.Return())
    outer_returns = [r for r in returns if not _inside_nested_def(node, r)]
    flat = (not node.decorators and body and isinstance(body[-1], cst.Return)
            and len(outer_returns) == 1 and body[-1].value is not None)
    return body if flat else None


def _inside_nested_def(outer: cst.FunctionDef, target: cst.CSTNode) -> bool:
    for inner in findall(outer.body, m.FunctionDef() | m.Lambda()):
        if any(r is target for r in findall(inner, m.Return())):
            return True
    return False


def custom_vjp(pf: ParsedFunction, *, fwd_name: str, bwd_name: str, top_level: bool,
               wrt: tuple, captured_from: str = "") -> VjpFunction:
    """The forward/backward pair of a custom_gradient function (``captured_from``: the function it
    was defined in, when lower/lift.py lifted it; its keyword-only parameters are what it
    captured there)."""
    fn = pf.node
    name = fn.name.value
    statements = statements_of(fn.body)
    if statements and m.matches(statements[0], m.Expr(m.SimpleString() | m.ConcatenatedString())):
        statements = statements[1:]
    value, grad, forward_stmts = find_grad_fn(pf, statements)
    positional = [p.name.value for p in fn.params.params]
    namer = Namer({n.value for n in findall(fn, m.Name())} | {fwd_name, bwd_name}
                  | {n.value for stmt in grad.body or () for n in findall(stmt, m.Name())})
    captured, shadowed = _captured(fn, grad, forward_stmts)
    # The primals, for shapes; renamed where grad_fn's own names would hide them.
    shape_names = {p: namer.fresh(f"{p}_primal") if p in shadowed else p for p in positional}
    sources, targets = _residuals(captured, positional, shape_names)
    forward = [line for stmt in forward_stmts for line in _lines(stmt)]
    seed, backward = _seed(grad, namer)
    grads = namer.fresh("grads")
    if captured_from:
        backward.append(_captured_note(fn, captured_from))
    backward += _grad_lines(grad, name, grads)
    adjoints = [namer.fresh(f"{p}_bar") for p in positional]
    primals = ", ".join(shape_names[p] for p in positional) + ("," if len(positional) == 1 else "")
    params_text = ", ".join(repr(p) for p in positional) + ("," if len(positional) == 1 else "")
    backward.append(f"{unpack_target(adjoints)} = s2s.custom_result({name!r}, {grads}, "
                    f"({primals}), ({params_text}))")
    chosen = wrt if wrt is not None else tuple(positional)
    returns = _returns(chosen, positional, adjoints, shape_names, top_level)
    return VjpFunction(
        source_name=name, fwd_name=fwd_name, bwd_name=bwd_name, params_code=_code(fn.params),
        forward=lift(forward), result_code=_stated(value, bwd_name, sources, chosen),
        residuals=tuple(sources),
        residuals_param=namer.fresh("residuals"), seed=seed, backward=lift(backward),
        returns=tuple(returns), wrt=tuple(chosen), top_level=top_level,
        residual_targets=tuple(targets),
    )


def _stated(value, bwd_name: str, sources: list, chosen: tuple) -> str:
    """The forward sweep's result: the value marked with the stated rule (``s2s.stated``), so
    that code reading the generated sweeps again differentiates the custom function's output by
    ``bwd_name`` (the user's grad_fn), never through the forward body (the contract's higher
    order)."""
    def display(names) -> str:
        return "(" + ", ".join(names) + ("," if len(names) == 1 else "") + ")"
    return f"s2s.stated({_code(value)}, {bwd_name}, {display(sources)}, {display(chosen)})"


def _captured(fn: cst.FunctionDef, grad, forward_stmts: list) -> tuple:
    """``(captured, shadowed)``: the enclosing function's names grad_fn reads (sorted), and the
    names grad_fn binds itself."""
    locals_ = {p.name.value for p in fn.params.params} | {p.name.value for p in fn.params.kwonly_params}
    for stmt in forward_stmts:
        locals_ |= _assigned(stmt)
    grad_node = grad.node
    is_def = isinstance(grad_node, cst.FunctionDef)
    grad_own = set(grad.params) | _assigned(grad_node.body if is_def else grad_node)
    reads = set(read_names(grad_node.body if is_def else grad.lambda_body))
    return sorted((reads - grad_own) & locals_), grad_own | set(grad.params)


def _residuals(captured: list, positional: list, shape_names: dict) -> tuple:
    """``(sources, targets)``: what the forward hands on (the captured values, then the primals
    for their shapes) under the names the backward reads, sorted by those names."""
    sources, targets = list(captured), list(captured)
    for p in positional:
        if shape_names[p] not in targets:
            sources.append(p)
            targets.append(shape_names[p])
    order = sorted(range(len(targets)), key=lambda i: targets[i])
    return [sources[i] for i in order], [targets[i] for i in order]


def _seed(grad, namer: Namer) -> tuple:
    """The backward's upstream parameter and the lines that unpack it into grad_fn's parameters."""
    if len(grad.params) == 1:
        return grad.params[0], []
    seed = namer.fresh("upstream")
    return seed, [f"{', '.join(grad.params)} = s2s.leaves({seed})"]


def _captured_note(fn: cst.FunctionDef, outer: str) -> Comment:
    """The comment that says what a custom_gradient defined inside ``outer`` differentiates."""
    positional = ", ".join(p.name.value for p in fn.params.params)
    names = [p.name.value for p in fn.params.kwonly_params]
    note = f"custom_gradient defined in {outer}: its rule is the gradient with respect to {positional} only"
    verb = "gets" if len(names) == 1 else "get"
    return Comment(note + (f"; {', '.join(names)}, which it captured, {verb} no gradient through it"
                           if names else ""))


def _grad_lines(grad, name: str, grads: str) -> list:
    """grad_fn's own code, inlined, ending in ``grads = <what it returns>``."""
    lines = [Comment(f">>> custom_gradient {name} (user code)")]
    if grad.body is not None:
        for stmt in grad.body[:-1]:
            lines.extend(_lines(stmt))
        lines.append(f"{grads} = {_code(grad.body[-1].value)}")
    elif grad.lambda_body is not None:
        lines.append(f"{grads} = {_code(grad.lambda_body)}")
    else:
        lines.extend(_lines(grad.definition))
        lines.append(f"{grads} = {grad.definition.name.value}({', '.join(grad.params)})")
    lines.append(Comment(f"<<< custom_gradient {name}"))
    return lines


def _returns(chosen: tuple, positional: list, adjoints: list, shape_names: dict,
             top_level: bool) -> list:
    returns = []
    for p in chosen:
        adj = adjoints[positional.index(p)] if p in positional else None
        if top_level:
            returns.append(f"s2s.like({adj}, {shape_names[p]})" if adj else f"s2s.zeros_like({p})")
        else:
            returns.append(adj or "None")
    return returns

"""Transformations of a function s2sgrad returned, at a call with pytree arguments: vjp, jvp and
the Jacobians of what ``grad`` or ``value_and_grad`` returned (``jacfwd(grad(loss))(params, x)``)
read the generated function it stands for at the call's structures (read/live.py's
TREE_ENTRY_ATTR, which takes the leaves), transform that, and regroup the results into the
structures the user passed and the returned function gives."""

from __future__ import annotations

from typing import Any, Callable, Sequence, Union

from .errors import TransformError, UsageError
from .forward_code import flat_tangents, jvp_or_transpose
from .parameters import argnum_names, def_location, display_name, param_names, positions_of
from .read.live import tree_entry_of
from .returned import again_with_trees, attach
from .tree_arguments import Split, split_call
from .trees import tree_flatten, tree_unflatten
from . import derive


def vjp_again(original: Callable, split: Split, args: tuple) -> tuple:
    """vjp of ``original``, a function s2sgrad returned, at a call with pytree arguments
    (``split``): reverse mode over the generated function it stands for at these structures
    (read/live.py's TREE_ENTRY_ATTR); its value, and a pullback taking a cotangent of that
    value's structure (``vjp(grad(loss), params, x)``: the gradient as a dict, and the Hessian
    times a cotangent dict)."""
    inner, out_def = inner_at(original, split, args)
    params = param_names(inner)
    text, (fwd, bwd, _) = derive.build(inner, tuple(params[i] for i in split.leaf_positions))
    derive.fresh(fwd)
    value, residuals = fwd(*split.args, **dict(split.keywords))
    value_leaves, inner_def = tree_flatten(value)

    def pullback(cotangent: Any) -> tuple:
        leaves, got = tree_flatten(cotangent)
        if got != out_def:
            raise UsageError(f"the cotangent's structure ({got.describe()}) is not the value's "
                             f"({out_def.describe()})")
        return split.regroup(bwd(residuals, tree_unflatten(inner_def, leaves)))

    attach(pullback, inner, text, made="the pullback of s2sgrad.vjp")
    return tree_unflatten(out_def, value_leaves), pullback


def inner_at(original: Callable, split: Split, args: tuple) -> tuple:
    """``(the generated function original stands for at split's structures, the structure of
    its value)``; refused where it has none or flattens other arguments than ``split``."""
    found = tree_entry_of(original)(args, {})
    if found is None or found[0].trees != split.trees:
        raise again_with_trees(display_name(original))
    return found[1], found[2]


def jvp_again(original: Callable, split: Split, args: tuple, tangents: Sequence[Any]) -> tuple:
    """jvp of ``original``, a function s2sgrad returned, at a call with pytree arguments
    (``split``): forward mode over the generated function it stands for at these structures
    (read/live.py's TREE_ENTRY_ATTR, taking the leaves), its value and tangent regrouped into the
    structure ``original`` returns (``jvp(grad(loss), (params,), (v,))``: the gradient and the
    Hessian times ``v``, as dicts)."""
    inner, out_def = inner_at(original, split, args)
    params = param_names(inner)
    flat = flat_tangents(split, tangents, "jvp")
    _, fn, names_dot = jvp_or_transpose(inner, tuple(params[i] for i in split.leaf_positions))
    derive.fresh(fn)
    value, tangent = fn(*split.args, **dict(split.keywords), **dict(zip(names_dot, flat)))
    return (tree_unflatten(out_def, tree_flatten(value)[0]),
            tree_unflatten(out_def, tree_flatten(tangent)[0]))


def jacobian_of_trees_only(original: Callable, argnums: Union[int, Sequence[int]],
                           make_jacobian: Callable, made: str) -> Callable:
    """The Jacobian of ``original``, a function s2sgrad returned whose generated code exists per
    structure of pytree arguments only (its code for arrays was refused: ``model.W`` of a
    dataclass, say): jacobian_again at each call with pytrees, that refusal otherwise.
    ``make_jacobian(fn, wrt)``: the generated Jacobian function of ``fn`` (blocks per leaf)."""
    fun = tree_entry_of(original).fun
    argnum_names(fun, argnums)  # checked against its parameters, at the user's call
    positions, single = positions_of(argnums), isinstance(argnums, int)
    name, params, per_structure = display_name(original), param_names(fun), {}
    refusal = TransformError(
        f"{name} is a function s2sgrad returned whose generated code exists for pytree "
        "arguments only, per structure: its Jacobian is made at a call with pytrees",
        def_location(fun), "call it with the pytree arguments it was made for")

    def jacobian_fun(*args: Any, **kwargs: Any) -> Any:
        split = split_call(fun, name, params, positions, args, kwargs)
        if split is None:
            raise refusal
        return jacobian_again(original, split, args, kwargs, single, make_jacobian, per_structure)

    return attach(jacobian_fun, original, refusal, made=made)


def jacobian_again(original: Callable, split: Split, args: tuple, kwargs: dict, single: bool,
                   make_jacobian: Callable, made: dict) -> Any:
    """The Jacobian of ``original``, a function s2sgrad returned, at a call with pytree
    arguments (``split``): the Jacobian function of the generated function it stands for at
    these structures (read/live.py's TREE_ENTRY_ATTR, which takes the leaves), its blocks
    regrouped into JAX's layout, the output in the structure ``original`` returns. Refused where
    ``original`` has no such function, or differentiates other arguments than this call.
    ``make_jacobian(fn, wrt)``: the generated Jacobian function of ``fn`` (blocks per leaf);
    ``made``: those made so far, by structure."""
    again = tree_entry_of(original)
    found = again(args, kwargs) if again is not None else None
    name = getattr(original, "__name__", "the function")
    if found is None or found[0].trees != split.trees:  # arguments flattened alike
        raise again_with_trees(name)
    _, inner, out_def = found
    key = ("again", split.trees)
    if key not in made:
        params = param_names(inner)
        wrt = tuple(params[i] for i in split.leaf_positions)
        made[key] = make_jacobian(inner, wrt)
    derive.fresh(made[key])
    result = made[key](*split.args, **dict(split.keywords))
    leaves, count = tree_flatten(result)[0], split.result_count

    def per_argument(blocks: list) -> Any:
        grouped = split.regroup(blocks)
        return grouped[0] if single else grouped

    return tree_unflatten(out_def, [per_argument(leaves[i:i + count])
                                    for i in range(0, len(leaves), count)])


__all__ = ["inner_at", "jacobian_again", "jacobian_of_trees_only", "jvp_again", "vjp_again"]

"""Pytree arguments at the API's boundary: a call's arguments -> the flat arguments of the code
generated for their structures, and per-leaf results -> trees shaped like the arguments.

``split_call`` says, for a call of a function differentiated at some positions, whether any of
those arguments is a pytree (None, at the cost of a type test per argument, when none is: the
flat path runs as before); if so it binds keyword arguments and defaults to positions, flattens
each differentiated tree (trees.py), checks every leaf is an array or a number (naming the leaf
by its path), and returns a ``Split``: the flat arguments, the structures (``(parameter,
TreeDef)``, what the generated code is specialized on and cached by), and ``regroup``, which
rebuilds trees from the per-leaf results of generated code.
"""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .arguments import (MASKED, PLAIN, differentiable_value, masked_refusal, not_differentiable,
                        speaks_numpy)
from .errors import UsageError
from .trees import LEAF, TreeDef, tree_flatten, tree_unflatten


def bound_arguments(fun: Callable, args: tuple, kwargs: dict) -> tuple:
    """``args`` with the keyword arguments of ``fun``'s positional parameters (and their
    defaults) put in place; keyword-only ones are refused."""
    if not kwargs:
        return args
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as exc:
        raise UsageError(f"{getattr(fun, '__name__', 'the function')}: {exc}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise UsageError(f"{getattr(fun, '__name__', 'the function')}: keyword-only arguments "
                         f"{sorted(bound.kwargs)} are not passed on by the Hessian's routes yet "
                         "(grad, value_and_grad, jacfwd and jacrev pass them): bind them with a "
                         "closure or functools.partial")
    return bound.args


def keyword_only(fun: Callable, kwargs: dict) -> tuple:
    """``(other, keywords)``: ``kwargs`` split into those of ``fun``'s keyword-only parameters
    (passed on by keyword, never differentiated) and the others."""
    if not kwargs:
        return kwargs, {}
    try:
        params = inspect.signature(fun).parameters
    except (TypeError, ValueError):
        return kwargs, {}
    keywords = {k: v for k, v in kwargs.items()
                if k in params and params[k].kind is inspect.Parameter.KEYWORD_ONLY}
    return {k: v for k, v in kwargs.items() if k not in keywords}, keywords


@dataclass(frozen=True)
class Split:
    """A call's arguments with its differentiated trees flattened: ``args`` (each tree replaced
    by its leaves, in place), ``trees`` (``(parameter, TreeDef)`` of each tree, the generated
    code's specialization), ``defs`` (per differentiated position, its TreeDef, None for a
    plain argument) and ``leaf_positions`` (the positions in ``args`` of each differentiated
    leaf, in order)."""

    args: tuple
    trees: tuple
    defs: tuple
    leaf_positions: tuple
    keywords: tuple = ()  # (name, value) of keyword-only arguments, passed on by keyword
    # for a call into ``*args``: per differentiated position, the index of its result among
    # those of the generated code (which differentiates every argument passed there)
    select: tuple = ()
    results: int = 0  # how many results the generated code gives, where it differs
    order: tuple = ()  # for a call into ``*args``: the positions the generated code differentiates

    @property
    def result_count(self) -> int:
        """How many results (one per differentiated leaf) the generated code gives."""
        return self.results or len(self.leaf_positions)

    def regroup(self, results: Sequence[Any]) -> tuple:
        """Per differentiated position, its tree rebuilt from ``results`` (one per leaf of the
        generated code, in order), or the one result of a plain argument."""
        if self.select:
            results = [results[i] for i in self.select]
        out, start = [], 0
        for treedef in self.defs:
            count = 1 if treedef is None else treedef.num_leaves
            chunk = results[start:start + count]
            out.append(chunk[0] if treedef is None else tree_unflatten(treedef, chunk))
            start += count
        return tuple(out)

    def spread(self, items: Sequence[Any]) -> tuple:
        """``items`` (one per differentiated leaf: tangents) -> one per leaf the generated code
        differentiates: for a call into ``*args``, zeros for the arguments passed there that
        were not asked for."""
        if not self.select:
            return tuple(items)
        out = [_zero_like(self.args[p]) for p in self.order]
        for k, item in zip(self.select, items):
            out[k] = item
        return tuple(out)

    def selected_blocks(self, blocks: Any) -> Any:
        """Blocks ``[a][b]`` per pair of leaves the generated code differentiates -> per pair of
        differentiated leaves (for a call into ``*args``, those asked for)."""
        if not self.select:
            return blocks
        return [[blocks[a][b] for b in self.select] for a in self.select]

    def chunks(self, items: Sequence[Any]) -> list:
        """``items`` (one per differentiated leaf) cut into one list per differentiated position."""
        out, start = [], 0
        for treedef in self.defs:
            count = 1 if treedef is None else treedef.num_leaves
            out.append(list(items[start:start + count]))
            start += count
        return out


def plain_call(args: tuple, kwargs: dict, positions: tuple) -> bool:
    """Whether every argument at ``positions`` is an array or a float passed by position."""
    if kwargs:
        return False
    try:
        return all(type(args[p]) in PLAIN for p in positions)
    except IndexError:
        return False


def split_call(fun: Callable, name: str, params: Sequence[str], positions: tuple, args: tuple,
               kwargs: dict, complex_numbers: bool = False) -> Optional[Split]:
    """The Split of a call of ``fun`` (parameters ``params``) differentiated at ``positions``,
    or None when no argument there is a pytree (lists, tuples, dicts, namedtuples, dataclasses,
    None, registered nodes)."""
    star = star_position(fun)
    if star is None and not kwargs and all(type(a) in PLAIN for a in args):
        return None  # arrays and numbers only (the common call, checked first: it is per call)
    kwargs, keywords = keyword_only(fun, kwargs)
    if star is not None:  # the generated code takes the arguments passed there by position
        return _star_split(name, params, star, positions, args, kwargs, keywords, complex_numbers)
    objects = _objects(fun, params, args, positions) if not kwargs else ()
    if not objects and plain_call(args, kwargs, positions):
        return None
    args = bound_arguments(fun, args, kwargs)
    at = [p % len(args) if -len(args) <= p < len(args) else None for p in positions]
    if any(p is None for p in at):
        return None
    flattened = {p: tree_flatten(args[p]) for p in at}
    if not objects and all(treedef.is_leaf() for _, treedef in flattened.values()):
        return None
    if len(set(at)) != len(at):
        raise UsageError(f"{name}: argnums names one argument twice: {positions!r}")
    flat: list = []
    leaf_positions: dict = {}
    trees = []
    for index, value in enumerate(args):
        if index not in flattened:
            flat.append(value)
            continue
        leaves, treedef = flattened[index]
        param = params[index] if index < len(params) else f"argument {index}"
        spots = []
        for k, leaf in enumerate(leaves):
            if type(leaf) not in PLAIN:  # the leaf's path is spelled out only to be quoted
                _check_leaf(name, treedef.path_texts(param)[k], leaf, complex_numbers)
            spots.append(len(flat))
            flat.append(leaf)
        leaf_positions[index] = spots
        if not treedef.is_leaf():
            trees.append((param, treedef))
    defs = tuple(None if flattened[p][1].is_leaf() else flattened[p][1] for p in at)
    return Split(tuple(flat), tuple(trees) + objects, defs,
                 tuple(spot for p in at for spot in leaf_positions[p]), tuple(keywords.items()))


def _objects(fun: Callable, params: Sequence[str], args: tuple, positions: tuple) -> tuple:
    """``(parameter, TreeDef("object", its class))`` for each argument passed by position, not
    differentiated, that is an instance of a class of ``fun``'s own module (``model`` of
    ``loss(model, x)``): the generated code is made per class, its methods read as written in the
    file (lower/methods.py). An instance attribute named like a member of its class is not such
    an argument (the method the class defines would be read in place of the attribute)."""
    found = []
    module = getattr(fun, "__module__", None)
    differentiated = {p % len(args) for p in positions if -len(args) <= p < len(args)}
    for index, value in enumerate(args):
        kind = type(value)
        if kind in PLAIN or index in differentiated or index >= len(params) or \
                getattr(kind, "__module__", None) != module or isinstance(value, type) or \
                callable(value) or not hasattr(value, "__dict__") or speaks_numpy(value) or \
                not tree_flatten(value)[1].is_leaf():
            continue
        members = {n for c in kind.__mro__ if c is not object for n in vars(c)}
        if members & set(vars(value)):
            continue
        found.append((params[index], TreeDef("object", kind)))
    return tuple(found)


def star_position(fun: Callable) -> Optional[int]:
    """The position of ``fun``'s ``*args`` parameter, or None (read off a plain function's code
    object: every call of a transformed function asks)."""
    if type(fun) is types.FunctionType and not hasattr(fun, "__wrapped__"):
        code = fun.__code__
        return code.co_argcount if code.co_flags & inspect.CO_VARARGS else None
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return None
    return next((i for i, p in enumerate(params) if p.kind is p.VAR_POSITIONAL), None)


def _star_split(name: str, params: Sequence[str], star: int, positions: tuple, args: tuple,
                kwargs: dict, keywords: dict, complex_numbers: bool) -> Split:
    """The Split of a call differentiated at positions into ``*args`` (at ``star``): the
    arguments passed there are one tuple (``Options.trees``: the generated code takes them by
    position and differentiates each), the results of those ``positions`` selected."""
    if kwargs:
        raise UsageError(f"{name}: pass the arguments before *{params[star]} by position")
    if any(p < 0 or p >= len(args) for p in positions):
        raise UsageError(f"{name}: argnums {positions!r} do not fit a call with {len(args)} "
                         f"argument(s) (count them from 0, into *{params[star]} too)")
    order: list = []  # the positions of the generated code's differentiated arguments
    for p in positions:
        if p < star and p not in order:
            order.append(p)
        elif p >= star and star not in order:
            order.extend(range(star, len(args)))
    for p in order:
        text = params[p] if p < star else f"{params[star]}[{p - star}]"
        if not tree_flatten(args[p])[1].is_leaf():
            raise UsageError(f"{name}: `{text}` is a pytree; beside *{params[star]}, s2sgrad "
                             "differentiates arrays and numbers only so far")
        _check_leaf(name, text, args[p], complex_numbers)
    tuple_def = TreeDef("tuple", children=tuple(LEAF for _ in range(len(args) - star)))
    return Split(tuple(args), ((params[star], tuple_def),), tuple(None for _ in positions),
                 tuple(positions), tuple(keywords.items()), tuple(order.index(p) for p in positions),
                 len(order), tuple(order))


def _zero_like(value: Any) -> Any:
    """A zero tangent for ``value`` (an array or a number)."""
    return np.zeros_like(value) if isinstance(value, np.ndarray) else 0.0 * value


def _check_leaf(name: str, text: str, leaf: Any, complex_numbers: bool) -> None:
    """An ArgumentError naming the leaf ``text`` when it is not an array or a number."""
    if isinstance(leaf, MASKED):
        raise masked_refusal(name, f"`{text}`")
    if not differentiable_value(leaf, complex_numbers):
        raise not_differentiable(name, text, leaf)


__all__ = ["Split", "TreeDef", "bound_arguments", "keyword_only", "plain_call", "split_call", "star_position"]

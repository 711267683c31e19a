"""``@differentiable``: a function -> the same function, transformed at decoration time, with
``.grad``, ``.value_and_grad`` and ``.source`` attached (and ``.hvp``, ``.hessian`` at order 2);
``.grad`` and ``.value_and_grad`` stand for generated functions, so s2sgrad transforms them again.

The generated text comes from derive.py: from the disk cache when the function's module
text, its options and the s2sgrad installation are unchanged (and the files of functions it calls
from other modules too), so a warm import does no libcst or black work. The text is executed on
first use of ``.grad`` / ``.value_and_grad`` (so module-level names defined below the function
are seen, as in plain Python), and the names it reads are read again from the function's globals
and closure at each call (write/binding.py).
"""

from __future__ import annotations

import functools
import inspect
import linecache
from typing import Any, Callable, Optional

from .calls import Calls, TreeBuilds, forward_mode, tree_entries
from .forward_code import flat_tangents
from .parameters import made_per_call
from .arguments import argument_check
from .boundary import api_boundary
from .compiled import require_numba
from .errors import Location, TransformError, UsageError
from .read.capture import MADE_ATTR, SOURCE_ATTR, display_path, from_function
from .read.live import ENTRY_ATTR, TREE_ENTRY_ATTR, Deferred
from . import derive
from .jacobians import (ScalarCheck, TreeRoutes, float_for_float, hessian_code, run_generated, hvp_code,
                        tree_blocks)
from .specialize import NumberBuilds, lifted_by_numbers, numbers_passed
from .tree_arguments import bound_arguments, split_call, star_position


class _Loaded:
    """The generated code, executed on first use: ``loaded()`` -> its callables, current."""

    def __init__(self, fun: Callable, code: dict, remake: Callable[[], dict],
                 mode: str = "rev") -> None:
        self.fun = fun
        self.remake = remake
        self.code = code
        self.mode = mode
        self.text = code["text"]
        self.sweeps: Optional[tuple] = None

    def loaded(self) -> tuple:
        if self.sweeps is None:
            self.sweeps = derive.functions(self.fun, self.code, self.mode, self.remake)
        derive.fresh(self.sweeps[0])  # the user's values now, as Python reads them
        return self.sweeps


class _PerCall(_Loaded):
    """Where the code for array arguments was refused for a reason a call's arguments may lift
    (a method of an object argument, whose class only the call shows): the refusal, raised by a
    call with arrays there; calls with objects or pytrees get code made for them (TreeBuilds)."""

    def __init__(self, fun: Callable, refusal: TransformError, mode: str) -> None:
        self.fun, self.refusal, self.mode = fun, refusal, mode
        self.code: Optional[dict] = None
        self.text = str(refusal)
        self.sweeps = None

    def loaded(self) -> tuple:
        raise self.refusal


def _default_wrt(fun: Callable) -> tuple:
    params = tuple(inspect.signature(fun).parameters)
    if not params:
        code = fun.__code__
        lines = linecache.getlines(code.co_filename)
        quoted = lines[code.co_firstlineno - 1] if len(lines) >= code.co_firstlineno else ""
        raise TransformError(f"{fun.__name__} has no parameter to differentiate with respect to",
                             Location(display_path(code.co_filename), code.co_firstlineno, 1, quoted),
                             "give it a parameter, or name one with wrt=")
    return (params[0],)


def call_positions(fun: Callable, wrt: tuple) -> tuple:
    """``(positions, single)``: ``positions(args)`` -> the positions of ``fun``'s parameters
    ``wrt`` in a call with ``args`` (a ``*args`` parameter stands for every argument passed
    there, as argnums counting into it); ``single``: whether one array is differentiated."""
    params = tuple(inspect.signature(fun).parameters)
    fixed, star = tuple(params.index(n) for n in wrt), star_position(fun)
    if star is None or star not in fixed:
        return (lambda args: fixed), len(wrt) == 1
    return (lambda args: tuple(q for p in fixed
                               for q in (range(star, len(args)) if p == star else (p,)))), False


def _attach(fun: Callable, wrt: tuple, text: str, sweeps: _Loaded, compiled: bool = False) -> Callable:
    where, single = call_positions(fun, wrt)
    name = fun.__name__
    params = tuple(inspect.signature(fun).parameters)
    positions = tuple(params.index(n) for n in wrt)
    check = argument_check(name, params, positions, wrt)
    trees = TreeBuilds(fun, wrt)
    specialized = NumberBuilds(fun, wrt, False, lambda: sweeps.loaded()[:2], compiled)
    star = star_position(fun) is not None  # (its parameters do not name its arguments)
    forward = None if star else forward_mode(fun, wrt, compiled=compiled)
    calls = Calls(forward, specialized, positions, (single, False, not star), name)  # as grad's

    def value_and_grad(*args: Any, **kwargs: Any) -> tuple:
        result = None if kwargs else calls.known(args) or (
            None if star else trees.known(args, where(args), single, name))
        if result is not None:
            return result
        split = split_call(fun, name, params, where(args), args, kwargs)
        if split is not None:  # pytrees: code generated for their structures
            return trees.call(split, args, where(args), single, name)
        check(args, kwargs)
        numbers = () if star else numbers_passed(params, args, kwargs)
        return calls.run(numbers, args, kwargs)  # code made knowing numbers are 0-d (specialize.py)

    def grad(*args: Any, **kwargs: Any) -> Any:
        return value_and_grad(*args, **kwargs)[1]

    setattr(grad, ENTRY_ATTR, Deferred(lambda: sweeps.loaded()[2]))  # <f>_grad: the same
    tree_entry = tree_entries(fun, name, positions, wrt, (False, single, False), trees)
    setattr(grad, TREE_ENTRY_ATTR, tree_entry(False))  # per structure of pytree arguments
    setattr(value_and_grad, TREE_ENTRY_ATTR, tree_entry(True))
    setattr(value_and_grad, ENTRY_ATTR, Deferred(
        lambda: derive.api_function(fun, wrt, False, True, single, sweeps.mode)))
    for attribute, what in ((grad, "gradient"), (value_and_grad, "value and gradient")):
        attribute.__name__ = f"{name}.{attribute.__name__}"
        attribute.__qualname__ = f"{fun.__qualname__}.{attribute.__name__.rsplit('.', 1)[1]}"
        attribute.__module__ = fun.__module__
        attribute.__doc__ = f"The {what} of {name} with respect to {', '.join(wrt)}."
        setattr(attribute, SOURCE_ATTR, text)
        setattr(attribute, MADE_ATTR, f"{attribute.__name__} (made by @s2sgrad.differentiable)")
    fun.grad = grad
    fun.value_and_grad = value_and_grad
    if sweeps.mode == "rev2":
        _attach_second_order(fun, wrt, sweeps, check)
    fun.source = text
    setattr(fun, SOURCE_ATTR, text)
    return fun


def _attach_second_order(fun: Callable, wrt: tuple, sweeps: _Loaded, check: Callable) -> None:
    """``fun.hvp(*args, tangents=...)`` and ``fun.hessian(*args)``: the generated
    ``<f>_grad_hvp`` (forward mode over the gradient) and the generated Hessian function
    (jacobians.hessian_code); ``check(args, kwargs)``: api.argument_check's of ``fun``."""

    params = list(inspect.signature(fun).parameters)
    positions = tuple(params.index(n) for n in wrt)
    where, single = call_positions(fun, wrt)
    scalar = ScalarCheck(fun)
    tree_route = TreeRoutes(fun, wrt, positions).split  # pytree arguments: per structure
    tree_hessian = TreeRoutes(fun, wrt, positions,
                              make=lambda trees: hessian_code(fun, wrt, False, trees)[1]).split
    code = Deferred(lambda: _second_order_code(derive.hessian_function, hessian_code, fun, wrt,
                                               single, sweeps))
    product = Deferred(lambda: _second_order_code(derive.hvp_function, hvp_code, fun, wrt, single,
                                                  sweeps))

    def hvp(*args: Any, tangents: Any, **kwargs: Any) -> Any:
        split, route = tree_route(args, kwargs, where(args))
        if split is not None:
            flat = flat_tangents(split, (tangents,) if single else tuple(tangents), "hvp")
            out = split.regroup(run_generated(route, split.args, tangents=flat))
            return out[0] if single else out
        args = bound_arguments(fun, args, kwargs)
        check(args, {})
        scalar(args)
        return run_generated(product.get(), args, tangents=tangents if single else tuple(tangents))

    def hessian(*args: Any, **kwargs: Any) -> Any:
        split, per_leaves = tree_hessian(args, kwargs, where(args))
        if split is not None:
            return tree_blocks(split, run_generated(per_leaves, split.args), single)
        args = bound_arguments(fun, args, kwargs)
        check(args, {})
        scalar(args)
        return float_for_float(run_generated(code.get(), args), args, positions, single)

    _describe(fun, wrt, ((hvp, "Hessian times tangents"), (hessian, "Hessian")), sweeps.text)
    # transformed again, each reads generated code: <f>_hvp, the Hessian function
    setattr(hvp, ENTRY_ATTR, product)
    setattr(hessian, ENTRY_ATTR, code)
    fun.hvp = hvp
    fun.hessian = hessian


def _second_order_code(from_module: Callable, otherwise: Callable, fun: Callable, wrt: tuple,
                       single: bool, sweeps: _Loaded) -> Callable:
    """The generated Hessian (``from_module``: derive.hessian_function) or Hessian-vector product
    (derive.hvp_function) of ``fun``: from the decorator's second-order module (``sweeps``), else
    as s2sgrad.hessian or s2sgrad.hvp makes it (``otherwise``: hessian_code, hvp_code)."""
    if sweeps.code is None:  # refused for arrays there (_PerCall)
        sweeps.loaded()
    made = from_module(fun, wrt, single, code=sweeps.code)[1]
    return made if made is not None else otherwise(fun, wrt, single)[1]


def _describe(fun: Callable, wrt: tuple, attributes: tuple, text: str) -> None:
    """Name and document each ``(attribute, what it computes)`` as an attribute of ``fun``, its
    generated code ``text`` (what ``s2sgrad.source`` shows)."""
    for attribute, what in attributes:
        setattr(attribute, SOURCE_ATTR, text)
        attribute.__name__ = f"{fun.__name__}.{attribute.__name__}"
        attribute.__qualname__ = f"{fun.__qualname__}.{attribute.__name__.rsplit('.', 1)[1]}"
        attribute.__doc__ = f"The {what} of {fun.__name__} with respect to {', '.join(wrt)}."
        setattr(attribute, MADE_ATTR, f"{attribute.__name__} (made by @s2sgrad.differentiable)")


@api_boundary
def differentiable(fun: Optional[Callable] = None, *, wrt: Optional[tuple] = None,
                   order: int = 1, compiled: bool = False) -> Any:
    """Mark ``fun`` for ``s2sgrad emit`` and transform it now.

    ``fun`` keeps computing its value; ``fun.grad(*args)`` returns the gradient with respect to
    ``wrt`` (parameter names; default the first parameter): one array, or a tuple in ``wrt`` order.
    ``fun.value_and_grad`` returns ``(value, grad)``; ``fun.source`` is the generated code.
    With ``order=2`` also ``fun.hvp(*args, tangents=...)`` (the Hessian times one tangent per
    ``wrt`` name) and ``fun.hessian(*args)``: forward mode over the generated gradient.
    ``compiled``: as s2sgrad.grad has it (a call with floats runs forward mode compiled by numba).
    A function s2sgrad cannot differentiate raises a located TransformError here, at import;
    one that calls a method of an argument's object gets its code per class of that argument, at
    the first call with it (the class is not known before).
    """
    if fun is None:
        return functools.partial(differentiable, wrt=wrt, order=order, compiled=compiled)
    if order not in (1, 2):
        raise UsageError(f"@differentiable(order={order!r}): order is 1 or 2")
    names = (wrt,) if isinstance(wrt, str) else (tuple(wrt) if wrt is not None else None)
    unit = from_function(fun)
    names = names if names else _default_wrt(fun)
    if compiled:
        require_numba(fun.__name__)
    mode = "rev2" if order == 2 else "rev"
    per_call = made_per_call(fun, names)  # *args: the code is made per call, for its arrays
    if per_call is not None:
        return _attach(fun, names, str(per_call), _PerCall(fun, per_call, mode), compiled)
    try:
        code = derive.code_for(fun, unit, names, mode=mode)
    except TransformError as refusal:
        if refusal.member_of is None and not (refusal.arrays_only and lifted_by_numbers(fun, names, False)):
            raise  # not a member of an object argument, nor lifted by numbers: refused at import
        return _attach(fun, names, str(refusal), _PerCall(fun, refusal, mode), compiled)

    def remake() -> dict:  # the code again, for the values its names hold now
        return derive.code_for(fun, from_function(fun), names, mode=mode)

    return _attach(fun, names, code["text"], _Loaded(fun, code, remake, mode), compiled)

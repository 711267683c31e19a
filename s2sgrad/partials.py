"""``functools.partial`` at the API's boundary: a transformation of ``partial(f, *fixed, **bound)``
is the transformation of ``f`` called with those arguments, its argnums counted past the fixed
positional ones; the fixed and bound values are constants (not differentiated), as JAX has it.
``curried(make)`` wraps a transformation made, then called (``grad``, ``jacfwd``, ``hessian``);
``primal_call(fun, primals)`` reads a call of one called with its primals (``vjp``, ``jvp``,
``hvp``, ``check_grads``)."""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence, Union

from .read.capture import MADE_ATTR, SOURCE_ATTR
from .tree_arguments import bound_arguments


def _shift(argnums: Union[int, Sequence[int]], by: int) -> Any:
    def one(n: Any) -> Any:
        return n + by if isinstance(n, int) and n >= 0 else n
    return one(argnums) if isinstance(argnums, int) else tuple(one(n) for n in argnums)


def curried(make: Callable) -> Callable:
    """``make(fun, argnums, **options)`` taking a partial too."""

    @functools.wraps(make)
    def taking_partials(fun: Any, argnums: Union[int, Sequence[int]] = 0, **options: Any) -> Any:
        if not isinstance(fun, functools.partial):
            return make(fun, argnums, **options)
        fixed, bound = fun.args, dict(fun.keywords)
        inner = make(fun.func, _shift(argnums, len(fixed)), **options)

        def transformed(*args: Any, **kwargs: Any) -> Any:
            return inner(*fixed, *args, **{**bound, **kwargs})

        # Named and described as ``inner``, but not standing for its generated code (whose
        # parameters include the fixed ones): transforming it again is refused, never misread.
        functools.update_wrapper(transformed, inner, updated=())
        del transformed.__wrapped__
        for attr in (MADE_ATTR, SOURCE_ATTR):
            if hasattr(inner, attr):
                setattr(transformed, attr, getattr(inner, attr))
        return transformed

    return taking_partials


def primal_call(fun: Any, primals: Sequence[Any]) -> tuple:
    """``(function, arguments, positions)`` for a transformation of ``fun`` at ``primals``: for
    ``partial(f, *fixed, **bound)``, ``f``, its arguments by position (the fixed ones, the
    primals, the bound ones put in place with the defaults between) and the primals' positions
    after the fixed ones; ``(fun, primals, (0, 1, ...))`` for any other ``fun``."""
    primals = tuple(primals)
    if not isinstance(fun, functools.partial):
        return fun, primals, tuple(range(len(primals)))
    fixed = tuple(fun.args)
    args = bound_arguments(fun.func, fixed + primals, dict(fun.keywords))
    return fun.func, args, tuple(range(len(fixed), len(fixed) + len(primals)))


__all__ = ["curried", "primal_call"]

"""The functional API: grad, value_and_grad, vjp, source. Thin: each call runs the pipeline once."""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any, Callable, Sequence, Union

import numpy as np

from . import runtime
from .errors import GradientError, Location, TransformError, UsageError

SOURCE_ATTR = "__s2sgrad_source__"


def _param_names(fun: Callable) -> tuple:
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        return ()
    return tuple(sig.parameters)


def _wrt_names(fun: Callable, argnums: Union[int, Sequence[int]]) -> tuple:
    if not isinstance(inspect.unwrap(fun), types.FunctionType):
        from .read.capture import from_function

        from_function(fun)  # refuses it with the reason (a builtin, a ufunc, a class...)
    names = _param_names(fun)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    out = []
    for n in nums:
        if not isinstance(n, int) or not -len(names) <= n < len(names):
            code = getattr(fun, "__code__", None)
            raise TransformError(
                f"argnums {argnums!r} does not fit {getattr(fun, '__name__', fun)!r}, "
                f"which has {len(names)} parameter(s)",
                Location(code.co_filename if code else "<unknown>",
                         code.co_firstlineno if code else 0, 1, ""),
                "pass argnums as parameter positions (0 is the first)",
            )
        out.append(names[n])
    return tuple(out)


def _build(fun: Callable, wrt: tuple, has_aux: bool) -> tuple:
    """Transform ``fun`` (or reuse the disk cache); returns the generated text and its
    (forward, backward) functions."""
    from .decorator import load_entry, transform
    from .read.capture import from_function

    entry = transform(fun, from_function(fun), wrt, has_aux)
    fwd, bwd = load_entry(fun, entry)
    return entry["text"], fwd, bwd


def _attach(wrapper: Callable, fun: Callable, text: str) -> Callable:
    functools.update_wrapper(wrapper, fun, assigned=("__module__", "__name__", "__qualname__", "__doc__"))
    del wrapper.__wrapped__
    setattr(wrapper, SOURCE_ATTR, text)
    return wrapper


def _scalar_loss(value: Any, has_aux: bool, name: str) -> Any:
    if has_aux:
        if not (isinstance(value, (tuple, list)) and len(value) == 2):
            raise GradientError(f"has_aux=True requires {name} to return a pair (value, aux)")
        value = value[0]
    runtime.check_scalar(value, name)
    return value


_PLAIN = frozenset({np.ndarray, float, np.float64, np.float32})  # differentiable at a glance
_SCALARS = frozenset({float, np.float64, np.float32})  # real scalar losses at a glance


def _differentiable_value(value: Any) -> bool:
    return isinstance(value, (np.ndarray, float, int, np.number)) and not isinstance(value, bool)


def _sweep(fun: Callable, argnums: Union[int, Sequence[int]], has_aux: bool) -> tuple:
    """The transform behind grad and value_and_grad: ``(text, run)`` where ``run(*args, **kwargs)``
    returns the value and the gradients (one, or a tuple, as argnums says)."""
    wrt = _wrt_names(fun, argnums)
    text, fwd, bwd = _build(fun, wrt, has_aux)
    name = getattr(fun, "__name__", "the function")
    single = isinstance(argnums, int)
    positions = (argnums,) if single else tuple(argnums)

    def check_arguments(args: tuple, kwargs: dict) -> None:
        for position, param in zip(positions, wrt):
            value = args[position] if -len(args) <= position < len(args) else kwargs.get(param, 0.0)
            if not _differentiable_value(value):
                raise GradientError(
                    f"{name}: s2sgrad differentiates with respect to arrays and floats, but "
                    f"`{param}` is a {type(value).__name__}; pass its arrays as separate arguments")

    needed = max((max(p + 1, -p) for p in positions), default=0)  # positional arguments the fast check reads

    def run(*args: Any, **kwargs: Any) -> tuple:
        if kwargs or len(args) < needed:
            check_arguments(args, kwargs)
        else:
            for p in positions:
                if type(args[p]) not in _PLAIN:
                    check_arguments(args, kwargs)
                    break
        value, residuals = fwd(*args, **kwargs)
        if has_aux or type(value) not in _SCALARS:
            _scalar_loss(value, has_aux, name)
        handover = [residuals]
        del residuals
        grads = bwd(handover.pop(), 1.0)  # the backward holds the only reference and frees early
        return value, (grads[0] if single else grads)

    return text, run


def value_and_grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0, *,
                   has_aux: bool = False) -> Callable:
    """``fun``'s value and gradient in one call (JAX conventions for argnums and has_aux)."""
    text, run = _sweep(fun, argnums, has_aux)
    return _attach(run, fun, text)


def grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0, *, has_aux: bool = False) -> Callable:
    """The gradient of scalar-valued ``fun``: one array for an int argnums, a tuple for a tuple."""
    text, run = _sweep(fun, argnums, has_aux)

    def grad_fun(*args: Any, **kwargs: Any) -> Any:
        value, result = run(*args, **kwargs)
        return (result, value[1]) if has_aux else result

    return _attach(grad_fun, fun, text)


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """``(out, pullback)``: ``pullback(cotangent)`` returns one adjoint per primal, as a tuple.

    With ``has_aux=True``, ``fun`` returns ``(out, aux)`` and vjp returns ``(out, pullback, aux)``.
    """
    names = _param_names(fun)
    wrt = names[: len(primals)]
    text, fwd, bwd = _build(fun, wrt, has_aux)
    value, residuals = fwd(*primals)

    def pullback(cotangent: Any) -> tuple:
        return bwd(residuals, cotangent)

    _attach(pullback, fun, text)
    if has_aux:
        out, aux = value
        return out, pullback, aux
    return value, pullback


def source(fn: Callable) -> str:
    """The generated source behind a function s2sgrad returned."""
    text = getattr(fn, SOURCE_ATTR, None)
    if text is None:
        raise UsageError(f"{fn!r} was not made by s2sgrad; pass what grad/value_and_grad/vjp returned")
    return text

"""The one check every public transformation (grad, vjp, jvp, the Jacobians and Hessians, the decorator)
makes of the arguments it is called with: a differentiated argument is an array (numpy's, or
another library's that speaks numpy's dispatch protocols) or a float, and no
argument is a numpy masked array (whose semantics s2sgrad does not differentiate). A refusal is a
GradientError naming the function and the parameter."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .errors import ArgumentError, GradientError
from .read.capture import caller_location

PLAIN = frozenset({np.ndarray, float, np.float64, np.float32})  # differentiable at a glance


def differentiable_value(value: Any, complex_numbers: bool = False) -> bool:
    """Whether s2sgrad differentiates with respect to ``value``: a numpy array (subclasses too),
    a real number (a Python complex where ``complex_numbers``), or an array of another library
    that speaks numpy's dispatch protocols (``speaks_numpy``: CuPy, dask)."""
    kinds = (np.ndarray, float, int, np.number) + ((complex,) if complex_numbers else ())
    return (isinstance(value, kinds) and not isinstance(value, bool)) or speaks_numpy(value)


def speaks_numpy(value: Any) -> bool:
    """Whether ``value`` is an array of another library that numpy's functions and ufuncs dispatch
    to (``__array_function__`` and ``__array_ufunc__``, a ``shape`` and a ``dtype``): generated
    code runs on it as written, and its gradients come back as its own type."""
    kind = type(value)
    return (getattr(kind, "__array_function__", None) is not None
            and getattr(kind, "__array_ufunc__", None) is not None
            and hasattr(value, "shape") and hasattr(value, "dtype"))


def unit_seed(value: Any, has_aux: bool = False) -> Any:
    """The cotangent 1 of a scalar loss ``value`` (``(loss, aux)`` where ``has_aux``) for a
    backward sweep: 1.0, or a one of the loss's own array type when it is another library's array
    (CuPy's, dask's), so the sweep's arrays are of that type too (CuPy's do not mix with numpy's)."""
    if has_aux:
        value = value[0]
    if isinstance(value, (float, np.ndarray, np.generic)) or not speaks_numpy(value):
        return 1.0
    return np.ones_like(value)


MASKED = np.ma.MaskedArray


def argument_check(name: str, params: Sequence[str], positions: tuple, wrt: tuple,
                   complex_numbers: bool = False) -> Callable:
    """``check(args, kwargs)`` for a call of the function ``name`` (parameters ``params``)
    differentiated at ``positions`` (its parameters ``wrt``): a GradientError naming the
    parameter where a differentiated argument is not an array or a float (a tuple, a list, a
    dict), or where any argument is a numpy masked array. The one check every public transformation makes
    of its arguments; cheap (a type test each) when they are plain arrays and floats.
    ``complex_numbers``: a Python complex is differentiated too (vjp: its cotangent says what a
    complex output's adjoint is; grad's gradient of one has no Python type to come back as)."""
    needed = max((max(p + 1, -p) for p in positions), default=0)  # positional arguments read

    def check(args: tuple, kwargs: dict) -> None:
        if not kwargs and len(args) >= needed:
            for p in positions:
                if type(args[p]) not in PLAIN:
                    break
            else:
                for a in args:
                    if isinstance(a, MASKED):
                        break
                else:
                    return
        _refuse(name, params, positions, wrt, args, kwargs, complex_numbers)
    return check


def _refuse(name: str, params: Sequence[str], positions: tuple, wrt: tuple, args: tuple,
            kwargs: dict, complex_numbers: bool) -> None:
    """argument_check's error, if there is one."""
    for position, param in zip(positions, wrt):
        value = args[position] if -len(args) <= position < len(args) else kwargs.get(param, 0.0)
        if not differentiable_value(value, complex_numbers):
            raise not_differentiable(name, param, value)
    named = [(params[i] if i < len(params) else f"argument {i}", a) for i, a in enumerate(args)]
    for param, value in named + list(kwargs.items()):
        if isinstance(value, MASKED):
            raise masked_refusal(name, f"`{param}`", param if param.isidentifier() else "x")


def not_differentiable(name: str, text: str, value: Any) -> ArgumentError:
    """The refusal of ``value`` (the argument or pytree leaf ``text`` of a call of ``name``) where
    s2sgrad differentiates, located at the user's call."""
    hint = (f"differentiate with respect to the other arguments (leave `{text}` out of argnums or "
            "wrt): an argument s2sgrad does not differentiate may be any value")
    if not isinstance(value, (str, bytes)) and hasattr(value, "__dict__"):
        hint += ("; an object is differentiated through its arrays when its class is a dataclass "
                 "or registered with s2sgrad.register_pytree")
    return ArgumentError(
        f"{name}: s2sgrad differentiates with respect to arrays and numbers (and pytrees of them: "
        f"dicts, lists, tuples, namedtuples, dataclasses, registered classes), but `{text}` is a "
        f"{type(value).__name__}", caller_location(), hint)


def masked_refusal(name: str, what: str, spelled: str = "x") -> GradientError:
    """The error for a numpy masked array given as ``what`` (an argument, a tangent) to the
    function ``name``; ``spelled``: how the advice names it."""
    return GradientError(
        f"{name}: {what} is a numpy masked array; s2sgrad does not differentiate numpy's masked "
        "semantics (operations that skip masked entries), so its derivatives would be wrong. "
        f"Use a plain array: `{spelled}.filled(v)` with the value masked entries should take (0.0 "
        f"drops them from sums), or `np.ma.getdata({spelled})` with the mask applied by your own "
        f"code (`np.where(np.ma.getmaskarray({spelled}), 0.0, np.ma.getdata({spelled}))`)")


__all__ = ["MASKED", "PLAIN", "argument_check", "differentiable_value", "masked_refusal",
           "not_differentiable", "speaks_numpy",
           "unit_seed"]

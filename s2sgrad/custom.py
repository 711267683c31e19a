"""User-stated gradients: custom_gradient (TensorFlow semantics), stop_gradient, register_gradient.

These are the runtime faces: outside differentiation a ``custom_gradient`` function returns only
its value and ``stop_gradient`` is the identity. Under transformation s2sgrad reads their source
instead (see s2sgrad/lower/custom.py).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

def custom_gradient(f: Callable) -> Callable:
    """Decorate ``f(*args) -> (value, grad_fn)``: s2sgrad uses ``grad_fn`` as the gradient.

    ``grad_fn(dy)`` receives the upstream gradient of the value (one per leaf of a tuple value) and
    returns one gradient per positional parameter of ``f`` (a tuple for several, ``None`` for
    zero). Called outside differentiation, the decorated function returns only the value. In the
    generated gradient, ``grad_fn``'s code appears as written, fenced by comments naming ``f``.

    A ``grad_fn`` that is itself decorated with ``custom_gradient`` states the gradient of
    ``grad_fn`` with respect to ``dy`` only; it is not the second derivative of ``f``.
    """

    @functools.wraps(f)
    def value_only(*args: Any, **kwargs: Any) -> Any:
        value, _ = f(*args, **kwargs)
        return value

    return value_only


def stop_gradient(x: Any) -> Any:
    """The identity, whose gradient is zero."""
    return x

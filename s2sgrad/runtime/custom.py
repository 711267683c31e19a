"""Custom gradients (numpy only): what generated code calls on the gradients a
``custom_gradient``'s ``grad_fn`` returned (``s2s.custom_result``): checked, zeros for ``None``,
summed down to each parameter's shape."""

from __future__ import annotations

import numpy as np

from .broadcasting import unbroadcast
from .containers import zeros_like

__all__ = [
    "custom_result",
]


def custom_result(name, grads, primals, params):
    """The gradients a custom_gradient ``grad_fn`` returned, one per positional parameter of ``name``:
    ``None`` becomes zeros, a gradient that broadcasts to its parameter is summed down to it, a
    wrong count or shape raises GradientError naming the function, the parameter and the shapes."""
    from ..errors import GradientError

    if len(params) == 1 and not (isinstance(grads, (tuple, list)) and len(grads) == 1):
        if isinstance(grads, (tuple, list)) and not isinstance(primals[0], (tuple, list)):
            raise GradientError(
                f"custom_gradient {name}: grad_fn returned {len(grads)} gradients, but {name} has "
                f"1 positional parameter ({params[0]}); return one gradient")
        grads = (grads,)
    if not isinstance(grads, (tuple, list)):
        raise GradientError(
            f"custom_gradient {name}: grad_fn returned 1 gradient, but {name} has "
            f"{len(params)} positional parameters ({', '.join(params)}); return a tuple")
    if len(grads) != len(params):
        raise GradientError(
            f"custom_gradient {name}: grad_fn returned {len(grads)} gradients, but {name} has "
            f"{len(params)} positional parameter{'s' if len(params) != 1 else ''} "
            f"({', '.join(params)})")
    out = []
    for g, x, p in zip(grads, primals, params):
        if g is None:
            out.append(zeros_like(x))
            continue
        g_shape, x_shape = np.shape(g), np.shape(x)
        if g_shape != x_shape:
            try:
                fits = np.broadcast_shapes(x_shape, g_shape) == g_shape
            except ValueError:
                fits = False
            if not fits:
                raise GradientError(
                    f"custom_gradient {name}: the gradient for parameter `{p}` has shape "
                    f"{g_shape}, but `{p}` has shape {x_shape}")
            g = unbroadcast(g, x)
        out.append(g)
    return tuple(out)

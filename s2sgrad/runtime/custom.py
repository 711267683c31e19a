"""Custom gradients (numpy only): what generated code calls on the gradients a
``custom_gradient``'s ``grad_fn`` returned (``s2s.custom_result``): checked, zeros for ``None``,
summed down to each parameter's shape; and ``s2s.stated``, which marks a custom_gradient
function's output in its generated forward sweep so that the stated gradient governs it when
the generated code is differentiated again (``s2s.stated_jvp``: its tangent)."""

from __future__ import annotations

import numpy as np

from .broadcasting import broadcast, unbroadcast
from .containers import Parts, zeros_like

__all__ = [
    "custom_result",
    "custom_result_vjp",
    "custom_result_tangent",
    "stated",
    "stated_jvp",
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


def custom_result_vjp(value, grads, params):
    """The adjoint of ``custom_result``'s ``grads`` from its results' adjoints ``value``: each
    broadcast back to its gradient's shape (one gradient unwrapped as custom_result wraps it),
    zero for a ``None``."""
    if len(params) == 1 and not (isinstance(grads, (tuple, list)) and len(grads) == 1):
        return _back(value[0], grads)
    return Parts(_back(v, g) for v, g in zip(value, grads))


def _back(value, grad):
    if grad is None:
        return 0.0
    if isinstance(grad, (tuple, list, dict)):
        return value
    return broadcast(value, np.shape(grad))


def custom_result_tangent(name, tangents, grads, primals, params):
    """``custom_result`` of ``tangents``, values shaped like ``grads`` (custom_result_vjp's
    transpose), each slot where ``grads`` holds ``None`` read as ``None`` (zeros)."""
    if isinstance(grads, (tuple, list)) and any(g is None for g in grads):
        tangents = tuple(None if g is None else t for t, g in zip(tangents, grads))
    return custom_result(name, tangents, primals, params)


def stated(value, bwd, residuals, args):
    """``value``, a custom_gradient function's output as its generated forward sweep returns it.
    Its rule (rules/helpers/custom.py) is the user's stated gradient: ``value`` varies with
    ``args`` (the function's differentiated arguments) as ``bwd(residuals, g)`` (the generated
    backward sweep, the user's grad_fn inlined) says, and with nothing else."""
    return value


def _tree_leaves(value):
    """``(leaves, rebuild)``: a value's leaves (a dict's by sorted key) and the function that
    makes a value of the same structure from one item per leaf."""
    if isinstance(value, dict):
        keys = sorted(value)
        return [value[k] for k in keys], lambda items: dict(zip(keys, items))
    if isinstance(value, (tuple, list)):
        kind = type(value) if type(value) in (tuple, list) else tuple
        return list(value), lambda items: kind(items)
    return [value], lambda items: items[0]


def stated_jvp(value, bwd, residuals, tangents):
    """The tangent of ``stated(value, bwd, residuals, args)`` along the tangents of ``args``:
    ``J t``, where ``bwd(residuals, g)`` is ``J^T g`` (one gradient per argument). Each element
    of ``J t`` is ``<bwd(residuals, e), t>`` for the unit seed ``e`` at that element of the
    output: one call of ``bwd`` per element of ``value`` (the stated rule is a vector-Jacobian
    product; its transpose is read off it)."""
    leaves, rebuild = _tree_leaves(value)
    zeros = [np.zeros(np.shape(leaf), dtype=np.result_type(leaf, float)) for leaf in leaves]
    out = []
    for i, leaf in enumerate(leaves):
        column = np.zeros_like(zeros[i])
        for k in range(column.size):
            seeds = list(zeros)
            seed = np.zeros_like(zeros[i])
            seed.flat[k] = 1.0
            seeds[i] = seed if seed.ndim else float(seed)
            grads = bwd(residuals, rebuild(seeds))
            column.flat[k] = sum(np.sum(np.asarray(gr) * tn) for gr, tn in zip(grads, tangents)
                                 if gr is not None and tn is not None)
        out.append(column if column.ndim or type(leaf) is np.ndarray else float(column))
    return rebuild(out)

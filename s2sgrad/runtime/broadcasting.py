"""Broadcasting helpers (numpy only): what generated gradients call to undo numpy broadcasting
(``s2s.unbroadcast``), spread one number over a shape (``s2s.broadcast``), give a gradient its
input's shape and dtype (``s2s.like``), and check that ``grad``'s output is a real scalar
(``s2s.check_scalar``). Also the fast type checks the other runtime modules share."""

from __future__ import annotations

import numpy as np

from ..errors import GradientError

__all__ = [
    "unbroadcast",
    "broadcast",
    "like",
    "fit",
    "check_scalar",
]


_ndarray = np.ndarray
_float64 = np.float64
_F64 = np.dtype(np.float64)
_add_reduce = np.add.reduce


def _shape(v):
    """``np.shape(v)`` without its ``np.asarray`` for arrays, floats and ints (the common cases)."""
    tv = type(v)
    if tv is _ndarray:
        return v.shape
    if tv is float or tv is _float64 or tv is int:
        return ()
    return np.shape(v)


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x``, or to ``x`` itself when it is a shape (a tuple):
    this undoes numpy broadcasting."""
    shape = x if type(x) is tuple else _shape(x)
    if _shape(g) == shape:
        return g
    if type(g) is not _ndarray:
        g = np.asarray(g)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = _add_reduce(g, tuple(range(extra)))  # what g.sum(axis=...) calls
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = _add_reduce(g, axes, None, None, True)
    return g


def broadcast(g, shape):
    """One number ``g`` as a (read-only) array of ``shape``: the adjoint of a full sum's operand
    (and, in forward mode, a tangent of the primal's shape; an array of that shape already is
    one: a read-only view of it, without ``np.broadcast_to``'s Python-level cost)."""
    view = _scalar_view(g, shape)
    if view is not None:
        return view
    if isinstance(g, (list, tuple)):  # a sequence's adjoint (code generated from generated code)
        return g
    if type(g) is _ndarray and g.shape == tuple(shape):
        view = g.view()
        view.flags.writeable = False
        return view
    return np.broadcast_to(g, shape)


def _scalar_view(g, shape):
    """``np.broadcast_to(g, shape)`` for a ``g`` of one value, without its Python-level cost: a
    read-only view with every stride 0. ``None`` when ``g`` is not a float or a one-value array."""
    tg = type(g)
    if tg is _float64:  # a numpy scalar lends a read-only buffer: the view is read-only too
        return _ndarray(shape, _F64, g, 0, (0,) * len(shape))
    if tg is float:
        return _ndarray(shape, _F64, _float64(g), 0, (0,) * len(shape))
    if tg is _ndarray and g.size == 1 and g.ndim <= len(shape) and g.dtype.kind in "biufc":
        view = _ndarray(shape, g.dtype, g, 0, (0,) * len(shape))
        view.flags.writeable = False
        return view
    return None


def fit(g, x):
    """``g`` given the shape of ``x`` (or ``x`` itself when a tuple): spread where ``g`` broadcasts
    to it, else summed down to it. The adjoint of ``like``'s value, which ``like`` spreads (one
    number standing for a whole array) or sums (an array for a float); its own transpose is a
    fit back to ``g``'s shape."""
    shape = x if type(x) is tuple else _shape(x)
    g_shape = _shape(g)
    if g_shape == shape:
        return g
    try:
        spreads = np.broadcast_shapes(g_shape, shape) == shape
    except ValueError:
        spreads = False
    return broadcast(g, shape) if spreads else unbroadcast(g, shape)


def like(g, x):
    """``g`` as the gradient of ``x``: same shape, ``x``'s float dtype; a Python float for a float."""
    if isinstance(x, (list, tuple, dict)):  # a pytree passed whole to code made for arrays
        raise GradientError(
            f"a {type(x).__name__} (a pytree) reached generated code made for an array there: "
            "transform the original function with s2sgrad.grad (or jacfwd, jacrev, hessian), "
            "which makes code for the pytree's structure at the call; an emitted gradient file "
            "takes dicts read by literal keys (params[\"W\"]), other pytrees as their arrays "
            "passed separately.")
    if type(g) is _ndarray and type(x) is _ndarray:
        x_dtype = x.dtype
        if g.dtype is x_dtype and g.shape == x.shape and x_dtype.kind in "fc" and g.flags.writeable:
            return g  # already the gradient of x: what the general path returns too
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        if isinstance(g, float):  # a Python float or a numpy float64 scalar
            return float(g)
        g = np.real(g)  # the gradient of a real number is real (complex.py)
        return float(np.sum(g)) if np.ndim(g) else float(g)
    x_dtype = np.result_type(x)
    if not np.issubdtype(x_dtype, np.inexact):
        x_dtype = np.dtype(np.float64)
    g = np.asarray(g)
    if g.dtype.kind == "c" and x_dtype.kind != "c":
        g = g.real
    if g.shape != np.shape(x) or not g.flags.writeable:
        out = np.empty(np.shape(x), x_dtype)  # a fresh array the caller may write to
        out[...] = unbroadcast(g, x)
        return out
    if g.dtype != x_dtype:
        g = g.astype(x_dtype)
    return g


def check_scalar(value, name):
    """Raise when ``grad`` is asked for the gradient of a non-scalar output."""
    if isinstance(value, (float, np.floating)):  # Python float, numpy real scalars: fine
        return
    if type(value) is _ndarray and value.ndim == 0 and value.dtype.kind != "c":
        return
    if isinstance(value, (tuple, list)):
        raise GradientError(f"grad requires {name} to return a real scalar, got a "
                            f"{type(value).__name__} of {len(value)}; differentiate a function "
                            "that returns one of its items, or use vjp or jacfwd")
    if np.ndim(value) != 0 or np.iscomplexobj(value):
        raise GradientError(
            f"grad requires {name} to return a real scalar, got shape {np.shape(value)}; "
            "use vjp for non-scalar outputs, or reduce the output (e.g. np.sum)"
        )

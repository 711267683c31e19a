"""Broadcasting helpers (numpy only): what generated gradients call to undo numpy broadcasting
(``s2s.unbroadcast``), spread one number over a shape (``s2s.broadcast``), give a gradient its
input's shape and dtype (``s2s.like``), and check that ``grad``'s output is a real scalar
(``s2s.check_scalar``). Also the fast type checks the other runtime modules share."""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import ComputeWarning, GradientError
from .sums import axis_sum

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


def _shape(v):
    """``np.shape(v)`` without its ``np.asarray`` for arrays, floats and ints (the common cases)."""
    tv = type(v)
    if tv is _ndarray:
        return v.shape
    if tv is float or tv is _float64 or tv is int:
        return ()
    return np.shape(v)


def _foreign(v) -> bool:
    """Whether ``v`` is another library's array that numpy's functions dispatch to (CuPy, dask:
    ``__array_function__``, not an ndarray): helpers compute on it with numpy's functions and
    never convert it to an ndarray (which would pull it off its device or into memory)."""
    kind = type(v)
    return kind is not _ndarray and getattr(kind, "__array_function__", None) is not None and \
        not isinstance(v, _ndarray)


_CONVERTED = (np.matrix, np.ma.MaskedArray)  # subclasses whose arithmetic is not numpy's


def _own_type(v) -> bool:
    """Whether helpers keep ``v``'s array type: an ndarray subclass (not ``np.matrix``, whose
    ``*`` is a product, nor a masked array) or another library's array (``_foreign``)."""
    if isinstance(v, _ndarray):
        return type(v) is not _ndarray and not isinstance(v, _CONVERTED)
    return _foreign(v)


def _operand(v):
    """``v`` as an array operand: an array as it is (numpy's, a subclass, another library's),
    a number, a list, a ``np.matrix`` or a masked array through ``np.asarray``."""
    if type(v) is _ndarray or _own_type(v):
        return v
    return np.asarray(v)


def _numpy_only(v, helper: str):
    """``v`` for a helper that works on numpy's arrays only: a GradientError for another
    library's array (rather than converting it behind the user's back)."""
    if _foreign(v):
        raise GradientError(
            f"s2sgrad's {helper} works on numpy arrays only, and was given a "
            f"{type(v).__module__}.{type(v).__name__}: it does not convert it to a numpy array "
            "(that would pull it into memory or off its device); convert it yourself where you "
            "mean to, or differentiate code that does not need this helper")
    return v


def _to_numpy(v, helper: str):
    """``v`` as a numpy array, for a helper that computes with numpy only: another library's array
    is converted (computed, pulled into memory) with a ComputeWarning naming the helper."""
    if type(v) is _ndarray:
        return v
    if _foreign(v):
        warnings.warn(
            f"s2sgrad's {helper} converts a {type(v).__module__}.{type(v).__name__} to a numpy "
            "array: its values are computed and held in this process's memory (for dask: use grad, "
            "vjp or hvp, which stay lazy)", ComputeWarning, stacklevel=3)
    return np.asarray(v)


def _widened_axes(g_shape: tuple, shape: tuple) -> tuple:
    """The axes of ``g`` (of rank ``len(shape)`` or less: a smaller one broadcasts up, aligned on
    the right) where ``shape`` has length 1 and ``g`` another."""
    lead = len(shape) - len(g_shape)
    return tuple(i - lead for i, n in enumerate(shape) if i >= lead and n == 1 and g_shape[i - lead] != 1)


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x``, or to ``x`` itself when it is a shape (a tuple):
    this undoes numpy broadcasting. ``g`` keeps its array type (a subclass, another library's).
    A list or dict ``x`` (an adjoint of a container: getitem_add's into a list's) broadcasts
    nothing: ``g`` as it is."""
    if isinstance(x, (list, dict)):
        return g
    shape = x if type(x) is tuple else _shape(x)
    if _shape(g) == shape:
        return g
    if type(g) is not _ndarray:
        g = _operand(g)
        if type(g) is not _ndarray:  # its own library's sum (dask's does not implement reduce)
            extra = np.ndim(g) - len(shape)
            if extra > 0:
                g = np.sum(g, axis=tuple(range(extra)))
            axes = _widened_axes(np.shape(g), shape)
            return np.sum(g, axis=axes, keepdims=True) if axes else g
    extra = g.ndim - len(shape)
    if extra > 0:
        g = axis_sum(g, tuple(range(extra)))
    axes = _widened_axes(g.shape, shape)
    if axes:
        g = axis_sum(g, axes, True)
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
    if type(g) is _ndarray and type(x) is _ndarray:  # checked first: the common call
        x_dtype = x.dtype
        if g.dtype is x_dtype and g.shape == x.shape and x_dtype.kind in "fc" and g.flags.writeable:
            return g  # already the gradient of x: what the general path returns too
    elif type(x) is float and type(g) is float:  # a float's, computed with floats
        return g
    elif isinstance(x, (list, tuple, dict)):  # a pytree passed whole to code made for arrays
        raise GradientError(
            f"a {type(x).__name__} (a pytree) reached generated code made for an array there: "
            "transform the original function with s2sgrad.grad (or jacfwd, jacrev, hessian), "
            "which makes code for the pytree's structure at the call; an emitted gradient file "
            "takes dicts read by literal keys (params[\"W\"]), other pytrees as their arrays "
            "passed separately.")
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        if isinstance(g, float):  # a Python float or a numpy float64 scalar
            return float(g)
        g = np.real(g)  # the gradient of a real number is real (complex.py)
        if _foreign(g):  # another library's array: its own number, not computed here
            return np.sum(g) if np.ndim(g) else g
        return float(np.sum(g)) if np.ndim(g) else float(g)
    if _foreign(g) or _foreign(x):
        return _foreign_like(g, x)
    x_dtype = np.result_type(x)
    if not np.issubdtype(x_dtype, np.inexact):
        x_dtype = np.dtype(np.float64)
    g = np.asarray(g)
    if g.dtype.kind == "c" and x_dtype.kind != "c":
        g = g.real
    own = _own_type(x)  # an ndarray subclass: the gradient is of its type
    if g.shape != np.shape(x) or not g.flags.writeable or (own and type(g) is not type(x)):
        # a fresh array the caller may write to; of x's own type when x is a subclass (numpy's
        # empty_like makes it as its own functions do, its attributes taken from x)
        out = np.empty_like(x, x_dtype) if own else np.empty(np.shape(x), x_dtype)
        out[...] = unbroadcast(g, x)
        return out
    if g.dtype != x_dtype:
        g = g.astype(x_dtype)
    return g


def _foreign_like(g, x):
    """``like(g, x)`` where ``g`` or ``x`` is another library's array: ``g`` in ``x``'s shape and
    float dtype, the foreign array's type kept (``g``'s when ``x`` is a numpy array: a lazy dask
    gradient of a numpy parameter stays lazy), never converted to an ndarray."""
    x_dtype = x.dtype if hasattr(x, "dtype") else np.result_type(x)
    if not np.issubdtype(x_dtype, np.inexact):
        x_dtype = np.dtype(np.float64)
    if np.iscomplexobj(g) and x_dtype.kind != "c":
        g = np.real(g)
    g = unbroadcast(g, x)
    if np.shape(g) != np.shape(x):  # one number standing for an array: spread over it
        g = np.zeros_like(x if _foreign(x) else g, dtype=x_dtype, shape=np.shape(x)) + g
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

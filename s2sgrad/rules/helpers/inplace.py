"""Rules of the helpers of s2sgrad/runtime/inplace.py: index writes and their adjoints written into
an array generated code owns, and the facts differentiate/writes_in_place.py reads of them.

Each helper that writes into an argument states it (``consumes``): when s2sgrad reads generated code
again, the call is passed a copy (``s2s.copied``), so the derivative code after it reads the old
values intact. Their derivatives are those of the copying helpers (``setitem``, ``getitem_vjp``)."""

import numpy as np

from ..table import defvjp
from .containers import RULES as _CONTAINER_RULES

# The helpers by name, for the passes that write and recognize them.
SETITEM = "setitem"  # x[index] = value on a copy: the forward sweep's index write
SETITEM_INTO = "setitem_into"  # the same, into x itself
SETITEM_VALUE_VJP = "setitem_value_vjp"  # the written value's adjoint, a copy of the part written
GETITEM_VJP = "getitem_vjp"  # x[index]'s adjoint, zeros with the part read
GETITEM_ADD = "getitem_add"  # an adjoint plus x[index]'s, added into the first in place
OWNED_ARRAY = "owned_array"  # a copy the caller may write into
TEMPLATE = "template"  # a shape template of a value (its type, dtype and shape only)

# The helpers (and numpy functions) that read an argument only for its type, dtype and shape:
# name -> the positions of such arguments (a list or tuple display there: each item). A value a backward sweep reads only there is recorded
# as a template (``s2s.template(x)``); a read there of an array written in place sees the same.
SHAPE_READS = {
    "s2s.getitem_vjp": (1,),
    "s2s.getitem_add": (2,),
    "s2s.setitem_value_vjp": (2,),
    "s2s.unbroadcast": (1,),
    "s2s.zeros_like": (0,),
    "s2s.sum_vjp": (1,),
    "s2s.mean_vjp": (1,),
    "s2s.split_concatenate": (1,),
    "s2s.split_stack": (1,),
    "s2s.template": (0,),
    "s2s.size": (0,),
    "s2s.rows_shape": (0,),
    "np.shape": (0,),
    "np.ndim": (0,),
    "np.size": (0,),
    "len": (0,),
}
SHAPE_ATTRIBUTES = ("shape", "dtype", "ndim", "size")

# Calls whose result is an array (or number, or list) nothing else holds, as generated code spells
# them; and methods that make a copy (``u0.copy()``).
FRESH = ("s2s.getitem_vjp", "s2s.zeros_like", "s2s.owned_array", "s2s.setitem", "s2s.list_zeros",
         "s2s.setitem_value_vjp", "s2s.var_vjp", "s2s.std_vjp",
         "np.zeros", "np.zeros_like", "np.empty", "np.empty_like", "np.ones", "np.ones_like",
         "np.full", "np.full_like", "np.copy", "np.arange", "np.linspace", "np.eye", "np.identity")
FRESH_METHODS = ("copy",)


def makes_new_array(dotted: str) -> bool:
    """Whether a call of ``dotted`` (``np.tanh`` as generated code spells it) certainly returns a
    new object holding nothing of its arguments: one of ``FRESH``, or a numpy ufunc (called
    without ``out``, it allocates its result)."""
    if dotted in FRESH:
        return True
    head, _, name = dotted.partition(".")
    return head in ("np", "numpy") and "." not in name and isinstance(getattr(np, name, None), np.ufunc)

# Helpers that return their first argument or a new array (``unbroadcast``: the argument itself
# where no axis is summed): what they bind is, for ownership, a copy of that name.
PASSTHROUGH = ("s2s.unbroadcast", "s2s.promoted")

_SETITEM = next(r for r in _CONTAINER_RULES if r.name == "s2sgrad.runtime.setitem")

RULES = (
    # setitem written into x: setitem's derivatives; differentiated again, x is passed a copy
    defvjp(
        "s2sgrad.runtime.setitem_into(x, index, value)",
        constant_in=("index",),
        consumes=("x",),
        jvps=dict(_SETITEM.jvps),
        batched=dict(_SETITEM.batched),
        **dict(_SETITEM.vjps),
    ),
    # adjoint + getitem_vjp(value, x, index), in place: each of the two passes through as in a sum
    defvjp(
        "s2sgrad.runtime.getitem_add(adjoint, value, x, index)",
        constant_in=("x", "index"),
        consumes=("adjoint",),
        jvps={"adjoint": "t", "value": "s2s.getitem_vjp(t, x, index)"},
        adjoint="s2s.unbroadcast(g, adjoint)",  # a number standing for an array: summed back
        value="s2s.unbroadcast(g[index], value)",
    ),
    # a copy: its adjoint passes through
    defvjp("s2sgrad.runtime.owned_array(x)", linear=("x",), batched={"x": "s2s.owned_array(t)"}, x="g"),
)

# A template holds no value: no derivative.
NONDIFF = ("s2sgrad.runtime.template",)

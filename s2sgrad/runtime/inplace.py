"""Index writes and their adjoints in place, O(size of the write) a step where the copying helpers
(``setitem``, ``getitem_vjp``) take O(array): what generated code calls where
differentiate/writes_in_place.py shows that the array written is its own (nothing else reads the
old values), and a shape template a forward sweep records of a value its backward sweep reads
only for its type, dtype and shape. Each helper falls back to the copying one for anything but a
writable numpy array (a list, a dict, a subclass, another library's array), so passing one is
never wrong, only slower.
"""

from __future__ import annotations

import numpy as np

from .broadcasting import _ndarray
from .containers import _ints_and_slices, _kept_writes, _write_positions, setitem
from .indexing import _is_basic, getitem_vjp

__all__ = ["getitem_add", "owned_array", "setitem_into", "template"]

_TEMPLATES: dict = {}
_ONE = {}  # dtype -> a one-element array the templates of that dtype view


def template(x):
    """What a forward sweep records of a value its backward sweep reads only for its type, dtype
    and shape: for a numpy array of numbers, a read-only array of that dtype and shape whose
    strides are all 0 (one element's memory, shared by every record of that dtype and shape);
    anything else as it is."""
    if type(x) is not _ndarray or x.dtype.kind not in "biufc":
        return x
    key = (x.dtype, x.shape)
    found = _TEMPLATES.get(key)
    if found is None:
        one = _ONE.get(x.dtype)
        if one is None:
            one = _ONE[x.dtype] = np.zeros(1, dtype=x.dtype)
        found = _ndarray(x.shape, x.dtype, one, 0, (0,) * x.ndim)
        found.flags.writeable = False
        if len(_TEMPLATES) > 1024:
            _TEMPLATES.clear()
        _TEMPLATES[key] = found
    return found


def owned_array(x):
    """A copy of the numpy array ``x`` the caller may write into (an array made where generated
    code cannot show that nothing else holds it); anything else as it is (the in-place helpers
    copy it themselves)."""
    if type(x) is _ndarray:
        return x.copy()
    return x


def _basic(index) -> bool:
    """Whether ``index`` is one slice or int, or a tuple of them (the common case, told fast),
    or else holds only ints, slices, None and Ellipsis (``_is_basic``)."""
    return _ints_and_slices(index) or _is_basic(index)


def setitem_into(x, index, value):
    """``x[index] = value`` written into ``x`` itself, which it returns: ``setitem`` where the
    forward sweep owns ``x`` and no one reads its old values (of repeated positions, the last
    write stays, as in ``setitem``). Anything but a writable numpy array: ``setitem``'s copy."""
    if type(x) is not _ndarray or not x.flags.writeable:
        return setitem(x, index, value)
    if type(value) is float or type(value) is int or _basic(index) or np.ndim(value) == 0:
        x[index] = value  # one value, or each position written once: no order to keep
        return x
    positions = _write_positions(x.shape, index)
    kept = None if positions is None else _kept_writes(positions)
    if kept is None:
        x[index] = value
    else:
        np.put(x, positions[kept], np.broadcast_to(value, positions.shape)[kept])
    return x


def getitem_add(adjoint, value, x, index):
    """``adjoint + getitem_vjp(value, x, index)``: ``value`` added into ``adjoint[index]`` in place
    (repeated positions add up, as np.add.at) where ``adjoint`` is a writable numpy array of
    ``x``'s shape whose dtype holds the sum; else that sum, a new array."""
    if type(adjoint) is _ndarray and type(x) is _ndarray and adjoint.flags.writeable and \
            adjoint.shape == x.shape:
        dtype = adjoint.dtype
        same = type(value) is _ndarray and value.dtype is dtype or type(value) is float and dtype.kind == "f"
        if same and x.dtype is dtype or np.result_type(adjoint, value, x) == dtype:
            if _basic(index):
                adjoint[index] += value
            else:
                np.add.at(adjoint, index, value)
            return adjoint
    return adjoint + getitem_vjp(value, x, index)

"""Adjoints of any value, lists and dicts included, and index writes (numpy only): the zero
adjoint (``s2s.zeros_like``, ``s2s.list_zeros``), adjoints added element by element
(``s2s.add``, ``s2s.Parts``, ``s2s.Keyed``), a list element's adjoint (``s2s.list_getitem_vjp``), a custom
gradient's output leaves (``s2s.leaves``), ``x[index] = value`` on a copy (``s2s.setitem``), the
adjoint of the value it writes (``s2s.setitem_value_vjp``) and a list's copy (``s2s.copied``);
the gradient of a dict argument from the gradients of the values read by key
(``s2s.keyed_gradient``, in the ``<f>_grad`` of an emitted file).

Of several writes to one position (an integer array index that repeats it, ``x[[0, 0]] = v``),
the last in C order of ``x[index]`` stays, as numpy does for C-ordered values (numpy leaves the
order open for others: setitem writes such indices so, whatever the layouts)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import GradientError
from .broadcasting import _ndarray, like, unbroadcast

__all__ = [
    "zeros_like",
    "setitem",
    "setitem_value_vjp",
    "promoted",
    "add",
    "add_vjp",
    "Parts",
    "Keyed",
    "list_zeros",
    "tree_zeros",
    "leaves",
    "list_getitem_vjp",
    "sum_list_vjp",
    "append",
    "unleaves",
    "copied",
    "split_last",
    "owned",
    "joined_last",
    "dict_of",
    "dict_of_vjp",
    "keys",
    "keyed_gradient",
    "sequence_vjp",
    "sequence_items",
]


def zeros_like(x):
    """The zero gradient of ``x`` (a float 0.0 for a Python number)."""
    if type(x) is _ndarray and x.dtype.kind in "fc":
        return np.zeros(x.shape, dtype=x.dtype)
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        return 0.0
    if isinstance(x, (tuple, list, dict)):  # a sequence passed where an array could be
        return list_zeros(x)
    if x is None or type(x) in (slice, str) or x is Ellipsis:  # a residual with no derivative (a dict's key)
        return 0.0
    dtype = np.result_type(x)
    if not np.issubdtype(dtype, np.inexact):
        dtype = np.dtype(np.float64)
    return np.zeros(np.shape(x), dtype=dtype)


def setitem(x, index, value):
    """A copy of ``x`` with ``x[index] = value`` (the input is left as it was); a list (the
    adjoint of one, when generated code writes into it) stays a list of the same kind, a slice
    of it set to one value (a zero adjoint) sets each element; a dict (or its adjoint) stays a
    dict of the same kind, ``index`` its key."""
    if isinstance(x, dict):
        out = type(x)(x)
        out[index] = value
        return out
    if isinstance(x, list):
        out, where = type(x)(x), _one(index)
        if type(where) is slice and not isinstance(value, (list, tuple)):  # one value for each
            value = [value] * len(range(*where.indices(len(out))))
        out[where] = value
        return out
    out = np.array(x, copy=True)
    if np.ndim(value) == 0:  # one value everywhere: the order of the writes does not matter
        out[index] = value
        return out
    positions = _write_positions(out.shape, index)
    kept = None if positions is None else _kept_writes(positions)
    if kept is None:
        out[index] = value
    else:  # repeated positions: only the last write to each, in C order
        np.put(out, positions[kept], np.broadcast_to(value, positions.shape)[kept])
    return out


def promoted(x, value):
    """``x`` itself where its dtype holds ``value``'s (``np.result_type(x, value)`` is ``x``'s
    dtype), else ``x`` cast to that type: the array a join (``np.concatenate``) that rebuilds
    ``x`` with a part replaced by ``value`` writes into, so the write keeps the join's type."""
    if type(x) is _ndarray and type(value) is _ndarray and x.dtype is value.dtype:
        return x
    kind = np.result_type(x, value)
    return x if kind == np.result_type(x) else np.asarray(x).astype(kind)


def setitem_value_vjp(adjoint, index, value):
    """Adjoint of ``value`` in ``setitem(x, index, value)`` from the result's ``adjoint``:
    ``adjoint[index]`` at the writes that stay (of several to one position, the last in C order; the
    others were overwritten and have none), summed back to ``value``'s shape: an array of its own
    (a copy of the part read, where it would be a view of ``adjoint``, which the backward sweep
    may then zero in place)."""
    read = adjoint[index]
    if type(adjoint) is _ndarray:
        if type(read) is _ndarray and type(value) is _ndarray and read.shape == value.shape and \
                (_ints_and_slices(index) or _write_positions(adjoint.shape, index) is None):
            return read.copy()  # each position written once, no broadcasting: the part read
        positions = _write_positions(adjoint.shape, index)
        kept = None if positions is None else _kept_writes(positions)
        if kept is not None:
            read = np.where(kept, read, np.zeros((), dtype=read.dtype))
    out = unbroadcast(read, value)
    if type(out) is _ndarray and out.base is not None and type(adjoint) is _ndarray and \
            np.may_share_memory(out, adjoint):
        return out.copy()
    return out


def _ints_and_slices(index) -> bool:
    """Whether ``index`` is an int, a slice, or a tuple of them (told without a generator: this
    is on every step of a loop writing rows)."""
    kind = type(index)
    if kind is slice or kind is int:
        return True
    if kind is not tuple:
        return False
    for part in index:
        kind = type(part)
        if kind is not slice and kind is not int:
            return False
    return True


def _write_positions(shape, index):
    """The flat position (C order) in an array of ``shape`` of each element of ``x[index]``,
    shaped like it; None where ``index`` holds no integer array (ints, slices, masks, None and
    Ellipsis write each position at most once)."""
    parts = index if type(index) is tuple else (index,)
    for part in parts:
        if type(part) is slice or type(part) is int or part is None or part is Ellipsis or \
                isinstance(part, (slice, int, np.integer)):
            continue
        if type(part) is _ndarray and part.dtype == np.bool_:
            continue
        break
    else:
        return None
    return np.arange(math.prod(shape), dtype=np.intp).reshape(shape)[index]


def _kept_writes(positions):
    """Of writes to the flat ``positions`` (an integer array), a boolean array of their shape
    marking the last write to each position in C order; None where no position repeats."""
    flat = positions.reshape(-1)
    if flat.size < 2:
        return None
    order = np.arange(flat.size, dtype=np.intp)
    last = np.full(int(flat.max()) + 1, -1, dtype=np.intp)
    np.maximum.at(last, flat, order)  # deterministic, unlike a write with repeated indices
    kept = last[flat] == order
    return None if kept.all() else kept.reshape(positions.shape)


def add(a, b):
    """``a + b`` for adjoints; for lists, tuples and dicts (their adjoints), element by element,
    where the number 0.0 stands for the zero adjoint of any of them (``setitem(g, i, 0.0)``
    clears a list adjoint's element, whatever that element is), and None (the zero adjoint of a
    name a loop had not bound yet: list_zeros) adds nothing."""
    if b is None or a is None:
        return a if b is None else b
    if _is_zero(b) and isinstance(a, (list, tuple, dict)):
        return a
    if _is_zero(a) and isinstance(b, (list, tuple, dict)):
        return b
    if isinstance(a, dict):
        return Keyed((k, add(a[k], b[k])) for k in a)
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return Parts(add(p, q) for p, q in zip(a, b))
    return a + b


def add_vjp(value, operand):
    """The adjoint of ``add(a, b)`` (``value``, the sum's) as the adjoint of ``operand``, one of
    them, in its form: an array where ``operand`` is one and ``value`` holds its rows (an array's
    adjoint was added to a list's, ``np.array(xs)``'s to ``sum(xs)``'s), one adjoint per row where
    ``operand`` is a list or tuple and ``value`` an array; else ``value`` itself."""
    if isinstance(value, (list, tuple)) and not isinstance(operand, (list, tuple, dict)) and \
            np.ndim(operand) > 0:
        return np.array(value, dtype=np.result_type(operand, np.float64))
    if isinstance(operand, (list, tuple)) and isinstance(value, _ndarray) and value.ndim > 0:
        return Parts(value[i] for i in range(len(operand)))
    return value


def _is_zero(x):
    """Whether ``x`` stands for a zero adjoint of any shape or structure: None, or 0.0."""
    return x is None or (type(x) is float and x == 0.0)


def _one(index):
    """A list's index as generated code may write it, ``(slice(None, -1),)``: its one element."""
    return index[0] if type(index) is tuple and len(index) == 1 else index


class Parts(list):
    """The adjoint of a list or tuple: one adjoint per element, and ``+`` and ``+=`` add element
    by element (so an adjoint accumulated where the value's type was not known adds up instead of
    concatenating). Every runtime helper that returns one adjoint per element returns Parts."""

    def __add__(self, other):
        return Parts(add(p, q) for p, q in zip(self, other))

    __radd__ = __add__
    __iadd__ = __add__  # ``x_bar += ...`` adds too (a list's += would extend it)

    def __getitem__(self, index):
        if type(index) is int:  # an element (generated code reads each so, a step of a loop too)
            return list.__getitem__(self, index)
        index = _one(index)
        item = list.__getitem__(self, index)
        return Parts(item) if isinstance(index, slice) else item

    def __setitem__(self, index, value):
        list.__setitem__(self, _one(index), value)

    @property
    def shape(self):
        """What ``np.shape`` records of an adjoint of a sequence: the shape of the array its
        items stack into where they are numbers or arrays of one shape (it may stand for such an
        array: the adjoint of ``np.array(xs)`` read again), else ``(len(self),)``, so that code
        generated from generated code (``a_bar + b_bar`` of two such adjoints, summed back to
        their shapes) passes it through instead of making one array of its ragged items."""
        shapes = {_item_shape(item) for item in self}
        if len(shapes) == 1 and None not in shapes:
            return (len(self),) + shapes.pop()
        return (len(self),)


class Keyed(dict):
    """The adjoint of a dict: one adjoint per key, and ``+`` and ``+=`` add key by key (so an
    adjoint accumulated where the value's kind was not known, as in code generated from
    generated code, adds up instead of failing). The helpers that make a dict's adjoint return
    Keyed."""

    def __add__(self, other):
        return add(self, other)

    def __radd__(self, other):
        return add(other, self)

    __iadd__ = __add__


def _item_shape(item):
    """An adjoint item's shape where it is a number or an array, else None."""
    if type(item) is _ndarray:
        return item.shape
    return () if isinstance(item, (float, int, np.generic)) and not isinstance(item, bool) else None


def list_zeros(xs):
    """The zero adjoint of a list (or tuple, or dict): one zero per element. None (a list a loop
    makes in its body, not bound yet when the loop starts) has none: None; a number (forward
    mode's tangent of such a list, read again by reverse mode) has its zero."""
    if xs is None:
        return None
    if isinstance(xs, (float, int, np.generic)):
        return zeros_like(xs)
    if isinstance(xs, dict):
        return Keyed((k, zeros_like(v)) for k, v in xs.items())
    return Parts(zeros_like(x) for x in xs)


def leaves(value):
    """The leaves of a custom gradient's output adjoint, in grad_fn's order: a dict's by sorted
    key, a tuple's or list's in order."""
    if isinstance(value, dict):
        return tuple(value[k] for k in sorted(value))
    return tuple(value)


def list_getitem_vjp(g, xs, index):
    """Adjoint of ``xs[index]`` for a list ``xs`` (or a tuple or dict): zeros, with ``g`` added at
    ``index`` (by ``add``: an item that is a container adds element by element)."""
    out = list_zeros(xs)
    if isinstance(xs, dict):
        out[index] = add(out[index], g)
        return out
    index = _one(index)
    if isinstance(index, slice):
        for position, item in zip(range(*index.indices(len(xs))), g):
            out[position] = add(out[position], item)
    else:
        out[index] = add(out[index], g)
    return out


def sum_list_vjp(g, xs):
    """Adjoint of the elements of ``sum(xs)``: ``g`` for each, summed to its shape."""
    return Parts(unbroadcast(g, x) for x in xs)


def unleaves(value, tree):
    """The adjoint of ``leaves(tree)`` from its leaves' adjoints ``value``: a dict keyed like
    ``tree`` (sorted keys), else one adjoint per element (a Parts)."""
    if isinstance(tree, dict):
        return dict(zip(sorted(tree), value))
    return Parts(value)


def append(lst, item):
    """A new list: ``lst``'s items, then ``item`` (what ``lst.append(item)`` makes of a copy; the
    tangent of an append, where ``+`` of adjoint lists would add element by element)."""
    return [*lst, item]


def copied(xs):
    """A new list of the items of ``xs``: what generated code passes to a helper that empties
    the lists it reads (or a copy of the array or dict it writes into), where it reads them
    again after the call. A number (one standing for an array's adjoint) is itself: nothing
    writes into it."""
    if type(xs) is _ndarray:
        return xs.copy()
    if isinstance(xs, dict):
        return type(xs)(xs)
    if isinstance(xs, (int, float, complex, np.generic)):
        return xs
    return list(xs)


def joined_last(rest, last):
    """``split_last``'s transpose: the adjoint list ``rest`` with ``last`` after its items (Parts,
    as every adjoint of a list)."""
    return Parts([*rest, last])


def owned(xs):
    """A copy of the list ``xs`` that the caller may change in place (an adjoint's Parts stays
    Parts); anything else (a tuple, an array, None or 0.0 for a zero adjoint) as it is."""
    if isinstance(xs, list):
        return Parts(xs) if isinstance(xs, Parts) else list(xs)
    return xs


def split_last(xs):
    """``(xs[:-1], xs[-1])`` in O(1) for a list: its last item popped from ``xs`` itself, which is
    then the first result (what a backward sweep passes for the adjoint of an append, where it
    owns that adjoint list); a tuple or an array is sliced."""
    if isinstance(xs, list):
        last = xs.pop()
        return xs, last
    return xs[:-1], xs[-1]


def dict_of(keys, values):
    """The dict ``{keys[i]: values[i]}``: what generated code writes for a dict display (one
    call with a rule, so the code is read again)."""
    return dict(zip(keys, values))


def dict_of_vjp(value, keys):
    """The adjoint of ``dict_of``'s values from the dict's adjoint ``value``: its item at each
    key (zero where it holds none, or where ``value`` is a zero adjoint)."""
    if not isinstance(value, dict):
        return Parts(0.0 for _ in keys)
    return Parts(value.get(k, 0.0) for k in keys)


def keys(d):
    """The keys of the dict ``d``, as a list in its order: what a loop over ``d``, ``d.keys()``,
    ``d.values()`` or ``d.items()`` walks (no derivative)."""
    return list(d)


def keyed_gradient(tree, paths, grads, name="the argument"):
    """The gradient of ``tree``, a dict (of dicts) that generated code read at ``paths`` (tuples of
    keys) and whose values there have the gradients ``grads``: a dict of ``tree``'s keys, each
    value read given its gradient (its shape and float dtype, as ``like``), every other value a
    zero of its structure (nothing read from it). ``name``: the argument's, for errors."""
    read = dict(zip(paths, grads))
    return _gradient_at(tree, (), read, name)


def _gradient_at(value, path, read, name):
    if path in read:
        if isinstance(value, (dict, list, tuple)):
            raise GradientError(f"{name}{_path_text(path)} is a {type(value).__name__}: the "
                                "generated gradient was made for an array there (the code reads "
                                "it as one); regenerate it after reading its items by key")
        return like(read[path], value)
    if not any(p[:len(path)] == path for p in read):
        return tree_zeros(value)
    if not isinstance(value, dict):
        raise GradientError(f"{name}{_path_text(path)} is a {type(value).__name__}, not a dict: "
                            "the generated gradient reads it by its keys; pass a dict")
    missing = [p[len(path)] for p in read if p[:len(path)] == path and p[len(path)] not in value]
    if missing:
        raise GradientError(f"{name}{_path_text(path)} has no key {missing[0]!r}, which the "
                            "generated gradient reads")
    return {key: _gradient_at(item, path + (key,), read, name) for key, item in value.items()}


def tree_zeros(value):
    """Zeros of ``value``'s structure: containers of the same kinds, zero leaves (the tangent of
    a value that does not vary, which has the value's structure)."""
    if isinstance(value, dict):
        return {key: tree_zeros(item) for key, item in value.items()}
    if isinstance(value, list):
        return [tree_zeros(item) for item in value]
    if isinstance(value, tuple):
        items = [tree_zeros(item) for item in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)
    return zeros_like(value)


def _path_text(path):
    return "".join(f"[{key!r}]" for key in path)


def sequence_vjp(value, iterable):
    """The adjoint of ``iterable`` from that of ``tuple(iterable)`` or ``list(iterable)`` (one
    adjoint per item, ``value``): for an array, its rows' adjoints stacked into one array (a zero
    adjoint where a row's is none); for a list or tuple, ``value`` itself."""
    if type(iterable) is not _ndarray:
        return value
    if _is_zero(value):
        return np.zeros_like(iterable)
    return np.stack([np.zeros_like(row) if _is_zero(part) else np.broadcast_to(part, np.shape(row))
                     for row, part in zip(iterable, value)])


def sequence_items(value, iterable):
    """The transpose of ``sequence_vjp``: an array's adjoint ``value`` as one adjoint per row
    (Parts) where ``iterable`` is an array, else ``value`` itself."""
    if type(iterable) is not _ndarray or _is_zero(value):
        return value
    return Parts(np.asarray(value))

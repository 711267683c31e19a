"""Functions that write into an argument: a qualified name -> Write (the parameter changed in
place and the assignment the call stands for), and where a numpy function takes ``out``.

Lowering turns such a call into an in-place update of the written name (``a[at] = value``, a
new version of ``a`` that the aliasing pass checks like any index write), so it is
differentiated; a Write with a reason instead of a value is refused where it is written. The
templates read like the code they stand for: parameter names are the call's arguments (an
optional one not passed is its default), ``np`` numpy and ``s2s`` the runtime helpers. A call
that writes into ``out=`` (or a positional ``out``) stands for ``out[...] = f(...)``; a library
function with ``out`` that has no rule is never taken for a pure one.
"""

from __future__ import annotations

import functools
import inspect
import sys
from dataclasses import dataclass, field
from typing import Mapping, Optional

import libcst as cst
import numpy as np


@dataclass(frozen=True, eq=False)
class Write:
    """``signature``: the function's parameters as numpy names them; ``written``: the one it
    changes in place; ``value``: its new value (at ``at``, an index template; the whole array
    when None); ``given``: another value template used when that optional parameter is passed;
    ``refused``: optional parameters refused when passed (their reason); ``why``: the reason the
    whole call is refused (no ``value``)."""

    signature: str
    written: str
    value: Optional[str] = None
    at: Optional[str] = None
    given: Mapping[str, str] = field(default_factory=dict)
    refused: Mapping[str, str] = field(default_factory=dict)
    why: str = ""

    @property
    def name(self) -> str:
        return self.signature.split("(", 1)[0]

    @functools.cached_property
    def params(self) -> tuple:
        """``((name, default as code or None), ...)`` in order."""
        fn = cst.parse_statement(f"def _({self.signature.split('(', 1)[1]}: pass")
        assert isinstance(fn, cst.FunctionDef)
        empty = cst.Module([])
        return tuple((p.name.value, None if p.default is None else empty.code_for_node(p.default))
                     for p in fn.params.params)


_PUT = "np.reshape(s2s.setitem(np.ravel({a}), {ind}, {v}), np.shape({a}))"
_MODE = "only mode='raise' is differentiated (an index out of range is an error)"

WRITES = (
    Write("numpy.copyto(dst, src, casting='same_kind', where=True)", "dst", "src",
          given={"where": "np.where(where, src, dst)"}),
    Write("numpy.put(a, ind, v, mode='raise')", "a", _PUT.format(a="a", ind="ind", v="v"),
          refused={"mode": _MODE}),
    Write("numpy.place(arr, mask, vals)", "arr", "vals", at="mask"),
    # values repeat over a's flat positions (not broadcast): position i takes values.flat[i % n]
    Write("numpy.putmask(a, mask, values)", "a",
          "np.where(mask, np.reshape(np.take(np.ravel(values), "
          "np.arange(np.size(a)) % np.size(values)), np.shape(a)), a)"),
    Write("numpy.fill_diagonal(a, val, wrap=False)", "a", "val",
          at="np.diag_indices(min(np.shape(a)), np.ndim(a))",
          refused={"wrap": "wrap=True (a tall matrix's diagonal restarted) is not differentiated"}),
    # scatter-adds: repeated indices add up (getitem_vjp scatters as np.add.at does)
    Write("numpy.add.at(a, indices, b)", "a", "a + s2s.getitem_vjp(b, a, indices)"),
    Write("numpy.subtract.at(a, indices, b)", "a", "a - s2s.getitem_vjp(b, a, indices)"),
    Write("numpy.put_along_axis(arr, indices, values, axis)", "arr",
          why="np.put_along_axis has no derivative rule yet"),
    Write("numpy.random.shuffle(x)", "x", why="it permutes its argument by a random order "
          "s2sgrad cannot see; draw the permutation (`p = rng.permutation(len(x))`) and index "
          "with it (`x = x[p]`)"),
    # ndarray methods that change the array (``self``)
    Write("ndarray.fill(self, value)", "self", "value"),
    Write("ndarray.sort(self, axis=-1, kind=None, order=None)", "self",
          "np.sort(self, axis=axis, kind=kind)", refused={"order": "sorting by fields"}),
    Write("ndarray.put(self, indices, values, mode='raise')", "self",
          _PUT.format(a="self", ind="indices", v="values"), refused={"mode": _MODE}),
    Write("ndarray.partition(self, kth, axis=-1, kind='introselect', order=None)", "self",
          why="np.partition has no derivative rule yet; use np.sort"),
    Write("ndarray.resize(self, new_shape, refcheck=True)", "self",
          why="resizing an array in place is not differentiated; use np.resize or reshape"),
    Write("ndarray.itemset(self, item)", "self", why="write the element by index: `a[i] = v`"),
    Write("ndarray.setfield(self, val, dtype, offset=0)", "self",
          why="writing a field in place is not differentiated"),
    Write("ndarray.byteswap(self, inplace=False)", "self",
          why="swapping bytes in place is not differentiated"),
)

UFUNC_AT = ("it writes into its first argument; only np.add.at and np.subtract.at are "
            "differentiated (write `a = a * ...` with an index instead)")


def is_ufunc_method(name: str, method: str) -> bool:
    """Whether ``name`` is ``numpy.<ufunc>.<method>`` (``numpy.multiply.at``)."""
    head, _, last = name.rpartition(".")
    return last == method and head.startswith("numpy.") and isinstance(_numpy_object(head), np.ufunc)


@functools.lru_cache(maxsize=None)
def out_position(name: str) -> Optional[int]:
    """The position at which library function ``name`` takes ``out`` positionally (a ufunc:
    after its inputs), or None (no such parameter, or not a function of numpy or scipy)."""
    value = _numpy_object(name)
    if isinstance(value, np.ufunc):
        return value.nin
    if value is None or not callable(value):
        return None
    try:
        params = list(inspect.signature(value).parameters.values())
    except (TypeError, ValueError):
        return None
    for i, p in enumerate(params):
        if p.name == "out" and p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            return i
    return None


def _numpy_object(name: str):
    """The numpy (or already imported scipy) object a dotted name names, or None."""
    parts = name.split(".")
    if parts[0] == "numpy":
        value = np
    elif parts[0] == "scipy" and len(parts) > 2 and ".".join(parts[:2]) in sys.modules:
        value = sys.modules[".".join(parts[:2])]
        parts = parts[1:]
    else:
        return None
    for part in parts[1:]:
        value = getattr(value, part, None)
        if value is None:
            return None
    return value

"""Generated code specialized for what a call passes: a call's arguments -> the parameters it
passes numbers to and the shapes of the numpy arrays it passes, and the sweeps (or the forward
mode) made for them (pipeline.Options.numbers and .shapes; the disk cache keys on both).

A number (Python's int, float, complex or bool, or a numpy scalar) is 0-d: code made knowing it
records no shape of a value only numbers broadcast, and sums nothing back to a number's shape
(`s2s.unbroadcast`), so a loop on Python floats runs as plain float arithmetic. An array's shape
is known as which of its lengths are 1 and which lengths of all the arrays are equal
(shape_signature; the arrays a call passes by position and those the function reads from its
globals and closures, array_globals): code made knowing it neither records nor sums back to
shapes that are equal for every call of that signature, whatever the lengths.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .errors import TransformError
from .forward_code import ForwardGradient
from .parameters import param_names
from .read.live import binding_of
from . import dims
from . import derive

NUMBERS = (int, float, complex, np.generic)  # 0-d, whatever their type


def numbers_passed(params: Sequence[str], args: tuple, kwargs: dict) -> tuple:
    """The parameters (of ``params``, in their order) that ``args`` and ``kwargs`` pass a number to."""
    found = [param for param, value in zip(params, args) if isinstance(value, NUMBERS)]
    if kwargs:
        found += [param for param in params[len(args):] if isinstance(kwargs.get(param), NUMBERS)]
    return tuple(found)


def shape_signature(params: Sequence[str], args: tuple) -> tuple:
    """``((parameter, dims), ...)`` for the positional arguments that are numpy arrays: each
    length 0 or 1 as itself, each other length as a label (``"n0"``, ``"n1"``, ... numbered in
    increasing order of the lengths, so ``n0 < n1``), equal lengths by one label, a length that is
    2 to dims.MULTIPLE_MOST times a lesser one (the least such) as that multiple (``"4*n0"``)
    (dims.py)."""
    arrays = [(param, value.shape) for param, value in zip(params, args) if type(value) is np.ndarray]
    met = list(dict.fromkeys(n for _, shape in arrays for n in shape if n > 1))
    bases: list = []
    base_of: dict = {}
    for n in sorted(met):
        base_of[n] = next((b for b in bases if n % b == 0 and n // b <= dims.MULTIPLE_MOST), n)
        if base_of[n] == n:
            bases.append(n)
    labels: dict = {}
    for n in sorted(met):  # numbered by length: n0 < n1 < ... (dims.least reads the order)
        if base_of[n] == n:
            labels[n] = f"n{len(labels)}"
    written = {n: labels[n] if base_of[n] == n else dims.times(labels[base_of[n]], n // base_of[n])
               for n in met}
    return tuple((param, tuple(n if n <= 1 else written[n] for n in shape)) for param, shape in arrays)


GLOBALS_MOST = 16  # the most global arrays a call's record and shape signature take in


def array_globals(fwd: Callable, params: Sequence[str]) -> tuple:
    """``((holder, name), ...)``: the values the generated sweep ``fwd`` reads from the user's
    globals and closures (binding.py) that are numpy arrays now, but none named like a
    parameter (at most GLOBALS_MOST)."""
    binding = binding_of(fwd)
    found = [(holder, name) for holder, name in (binding.reads if binding is not None else ())
             if name not in params and type(read_value(holder, name)) is np.ndarray]
    return tuple(found[:GLOBALS_MOST])


def call_signature(params: Sequence[str], args: tuple, reads: tuple) -> tuple:
    """The shape signature of the arrays a call passes by position (``args`` to ``params``) and
    of the global arrays ``reads`` (array_globals) names now."""
    names = tuple(name for _, name in reads)
    values = tuple(read_value(holder, name) for holder, name in reads)
    return shape_signature(tuple(params[:len(args)]) + names, tuple(args[:len(params)]) + values)


def read_value(holder: Any, name: str) -> Any:
    """The value ``name`` has in ``holder`` (a dict or a closure cell) now; None where it has none."""
    if isinstance(holder, dict):
        return holder.get(name)
    try:
        return holder.cell_contents
    except ValueError:  # an empty cell
        return None


def lifted_by_numbers(fun: Callable, wrt: tuple, has_aux: bool) -> bool:
    """Whether code for calls passing numbers to every parameter of ``fun`` (its first
    parameters: not ``*args``) is made, where the code for arrays was refused for what arrays
    allow and numbers do not (TransformError.arrays_only)."""
    try:
        derive.build(fun, wrt, has_aux, numbers=tuple(param_names(fun)))
    except TransformError:
        return False
    return True


class NumberBuilds:
    """The generated sweeps and forward mode of ``fun`` (differentiated with respect to ``wrt``)
    for each set of parameters its calls pass numbers to (and, for the sweeps, each signature of
    the arrays' shapes), made on first use. Where s2sgrad refuses the specialized code, calls use
    the code made for arrays (``generic()``: ``(fwd, bwd)``), which does not depend on what the
    arguments are."""

    def __init__(self, fun: Callable, wrt: tuple, has_aux: bool,
                 generic: Callable[[], tuple], compiled: bool = False) -> None:
        self.fun, self.wrt, self.has_aux, self.generic = fun, wrt, has_aux, generic
        self.compiled = compiled  # forward mode compiled by numba (compiled.py)
        self.made: dict = {}
        self.forwards: dict = {}
        # the code made for calls passing pytrees (calls.TreeBuilds, with the positions
        # differentiated), where the same call builds both: source(like=...) reads it
        self.trees: Any = None

    def sweeps(self, numbers: tuple, shapes: tuple = ()) -> tuple:
        """``(fwd, bwd)`` for calls passing numbers to the parameters ``numbers`` and arrays of
        the signature ``shapes`` (neither: the code made for arrays), current (derive.fresh: the
        user's values now, as Python reads them)."""
        key = (numbers, shapes)
        made = self.made.get(key) if numbers or shapes else self.generic()
        if made is None:
            try:
                made = derive.build(self.fun, self.wrt, self.has_aux, numbers=numbers, shapes=shapes)[1][:2]
            except TransformError:
                made = self.sweeps(numbers) if shapes else self.generic()
            self.made[key] = made
        derive.fresh(made[0])
        return made

    def made_for(self, numbers: tuple, shapes: tuple) -> bool:
        """Whether the sweeps for ``numbers`` and the shape signature ``shapes`` are made."""
        return (numbers, shapes) in self.made

    def text(self, numbers: tuple, shapes: tuple = ()) -> str:
        """The generated text of the sweeps for calls passing numbers to ``numbers`` and
        arrays of the signature ``shapes``."""
        return derive.build(self.fun, self.wrt, self.has_aux, numbers=numbers, shapes=shapes)[0]

    def forward(self, numbers: tuple) -> Any:
        """The ForwardGradient made for calls passing numbers to ``numbers`` (forward mode of
        the differentiated parameters, floats there)."""
        found = self.forwards.get(numbers)
        if found is None:
            found = self.forwards[numbers] = ForwardGradient(self.fun, self.wrt, numbers,
                                                             self.compiled)
        return found


__all__ = ["NUMBERS", "NumberBuilds", "lifted_by_numbers", "numbers_passed", "shape_signature"]

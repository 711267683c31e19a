"""Generated code specialized for the arguments that are numbers: a call's arguments -> the
parameters it passes numbers to, and the sweeps (or the forward mode) made for calls passing
numbers there (pipeline.Options.numbers; the disk cache keys on it).

A number (Python's int, float, complex or bool, or a numpy scalar) is 0-d: code made knowing it
records no shape of a value only numbers broadcast, and sums nothing back to a number's shape
(`s2s.unbroadcast`), so a loop on Python floats runs as plain float arithmetic.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .errors import TransformError
from .forward_code import ForwardGradient
from .parameters import param_names
from . import derive

NUMBERS = (int, float, complex, np.generic)  # 0-d, whatever their type


def numbers_passed(params: Sequence[str], args: tuple, kwargs: dict) -> tuple:
    """The parameters (of ``params``, in their order) that ``args`` and ``kwargs`` pass a number to."""
    found = [param for param, value in zip(params, args) if isinstance(value, NUMBERS)]
    if kwargs:
        found += [param for param in params[len(args):] if isinstance(kwargs.get(param), NUMBERS)]
    return tuple(found)


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
    for each set of parameters its calls pass numbers to, made on first use of that set. Where
    s2sgrad refuses the specialized code, calls use the code made for arrays (``generic()``:
    ``(fwd, bwd)``), which does not depend on what the arguments are."""

    def __init__(self, fun: Callable, wrt: tuple, has_aux: bool,
                 generic: Callable[[], tuple], compiled: bool = False) -> None:
        self.fun, self.wrt, self.has_aux, self.generic = fun, wrt, has_aux, generic
        self.compiled = compiled  # forward mode compiled by numba (compiled.py)
        self.made: dict = {}
        self.forwards: dict = {}

    def sweeps(self, numbers: tuple) -> tuple:
        """``(fwd, bwd)`` for calls passing numbers to the parameters ``numbers`` (none: the
        code made for arrays), current (derive.fresh: the user's values now, as Python reads
        them)."""
        made = self.made.get(numbers) if numbers else self.generic()
        if made is None:
            try:
                made = derive.build(self.fun, self.wrt, self.has_aux, numbers=numbers)[1][:2]
            except TransformError:
                made = self.generic()
            self.made[numbers] = made
        derive.fresh(made[0])
        return made

    def text(self, numbers: tuple) -> str:
        """The generated text of the sweeps for calls passing numbers to ``numbers``."""
        return derive.build(self.fun, self.wrt, self.has_aux, numbers=numbers)[0]

    def forward(self, numbers: tuple) -> Any:
        """The ForwardGradient made for calls passing numbers to ``numbers`` (forward mode of
        the differentiated parameters, floats there)."""
        found = self.forwards.get(numbers)
        if found is None:
            found = self.forwards[numbers] = ForwardGradient(self.fun, self.wrt, numbers,
                                                             self.compiled)
        return found


__all__ = ["NUMBERS", "NumberBuilds", "lifted_by_numbers", "numbers_passed"]

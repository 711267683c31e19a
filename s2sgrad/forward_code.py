"""Generated forward mode, loaded: a function and the parameters differentiated -> its ``<f>_jvp``
and the names of its tangent parameters (or, where forward mode cannot read the function, the
tangent by reverse mode over its generated gradient: transpose.py), and the checks of the tangents
a user passes."""

from __future__ import annotations

import inspect
import warnings
from typing import Any, Callable, Sequence

from .arguments import MASKED, argument_check, masked_refusal
from .compiled import call_compiled, compile_numba
from .errors import CompileWarning, TransformError, UsageError
from .parameters import param_names, wrt_names
from .read.capture import from_function
from .transpose import jvp_by_reverse
from .tree_arguments import Split
from .trees import LEAF, tree_flatten
from . import derive


class ForwardGradient:
    """Forward mode of ``fun`` with respect to the parameters ``wrt`` (one: its ``<f>_jvp``;
    more: ``<f>_forward_grad``, one tangent per parameter side by side), built on first use
    (``None`` when s2sgrad has no forward mode for it: the caller then uses reverse mode);
    ``numbers``: the parameters its calls pass numbers to (pipeline.Options.numbers);
    ``compiled``: the generated function compiled by numba where it can be (compiled.py). As
    Python, forward mode of several parameters is made only where every tangent holds one number
    (mode ``"fwd_numbers"``): there a tangent line is a float's arithmetic and nothing is
    recorded; elsewhere each more tangent may be an array operation more per statement."""

    def __init__(self, fun: Callable, wrt: tuple, numbers: tuple = (), compiled: bool = False) -> None:
        self.fun = fun
        self.wrt = wrt
        self.numbers = numbers
        self.compiled = compiled
        self.built = False
        self.fn: Any = None
        self.python: Any = None  # the generated Python function, where ``fn`` is it compiled
        self.text = ""
        self.tangents: tuple = ()
        self.positional = -1  # primal parameter count when the tangents follow them positionally
        self.refusal: Any = None

    def get(self) -> Any:
        if not self.built:
            self.built = True
            try:
                self.text, self.fn, self.tangents = build_jvp(
                    self.fun, self.wrt, numbers=self.numbers,
                    mode="fwd" if len(self.wrt) == 1 else
                    "fwd_grad" if self.compiled else "fwd_numbers")
                params = inspect.signature(self.fn).parameters.values()
                if all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params):
                    self.positional = len(params) - len(self.tangents)
            except Exception as exc:  # noqa: BLE001 - a refusal (or a failure) means reverse mode
                self.refusal = exc
                self.fn = None
            if self.fn is not None and self.compiled:
                made, why = compile_numba(self.fn)
                if made is None:
                    self._python_from_now(why)
                else:
                    self.python, self.fn = self.fn, made
        return self.fn

    def _python_from_now(self, why: str) -> None:
        """Run the generated Python function (not compiled: ``why``), and say so once."""
        if self.python is not None:
            self.fn, self.python = self.python, None
        warnings.warn(f"compiled=True: {getattr(self.fun, '__name__', self.fun)}'s forward mode "
                      f"runs as Python: {why}", CompileWarning, stacklevel=4)

    def _call(self, args: tuple, kwargs: dict) -> Any:
        if self.python is None:
            return self.fn(*args, **kwargs)
        result, compiled = call_compiled(self.fn, self.python, args, kwargs)
        if compiled is None:
            self._python_from_now("numba cannot compile it")
        return result

    def run(self, args: tuple) -> Any:
        """``(value, tangents)``, the derivatives along 1.0 for each parameter of ``wrt``, or
        None where forward mode failed here (reverse mode then runs the user's code again and
        computes, or raises, what it does): for this call alone where math raised at these
        numbers (FAILS_HERE), else from now on."""
        try:
            if self.python is None:  # compiled code reads no value that may change
                derive.fresh(self.fn)
            if len(args) == self.positional:
                value, tangent = self._call((*args, *(1.0 for _ in self.tangents)), {})
            else:
                value, tangent = self._call(args, {name: 1.0 for name in self.tangents})
            return value, ((tangent,) if len(self.tangents) == 1 else tangent)
        except Exception as exc:  # noqa: BLE001
            self.failed(exc)
            return None

    def failed(self, exc: Exception) -> None:
        """Forward mode raised ``exc`` at a call: given up, unless math raised at the numbers
        (FAILS_HERE: outside its domain, an overflow, a division by zero of floats, where
        numpy gives nan or inf and the sweeps run numpy's functions)."""
        if not isinstance(exc, FAILS_HERE):
            self.refusal, self.fn = exc, None


# What math (forward mode's numbers: forward.as_math) raises at some numbers alone, where numpy
# gives nan or inf: the call falls back to the sweeps, and the next one tries forward mode again.
FAILS_HERE = (ArithmeticError, ValueError)


def build_jvp(fun: Callable, wrt: tuple, trees: tuple = (), numbers: tuple = (),
              mode: str = "fwd") -> tuple:
    """Forward-mode transform of ``fun`` (or the disk cache): its text, its ``<name>_jvp``
    function (``mode`` "fwd_grad" or "fwd_numbers": ``<name>_forward_grad``) and the names of that function's
    tangent parameters (one per leaf of ``trees``); ``numbers``: parameters given numbers
    (pipeline.Options.numbers)."""
    text, (fn,) = derive.build(fun, wrt, mode=mode, trees=trees, numbers=numbers)
    params = tuple(inspect.signature(fn).parameters)
    count = leaf_count(wrt, trees)
    return text, fn, params[len(params) - count:]


def leaf_wrt(fun: Callable, wrt: tuple, trees: tuple, mode: str) -> tuple:
    """The parameters the code generated for ``trees`` (of ``mode``) differentiates: ``wrt``,
    each tree parameter replaced by its leaves' parameters."""
    if not trees:
        return wrt
    return tuple(derive.code_for(fun, from_function(fun), wrt, mode=mode, trees=trees)["wrt"])


def leaf_count(wrt: tuple, trees: tuple) -> int:
    """How many parameters the code generated for ``trees`` differentiates for ``wrt``."""
    sizes = {param: treedef.num_leaves for param, treedef in trees}
    return sum(sizes.get(name, 1) for name in wrt)


def jvp_or_transpose(fun: Callable, wrt: tuple, trees: tuple = ()) -> tuple:
    """build_jvp, or where forward mode cannot read ``fun``, the tangent by reverse mode over
    its generated gradient (transpose.py); forward mode's refusal when neither applies."""
    try:
        return build_jvp(fun, wrt, trees)
    except TransformError:
        found = jvp_by_reverse(fun, wrt, trees, leaf_count(wrt, trees))
        if found is None:
            raise
        return found


def directional(fun: Callable, args: tuple, positions: tuple, tangents: Sequence[Any],
                 what: str) -> tuple:
    """``(tangents, wrt)`` for jvp/hvp at ``args`` (the primals at ``positions``): one tangent
    per primal, each primal an array or a float; ``wrt`` the names of their parameters."""
    tangents = tuple(tangents)
    if len(positions) != len(tangents):
        raise UsageError(f"{what} needs one tangent per primal: got {len(positions)} primal(s) and "
                         f"{len(tangents)} tangent(s)")
    wrt = wrt_names(fun, positions)
    name = getattr(fun, "__name__", "the function")
    argument_check(name, param_names(fun), positions, wrt,
                   complex_numbers=what == "jvp")(args, {})  # a complex tangent comes back as one
    for param, tangent in zip(wrt, tangents):
        if isinstance(tangent, MASKED):
            raise masked_refusal(name, f"the tangent for `{param}`")
    return tangents, wrt


def flat_tangents(split: Split, tangents: Sequence[Any], what: str) -> tuple:
    """The leaves of ``tangents`` (one tree per differentiated argument of ``split``, each of
    its argument's structure), in ``split``'s leaf order."""
    tangents = tuple(tangents)
    if len(tangents) != len(split.defs):
        raise UsageError(f"{what} needs one tangent per primal: got {len(split.defs)} primal(s) "
                         f"and {len(tangents)} tangent(s)")
    out = []
    for treedef, tangent in zip(split.defs, tangents):
        leaves, got = tree_flatten(tangent)
        if (treedef or LEAF) != got:
            raise UsageError(f"{what}: a tangent's structure ({got.describe()}) is not its "
                             f"primal's ({(treedef or LEAF).describe()})")
        out.extend(leaves)
    return split.spread(out)


__all__ = ["FAILS_HERE", "ForwardGradient", "build_jvp", "directional", "flat_tangents", "jvp_or_transpose",
           "leaf_count", "leaf_wrt"]

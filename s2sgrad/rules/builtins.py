"""Python's builtins on numbers and arrays that carry a derivative (``abs``, ``float`` and ``sum``
live with their numpy kin in elementwise.py and containers.py): ``max`` and ``min`` of two or more
numbers (numpy.maximum's rule, ties shared evenly; more arguments fold pairwise), ``x.item()``,
``sorted`` of numbers (runtime/sorting.py), ``tuple`` and ``list`` of a sequence or an array."""

from dataclasses import replace

from .elementwise import EXTREMUM
from .table import alias, defvjp

_ONE_ITERABLE = ("`{name}` of one iterable has no derivative rule: for an array write `np.{short}(x)` "
                 "(or `np.{short}imum(a, b)` elementwise); for numbers list them: "
                 "`{short}(a, b, c)`")

RULES = (
    replace(alias("builtins.max", EXTREMUM), pairwise=_ONE_ITERABLE.format(name="max", short="max")),
    replace(alias("builtins.min", EXTREMUM), pairwise=_ONE_ITERABLE.format(name="min", short="min")),
    # a one-element array's value as a Python number: its adjoint is the array of that one value
    defvjp("ndarray.item(self)", linear=("self",), self="np.full(np.shape(self), g)"),
    # numbers in the order of their values (a permutation: piecewise linear in the items)
    defvjp("builtins.sorted(iterable, key=None, reverse=False)", constant_in=("key", "reverse"),
           jvps={"iterable": "s2s.sorted_jvp(t, iterable, key, reverse)"},
           iterable="s2s.sorted_vjp(g, iterable, key, reverse)"),
    # a tuple or list of a sequence's items (``tuple((w, v))``, ``list(x)`` of an array's rows):
    # the identity on the items, their adjoints read back as the sequence or array they came from
    defvjp("builtins.tuple(iterable=())", linear=("iterable",), iterable="s2s.sequence_vjp(g, iterable)"),
    defvjp("builtins.list(iterable=())", linear=("iterable",), iterable="s2s.sequence_vjp(g, iterable)"),
)

INSTEAD: dict = {
    "builtins.set": "a set of values that carry a derivative has no derivative s2sgrad can state "
                    "(it drops repeats and forgets their order): keep the values in a list (a list "
                    "comprehension) or an array (`np.sort(a)` orders them), or build the set from "
                    "values that carry none (indices, `int(...)`, comparisons)",
}

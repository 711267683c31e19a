"""Rules of the helpers of s2sgrad/runtime/containers.py: index writes on a copy, adjoints added
element by element, a list element's adjoint, a custom gradient's output leaves, dict displays."""

from ..containers import RULES as _LIST_RULES
from ..table import alias, defvjp

# The helpers a backward sweep grows and shrinks an adjoint list with in O(1) a step (their rules
# below): the adjoint of an append pops the list's last item (``rest, last = s2s.split_last(g)``),
# from a list the sweep owns (made its own, once, by ``s2s.owned``); differentiate/growth.py and
# the reverse builder write and recognize them by these names.
POP_LAST = "split_last"
OWNED = "owned"
TREE_ZEROS = "tree_zeros"  # zeros of a value's structure: the tangent of a value that does not vary
PROMOTED = "promoted"  # x cast to the type of a join of its parts and a value (lower/splices.py)

RULES = (
    # tuple(x) / list(x)'s adjoint of an array's rows stacked, and its transpose (one per row)
    defvjp("s2sgrad.runtime.sequence_vjp(value, iterable)", linear=("value",), constant_in=("iterable",),
           value="s2s.sequence_items(g, iterable)"),
    defvjp("s2sgrad.runtime.sequence_items(value, iterable)", linear=("value",), constant_in=("iterable",),
           value="s2s.sequence_vjp(g, iterable)"),
    # a dict display: linear in its values, each value's adjoint the dict adjoint's item
    defvjp(
        "s2sgrad.runtime.dict_of(keys, values)",
        linear=("values",),
        constant_in=("keys",),
        values="s2s.dict_of_vjp(g, keys)",
    ),
    # dict_of's transpose: the items put back in a dict, and the other way round
    defvjp(
        "s2sgrad.runtime.dict_of_vjp(value, keys)",
        linear=("value",),
        constant_in=("keys",),
        value="s2s.dict_of(keys, g)",
    ),
    # a new list with one more item: list.append's rule
    alias("s2sgrad.runtime.append", next(r for r in _LIST_RULES if r.name == "list.append")),
    # x[index] = value on a copy: x's adjoint loses what was overwritten, value's is G[index] at
    # the writes that stay (of repeated positions, the last)
    defvjp(
        "s2sgrad.runtime.setitem(x, index, value)",
        constant_in=("index",),
        jvps={"x": "s2s.setitem(t, index, 0.0)",
              "value": "s2s.setitem(s2s.zeros_like(x), index, t)"},
        batched={"x": "s2s.batch_setitem(t, index, value)",
                 "value": "s2s.batch_setitem_value(x, index, t)"},
        x="s2s.setitem(g, index, 0.0)",
        value="s2s.setitem_value_vjp(g, index, value)",
    ),
    # x cast to the type a join of x's parts and value takes (x itself where that is x's): linear
    # in x, the adjoint given back as it is (astype's rule)
    defvjp(
        "s2sgrad.runtime.promoted(x, value)",
        linear=("x",),
        constant_in=("value",),
        view=True,
        batched={"x": "s2s.promoted(t, value)"},
        x="g",
    ),
    # the written value's adjoint (G[index] where the write stays, summed to value's shape): its
    # transpose writes g back there, the last write to a position being the one that stays
    defvjp(
        "s2sgrad.runtime.setitem_value_vjp(adjoint, index, value)",
        linear=("adjoint",),
        constant_in=("index", "value"),
        batched={"adjoint": "s2s.batch_setitem_value_vjp(t, index, value)"},
        adjoint="s2s.setitem(s2s.zeros_like(adjoint), index, g)",
    ),
    # a + b for adjoints (lists and dicts element by element): each gets the whole adjoint, in
    # its own form (an array's adjoint added to a list's is an array: add_vjp); the tangent adds
    # the tangents the same way (dicts have no `+`)
    defvjp(
        "s2sgrad.runtime.add(a, b)",
        joint_jvp="s2s.add(a, b)",
        a="s2s.add_vjp(g, a)",
        b="s2s.add_vjp(g, b)",
    ),
    # add_vjp is linear in the adjoint; its transpose takes the sum's form back
    defvjp(
        "s2sgrad.runtime.add_vjp(value, operand)",
        linear=("value",), constant_in=("operand",),
        value="s2s.add_vjp(g, value)",
    ),
    # the leaves of a custom gradient's output adjoint: its transpose puts them back in the tree
    defvjp(
        "s2sgrad.runtime.leaves(value)",
        linear=("value",),
        value="s2s.unleaves(g, value)",
    ),
    # leaves's transpose: leaves' adjoints put back in the tree's shape
    defvjp(
        "s2sgrad.runtime.unleaves(value, tree)",
        linear=("value",),
        constant_in=("tree",),
        value="s2s.leaves(g)",
    ),
    # xs[index]'s adjoint (zeros, g at index): its transpose reads G[index] back
    defvjp(
        "s2sgrad.runtime.list_getitem_vjp(value, xs, index)",
        linear=("value",),
        constant_in=("xs", "index"),
        value="g[index]",
    ),
    # a list's copy, for a helper that empties the lists it reads: linear, its adjoint passes through
    defvjp(
        "s2sgrad.runtime.copied(xs)",
        linear=("xs",),
        xs="g",
    ),
    # a list's copy the caller may change in place: its adjoint passes through, in the form of
    # what it was given (an array given where a list's adjoint stands, one adjoint per row of
    # it, takes those rows stacked)
    defvjp("s2sgrad.runtime.owned(xs)", linear=("xs",), xs="s2s.sequence_vjp(g, xs)"),
    # (xs[:-1], xs[-1]), popped from the list itself (it empties what it reads, so derivative
    # code passes a copy): the adjoint of an append in a backward sweep; its transpose appends
    defvjp(
        "s2sgrad.runtime.split_last(xs)",
        outputs=("rest", "last"),
        linear=("xs",),
        consumes=("xs",),
        jvps={"xs": "(t[:-1], t[-1])"},
        xs="s2s.joined_last(g[0], g[1])",
    ),
    # its transpose: a list's adjoint with one more item (as list.append's rule)
    defvjp(
        "s2sgrad.runtime.joined_last(rest, last)",
        joint_jvp="s2s.joined_last(rest, last)",
        rest="g[:-1]",
        last="g[-1]",
    ),
    # sum(xs)'s adjoint (g summed to each element's shape): its transpose sums and broadcasts back
    defvjp(
        "s2sgrad.runtime.sum_list_vjp(value, xs)",
        linear=("value",),
        constant_in=("xs",),
        value="s2s.broadcast(sum(g), np.shape(value))",
    ),
)

# Piecewise constant: no derivative.
NONDIFF = ("s2sgrad.runtime.zeros_like", "s2sgrad.runtime.list_zeros", "s2sgrad.runtime.tree_zeros",
           "s2sgrad.runtime.keys")

NO_RULE = {"Parts": "the list class helpers build their results with: generated code does not call it",
           "Keyed": "the dict class helpers build their results with: generated code does not call it",
           "keyed_gradient": "the boundary of an emitted <f>_grad taking dicts (the CLI): no "
                             "generated code is differentiated through it"}

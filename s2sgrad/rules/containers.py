"""Python lists and index writes: the adjoint of a list is a list of adjoints, one per element."""

from .table import defvjp

# Why forward mode has no tangent for a rule (Rule.reverse_only).
_CONTAINER = "forward mode does not carry tangents through lists and index writes yet"

RULES = (
    defvjp(
        "list.append(lst, item)",
        reverse_only=_CONTAINER,
        lst="g[:-1]",
        item="g[-1]",
    ),
    defvjp(
        "list.getitem(lst, index)",
        reverse_only=_CONTAINER,
        lst="s2s.list_getitem_vjp(g, lst, index)",
        view=True,
    ),
    defvjp(
        "builtins.sum(iterable, start=0)", linear=("iterable",),
        iterable="s2s.sum_list_vjp(g, iterable)",
        start="s2s.unbroadcast(g, start)",
    ),
    defvjp(
        "s2s.setitem(a, index, value)",
        jvps={"a": "s2s.setitem(t, index, 0.0)", "value": "s2s.setitem(s2s.zeros_like(a), index, t)"},
        constant_in=("index",),
        a="s2s.setitem(g, index, 0.0)",
        value="s2s.unbroadcast(g[index], value)",
    ),
)

"""Python lists and index writes: the adjoint of a list is a list of adjoints, one per element."""

from .table import defvjp


RULES = (
    defvjp(
        "list.append(lst, item)",
        joint_jvp="s2s.append(lst, item)",
        lst="g[:-1]",
        item="g[-1]",
    ),
    defvjp(
        "list.getitem(lst, index)",
        linear=("lst",),
        constant_in=("index",),
        lst="s2s.list_getitem_vjp(g, lst, index)",
        view=True,
    ),
    defvjp(
        # linear in the items and start together, not in the items alone: `sum(xs, 0.5)`'s
        # tangent is `sum(xs_dot, 0.0)` (it kept start's 0.5 in silence)
        "builtins.sum(iterable, start=0)", joint_jvp="sum(iterable, start)",
        iterable="s2s.sum_list_vjp(g, iterable)",
        start="s2s.unbroadcast(g, start)",
    ),
    defvjp(
        "s2s.setitem(a, index, value)",
        jvps={"a": "s2s.setitem(t, index, 0.0)", "value": "s2s.setitem(s2s.zeros_like(a), index, t)"},
        constant_in=("index",),
        a="s2s.setitem(g, index, 0.0)",
        value="s2s.setitem_value_vjp(g, index, value)",
    ),
)

"""Generated names (s2sgrad/lower/naming.py): a temporary never takes the name of a Python builtin
that rule templates call, since a temporary ``sum`` hid the builtin from a later ``sum(parts)``
line of a second-order backward sweep (the default tier's fixed seed 6 raised TypeError)."""

from s2sgrad.lower.naming import Namer


def test_a_fresh_name_is_never_a_builtins():
    namer = Namer({"x"})
    for base in ("sum", "len", "max", "min", "abs", "range", "tuple", "list", "float", "round"):
        name = namer.fresh(base)
        assert name != base and name.startswith(base + "_")
    assert namer.fresh("sum_x") == "sum_x"
    assert namer.temp("np.sum(reshape_logpdf_x_bar_4)", "sum") == "sum_3"  # sum_2: above

"""Rules of the helper of s2sgrad/runtime/sums.py: ``axis_sum``, numpy's sum over axes (a sum,
``Rule.reduction``; its adjoint spreads back over the summed axes as ``np.sum``'s does)."""

from ..table import defvjp

RULES = (
    defvjp("s2sgrad.runtime.axis_sum(a, axis=None, keepdims=False)",
           linear=("a",), reduction="sum",
           batched={"a": "s2s.batch_sum(t, axis, None, keepdims)"},
           a="s2s.sum_vjp(g, a, axis, keepdims)"),
)

AXIS_SUM = "axis_sum"  # numpy's sum over axes as generated code made for shapes calls it (lower/axis_sums.py)

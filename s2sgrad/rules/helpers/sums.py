"""Rules of the helpers of s2sgrad/runtime/sums.py: ``axis_sum`` and ``axis_mean``, numpy's sum
and mean over axes (``Rule.reduction`` "sum" and "mean"; their adjoints spread back over the axes
as ``np.sum``'s and ``np.mean``'s do)."""

from ..table import defvjp

RULES = (
    defvjp("s2sgrad.runtime.axis_sum(a, axis=None, keepdims=False)",
           linear=("a",), reduction="sum",
           batched={"a": "s2s.batch_sum(t, axis, None, keepdims)"},
           a="s2s.sum_vjp(g, a, axis, keepdims)"),
    defvjp("s2sgrad.runtime.axis_mean(a, axis=None, keepdims=False)",
           linear=("a",), reduction="mean",
           batched={"a": "s2s.batch_mean(t, axis, None, keepdims)"},
           a="s2s.mean_vjp(g, a, axis, keepdims)"),
)

# numpy's sum and mean over axes as code made for shapes calls them (lower/axis_sums.py)
AXIS_SUM, AXIS_MEAN = "axis_sum", "axis_mean"

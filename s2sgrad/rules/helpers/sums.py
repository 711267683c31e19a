"""Rules of the helpers of s2sgrad/runtime/sums.py: ``axis_sum`` and ``axis_mean``, numpy's sum
and mean over axes (``Rule.reduction`` "sum" and "mean"; their adjoints spread back over the axes
as ``np.sum``'s and ``np.mean``'s do), and ``sum_of_products``, ``np.sum(a * b)`` (each operand's
adjoint the other times the upstream number), and ``sum_of_squares``, ``np.sum(a * a)``."""

from ... import dims
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
    defvjp("s2sgrad.runtime.sum_of_products(a, b)", result_shape=dims.number,
           jvps={"a": "s2s.sum_of_products(t, b)", "b": "s2s.sum_of_products(a, t)"},
           a="g * b", b="g * a"),
    defvjp("s2sgrad.runtime.sum_of_squares(a)", result_shape=dims.number,
           jvps={"a": "2.0 * s2s.sum_of_products(a, t)"},
           a="g * 2.0 * a"),
)

# numpy's sum and mean over axes as code made for shapes calls them (lower/axis_sums.py); the
# whole sum of an elementwise product (lower/sums_of_products.py)
AXIS_SUM, AXIS_MEAN = "axis_sum", "axis_mean"
SUM_OF_PRODUCTS, SUM_OF_SQUARES = "sum_of_products", "sum_of_squares"

"""Reductions and scans: the adjoint is spread back over the reduced axes.

Optional arguments that could be mistaken for another parameter's default (``axis=0`` and the
default ``ddof=0``) are passed to the helpers by keyword.
"""

from .. import dims
from .table import alias, defvjp

# Why forward mode has no tangent for a rule (Rule.reverse_only).
_NONLINEAR = "a nonlinear reduction; its tangent template is not written yet"
_JOINTLY = ("linear in several arguments together, which the linear route (one argument at a "
            "time) does not cover")

_SUM = defvjp(
    "numpy.sum(a, axis=None, dtype=None, out=None, keepdims=False)",
    methods=("sum",),
    linear=("a",),
    reduction="sum",
    batched={"a": "s2s.batch_sum(t, axis, dtype, keepdims)"},
    a="s2s.sum_vjp(g, a, axis, keepdims)",
)
_MEAN = defvjp(
    "numpy.mean(a, axis=None, dtype=None, out=None, keepdims=False)",
    methods=("mean",),
    linear=("a",),
    reduction="mean",
    batched={"a": "s2s.batch_mean(t, axis, dtype, keepdims)"},
    a="s2s.mean_vjp(g, a, axis, keepdims)",
)
_VAR = defvjp(
    "numpy.var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False)", methods=("var",),
    reverse_only=_NONLINEAR,
    reduction="other",
    algebra="var",  # code made for a call's shapes writes it out as numpy computes it (lower/variances.py)
    a="s2s.var_vjp(g, a, axis, ddof=ddof, keepdims=keepdims)",
    fresh_adjoints=True,  # its helper's result is a new array (a product with the centered values)
)
_STD = defvjp(
    "numpy.std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False)", methods=("std",),
    reverse_only=_NONLINEAR,
    reduction="other",
    algebra="std",  # (lower/variances.py, as var)
    a="s2s.std_vjp(g, ans, a, axis, ddof=ddof, keepdims=keepdims)",
    fresh_adjoints=True,  # its helper's result is a new array (a product with the centered values)
)
_MAX = defvjp(
    "numpy.max(a, axis=None, out=None, keepdims=False)", methods=("max",), reduction="extremum",
    a="s2s.extremum_vjp(g, ans, a, axis, keepdims)",
    jvps={"a": "s2s.extremum_jvp(t, ans, a, axis, keepdims)"},
)
_PROD = defvjp(
    "numpy.prod(a, axis=None, dtype=None, out=None, keepdims=False)", methods=("prod",),
    reverse_only=_NONLINEAR,
    reduction="other",
    a="s2s.prod_vjp(g, ans, a, axis, keepdims)",
)
_CUMSUM = defvjp(
    "numpy.cumsum(a, axis=None, dtype=None, out=None)", methods=("cumsum",),
    linear=("a",),
    a="s2s.cumsum_vjp(g, a, axis)",
)
_CUMPROD = defvjp(
    "numpy.cumprod(a, axis=None, dtype=None, out=None)", methods=("cumprod",),
    reverse_only=_NONLINEAR,
    a="s2s.cumprod_vjp(g, ans, a, axis)",
)
_NANMAX = defvjp(
    "numpy.nanmax(a, axis=None, out=None, keepdims=False)",
    reverse_only=_NONLINEAR,
    a="s2s.extremum_vjp(g, ans, a, axis, keepdims)",
)

# what code made for a call's shapes writes a variance out with (lower/variances.py): the mean of
# its two passes, and a deviation's square root
VARIANCE_PARTS = {"mean": _MEAN.name, "sqrt": "numpy.sqrt"}

RULES = (
    _SUM,
    _MEAN,
    _VAR,
    _STD,
    _MAX,
    _PROD,
    _CUMSUM,
    alias("numpy.amax", _MAX),
    alias("numpy.min", _MAX, methods=("min",)),
    alias("numpy.amin", _MAX),
    _CUMPROD,
    defvjp(
        "numpy.diff(a, n=1, axis=-1, prepend=None, append=None)",
        reverse_only=_JOINTLY,
        prepend="s2s.split_diff(g, a, n=n, axis=axis, prepend=prepend, append=append)[0]",
        a="s2s.split_diff(g, a, n=n, axis=axis, prepend=prepend, append=append)[1]",
        append="s2s.split_diff(g, a, n=n, axis=axis, prepend=prepend, append=append)[2]",
    ),
    # linear in f; the spacings (numbers or coordinates) have no template: varied ones are refused
    defvjp(
        "numpy.gradient(f, *varargs, axis=None, edge_order=1)", linear=("f",),
        f="s2s.gradient_vjp(g, f, varargs, axis, edge_order)",
    ),
    defvjp(
        "numpy.average(a, axis=None, weights=None, returned=False, keepdims=False)",
        reverse_only=_NONLINEAR,
        a="s2s.average_vjp_a(g, a, axis, weights, keepdims=keepdims)",
        weights="s2s.average_vjp_weights(g, ans, a, axis, weights, keepdims=keepdims)",
    ),
    defvjp(
        "numpy.ptp(a, axis=None, out=None, keepdims=False)",
        reverse_only=_NONLINEAR,
        a="s2s.ptp_vjp(g, a, axis, keepdims)",
    ),
    # ----- NaN-ignoring reductions: NaN entries get a zero adjoint ----------------------------
    defvjp(
        "numpy.nansum(a, axis=None, dtype=None, out=None, keepdims=False)",
        jvps={"a": "np.sum(np.where(np.isnan(a), 0.0, t), axis=axis, keepdims=keepdims)"},
        a="s2s.nansum_vjp(g, a, axis, keepdims)",
    ),
    defvjp(
        "numpy.nanmean(a, axis=None, dtype=None, out=None, keepdims=False)",
        reverse_only=_NONLINEAR,
        a="s2s.nanmean_vjp(g, a, axis, keepdims)",
    ),
    defvjp(
        "numpy.nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False)",
        reverse_only=_NONLINEAR,
        a="s2s.nanvar_vjp(g, a, axis, ddof=ddof, keepdims=keepdims)",
    ),
    defvjp(
        "numpy.nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False)",
        reverse_only=_NONLINEAR,
        a="s2s.nanstd_vjp(g, ans, a, axis, ddof=ddof, keepdims=keepdims)",
    ),
    _NANMAX,
    alias("numpy.nanmin", _NANMAX),
    defvjp(
        "numpy.nanprod(a, axis=None, dtype=None, out=None, keepdims=False)",
        reverse_only=_NONLINEAR,
        a="s2s.nanprod_vjp(g, ans, a, axis, keepdims)",
    ),
    defvjp(
        "numpy.nancumsum(a, axis=None, dtype=None, out=None)",
        reverse_only=_NONLINEAR,
        a="s2s.nancumsum_vjp(g, a, axis)",
    ),
    defvjp(
        "numpy.linalg.norm(x, ord=None, axis=None, keepdims=False)",
        reverse_only=_NONLINEAR, result_shape=dims.number, algebra="norm",
        x="s2s.norm_vjp(g, ans, x, ord, axis, keepdims)",
    ),
)

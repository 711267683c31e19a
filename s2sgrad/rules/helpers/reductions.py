"""Rules of the helpers of s2sgrad/runtime/reductions.py: the adjoints of reductions.

Each adjoint ``h(value, ...)`` is linear in the adjoint ``value`` it spreads back: its transpose
reduces again (``sum_vjp`` -> ``np.sum``), written as ``np.sum(g * h(ones, ...))`` where ``h``
scales a fixed array by the spread ``value``. Second derivatives of products are written for an
``x`` without zeros (``s2s.nonzero_factor`` raises on one); complex inputs are not covered
(the helpers' conjugates).
"""

from ..table import defvjp

_R = "axis=axis, keepdims=keepdims"  # the reduction's own axes, as the templates pass them
_D = "ddof=ddof, keepdims=keepdims"
_S = "s2s.weight_sum(a, axis, weights)"  # np.average's total weight per slice (keepdims)
_E = "s2s.sum_vjp(value, a, axis, keepdims)"  # value spread over a
_GB = "s2s.spread_weights(a, axis, g)"
_NZ = "s2s.nonzero_factor(np.where(np.isnan(x), 1.0, x))"  # nanprod's divisor: x's numbers
_DEV = f"{_E} * (a - s2s.sum_vjp(m, a, axis, keepdims))"  # average_vjp_weights' numerator


def _back(expr: str, to: str) -> str:
    """``expr`` reduced over the axes and summed to ``to``'s shape: a transpose of a spread."""
    return f"s2s.unbroadcast(np.sum({expr}, {_R}), {to})"


RULES = (
    # the adjoint of a sum: spread over the axes; its transpose sums again
    defvjp(
        "s2sgrad.runtime.sum_vjp(value, x, axis=None, keepdims=False)",
        linear=("value",), constant_in=("x",),
        batched={"value": "s2s.batch_sum_vjp(t, x, axis, keepdims)"},
        value=f"s2s.unbroadcast(np.sum(g, {_R}), value)",
    ),
    # the adjoint of a mean: spread and divided by the count; its transpose is the mean
    defvjp(
        "s2sgrad.runtime.mean_vjp(value, x, axis=None, keepdims=False)",
        linear=("value",), constant_in=("x",),
        batched={"value": "s2s.batch_mean_vjp(t, x, axis, keepdims)"},
        value=f"s2s.unbroadcast(np.mean(g, {_R}), value)",
    ),
    # max/min's adjoint, shared among the hits: its transpose is the mean over the hits
    defvjp(
        "s2sgrad.runtime.extremum_vjp(value, m, x, axis=None, keepdims=False)",
        linear=("value",), constant_in=("m", "x"),
        value="s2s.unbroadcast(s2s.extremum_jvp(g, m, x, axis, keepdims), value)",
    ),
    # the mean of the tangents at the hits: linear in t, piecewise constant in m and x
    defvjp(
        "s2sgrad.runtime.extremum_jvp(t, m, x, axis=None, keepdims=False)",
        linear=("t",), constant_in=("m", "x"),
        t="s2s.unbroadcast(s2s.extremum_vjp(g, m, x, axis, keepdims), t)",
    ),
    # var's adjoint 2 value (x - mean x) / (n - ddof): linear in value and in x; centring is
    # self-adjoint, so x's adjoint centres the spread value times g
    defvjp(
        "s2sgrad.runtime.var_vjp(value, x, axis=None, ddof=0, keepdims=False)",
        linear=("value", "x"),
        value=_back(f"g * s2s.var_vjp(np.ones_like(value), x, axis, {_D})", "value"),
        x=f"s2s.var_vjp(np.ones_like(value), s2s.sum_vjp(value, x, axis, keepdims) * g, axis, "
          f"{_D})",
    ),
    # std's adjoint value / s (x - mean x) / (n - ddof): linear in value and x, 1/s in s (0 where
    # one value is reduced: the helper's convention, kept by passing value / s to it)
    defvjp(
        "s2sgrad.runtime.std_vjp(value, s, x, axis=None, ddof=0, keepdims=False)",
        jvps={"value": f"s2s.std_vjp(t, s, x, axis, {_D})",
              "s": f"s2s.std_vjp(-value * t / s, s, x, axis, {_D})",
              "x": f"s2s.std_vjp(value, s, t, axis, {_D})"},
        value=_back(f"g * s2s.std_vjp(np.ones_like(value), s, x, axis, {_D})", "value"),
        s=f"-{_back(f'g * s2s.std_vjp(value / s, s, x, axis, {_D})', 's')}",
        x=f"s2s.std_vjp(np.ones_like(value), np.ones_like(s), "
          f"s2s.sum_vjp(value / s, x, axis, keepdims) * g, axis, {_D})",
    ),
    # prod's adjoint value * p / x: linear in value and in p, 1/x in x (a zero in x raises)
    defvjp(
        "s2sgrad.runtime.prod_vjp(value, p, x, axis=None, keepdims=False)",
        jvps={"value": "s2s.prod_vjp(t, p, x, axis, keepdims)",
              "p": "s2s.prod_vjp(value, t, x, axis, keepdims)",
              "x": "-s2s.prod_vjp(value, p, x, axis, keepdims) * t / s2s.nonzero_factor(x)"},
        value=_back("g * s2s.prod_vjp(np.ones_like(value), p, x, axis, keepdims)", "value"),
        p=_back("g * s2s.prod_vjp(value, np.ones_like(p), x, axis, keepdims)", "p"),
        x="-g * s2s.prod_vjp(value, p, x, axis, keepdims) / s2s.nonzero_factor(x)",
    ),
    # nansum's adjoint: spread, 0 at the NaNs; its transpose is the sum without them
    defvjp(
        "s2sgrad.runtime.nansum_vjp(value, x, axis=None, keepdims=False)",
        linear=("value",), constant_in=("x",),
        value=_back("np.where(np.isnan(x), 0.0, g)", "value"),
    ),
    # nanmean's adjoint: spread over the numbers, divided by their count
    defvjp(
        "s2sgrad.runtime.nanmean_vjp(value, x, axis=None, keepdims=False)",
        linear=("value",), constant_in=("x",),
        value=f"s2s.unbroadcast(np.sum(np.where(np.isnan(x), 0.0, g), {_R}) / "
              f"np.sum(~np.isnan(x), {_R}), value)",
    ),
    # nanvar's adjoint: var's on the numbers (x's NaNs kept, so that the mask stays x's)
    defvjp(
        "s2sgrad.runtime.nanvar_vjp(value, x, axis=None, ddof=0, keepdims=False)",
        jvps={"value": f"s2s.nanvar_vjp(t, x, axis, {_D})",
              "x": f"s2s.nanvar_vjp(value, np.where(np.isnan(x), np.nan, t), axis, {_D})"},
        value=_back(f"g * s2s.nanvar_vjp(np.ones_like(value), x, axis, {_D})", "value"),
        x=f"s2s.nanvar_vjp(np.ones_like(value), np.where(np.isnan(x), np.nan, "
          f"s2s.sum_vjp(value, x, axis, keepdims) * g), axis, {_D})",
    ),
    # nanstd's adjoint: std's on the numbers
    defvjp(
        "s2sgrad.runtime.nanstd_vjp(value, s, x, axis=None, ddof=0, keepdims=False)",
        jvps={"value": f"s2s.nanstd_vjp(t, s, x, axis, {_D})",
              "s": f"s2s.nanstd_vjp(-value * t / s, s, x, axis, {_D})",
              "x": f"s2s.nanstd_vjp(value, s, np.where(np.isnan(x), np.nan, t), axis, {_D})"},
        value=_back(f"g * s2s.nanstd_vjp(np.ones_like(value), s, x, axis, {_D})", "value"),
        s=f"-{_back(f'g * s2s.nanstd_vjp(value / s, s, x, axis, {_D})', 's')}",
        x=f"s2s.nanstd_vjp(np.ones_like(value), np.ones_like(s), np.where(np.isnan(x), np.nan, "
          f"s2s.sum_vjp(value / s, x, axis, keepdims) * g), axis, {_D})",
    ),
    # nanprod's adjoint: prod's on the numbers (a zero in x raises)
    defvjp(
        "s2sgrad.runtime.nanprod_vjp(value, p, x, axis=None, keepdims=False)",
        jvps={"value": "s2s.nanprod_vjp(t, p, x, axis, keepdims)",
              "p": "s2s.nanprod_vjp(value, t, x, axis, keepdims)",
              "x": f"-s2s.nanprod_vjp(value, p, x, axis, keepdims) * t / {_NZ}"},
        value=_back("g * s2s.nanprod_vjp(np.ones_like(value), p, x, axis, keepdims)", "value"),
        p=_back("g * s2s.nanprod_vjp(value, np.ones_like(p), x, axis, keepdims)", "p"),
        x=f"-g * s2s.nanprod_vjp(value, p, x, axis, keepdims) / {_NZ}",
    ),
    # ptp's adjoint: max's less min's; its transpose, the means over their hits
    defvjp(
        "s2sgrad.runtime.ptp_vjp(value, x, axis=None, keepdims=False)",
        linear=("value",), constant_in=("x",),
        value=f"s2s.unbroadcast(s2s.extremum_jvp(g, np.max(x, {_R}), x, axis, keepdims) - "
              f"s2s.extremum_jvp(g, np.min(x, {_R}), x, axis, keepdims), value)",
    ),
    # logsumexp's adjoint of a: value * b * exp(a - lse), the softmax weights spread by value
    defvjp(
        "s2sgrad.runtime.logsumexp_vjp(value, lse, a, axis=None, b=None, keepdims=False)",
        jvps={"value": "s2s.logsumexp_vjp(t, lse, a, axis, b, keepdims)",
              "lse": "-s2s.logsumexp_vjp(value * t, lse, a, axis, b, keepdims)",
              "a": "s2s.logsumexp_vjp(value, lse, a, axis, b, keepdims) * t",
              "b": "s2s.logsumexp_vjp(value, lse, a, axis, t, keepdims)"},
        value=_back("g * s2s.logsumexp_vjp(np.ones_like(lse), lse, a, axis, b, keepdims)", "value"),
        lse=f"-{_back('g * s2s.logsumexp_vjp(value, lse, a, axis, b, keepdims)', 'lse')}",
        a="s2s.unbroadcast(g * s2s.logsumexp_vjp(value, lse, a, axis, b, keepdims), a)",
        b="s2s.unbroadcast(s2s.logsumexp_vjp(value, lse, a, axis, g, keepdims), b)",
    ),
    # logsumexp's adjoint of b: value * exp(a - lse) summed to b's shape (b read for it only)
    defvjp(
        "s2sgrad.runtime.logsumexp_vjp_b(value, lse, a, axis=None, b=None, keepdims=False)",
        constant_in=("b",),
        jvps={"value": "s2s.logsumexp_vjp_b(t, lse, a, axis, b, keepdims)",
              "lse": "-s2s.logsumexp_vjp_b(value * t, lse, a, axis, b, keepdims)",
              "a": "s2s.unbroadcast(s2s.logsumexp_vjp(value, lse, a, axis, t, keepdims), b)"},
        value=_back("g * np.exp(a - s2s.sum_vjp(lse, a, axis, keepdims))", "value"),
        lse=f"-{_back('s2s.logsumexp_vjp(value, lse, a, axis, g, keepdims)', 'lse')}",
        a="s2s.unbroadcast(s2s.logsumexp_vjp(value, lse, a, axis, g, keepdims), a)",
    ),
    # average's adjoint of a: value * w / sum(w) (a read for its shape); its transpose is the
    # average of g, and its derivative in w is average_vjp_weights' with a = g
    defvjp(
        "s2sgrad.runtime.average_vjp_a(value, a, axis=None, weights=None, keepdims=False)",
        constant_in=("a",),
        jvps={"value": "s2s.average_vjp_a(t, a, axis, weights, keepdims=keepdims)",
              "weights": f"{_E} * (s2s.spread_weights(a, axis, t) - "
                         f"s2s.spread_weights(a, axis, weights) * s2s.weight_sum(a, axis, t) / "
                         f"{_S}) / {_S}"},
        value="s2s.unbroadcast(np.average(g, axis, weights, keepdims=keepdims), value)",
        weights="s2s.average_vjp_weights(value, np.average(g, axis, weights, "
                "keepdims=keepdims), g, axis, weights, keepdims=keepdims)",
    ),
    # average's adjoint of w: value * (a - m) / sum(w) summed to w's shape
    defvjp(
        "s2sgrad.runtime.average_vjp_weights(value, m, a, axis=None, weights=None, keepdims=False)",
        jvps={"value": "s2s.average_vjp_weights(t, m, a, axis, weights, keepdims=keepdims)",
              "m": f"-s2s.gather_weights(s2s.sum_vjp(value * t, a, axis, keepdims) / {_S}, a, "
                   "axis, weights)",
              "a": f"s2s.gather_weights({_E} * t / {_S}, a, axis, weights)",
              "weights": f"-s2s.gather_weights({_DEV} * s2s.weight_sum(a, axis, t) / {_S} ** 2, a, "
                         "axis, weights)"},
        value=_back(f"{_GB} * (a - s2s.sum_vjp(m, a, axis, keepdims)) / {_S}", "value"),
        m=f"-s2s.unbroadcast(np.sum({_GB} * {_E} / {_S}, {_R}), m)",
        a=f"{_GB} * {_E} / {_S}",
        weights=f"-s2s.gather_weights(s2s.sum_vjp(np.sum({_GB} * {_DEV} / {_S} ** 2, axis=axis, "
                "keepdims=True), a, axis, True), a, axis, weights)",
    ),
    # the weights spread over a's shape, their transpose (summed back), and their total
    defvjp(
        "s2sgrad.runtime.spread_weights(a, axis=None, weights=None)",
        linear=("weights",), constant_in=("a",),
        weights="s2s.gather_weights(g, a, axis, weights)",
    ),
    defvjp(
        "s2sgrad.runtime.gather_weights(value, a, axis=None, weights=None)",
        linear=("value",), constant_in=("a", "weights"),
        value="s2s.spread_weights(a, axis, g)",
    ),
    defvjp(
        "s2sgrad.runtime.weight_sum(a, axis=None, weights=None)",
        linear=("weights",), constant_in=("a",),
        weights="s2s.gather_weights(s2s.sum_vjp(g, a, axis, True), a, axis, weights)",
    ),
    # a divisor checked for zeros: the identity
    defvjp("s2sgrad.runtime.nonzero_factor(x)", elementwise=True, x="g"),
)

"""Rules of the helpers of s2sgrad/runtime/scans.py: the adjoints of running sums and products
and of differences. Second derivatives of ``cumprod`` are written for an ``x`` without zeros
(``s2s.nonzero_factor`` raises on one)."""

from ..table import defvjp

RULES = (
    # cumsum's adjoint, a reversed running sum: its transpose is the running sum
    defvjp(
        "s2sgrad.runtime.cumsum_vjp(value, x, axis=None)",
        linear=("value",), constant_in=("x",),
        value="np.cumsum(g, axis)",
    ),
    # cumprod's adjoint R(value * c) / x (R: cumsum_vjp): linear in value and c, 1/x in x
    defvjp(
        "s2sgrad.runtime.cumprod_vjp(value, c, x, axis=None)",
        jvps={"value": "s2s.cumprod_vjp(t, c, x, axis)", "c": "s2s.cumprod_vjp(value, t, x, axis)",
              "x": "-s2s.cumprod_vjp(value, c, x, axis) * t / s2s.nonzero_factor(x)"},
        value="c * np.cumsum(g / s2s.nonzero_factor(x), axis)",
        c="value * np.cumsum(g / s2s.nonzero_factor(x), axis)",
        x="-g * s2s.cumprod_vjp(value, c, x, axis) / s2s.nonzero_factor(x)",
    ),
    # nancumsum's adjoint: cumsum's, 0 at x's NaNs
    defvjp(
        "s2sgrad.runtime.nancumsum_vjp(value, x, axis=None)",
        linear=("value",), constant_in=("x",),
        value="np.cumsum(np.where(np.isnan(x), 0.0, g), axis)",
    ),
    # diff's adjoints of (prepend, x, append): its transpose is diff of the joined adjoints
    defvjp(
        "s2sgrad.runtime.split_diff(value, x, n=1, axis=-1, prepend=None, append=None)",
        linear=("value",), constant_in=("x", "prepend", "append"),
        value="s2s.join_diff(g, n, axis, prepend, append)",
    ),
    # diff of split_diff's adjoints joined: linear in them; its transpose is split_diff again
    defvjp(
        "s2sgrad.runtime.join_diff(parts, n=1, axis=-1, prepend=None, append=None)",
        linear=("parts",), constant_in=("prepend", "append"),
        parts="s2s.diff_parts(g, parts, n, axis, prepend, append)",
    ),
    # join_diff's transpose (split_diff, zeros for the parts left out): join_diff again
    defvjp(
        "s2sgrad.runtime.diff_parts(value, parts, n=1, axis=-1, prepend=None, append=None)",
        linear=("value",), constant_in=("parts", "prepend", "append"),
        value="s2s.join_diff(g, n, axis, prepend, append)",
    ),
    # np.gradient's adjoint: linear in the upstream; its transpose is np.gradient again
    defvjp(
        "s2sgrad.runtime.gradient_vjp(value, f, varargs=(), axis=None, edge_order=1)",
        linear=("value",), constant_in=("f",),
        value="np.gradient(g, *varargs, axis=axis, edge_order=edge_order)",
    ),
)

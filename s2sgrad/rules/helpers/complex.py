"""Rules of the helpers of s2sgrad/runtime/complex.py."""

from ..table import defvjp

RULES = (
    # an adjoint made real or complex like x (of x's shape where it is one number): linear in it
    # (its transpose matches it back, summed to its shape)
    defvjp(
        "s2sgrad.runtime.match_complex(x, value)",
        linear=("value",), constant_in=("x",),
        value="s2s.match_complex(value, s2s.unbroadcast(s2s.match_complex(x, g), value))",
    ),
    # the conjugate of a complex array, a real one itself: linear, its own transpose
    defvjp("s2sgrad.runtime.complex_conj(x)", linear=("x",), x="s2s.complex_conj(g)"),
    # the slopes in the tangents of abs and angle: 0 for real values; their tangents are the
    # slopes' adjoints (abs's is self-adjoint; angle's, turned by 1j), real for a real x
    defvjp(
        "s2sgrad.runtime.abs_slope(x)",
        jvps={"x": "s2s.abs_slope_vjp(t, x)"},
        x="s2s.abs_slope_vjp(g, x)",
    ),
    defvjp(
        "s2sgrad.runtime.angle_slope(x, deg=False)",
        jvps={"x": "s2s.match_complex(s2s.angle_slope(x, deg), "
                   "-1j * s2s.angle_slope_vjp(1j * t, x, deg))"},
        x="s2s.angle_slope_vjp(g, x, deg)",
    ),
    # the slopes' adjoints: linear in value (abs's is self-adjoint); in x, 0 for a real x (the
    # complex case raises: s2s.real_slope_zeros)
    defvjp(
        "s2sgrad.runtime.abs_slope_vjp(value, x)",
        jvps={"value": "s2s.abs_slope_vjp(t, x)", "x": "s2s.real_slope_zeros(x)"},
        value="s2s.abs_slope_vjp(g, x)",
        x="s2s.real_slope_zeros(x)",
    ),
    defvjp(
        "s2sgrad.runtime.angle_slope_vjp(value, x, deg=False)",
        jvps={"value": "s2s.angle_slope_vjp(t, x, deg)", "x": "s2s.real_slope_zeros(x)"},
        value="-1j * s2s.angle_slope_vjp(1j * g, x, deg)",
        x="s2s.real_slope_zeros(x)",
    ),
)

# Piecewise constant: no derivative.
NONDIFF = ("s2sgrad.runtime.real_slope_zeros",)

"""Rules for the runtime helpers generated forward-mode code calls, so that s2sgrad can run reverse
mode over its own ``<f>_jvp`` functions (Hessian-vector products, ``s2sgrad.hvp``).

Generated code names the helpers through ``from s2sgrad import runtime as s2s``, so their qualified
names are ``s2sgrad.runtime.<name>``. Parameters are named so as not to collide with a template's
``g`` (the upstream adjoint); generated code passes them by position.
"""

from .table import alias, defvjp
from .linalg import RULES as _LINALG

# Why forward mode has no tangent for a rule (Rule.reverse_only).
_GENERATED = "a helper of generated forward-mode code, which only reverse mode reads again (hvp)"

_ROWS_MATMUL = next(rule for rule in _LINALG if rule.name == "s2s.rows_matmul")

RULES = (
    # a tangent given the output's shape: the adjoint is summed back to the tangent's shape
    defvjp(
        "s2sgrad.runtime.broadcast(value, shape)",
        linear=("value",),
        value="s2s.unbroadcast(g, value)",
    ),
    # the mean of the tangents where x attains its extremum m: linear in t, piecewise constant in
    # m and x (their derivative is zero wherever it exists)
    defvjp(
        "s2sgrad.runtime.extremum_jvp(t, m, x, axis=None, keepdims=False)",
        reverse_only=_GENERATED,
        t="s2s.extremum_vjp(g, m, x, axis, keepdims)",
        m="s2s.zeros_like(m)",
        x="s2s.zeros_like(x)",
    ),
    # the exponent less one (1.0 where it is 0), and log(x) (0 where x is 0), of d x**y
    defvjp("s2sgrad.runtime.safe_power_base(y)", elementwise=True, y="g * (y != 0)"),
    defvjp(
        "s2sgrad.runtime.safe_log_base(x)",
        elementwise=True,
        x="g * (x != 0) / np.where(x == 0, 1.0, x)",
    ),
    alias("s2sgrad.runtime.rows_matmul", _ROWS_MATMUL),
    # the slopes in the tangents of abs and angle (runtime/complex.py): 0 for real values
    defvjp(
        "s2sgrad.runtime.abs_slope(x)",
        reverse_only=_GENERATED,
        x="s2s.abs_slope_vjp(g, x)",
    ),
    defvjp(
        "s2sgrad.runtime.angle_slope(x, deg=False)",
        reverse_only=_GENERATED,
        x="s2s.angle_slope_vjp(g, x, deg)",
    ),
)

# Piecewise constant: no derivative.
NONDIFF = ("s2sgrad.runtime.zeros_like", "s2sgrad.runtime.balanced_eq", "s2sgrad.runtime.inside")

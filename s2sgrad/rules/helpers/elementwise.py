"""Rules of the helpers of s2sgrad/runtime/elementwise.py."""

from ..table import defvjp

RULES = (
    # the exponent less one (1.0 where it is 0), and log(x) (0 where x is 0), of d x**y
    defvjp("s2sgrad.runtime.safe_power_base(y)", elementwise=True, folds=True, y="g * (y != 0)"),
    defvjp(
        "s2sgrad.runtime.safe_log_base(x)",
        elementwise=True,
        x="g * (x != 0) / np.where(x == 0, 1.0, x)",
    ),
    # value * log(x) * x**y, 0 where value is 0: linear in value, value * ans / x in x
    # (0 at x == 0, as safe_log_base), value * log(x) in ans
    defvjp(
        "s2sgrad.runtime.exponent_slope(value, x, ans)",
        elementwise=True,
        value="s2s.exponent_slope(g, x, ans)",
        x="g * np.where(value == 0, 0.0, value * ans * (x != 0) / np.where(x == 0, 1.0, x))",
        ans="s2s.exponent_slope(g * value, x, 1.0)",
    ),
    # math.log's adjoint value / (x log base): linear in value, -1/x in x, -1/(base log base)
    defvjp(
        "s2sgrad.runtime.log_vjp(value, x, base=None)",
        elementwise=True,
        value="s2s.log_vjp(g, x, base)",
        x="-s2s.log_vjp(g * value, x, base) / x",
        base="-s2s.log_vjp(g * value, x, base) / (base * np.log(base))",
    ),
    # sinc's slope (cos(pi x) - sinc(x)) / x: its own slope is -(pi sin(pi x) + 2 slope) / x,
    # -pi**2 / 3 at 0
    defvjp(
        "s2sgrad.runtime.sinc_slope(x)",
        elementwise=True,
        x="g * np.where(x == 0, -np.pi ** 2 / 3.0, -(np.pi * np.sin(np.pi * x) + "
          "2.0 * s2s.sinc_slope(x)) / np.where(x == 0, 1.0, x))",
    ),
    # np.where(condition, value, 0.0) (or the other side): linear in value, a choice in the rest
    defvjp(
        "s2sgrad.runtime.select(condition, value, taken=True)",
        elementwise=True,
        constant_in=("condition", "taken"),
        value="s2s.select(condition, g, taken)",
    ),
)

# Piecewise constant: no derivative.
NONDIFF = ("s2sgrad.runtime.balanced_eq", "s2sgrad.runtime.inside")

"""Rules of the helpers of s2sgrad/runtime/elementwise.py."""

from ..table import defvjp

RULES = (
    # the exponent less one (1.0 where it is 0), and log(x) (0 where x is 0), of d x**y
    defvjp("s2sgrad.runtime.safe_power_base(y)", elementwise=True, y="g * (y != 0)"),
    defvjp(
        "s2sgrad.runtime.safe_log_base(x)",
        elementwise=True,
        x="g * (x != 0) / np.where(x == 0, 1.0, x)",
    ),
)

# Piecewise constant: no derivative.
NONDIFF = ("s2sgrad.runtime.balanced_eq", "s2sgrad.runtime.inside")

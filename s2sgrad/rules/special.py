"""scipy.special: the functions whose derivatives are plain numpy expressions."""

from .table import defvjp

# Why forward mode has no tangent for a rule (Rule.reverse_only).
_NONLINEAR = "a nonlinear reduction; its tangent template is not written yet"

_SQRT_PI = "np.sqrt(np.pi)"

RULES = (
    defvjp("scipy.special.expit(x)", elementwise=True, x="g * ans * (1.0 - ans)"),
    defvjp("scipy.special.logit(x)", elementwise=True, x="g / (x * (1.0 - x))"),
    defvjp("scipy.special.erf(x)", elementwise=True, x=f"g * 2.0 / {_SQRT_PI} * np.exp(-x * x)"),
    defvjp("scipy.special.erfc(x)", elementwise=True, x=f"-g * 2.0 / {_SQRT_PI} * np.exp(-x * x)"),
    defvjp("scipy.special.erfinv(y)", elementwise=True, y=f"g * {_SQRT_PI} / 2.0 * np.exp(ans * ans)"),
    defvjp("scipy.special.erfcinv(y)", elementwise=True, y=f"-g * {_SQRT_PI} / 2.0 * np.exp(ans * ans)"),
    defvjp(
        "scipy.special.logsumexp(a, axis=None, b=None, keepdims=False)",
        reverse_only=_NONLINEAR,
        a="s2s.logsumexp_vjp(g, ans, a, axis, b, keepdims)",
        b="s2s.logsumexp_vjp_b(g, ans, a, axis, b, keepdims)",
    ),
)

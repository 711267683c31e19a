"""scipy.special: the functions whose derivatives are numpy expressions (expit, erf, logsumexp,
the normal distribution functions, x log y forms, entropies, softmax), or other functions of
scipy.special (the polygamma family, gammaln, the Bessel functions of other orders) that
generated code calls through the helpers of runtime/special.py, whose own rules
(rules/helpers/special.py) give every higher order. An order (``n``, ``v``), a dimension (``d``)
or the incomplete functions' ``a`` and ``b`` have no template: a varied one is refused."""

from .table import alias, defvjp

_SQRT_PI = "np.sqrt(np.pi)"

RULES = (
    # the logistic function: also what ``1 / (1 + np.exp(-x))`` spelled out is read as
    # (differentiate/compositions.py), its adjoint reading only its value
    defvjp("scipy.special.expit(x)", elementwise=True, algebra="logistic", x="g * ans * (1.0 - ans)"),
    defvjp("scipy.special.logit(x)", elementwise=True, x="g / (x * (1.0 - x))"),
    defvjp("scipy.special.erf(x)", elementwise=True, x=f"g * 2.0 / {_SQRT_PI} * np.exp(-x * x)"),
    defvjp("scipy.special.erfc(x)", elementwise=True, x=f"-g * 2.0 / {_SQRT_PI} * np.exp(-x * x)"),
    defvjp("scipy.special.erfinv(y)", elementwise=True, y=f"g * {_SQRT_PI} / 2.0 * np.exp(ans * ans)"),
    defvjp("scipy.special.erfcinv(y)", elementwise=True, y=f"-g * {_SQRT_PI} / 2.0 * np.exp(ans * ans)"),
    # its tangent: the tangent of a (or of b) summed against the weights b exp(a - ans) (or exp(a - ans))
    defvjp(
        "scipy.special.logsumexp(a, axis=None, b=None, keepdims=False)",
        jvps={"a": "np.sum(t * s2s.logsumexp_vjp(np.ones_like(ans), ans, a, axis, b, keepdims), axis=axis, "
                   "keepdims=keepdims)",
              "b": "np.sum(s2s.logsumexp_vjp(np.ones_like(ans), ans, a, axis, t, keepdims), axis=axis, "
                   "keepdims=keepdims)"},
        a="s2s.logsumexp_vjp(g, ans, a, axis, b, keepdims)",
        b="s2s.logsumexp_vjp_b(g, ans, a, axis, b, keepdims)",
    ),
)

_DIGAMMA = defvjp("scipy.special.digamma(x)", elementwise=True, x="g * s2s.polygamma(1, x)")
_JV = defvjp("scipy.special.jv(v, z)", elementwise=True, z="g * (s2s.jv(v - 1, z) - s2s.jv(v + 1, z)) / 2.0")
_YV = defvjp("scipy.special.yv(v, z)", elementwise=True, z="g * (s2s.yv(v - 1, z) - s2s.yv(v + 1, z)) / 2.0")
# d/da log B(a, b) = digamma(a) - digamma(a + b)
_BETA_SLOPE = "s2s.polygamma(0, {0}) - s2s.polygamma(0, a + b)"

GAMMA_FAMILY = (
    defvjp("scipy.special.gammaln(x)", elementwise=True, x="g * s2s.polygamma(0, x)"),
    defvjp("scipy.special.gamma(z)", elementwise=True, z="g * ans * s2s.polygamma(0, z)"),
    defvjp("scipy.special.rgamma(z)", elementwise=True, z="-g * ans * s2s.polygamma(0, z)"),
    _DIGAMMA,
    alias("scipy.special.psi", _DIGAMMA),
    defvjp("scipy.special.polygamma(n, x)", elementwise=True, x="g * s2s.polygamma(n + 1, x)"),
    defvjp("scipy.special.multigammaln(a, d)", elementwise=True, a="g * s2s.multipolygamma(0, a, d)"),
    defvjp("scipy.special.beta(a, b)", elementwise=True, a=f"g * ans * ({_BETA_SLOPE.format('a')})",
           b=f"g * ans * ({_BETA_SLOPE.format('b')})"),
    defvjp("scipy.special.betaln(a, b)", elementwise=True, a=f"g * ({_BETA_SLOPE.format('a')})",
           b=f"g * ({_BETA_SLOPE.format('b')})"),
)

# The Bessel functions: DLMF 10.6.1 (J, Y) and 10.29.1 (I); the exponentially scaled ones
# (``ive(v, x) = iv(v, x) exp(-|x|)``) less sign(x) times themselves.
BESSEL = (
    defvjp("scipy.special.i0(x)", elementwise=True, x="g * s2s.iv(1, x)"),
    defvjp("scipy.special.i1(x)", elementwise=True, x="g * (s2s.iv(0, x) + s2s.iv(2, x)) / 2.0"),
    defvjp("scipy.special.i0e(x)", elementwise=True, x="g * (s2s.ive(1, x) - np.sign(x) * ans)"),
    defvjp("scipy.special.i1e(x)", elementwise=True,
           x="g * ((s2s.ive(0, x) + s2s.ive(2, x)) / 2.0 - np.sign(x) * ans)"),
    defvjp("scipy.special.iv(v, z)", elementwise=True, z="g * (s2s.iv(v - 1, z) + s2s.iv(v + 1, z)) / 2.0"),
    defvjp("scipy.special.ive(v, z)", elementwise=True,
           z="g * ((s2s.ive(v - 1, z) + s2s.ive(v + 1, z)) / 2.0 - np.sign(z) * ans)"),
    defvjp("scipy.special.j0(x)", elementwise=True, x="-g * s2s.jv(1, x)"),
    defvjp("scipy.special.j1(x)", elementwise=True, x="g * (s2s.jv(0, x) - s2s.jv(2, x)) / 2.0"),
    _JV,
    alias("scipy.special.jn", _JV),
    defvjp("scipy.special.y0(x)", elementwise=True, x="-g * s2s.yv(1, x)"),
    defvjp("scipy.special.y1(x)", elementwise=True, x="g * (s2s.yv(0, x) - s2s.yv(2, x)) / 2.0"),
    _YV,
    alias("scipy.special.yn", _YV),
)

_NORMAL_DENSITY = "np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi)"

# Normal distribution functions, x log y forms (0 at x == 0 whatever y: so is their slope in y,
# as in JAX) and entropies, and softmax along an axis.
STATISTICS = (
    defvjp("scipy.special.ndtr(x)", elementwise=True, x=f"g * {_NORMAL_DENSITY}"),
    defvjp("scipy.special.log_ndtr(x)", elementwise=True,
           x="g * np.exp(-0.5 * x * x - ans) / np.sqrt(2.0 * np.pi)"),
    defvjp("scipy.special.ndtri(y)", elementwise=True, y="g * np.sqrt(2.0 * np.pi) * np.exp(0.5 * ans * ans)"),
    defvjp("scipy.special.xlogy(x, y)", elementwise=True, x="g * np.log(y)",
           y="g * np.where(x == 0, 0.0, x / np.where(x == 0, 1.0, y))"),
    defvjp("scipy.special.xlog1py(x, y)", elementwise=True, x="g * np.log1p(y)",
           y="g * np.where(x == 0, 0.0, x / np.where(x == 0, 1.0, 1.0 + y))"),
    defvjp("scipy.special.entr(x)", elementwise=True, x="-g * (np.log(x) + 1.0)"),
    defvjp("scipy.special.rel_entr(x, y)", elementwise=True, x="g * (np.log(x / y) + 1.0)", y="-g * x / y"),
    defvjp("scipy.special.kl_div(x, y)", elementwise=True, x="g * np.log(x / y)", y="g * (1.0 - x / y)"),
    defvjp("scipy.special.softmax(x, axis=None)",
           jvps={"x": "ans * (t - np.sum(t * ans, axis=axis, keepdims=True))"},
           x="ans * (g - np.sum(g * ans, axis=axis, keepdims=True))"),
    defvjp("scipy.special.log_softmax(x, axis=None)",
           jvps={"x": "t - np.sum(t * np.exp(ans), axis=axis, keepdims=True)"},
           x="g - np.exp(ans) * np.sum(g, axis=axis, keepdims=True)"),
)

# The regularized incomplete gamma and beta functions in x: their integrands over the
# normalizer (the parameters a, b have no template: a varied one is refused).
INCOMPLETE = (
    defvjp("scipy.special.gammainc(a, x)", elementwise=True,
           x="g * np.exp((a - 1.0) * np.log(x) - x - s2s.gammaln(a))"),
    defvjp("scipy.special.gammaincc(a, x)", elementwise=True,
           x="-g * np.exp((a - 1.0) * np.log(x) - x - s2s.gammaln(a))"),
    defvjp("scipy.special.betainc(a, b, x)", elementwise=True,
           x="g * np.exp((a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) + s2s.gammaln(a + b)"
             " - s2s.gammaln(a) - s2s.gammaln(b))"),
)

RULES = RULES + GAMMA_FAMILY + BESSEL + STATISTICS + INCOMPLETE

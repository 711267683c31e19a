"""Rules of the helpers of s2sgrad/runtime/special.py: each derivative is the next function of its
family, so every order of a scipy.special function's derivative is one more helper call. The
orders (``n``, ``v``) and multigammaln's dimension ``d`` are numbers the templates write: they
have no template, so a varied one is refused."""

from ..table import defvjp

RULES = (
    defvjp("s2sgrad.runtime.gammaln(x)", elementwise=True, x="g * s2s.polygamma(0, x)"),
    defvjp("s2sgrad.runtime.polygamma(n, x)", elementwise=True,
           x="g * s2s.polygamma(n + 1, x)"),
    defvjp("s2sgrad.runtime.multipolygamma(n, a, d)", elementwise=True,
           a="g * s2s.multipolygamma(n + 1, a, d)"),
    # the recurrences of DLMF 10.6.1 and 10.29.1; ive(v, x) = iv(v, x) exp(-|x|)
    defvjp("s2sgrad.runtime.iv(v, x)", elementwise=True,
           x="g * (s2s.iv(v - 1, x) + s2s.iv(v + 1, x)) / 2.0"),
    defvjp("s2sgrad.runtime.ive(v, x)", elementwise=True,
           x="g * ((s2s.ive(v - 1, x) + s2s.ive(v + 1, x)) / 2.0 - np.sign(x) * ans)"),
    defvjp("s2sgrad.runtime.jv(v, x)", elementwise=True,
           x="g * (s2s.jv(v - 1, x) - s2s.jv(v + 1, x)) / 2.0"),
    defvjp("s2sgrad.runtime.yv(v, x)", elementwise=True,
           x="g * (s2s.yv(v - 1, x) - s2s.yv(v + 1, x)) / 2.0"),
)

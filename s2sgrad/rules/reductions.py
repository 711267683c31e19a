"""Reductions and scans: the adjoint is spread back over the reduced axes."""

from .table import alias, defvjp

_SUM = defvjp(
    "numpy.sum(a, axis=None, dtype=None, out=None, keepdims=False)",
    a="s2s.sum_vjp(g, a, axis, keepdims)",
)
_MEAN = defvjp(
    "numpy.mean(a, axis=None, dtype=None, out=None, keepdims=False)",
    a="s2s.mean_vjp(g, a, axis, keepdims)",
)
_VAR = defvjp(
    "numpy.var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False)",
    a="s2s.var_vjp(g, a, axis, ddof, keepdims)",
)
_STD = defvjp(
    "numpy.std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False)",
    a="s2s.std_vjp(g, ans, a, axis, ddof, keepdims)",
)
_MAX = defvjp(
    "numpy.max(a, axis=None, out=None, keepdims=False)",
    a="s2s.extremum_vjp(g, ans, a, axis, keepdims)",
)
_PROD = defvjp(
    "numpy.prod(a, axis=None, dtype=None, out=None, keepdims=False)",
    a="s2s.prod_vjp(g, ans, a, axis, keepdims)",
)
_CUMSUM = defvjp("numpy.cumsum(a, axis=None, dtype=None, out=None)", a="s2s.cumsum_vjp(g, a, axis)")

_SELF = {"a": "self"}

RULES = (
    _SUM,
    _MEAN,
    _VAR,
    _STD,
    _MAX,
    _PROD,
    _CUMSUM,
    alias("numpy.amax", _MAX),
    alias("numpy.min", _MAX),
    alias("numpy.amin", _MAX),
    alias("ndarray.sum", _SUM, rename=_SELF),
    alias("ndarray.mean", _MEAN, rename=_SELF),
    alias("ndarray.var", _VAR, rename=_SELF),
    alias("ndarray.std", _STD, rename=_SELF),
    alias("ndarray.max", _MAX, rename=_SELF),
    alias("ndarray.min", _MAX, rename=_SELF),
    alias("ndarray.prod", _PROD, rename=_SELF),
    alias("ndarray.cumsum", _CUMSUM, rename=_SELF),
    defvjp(
        "numpy.linalg.norm(x, ord=None, axis=None, keepdims=False)",
        x="s2s.norm_vjp(g, ans, x, ord, axis, keepdims)",
    ),
)

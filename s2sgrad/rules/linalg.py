"""Products and linear algebra."""

from .table import alias, defvjp

_MATMUL = defvjp(
    "numpy.matmul(x1, x2)",
    x1="s2s.matmul_vjp_a(g, x1, x2)",
    x2="s2s.matmul_vjp_b(g, x1, x2)",
)
_DOT = defvjp("numpy.dot(a, b)", a="s2s.dot_vjp_a(g, a, b)", b="s2s.dot_vjp_b(g, a, b)")

_T = "np.swapaxes(ans, -1, -2)"

RULES = (
    _MATMUL,
    _DOT,
    alias("operator.matmul", _MATMUL, rename={"x1": "a", "x2": "b"}),
    alias("ndarray.dot", _DOT, rename={"a": "self"}),
    defvjp(
        "numpy.outer(a, b)",
        a="np.reshape(g @ np.ravel(b), np.shape(a))",
        b="np.reshape(np.ravel(a) @ g, np.shape(b))",
    ),
    defvjp(
        "numpy.inner(a, b)",
        a="s2s.tensordot_vjp_a(g, a, b, ([-1], [-1]))",
        b="s2s.tensordot_vjp_b(g, a, b, ([-1], [-1]))",
    ),
    defvjp(
        "numpy.tensordot(a, b, axes=2)",
        a="s2s.tensordot_vjp_a(g, a, b, axes)",
        b="s2s.tensordot_vjp_b(g, a, b, axes)",
    ),
    defvjp("numpy.einsum(subscripts, *operands)", operands="s2s.einsum_vjps(g, subscripts, operands)"),
    defvjp("numpy.linalg.inv(a)", a=f"-{_T} @ g @ {_T}"),
    defvjp(
        "numpy.linalg.det(a)",
        a="np.expand_dims(g * ans, (-1, -2)) * np.swapaxes(np.linalg.inv(a), -1, -2)",
    ),
    defvjp("numpy.trace(a, offset=0, axis1=0, axis2=1)", a="s2s.trace_vjp(g, a, offset, axis1, axis2)"),
)

"""Products and linear algebra."""

from dataclasses import replace

from .table import alias, defvjp

# Why forward mode has no tangent for a rule (Rule.reverse_only).
_MATRIX_FUNCTION = "a matrix function; its tangent template is not written yet"

_MATMUL = defvjp(
    "numpy.matmul(x1, x2)", linear=("x1", "x2"),
    row_products={"x1": "s2s.rows_matmul", "x2": "s2s.rows_rmatmul"},
    step_sums={"x1": "s2s.matmul_vjp_a_sum(gs, x1, others)", "x2": "s2s.matmul_vjp_b_sum(gs, others, x2)"},
    batched={"x1": "s2s.batch_matmul(t, x2)", "x2": "s2s.batch_rmatmul(x1, t)"},
    x1="s2s.matmul_vjp_a(g, x1, x2)",
    x2="s2s.matmul_vjp_b(g, x1, x2)",
)
_DOT = defvjp(
    "numpy.dot(a, b)", methods=("dot",),
    linear=("a", "b"),
    array_result=True,  # a numpy array, or a numpy scalar for two vectors
    row_products={"a": "s2s.rows_dot", "b": "s2s.rows_rdot"},
    step_sums={"a": "s2s.dot_vjp_a_sum(gs, a, others)", "b": "s2s.dot_vjp_b_sum(gs, others, b)"},
    batched={"a": "s2s.batch_dot(t, b)", "b": "s2s.batch_rdot(a, t)"},
    a="s2s.dot_vjp_a(g, a, b)",
    b="s2s.dot_vjp_b(g, a, b)",
)

_T = "np.swapaxes(ans, -1, -2)"
# Keywords for axis1/axis2: a positional ``offset=1`` could be taken for the default ``axis2=1``.
_TRACE = defvjp(
    "numpy.trace(a, offset=0, axis1=0, axis2=1)", methods=("trace",), linear=("a",),
    a="s2s.trace_vjp(g, a, offset, axis1=axis1, axis2=axis2)",
)

# A loop's per-step products with a loop-invariant factor, computed before the loop (lower/hoist.py
# writes them where a product's rule names one in ``row_products``): ``rows_matmul(a, n, b)``
# stacks ``a[t] @ b``, ``rows_rmatmul`` stacks ``b @ a[t]``, ``rows_dot``/``rows_rdot`` with np.dot.
ROW_PRODUCTS = tuple(
    defvjp(f"s2s.{name}(a, n, b)", linear=("a", "b"), array_result=True,
           a=f"s2s.{name}_vjp_a(g, a, n, b)", b=f"s2s.{name}_vjp_b(g, a, n, b)")
    for name in ("rows_matmul", "rows_rmatmul", "rows_dot", "rows_rdot"))

RULES = (
    _MATMUL,
    _DOT,
    replace(alias("operator.matmul", _MATMUL, rename={"x1": "a", "x2": "b"}), array_result=True),
    *ROW_PRODUCTS,
    defvjp(
        "numpy.outer(a, b)", linear=("a", "b"),
        a="np.reshape(g @ np.ravel(b), np.shape(a))",
        b="np.reshape(np.ravel(a) @ g, np.shape(b))",
    ),
    defvjp(
        "numpy.inner(a, b)", linear=("a", "b"),
        a="s2s.inner_vjp_a(g, a, b)",
        b="s2s.inner_vjp_b(g, a, b)",
    ),
    defvjp(
        "numpy.tensordot(a, b, axes=2)", linear=("a", "b"),
        a="s2s.tensordot_vjp_a(g, a, b, axes)",
        b="s2s.tensordot_vjp_b(g, a, b, axes)",
    ),
    defvjp(
        "numpy.einsum(subscripts, *operands)",
        linear=("operands",),
        operands="s2s.einsum_vjps(g, subscripts, operands)",
    ),
    # forward mode: plain numpy, so second derivatives go through them
    defvjp("numpy.linalg.inv(a)", a=f"-{_T} @ g @ {_T}", jvps={"a": "-ans @ t @ ans"}),
    defvjp(
        "numpy.linalg.det(a)",
        a="np.expand_dims(g * ans, (-1, -2)) * np.swapaxes(np.linalg.inv(a), -1, -2)",
        jvps={"a": "ans * np.trace(np.linalg.solve(a, t), axis1=-2, axis2=-1)"},
    ),
    _TRACE,
    defvjp(
        # sum(conj(a) * b): conjugate-linear in a (tests/test_rules_complex.py)
        "numpy.vdot(a, b)",
        jvps={"a": "np.vdot(t, b)", "b": "np.vdot(a, t)"},
        a="np.reshape(np.conj(g * np.ravel(b)), np.shape(a))",
        b="np.reshape(g * np.conj(np.ravel(a)), np.shape(b))",
    ),
    defvjp(
        "numpy.kron(a, b)",
        linear=("a", "b"),
        a="s2s.kron_vjp(g, a, b)[0]",
        b="s2s.kron_vjp(g, a, b)[1]",
    ),
    defvjp(
        "numpy.cross(a, b, axis=None)", linear=("a", "b"),
        elementwise=True,
        a="np.cross(b, g, axis=axis)",
        b="np.cross(g, a, axis=axis)",
    ),
    defvjp(
        "numpy.linalg.solve(a, b)",
        jvps={"a": "-np.linalg.solve(a, t @ ans)", "b": "np.linalg.solve(a, t)"},
        a="s2s.solve_vjp_a(g, ans, a, b)",
        b="s2s.solve_vjp_b(g, a, b)",
    ),
    defvjp(
        "numpy.linalg.cholesky(a, upper=False)",
        reverse_only=_MATRIX_FUNCTION,
        a="s2s.cholesky_vjp(g, ans, upper)",
    ),
    defvjp(
        "numpy.linalg.eigvalsh(a, UPLO='L')",
        reverse_only=_MATRIX_FUNCTION,
        a="s2s.eigvalsh_vjp(g, a, UPLO)",
    ),
    defvjp(
        "numpy.linalg.svdvals(x)",
        reverse_only=_MATRIX_FUNCTION,
        x="s2s.svdvals_vjp(g, x)",
    ),
    defvjp(
        "numpy.linalg.pinv(a)",
        reverse_only=_MATRIX_FUNCTION,
        a="s2s.pinv_vjp(g, ans, a)",
    ),
    defvjp(
        "numpy.linalg.matrix_power(a, n)",
        reverse_only=_MATRIX_FUNCTION,
        a="s2s.matrix_power_vjp(g, a, n)",
    ),
)

# What to write instead of the decompositions that have no rule (hints of the refusals).
_EIGVALS = ("for the eigenvalues of a symmetric (Hermitian) matrix use `np.linalg.eigvalsh(a)`, "
            "which has a rule")
INSTEAD = {
    "numpy.linalg.eigh": "if only the eigenvalues are needed, use `np.linalg.eigvalsh(a)`, which "
                         "has a rule (eigenvectors have none yet)",
    "numpy.linalg.eig": _EIGVALS,
    "numpy.linalg.eigvals": _EIGVALS,
    "numpy.linalg.svd": "if only the singular values are needed, use `np.linalg.svdvals(x)`, "
                        "which has a rule (singular vectors have none yet)",
    "numpy.linalg.slogdet": "for a symmetric positive-definite `a`, write the log-determinant with "
                            "a Cholesky factor, which has a rule: `2 * np.sum(np.log(np.diagonal("
                            "np.linalg.cholesky(a), axis1=-2, axis2=-1)), axis=-1)`; otherwise "
                            "`np.log(np.abs(np.linalg.det(a)))`",
}

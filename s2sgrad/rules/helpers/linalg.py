"""Rules of the helpers of s2sgrad/runtime/linalg.py: the adjoints of linear algebra.

Each helper is linear in the adjoint it takes (``value``, renamed from ``g``); the primal output it
reads (``result``, renamed from ``ans``) and the primal input are arguments of their own, with
derivatives (generated code passes values computed from the inputs). The nonlinear parts are by
calculus, in helpers of runtime/linalg.py (``*_adjoints``: the adjoints of the helper's arguments,
``*_tangent``: its tangent along one argument's tangent).
"""

from ..table import defvjp

RULES = (
    # eye * g on the diagonal: linear in g; its transpose is the trace
    defvjp(
        "s2sgrad.runtime.trace_vjp(value, a, offset=0, axis1=0, axis2=1)",
        linear=("value",), constant_in=("a",),
        value="np.trace(g, offset, axis1, axis2)",
    ),
    # solve(a^T, g), summed to b's shape: linear in g, a matrix function of a
    defvjp(
        "s2sgrad.runtime.solve_vjp_b(value, a, b)",
        constant_in=("b",),
        jvps={"value": "s2s.solve_vjp_b(t, a, b)", "a": "s2s.solve_vjp_b_tangent(value, a, b, t)"},
        value="s2s.unbroadcast(np.linalg.solve(a, g), value)",
        a="s2s.solve_vjp_a(value, np.linalg.solve(a, g), a, g)",
    ),
    # -solve(a^T, g) result^T: linear in g and in result, a matrix function of a
    defvjp(
        "s2sgrad.runtime.solve_vjp_a(value, result, a, b)",
        constant_in=("b",),
        jvps={"value": "s2s.solve_vjp_a(t, result, a, b)", "result": "s2s.solve_vjp_a(value, t, a, b)",
              "a": "s2s.solve_vjp_a_tangent(value, result, a, b, t)"},
        value="s2s.solve_vjp_a_adjoints(g, value, result, a, b)[0]",
        result="s2s.solve_vjp_a_adjoints(g, value, result, a, b)[1]",
        a="s2s.solve_vjp_a_adjoints(g, value, result, a, b)[2]",
    ),
    # both adjoints of solve at once, (-y result^T, y) with y = solve(a^T, value): linear in value
    # and (the first) in result, a matrix function of a
    defvjp(
        "s2sgrad.runtime.solve_vjps(value, result, a, b)", outputs=("a_bar", "b_bar"),
        constant_in=("b",),
        jvps={"value": "(s2s.solve_vjp_a(t, result, a, b), s2s.solve_vjp_b(t, a, b))",
              "result": "(s2s.solve_vjp_a(value, t, a, b), s2s.zeros_like(ans[1]))",
              "a": "(s2s.solve_vjp_a_tangent(value, result, a, b, t), s2s.solve_vjp_b_tangent(value, a, b, t))"},
        value="s2s.solve_vjps_adjoints(g, value, result, a, b)[0]",
        result="s2s.solve_vjps_adjoints(g, value, result, a, b)[1]",
        a="s2s.solve_vjps_adjoints(g, value, result, a, b)[2]",
    ),
    # Murray's adjoint of a Cholesky factor: linear in g, a rational function of the factor
    defvjp(
        "s2sgrad.runtime.cholesky_vjp(value, result, upper=False)",
        jvps={"value": "s2s.cholesky_vjp(t, result, upper)",
              "result": "s2s.cholesky_vjp_tangent(value, result, upper, t)"},
        value="s2s.cholesky_vjp_adjoints(g, value, result, upper)[0]",
        result="s2s.cholesky_vjp_adjoints(g, value, result, upper)[1]",
    ),
    # V diag(g) V^T: linear in g; in a through the eigenvectors (divided differences)
    defvjp(
        "s2sgrad.runtime.eigvalsh_vjp(value, a, UPLO='L')",
        jvps={"value": "s2s.eigvalsh_vjp(t, a, UPLO)", "a": "s2s.eigvalsh_vjp_tangent(value, a, UPLO, t)"},
        value="s2s.eigvalsh_vjp_adjoints(g, value, a, UPLO)[0]",
        a="s2s.eigvalsh_vjp_adjoints(g, value, a, UPLO)[1]",
    ),
)

RULES += (
    # sum of C^p g C^q (C = a^T, or inv(a)^T for n < 0): linear in g, a polynomial in C
    defvjp(
        "s2sgrad.runtime.matrix_power_vjp(value, a, n)",
        jvps={"value": "s2s.matrix_power_vjp(t, a, n)", "a": "s2s.matrix_power_vjp_tangent(value, a, n, t)"},
        value="s2s.matrix_power_vjp_adjoints(g, value, a, n)[0]",
        a="s2s.matrix_power_vjp_adjoints(g, value, a, n)[1]",
    ),
    # Golub and Pereyra's adjoint: a sum of products of g, the pseudo-inverse and a
    defvjp(
        "s2sgrad.runtime.pinv_vjp(value, result, a)",
        jvps={"value": "s2s.pinv_vjp_tangent(value, result, a, t, 'G')",
              "result": "s2s.pinv_vjp_tangent(value, result, a, t, 'P')",
              "a": "s2s.pinv_vjp_tangent(value, result, a, t, 'A')"},
        value="s2s.pinv_vjp_adjoints(g, value, result, a)[0]",
        result="s2s.pinv_vjp_adjoints(g, value, result, a)[1]",
        a="s2s.pinv_vjp_adjoints(g, value, result, a)[2]",
    ),
    # U diag(g) V^T: linear in g; in a through the singular vectors
    defvjp(
        "s2sgrad.runtime.svdvals_vjp(value, a)",
        jvps={"value": "s2s.svdvals_vjp(t, a)", "a": "s2s.svdvals_vjp_tangent(value, a, t)"},
        value="s2s.svdvals_vjp_adjoints(g, value, a)[0]",
        a="s2s.svdvals_vjp_adjoints(g, value, a)[1]",
    ),
)


def _norm(signature: str, args: str) -> object:
    """A norm adjoint's rule: linear in g; in the result and x, by the norm's second derivative
    (0 where the slope is piecewise constant: ord 1, inf, 0)."""
    params = ("value", "result", "x")
    return defvjp(
        signature,
        jvps={p: f"s2s.norm_vjp_tangent('{p}', value, result, x, t, {args})" for p in params},
        **{p: f"s2s.norm_vjp_adjoint('{p}', g, value, result, x, {args})" for p in params},
    )


RULES += (
    # np.linalg.norm's adjoint: vector norms, and matrix norms over two axes
    _norm("s2sgrad.runtime.norm_vjp(value, result, x, ord=None, axis=None, keepdims=False)",
          "ord, axis, keepdims"),
    _norm("s2sgrad.runtime.vector_norm_vjp(value, result, x, ord, axis, keepdims)",
          "ord, axis, keepdims, 'vector'"),
    _norm("s2sgrad.runtime.matrix_norm_vjp(value, result, x, ord, axes, keepdims)",
          "ord, axes, keepdims, 'matrix'"),
)

RULES += (
    # 1 / (w_j - w_i) off the diagonal: its derivative is -(dw_j - dw_i) times its square
    defvjp(
        "s2sgrad.runtime.eigh_gaps(w)",
        jvps={"w": "-(np.expand_dims(t, -2) - np.expand_dims(t, -1)) * ans * ans"},
        w="np.sum(g * ans * ans, axis=-1) - np.sum(g * ans * ans, axis=-2)",
    ),
    # the symmetric matrix eigh reads from one triangle, and its transpose: each other's adjoint
    defvjp("s2sgrad.runtime.triangle_symmetric(x, UPLO='L')", linear=("x",),
           x="s2s.triangle_fold(g, UPLO)"),
    defvjp("s2sgrad.runtime.triangle_fold(x, UPLO='L')", linear=("x",),
           x="s2s.triangle_symmetric(g, UPLO)"),
    # the identity, checking its argument is real
    defvjp("s2sgrad.runtime.real_only(x, function)", linear=("x",), x="g"),
    # the identity on eigenvectors' adjoint, checking it does not turn their phases
    defvjp("s2sgrad.runtime.phase_free(value, v, function='np.linalg.eigh')", linear=("value",),
           constant_in=("v", "function"), value="g"),
    # V^-T diag(value) V^T: linear in value; in v, d(V^-T) D V^T + V^-T D dV^T (W = G^T V^-T)
    defvjp("s2sgrad.runtime.eig_similar(value, v)",
           jvps={"value": "s2s.eig_similar(t, v)",
                 "v": ("np.linalg.solve(np.swapaxes(v, -1, -2), np.expand_dims(value, -1) * np.swapaxes(t, -1, -2) "
                       "- np.swapaxes(t, -1, -2) @ ans)")},
           value="np.diagonal(np.linalg.solve(v, g @ v), 0, -2, -1)",
           v=("np.swapaxes(np.linalg.solve(v, g), -1, -2) * np.expand_dims(value, -2) "
              "- ans @ np.swapaxes(np.linalg.solve(v, g), -1, -2)")),
    # the identity on U^H conj(gU), checking the complex SVD's adjoints leave the phases alone
    defvjp("s2sgrad.runtime.svd_phase_free(j, k)", linear=("j",), constant_in=("k",), j="g"),
    # the identity on u, checking the SVD's factors are thin
    defvjp("s2sgrad.runtime.svd_thin(u, vh)", linear=("u",), constant_in=("vh",), u="g"),
)

# The helpers of these rules' own second-order templates: a third derivative through them is not
# written yet (reading them again is refused with the location of the call).
_THIRD = "a helper of a second-derivative template: third derivatives through it are not written yet"
NO_RULE = {name: "written only into code no transformation reads again (a backward sweep made "
           "for a call's shapes, differentiate/inverses.py): its value depends on the inverse "
           "given as on the matrix" for name in ("cholesky_vjp_by_inverse", "solve_vjps_by_inverse")}
NO_RULE.update({name: _THIRD for name in (
    "cholesky_vjp_adjoints", "cholesky_vjp_tangent", "eigvalsh_vjp_adjoints", "eigvalsh_vjp_tangent",
    "matrix_power_vjp_adjoints", "matrix_power_vjp_tangent", "norm_vjp_adjoint", "norm_vjp_tangent",
    "pinv_vjp_adjoints", "pinv_vjp_tangent", "solve_vjp_a_adjoints", "solve_vjp_a_tangent",
    "solve_vjp_b_tangent", "solve_vjps_adjoints", "svdvals_vjp_adjoints", "svdvals_vjp_tangent")})

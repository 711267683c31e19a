"""Products and linear algebra."""

import ast
import string
from dataclasses import replace
from typing import Optional

from .. import dims
from .table import alias, defvjp

# Why forward mode has no tangent for a rule (Rule.reverse_only).
_MATRIX_FUNCTION = "a matrix function; its tangent template is not written yet"


def _real(code: str, function: str) -> str:
    """``code`` checked to be real when it runs: these templates are written for real matrices
    (s2s.real_only raises GradientError for a complex one rather than give a wrong derivative)."""
    return f"s2s.real_only({code}, '{function}')"


_EINSUM_SYMBOLS = string.ascii_uppercase + string.ascii_lowercase  # numpy's, for sublist ints


def _sublist(text: str) -> Optional[str]:
    """The subscripts a literal sublist of np.einsum's interleaved form spells (``[0, 1]`` is
    ``'AB'``, ``Ellipsis`` or ``...`` is ``'...'``), as numpy converts it; None for any other
    text (a name: its value is known only when the code runs)."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, (ast.List, ast.Tuple)):
        return None
    letters = []
    for item in node.elts:
        if isinstance(item, ast.Constant) and item.value is Ellipsis or \
                isinstance(item, ast.Name) and item.id == "Ellipsis":
            letters.append("...")
        elif isinstance(item, ast.Constant) and type(item.value) is int and \
                0 <= item.value < len(_EINSUM_SYMBOLS):
            letters.append(_EINSUM_SYMBOLS[item.value])
        else:
            return None
    return "".join(letters)


def _einsum_interleaved(args: tuple) -> Optional[tuple]:
    """np.einsum's interleaved form ``(op0, sublist0, op1, sublist1, ..., [sublist_out])`` with
    every sublist written as a literal, as the subscripts form ``('AB,BC->AC', op0, op1, ...)``
    (Rule.respell), the subscripts checked when the code runs not to come from a call in the
    subscripts form (``op0`` a string: s2s.einsum_interleaved); None for the subscripts form
    and for sublists held by names."""
    pairs = len(args) // 2
    if pairs == 0 or _sublist(args[0]) is not None or args[0].lstrip()[:1] in "'\"" or \
            args[0].lstrip()[:2].lower() in ("f'", 'f"', "r'", 'r"'):
        return None
    spelled = [_sublist(args[2 * k + 1]) for k in range(pairs)]
    out = _sublist(args[-1]) if len(args) % 2 else ""
    if any(s is None for s in spelled) or out is None:
        return None
    subscripts = ",".join(spelled) + ("->" + out if len(args) % 2 else "")
    return (("einsum_interleaved", (repr(subscripts), 0)),) + tuple(2 * k for k in range(pairs))


def _products_by_rank(a: str, b: str) -> tuple:
    """Rule.ranked for a product ``a @ b`` of vectors and matrices (``np.dot`` of them)."""
    return (
        (a, (1, 2), f"g @ {b}.T"), (b, (1, 2), f"np.outer({a}, g)"),
        (a, (2, 2), f"g @ {b}.T"), (b, (2, 2), f"{a}.T @ g"),
        (a, (2, 1), f"np.outer(g, {b})"), (b, (2, 1), f"g @ {a}"),
        (a, (1, 1), f"g * {b}"), (b, (1, 1), f"g * {a}"),
    )


_MATMUL = defvjp(
    "numpy.matmul(x1, x2)", linear=("x1", "x2"), result_shape=dims.matmul,
    ranked=_products_by_rank("x1", "x2"),
    row_products={"x1": "s2s.rows_matmul", "x2": "s2s.rows_rmatmul"},
    step_sums={"x1": "s2s.matmul_vjp_a_sum(gs, x1, others)", "x2": "s2s.matmul_vjp_b_sum(gs, others, x2)"},
    batched={"x1": "s2s.batch_matmul(t, x2)", "x2": "s2s.batch_rmatmul(x1, t)"},
    x1="s2s.matmul_vjp_a(g, x1, x2)",
    x2="s2s.matmul_vjp_b(g, x1, x2)",
)
_DOT = defvjp(
    "numpy.dot(a, b)", methods=("dot",), result_shape=dims.dot, ranked=_products_by_rank("a", "b"),
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
    "numpy.trace(a, offset=0, axis1=0, axis2=1)", methods=("trace",), linear=("a",), result_shape=dims.trace,
    a="s2s.trace_vjp(g, a, offset, axis1=axis1, axis2=axis2)",
)

# A loop's per-step products with a loop-invariant factor, computed before the loop (lower/hoist.py
# writes them where a product's rule names one in ``row_products``): ``rows_matmul(a, n, b)``
# stacks ``a[t] @ b``, ``rows_rmatmul`` stacks ``b @ a[t]``, ``rows_dot``/``rows_rdot`` with np.dot.
ROW_PRODUCTS = tuple(
    defvjp(f"s2s.{name}(a, n, b)", linear=("a", "b"), array_result=True, result_shape=shape, rows_counted="n",
           a=f"s2s.{name}_vjp_a(g, a, n, b)", b=f"s2s.{name}_vjp_b(g, a, n, b)")
    for name, shape in (("rows_matmul", dims.rows_product(dims.matmul)),
                        ("rows_rmatmul", dims.rows_product(dims.matmul, right=True)),
                        ("rows_dot", dims.rows_product(dims.dot)),
                        ("rows_rdot", dims.rows_product(dims.dot, right=True))))

# scipy.signal.convolve, n-dimensional: each operand's adjoint is the adjoint put back at the
# mode's window of the full result (s2s.signal_embed), convolved with the other operand flipped on
# every axis, 'valid' (a correlation, without conjugates, as np.convolve's rule); the helper
# s2s.signal_convolve is the same function, with the same rule, so every order reads it again
_EMBEDDED = "s2s.signal_embed(g, np.shape(in1), np.shape(in2), mode)"
_SIGNAL_CONVOLVE = tuple(
    defvjp(signature, linear=("in1", "in2"),
           in1=f"s2s.signal_convolve({_EMBEDDED}, np.flip(in2), 'valid')",
           in2=f"s2s.signal_convolve({_EMBEDDED}, np.flip(in1), 'valid')")
    for signature in ("scipy.signal.convolve(in1, in2, mode='full', method='auto')",
                      "s2sgrad.runtime.signal_convolve(in1, in2, mode='full')"))

# scipy.linalg: solve_sylvester (a x + x b = q: q's adjoint is the transposed equation's solution
# for g, a's and b's minus its products with x), sqrtm (x x = a: the Sylvester equation of its
# differential), solve_triangular (real matrices: a's adjoint is the triangle it reads of minus the
# outer product of b's adjoint and x, transposed where trans is). Their helpers (s2s.sylvester,
# s2s.solve_triangular) have the same rules.
_AT, _BT, _XT = "np.transpose(a)", "np.transpose(b)", "np.transpose(ans)"
_QBAR = f"s2s.sylvester({_AT}, {_BT}, g)"
_SYLVESTER = tuple(
    defvjp(signature, q=_QBAR, a=f"-{_QBAR} @ {_XT}", b=f"-{_XT} @ {_QBAR}",
           jvps={"q": "s2s.sylvester(a, b, t)", "a": "s2s.sylvester(a, b, -(t @ ans))",
                 "b": "s2s.sylvester(a, b, -(ans @ t))"})
    for signature in ("scipy.linalg.solve_sylvester(a, b, q)", "s2sgrad.runtime.sylvester(a, b, q)"))
_SQRT = _real("ans", "scipy.linalg.sqrtm")
_SQRTM = defvjp("scipy.linalg.sqrtm(A, disp=True, blocksize=64)", constant_in=("disp", "blocksize"),
                A=f"s2s.sylvester(np.transpose({_SQRT}), np.transpose(ans), g)",
                jvps={"A": f"s2s.sylvester({_SQRT}, ans, t)"})
_FLIP = "s2s.adjoint_trans(trans)"  # 1 where trans reads a as it is
_BBAR = f"s2s.solve_triangular({_real('a', 'scipy.linalg.solve_triangular')}, g, {_FLIP}, lower, unit_diagonal)"
_B2, _X2 = f"np.reshape({_BBAR}, (np.shape(a)[0], -1))", "np.reshape(ans, (np.shape(a)[0], -1))"
_DT = f"s2s.triangle_part({_real('t', 'scipy.linalg.solve_triangular')}, lower, unit_diagonal)"
_TRIANGULAR = tuple(
    defvjp(signature, constant_in=("trans", "lower", "unit_diagonal", *extra),
           b=_BBAR,
           a=(f"-s2s.triangle_part({_FLIP} * ({_B2} @ np.transpose({_X2})) + (1 - {_FLIP}) * "
              f"({_X2} @ np.transpose({_B2})), lower, unit_diagonal)"),
           jvps={"b": "s2s.solve_triangular(a, t, trans, lower, unit_diagonal)",
                 "a": (f"-s2s.solve_triangular(a, ({_FLIP} * {_DT} + (1 - {_FLIP}) * np.transpose({_DT})) "
                       "@ ans, trans, lower, unit_diagonal)")})
    for signature, extra in (
        ("scipy.linalg.solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, "
         "check_finite=True)", ("overwrite_b", "check_finite")),
        ("s2sgrad.runtime.solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False)", ())))

# scipy.linalg.solve_banded: the dense matrix the band holds (s2s.banded_dense, linear; its
# transpose s2s.dense_band reads the band back), then np.linalg.solve's adjoints and tangents in
# plain numpy (so every order reads them again); the corners of ``ab`` that hold no entry get a
# zero adjoint
_DENSE = "s2s.banded_dense(l_and_u, ab)"
_BANDED_B = f"np.linalg.solve(np.transpose({_DENSE}), g)"
_COLUMNS = "(np.shape(ab)[-1], -1)"  # b and x as matrices (a 1-D b one column)
_BANDED = defvjp(
    "scipy.linalg.solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True)",
    constant_in=("l_and_u", "overwrite_ab", "overwrite_b", "check_finite"),
    ab=(f"-s2s.dense_band(l_and_u, np.reshape({_BANDED_B}, {_COLUMNS}) @ "
        f"np.transpose(np.reshape(ans, {_COLUMNS})))"),
    b=_BANDED_B,
    jvps={"ab": f"-np.linalg.solve({_DENSE}, s2s.banded_dense(l_and_u, t) @ ans)",
          "b": f"np.linalg.solve({_DENSE}, t)"})

RULES = (
    _MATMUL,
    _DOT,
    replace(alias("operator.matmul", _MATMUL, rename={"x1": "a", "x2": "b"}), array_result=True),
    *ROW_PRODUCTS,
    defvjp(
        "numpy.outer(a, b)", linear=("a", "b"), result_shape=dims.outer,
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
        respell=_einsum_interleaved,
        operands="s2s.einsum_vjps(g, subscripts, operands)",
        each={"operands": "s2s.einsum_vjp(g, subscripts, operands, index)"},
    ),
    # forward mode: plain numpy, so second derivatives go through them
    defvjp("numpy.linalg.inv(a)", a=f"-{_T} @ g @ {_T}", jvps={"a": "-ans @ t @ ans"},
           result_shape=dims.square),
    defvjp(
        "numpy.linalg.det(a)", result_shape=dims.determinant,
        a="np.linalg.inv(np.swapaxes(a, -1, -2)) * np.expand_dims(g * ans, (-1, -2))",
        jvps={"a": "ans * np.trace(np.linalg.solve(a, t), axis1=-2, axis2=-1)"},
    ),
    _TRACE,
    defvjp(
        # sum(conj(a) * b): conjugate-linear in a (tests/rules/test_rules_complex.py)
        "numpy.vdot(a, b)", result_shape=dims.number,
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
        "numpy.cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None)", linear=("a", "b"),
        a="s2s.cross_vjp_a(g, a, b, axisa, axisb, axisc, axis)",
        b="s2s.cross_vjp_b(g, a, b, axisa, axisb, axisc, axis)",
    ),
    # 1-D: each operand's adjoint places g at the mode's window of the full result and correlates
    # it with the other; correlate(a, v) is convolve(a, conj(v[::-1])) with its own window
    defvjp(
        "numpy.convolve(a, v, mode='full')", linear=("a", "v"),
        a="s2s.convolve_vjp(g, v, a, s2s.convolve_start(a, v, mode))",
        v="s2s.convolve_vjp(g, a, v, s2s.convolve_start(a, v, mode))",
    ),
    defvjp(
        "numpy.correlate(a, v, mode='valid')", linear=("a", "v"),
        a="s2s.convolve_vjp(g, np.conj(v[::-1]), a, s2s.correlate_start(a, v, mode))",
        v="np.conj(s2s.convolve_vjp(g, a, v, s2s.correlate_start(a, v, mode))[::-1])",
    ),
    *_SIGNAL_CONVOLVE,
    *_SYLVESTER,
    _SQRTM,
    *_TRIANGULAR,
    _BANDED,
    defvjp(
        "numpy.linalg.solve(a, b)", result_shape=dims.solve,
        # (b one vector: ans a vector, or a stack of them against a stack of matrices)
        jvps={"a": "-(np.linalg.solve(a, t @ ans[..., None])[..., 0] if np.ndim(b) == 1 else "
                   "np.linalg.solve(a, t @ ans))",
              "b": "np.linalg.solve(a, t)"},
        a="s2s.solve_vjp_a(g, ans, a, b)",
        b="s2s.solve_vjp_b(g, a, b)",
        together=(("a", "b"), "s2s.solve_vjps(g, ans, a, b)"),  # one solve for both
    ),
    defvjp(
        "numpy.linalg.cholesky(a, upper=False)",
        reverse_only=_MATRIX_FUNCTION, result_shape=dims.square,
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

# Functions with several outputs (Rule.outputs): ``g[i]`` is the i-th output's adjoint, ``ans[i]``
# the i-th output; the templates are numpy and helpers whose own rules are numpy, so every order
# reads them again. eigh: the input is the symmetric matrix read from one triangle (UPLO), the
# eigenvalues distinct (the eigenvectors' derivative is undefined at a repeated one: eigh_gaps is
# infinite there, as JAX says); svd: distinct singular values, the thin factors. Real matrices
# only (a complex one raises GradientError when the derivative runs; svd's singular values alone
# take complex ones, by svdvals_vjp).
_M = "np.swapaxes({}, -1, -2)".format


_W, _V = "ans[0]", "ans[1]"
_GAPS = f"s2s.eigh_gaps({_W})"
# (a complex Hermitian matrix: conj(V) (diag(gw) + F o (V^T gV)) V^T folded, its eigenvectors'
# adjoint checked to leave their phases alone, by s2s.phase_free)
_EIGH_VJP = (f"s2s.triangle_fold((np.conj({_V}) * np.expand_dims(g[0], -2) + np.conj({_V}) @ ({_GAPS} * "
             f"({_M(_V)} @ s2s.phase_free(g[1], {_V})))) @ {_M(_V)}, UPLO)")
_ROTATED = f"({_M(_V)} @ s2s.triangle_symmetric({_real('t', 'np.linalg.eigh')}, UPLO) @ {_V})"  # V^T dA V
_EIGH_JVP = f"(np.diagonal({_ROTATED}, 0, -2, -1), {_V} @ ({_GAPS} * {_ROTATED}))"
# svd (Townsend's adjoint of the thin SVD): U (F o (J - J^T) S + S (F o (K - K^T)) + diag(gs)) Vh
# plus the parts outside the factors' ranges, with J = U^T gU, K = Vh gVh^T, F = 1/(s_j^2 - s_i^2)
_U, _S, _VH = "s2s.svd_thin(ans[0], ans[2])", "ans[1]", "ans[2]"
_J, _K = f"({_M('ans[0]')} @ g[0])", f"(ans[2] @ {_M('g[2]')})"
_SGAPS = f"s2s.eigh_gaps({_S} * {_S})"
_SROW, _SCOL = f"np.expand_dims({_S}, -2)", f"np.expand_dims({_S}, -1)"
_SVD_VJP = (f"({_U} @ ({_SGAPS} * ({_J} - {_M(_J)}) * {_SROW} + {_SCOL} * ({_SGAPS} * "
            f"({_K} - {_M(_K)})) - {_J} / {_SROW}) + ans[0] * np.expand_dims(g[1], -2) "
            f"+ g[0] / {_SROW}) @ {_VH} + (ans[0] / {_SROW}) @ (g[2] - {_M(_K)} @ {_VH})")
# a complex matrix (the convention's adjoint is the conjugate of the one that pairs with conj):
# with J = U^H conj(gU), K = Vh gVh^T, the same form with ^H for ^T and Im(J_ii) / s_i added to the
# diagonal, checked first that the function does not turn the phases numpy leaves arbitrary
# (u_i -> u_i e^(i phi), v_i -> v_i e^(i phi): Im(J_ii + K_ii) = 0, s2s.svd_phase_free, as PyTorch);
# the singular values are real: their adjoint's real part (a second derivative's may be complex)
_CJ, _HK = f"np.conj({_J})", f"np.conj({_M(_K)})"
_CDIAG = f"(np.expand_dims(np.real(g[1]), -2) + 1j * np.expand_dims(np.imag(np.diagonal(s2s.svd_phase_free({_CJ}, {_K}), 0, -2, -1)), -2) / {_SROW})"
_SVD_VJP_COMPLEX = (f"np.conj(({_U} @ ({_SGAPS} * ({_CJ} - {_M(_J)}) * {_SROW} + {_SCOL} * ({_SGAPS} * "
                    f"({_K} - {_HK})) - {_CJ} / {_SROW}) + ans[0] * {_CDIAG} "
                    f"+ np.conj(g[0]) / {_SROW}) @ {_VH} + (ans[0] / {_SROW}) @ (np.conj(g[2]) - {_HK} @ {_VH}))")
# its tangent, with P = U^T da V: ds = diag(P), dU = U (F o (P S + S P^T)) + (da V - U P) S^-1,
# dV = V (F o (S P + P^T S)) + (da^T U - V P^T) S^-1; the singular values alone by a thin SVD of a
# (of a complex a too: ds = Re(diag(U^H da V)); its factors' tangents are for real matrices only:
# the tangent cannot see whether the function turns the phases numpy leaves arbitrary)
_TS = _real("t", "np.linalg.svd")
_P = f"({_M(_U)} @ {_TS} @ {_M(_VH)})"
_DU = (f"{_U} @ ({_SGAPS} * ({_P} * {_SROW} + {_SCOL} * {_M(_P)})) + "
       f"({_TS} @ {_M(_VH)} - ans[0] @ {_P}) / {_SROW}")
_DV = (f"{_M(_VH)} @ ({_SGAPS} * ({_SCOL} * {_P} + {_M(_P)} * {_SROW})) + "
       f"({_M(_TS)} @ ans[0] - {_M(_VH)} @ {_M(_P)}) / {_SROW}")
_THIN = "np.linalg.svd(a, full_matrices=False)"
_SVD_JVP = (f"(({_DU}, np.diagonal({_P}, 0, -2, -1), {_M(_DV)}) if compute_uv else "
            f"np.real(np.diagonal(np.conj({_M(_THIN + '[0]')}) @ t @ np.conj({_M(_THIN + '[2]')}), 0, -2, -1)))")
# qr (reduced, m >= n): a = QR; adjoint (gQ + Q copyltu(R gR^T - gQ^T Q)) R^-T; tangent with
# C = Q^T da R^-1, X = tril(C, -1) - tril(C, -1)^T: dQ = da R^-1 + Q (X - C), dR = (C - X) R
_Q, _R = "ans[0]", "ans[1]"
_QR_INNER = f"g[0] + {_Q} @ s2s.triangle_symmetric({_R} @ {_M('g[1]')} - {_M('g[0]')} @ {_Q})"
_QR_VJP = _M(f"np.linalg.solve({_R}, {_M(_QR_INNER)})")
_DA = _M(f"np.linalg.solve({_M(_R)}, {_M(_real('t', 'np.linalg.qr'))})")  # da R^-1
_C = f"({_M(_Q)} @ {_DA})"
_X = f"(np.tril({_C}, -1) - {_M(f'np.tril({_C}, -1)')})"
_QR_JVP = f"({_DA} + {_Q} @ ({_X} - {_C}), ({_C} - {_X}) @ {_R})"

# eig (holomorphic in a where the eigenvalues are distinct, so its adjoint has no conjugate but in
# the eigenvectors' length): A = V diag(w) V^-1, the columns of V of unit length (v^H v = 1). With
# P = V^-1 dA V and C = F o P: dw = diag(P), dV = V C - V diag(Re(diag(V^H V C))) (the part that keeps
# each column's length; numpy leaves a complex column's phase arbitrary: s2s.phase_free refuses a
# function that turns it); the adjoint is V^-T (diag(gw) + F o (V^T gV - V^T conj(V) diag(Re(V^T gV))))
# V^T, real for a real matrix (s2s.match_complex). Forward mode: real eigenvectors only (a tangent
# cannot see whether the function turns the phases); the eigenvalues alone of any matrix.
_EGAPS = "s2s.eigh_gaps(ans[0])"
_EV = "ans[1]"
_VTG = f"({_M(_EV)} @ s2s.phase_free(g[1], {_EV}, 'np.linalg.eig'))"
_EIG_OFF = (f"{_EGAPS} * ({_VTG} - ({_M(_EV)} @ np.conj({_EV})) * "
            f"np.expand_dims(np.real(np.diagonal({_VTG}, 0, -2, -1)), -2))")
_EIG_VJP = ("s2s.match_complex(a, np.linalg.solve("
            f"{_M(_EV)}, np.expand_dims(g[0], -1) * {_M(_EV)} + {_EIG_OFF} @ {_M(_EV)}))")
_EW = _real("ans[0]", "np.linalg.eig (real eigenvalues)")
_EGAPS_REAL = f"s2s.eigh_gaps({_EW})"
_EP = f"np.linalg.solve({_EV}, t @ {_EV})"
_EC = f"({_EGAPS_REAL} * {_EP})"
_EIG_JVP = (f"(np.diagonal({_EP}, 0, -2, -1), {_EV} @ {_EC} - {_EV} * "
            f"np.expand_dims(np.sum({_EV} * ({_EV} @ {_EC}), axis=-2), -2))")
# eigvals: the eigenvalues alone, V^-T diag(g) V^T by the eigenvectors of the same eig (read once:
# the phases of its columns cancel)
_EVECS = "np.linalg.eig(a)[1]"
_EIGVALS_VJP = f"s2s.match_complex(a, s2s.eig_similar(g, {_EVECS}))"
_EIGVALS_JVP = f"np.diagonal(np.linalg.solve({_EVECS}, t @ {_EVECS}), 0, -2, -1)"

MULTIPLE = (
    defvjp(
        "numpy.linalg.slogdet(a)", outputs=("sign", "logabsdet"), result_shape=dims.sign_and_log,
        # inv(a)^T g: one inverse, of a's transposed view (a C-ordered result; inv measured
        # faster than solving against the identity, 15 us against 18 us at 20 x 20)
        a=_real("np.linalg.inv(np.swapaxes(a, -1, -2)) * np.expand_dims(g[1], (-1, -2))",
                "np.linalg.slogdet"),
        ranked=(("a", (2,), _real("np.linalg.inv(a.T) * g[1]", "np.linalg.slogdet")),),  # one matrix
        jvps={"a": "(s2s.zeros_like(ans[0]), np.trace(np.linalg.solve(a, "
                   f"{_real('t', 'np.linalg.slogdet')}), axis1=-2, axis2=-1))"},
    ),
    defvjp(
        "numpy.linalg.eigh(a, UPLO='L')", outputs=("eigenvalues", "eigenvectors"),
        a=_EIGH_VJP, jvps={"a": _EIGH_JVP},
    ),
    defvjp(
        # compute_uv=False returns the singular values alone: U diag(g) Vh
        "numpy.linalg.svd(a, full_matrices=True, compute_uv=True)", outputs=("U", "S", "Vh"),
        a=(f"(({_SVD_VJP_COMPLEX} if np.iscomplexobj(a) else {_real(_SVD_VJP, 'np.linalg.svd')}) if compute_uv "
           "else s2s.svdvals_vjp(g, a))"),
        jvps={"a": _SVD_JVP},
    ),
    defvjp(
        "numpy.linalg.qr(a)", outputs=("Q", "R"),
        a=_real(_QR_VJP, "np.linalg.qr"), jvps={"a": _QR_JVP},
    ),
    defvjp(
        "numpy.linalg.eig(a)", outputs=("eigenvalues", "eigenvectors"),
        a=_EIG_VJP, jvps={"a": _EIG_JVP},
    ),
    defvjp(
        "numpy.linalg.eigvals(a)",
        a=_EIGVALS_VJP, jvps={"a": _EIGVALS_JVP},
    ),
)
RULES += MULTIPLE

# What to write instead of the functions that have no rule (hints of the refusals).
INSTEAD = {
    "scipy.integrate.odeint": ("s2sgrad has no exact derivative of scipy's adaptive solver (an adjoint method "
                               "would only approximate it); write a fixed-step scheme as a loop in the function "
                               "(`for k in range(n): y = y + h * f(y, t[k])`, or RK4), which s2sgrad "
                               "differentiates exactly, or mark the call with s2sgrad.stop_gradient(...) if "
                               "no gradient should flow"),
    "numpy.linalg.lstsq": ("for a least-squares solution of full column rank write `np.linalg.solve(a.T @ a, a.T @ b)`, "
                           "or `np.linalg.pinv(a) @ b`, which have rules"),
}

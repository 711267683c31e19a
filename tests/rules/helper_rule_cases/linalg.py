"""Cases for the rules of the helpers of s2sgrad/runtime/linalg.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import uniform

R = "s2sgrad.runtime."
N3 = np.eye(3) * 2.0  # a well-conditioned shift
X34 = uniform((3, 4))


def _out(y):
    """A scalar of a helper's output that sees its second-order terms."""
    return np.sum(np.sin(y) * np.cos(np.arange(np.size(y)).reshape(np.shape(y)) + 0.5))


def h_trace_vjp(g, a): return _out(s2s.trace_vjp(g, a))
def h_trace_vjp_axes(g, a): return _out(s2s.trace_vjp(g, a, 1, axis1=0, axis2=2))
def h_solve_vjp_b(g, a, b): return _out(s2s.solve_vjp_b(g, a + N3, b))
def h_solve_vjp_a(g, ans, a, b): return _out(s2s.solve_vjp_a(g, ans, a + N3, b))
def h_solve_vjps(g, ans, a, b):
    a_bar, b_bar = s2s.solve_vjps(g, ans, a + N3, b)
    return _out(a_bar) + _out(2.0 * b_bar)
def h_cholesky_vjp(g, low): return _out(s2s.cholesky_vjp(g, low + N3))
def h_cholesky_vjp_upper(g, up): return _out(s2s.cholesky_vjp(g, up + N3, True))
def h_eigvalsh_vjp(g, a): return _out(s2s.eigvalsh_vjp(g, a + a.T + np.diag([0.0, 2.0, 4.0])))
def h_eigvalsh_vjp_raw(g, a): return _out(s2s.eigvalsh_vjp(g, a + np.diag([0.0, 2.0, 4.0])))
def h_eigvalsh_vjp_upper(g, a): return _out(s2s.eigvalsh_vjp(g, a + np.diag([0.0, 2.0, 4.0]), "U"))

def h_eigh_gaps(w): return _out(s2s.eigh_gaps(w))
def h_triangle_symmetric(x): return _out(s2s.triangle_symmetric(x))
def h_triangle_symmetric_upper(x): return _out(s2s.triangle_symmetric(x, "U"))
def h_triangle_fold(x): return _out(s2s.triangle_fold(x))
def h_triangle_fold_upper(x): return _out(s2s.triangle_fold(x, "U"))
def h_real_only(x): return _out(s2s.real_only(x, "f"))
def h_svd_thin(u, vh): return _out(s2s.svd_thin(u, vh))
def h_phase_free(g, v): return _out(s2s.phase_free(g, v))
def h_svd_phase_free(j, k): return _out(s2s.svd_phase_free(j, k))
def h_eig_similar(g, v): return _out(s2s.eig_similar(g[0], v + 3.0 * np.eye(3)))

def h_matrix_power_vjp(g, a): return _out(s2s.matrix_power_vjp(g, a, 3))
def h_matrix_power_vjp_1(g, a): return _out(s2s.matrix_power_vjp(g, a, 1))
def h_matrix_power_vjp_0(g, a): return _out(s2s.matrix_power_vjp(g, a, 0))
def h_matrix_power_vjp_neg(g, a): return _out(s2s.matrix_power_vjp(g, a + N3, -2))
def h_pinv_vjp(g, p, a): return _out(s2s.pinv_vjp(g, p, a))
def h_svdvals_vjp(g, a): return _out(s2s.svdvals_vjp(g, a))
def h_norm_vjp(g, r, x): return _out(s2s.norm_vjp(g, r, x))
def h_norm_vjp_3(g, r, x): return _out(s2s.norm_vjp(g, r, x, 3, 1))
def h_norm_vjp_3_keep(g, r, x): return _out(s2s.norm_vjp(g, r, x, 3, 0, True))
def h_norm_vjp_1(g, r, x): return _out(s2s.norm_vjp(g, r, x, 1, 1))
def h_norm_vjp_inf(g, r, x): return _out(s2s.norm_vjp(g, r, x, np.inf, 1))
def h_norm_vjp_fro(g, r, x): return _out(s2s.norm_vjp(g, r, x, "fro"))
def h_norm_vjp_nuc(g, r, x): return _out(s2s.norm_vjp(g, r, x, "nuc"))
def h_norm_vjp_2(g, r, x): return _out(s2s.norm_vjp(g, r, x, 2, (1, 2)))
def h_norm_vjp_m2(g, r, x): return _out(s2s.norm_vjp(g, r, x, -2, (2, 0), True))
def h_norm_vjp_m1(g, r, x): return _out(s2s.norm_vjp(g, r, x, 1))
def h_vector_norm_vjp(g, r, x): return _out(s2s.vector_norm_vjp(g, r, x, 2.5, -1, False))
def h_matrix_norm_vjp(g, r, x): return _out(s2s.matrix_norm_vjp(g, r, x, "fro", (0, 2), False))
def h_matrix_norm_vjp_nuc(g, r, x): return _out(s2s.matrix_norm_vjp(g, r, x, "nuc", (0, 1), False))


def _u(*shapes):
    return tuple(uniform(s) for s in shapes)


CASES = [
    (R + "trace_vjp", h_trace_vjp, _u(None, (3, 3)), None, 1e-5),
    (R + "trace_vjp", h_trace_vjp, _u((2,), (3, 4, 2)), None, 1e-5),
    (R + "trace_vjp", h_trace_vjp_axes, _u((4,), (3, 4, 3)), None, 1e-5),
    # b: one vector, matrices, a stack of vectors against one matrix, a broadcast b
    (R + "solve_vjp_b", h_solve_vjp_b, _u((3,), (3, 3), (3,)), None, 1e-5),
    (R + "solve_vjp_b", h_solve_vjp_b, _u((3, 2), (3, 3), (3, 2)), None, 1e-5),
    (R + "solve_vjp_b", h_solve_vjp_b, _u((2, 3), (2, 3, 3), (3,)), None, 1e-5),
    (R + "solve_vjp_b", h_solve_vjp_b, _u((2, 3, 2), (2, 3, 3), (3, 2)), None, 1e-5),
    (R + "solve_vjp_a", h_solve_vjp_a, _u((3,), (3,), (3, 3), (3,)), None, 1e-5),
    (R + "solve_vjp_a", h_solve_vjp_a, _u((3, 2), (3, 2), (3, 3), (3, 2)), None, 1e-5),
    (R + "solve_vjp_a", h_solve_vjp_a, _u((2, 3), (2, 3), (2, 3, 3), (3,)), None, 1e-5),
    (R + "solve_vjp_a", h_solve_vjp_a, _u((2, 3, 2), (2, 3, 2), (3, 3), (2, 3, 2)), None, 1e-5),
    # both adjoints at once: the same four spellings of b
    (R + "solve_vjps", h_solve_vjps, _u((3,), (3,), (3, 3), (3,)), None, 1e-5),
    (R + "solve_vjps", h_solve_vjps, _u((3, 2), (3, 2), (3, 3), (3, 2)), None, 1e-5),
    (R + "solve_vjps", h_solve_vjps, _u((2, 3), (2, 3), (2, 3, 3), (3,)), None, 1e-5),
    (R + "solve_vjps", h_solve_vjps, _u((2, 3, 2), (2, 3, 2), (3, 3), (2, 3, 2)), None, 1e-5),
    (R + "cholesky_vjp", h_cholesky_vjp, _u((3, 3), (3, 3)), None, 1e-5),
    (R + "cholesky_vjp", h_cholesky_vjp, (uniform((3, 3)), np.tril(uniform((3, 3)))), None, 1e-5),
    (R + "cholesky_vjp", h_cholesky_vjp_upper, _u((3, 3), (3, 3)), None, 1e-5),
    (R + "cholesky_vjp", h_cholesky_vjp, _u((2, 3, 3), (2, 3, 3)), None, 1e-5),
    (R + "eigvalsh_vjp", h_eigvalsh_vjp, _u((3,), (3, 3)), None, 1e-5),
    (R + "eigvalsh_vjp", h_eigvalsh_vjp_raw, _u((3,), (3, 3)), None, 1e-5),
    (R + "eigvalsh_vjp", h_eigvalsh_vjp_upper, _u((3,), (3, 3)), None, 1e-5),
    (R + "matrix_power_vjp", h_matrix_power_vjp, _u((3, 3), (3, 3)), None, 1e-5),
    (R + "matrix_power_vjp", h_matrix_power_vjp, _u((2, 3, 3), (2, 3, 3)), None, 1e-5),
    (R + "matrix_power_vjp", h_matrix_power_vjp_1, _u((3, 3), (3, 3)), None, 1e-5),
    (R + "matrix_power_vjp", h_matrix_power_vjp_0, _u((3, 3), (3, 3)), None, 1e-5),
    (R + "matrix_power_vjp", h_matrix_power_vjp_neg, _u((3, 3), (3, 3)), None, 1e-5),
    # result: any matrix of pinv's shape (the helper is a polynomial in it)
    (R + "pinv_vjp", h_pinv_vjp, _u((3, 4), (3, 4), (4, 3)), None, 1e-5),
    (R + "pinv_vjp", h_pinv_vjp, _u((2, 3, 4), (2, 3, 4), (2, 4, 3)), None, 1e-5),
    (R + "svdvals_vjp", h_svdvals_vjp, _u((3,), (4, 3)), None, 1e-5),
    (R + "svdvals_vjp", h_svdvals_vjp, _u((3,), (3, 5)), None, 1e-5),
    (R + "svdvals_vjp", h_svdvals_vjp, _u((2, 3), (2, 3, 3)), None, 1e-5),
    # norms: the result is an argument of its own (any positive value)
    (R + "norm_vjp", h_norm_vjp, (uniform(None), uniform(None, 0.5, 1.5), uniform((3, 4))), None, 1e-5),
    (R + "norm_vjp", h_norm_vjp_3, (uniform((3,)), uniform((3,), 0.5, 1.5), uniform((3, 4))), None, 1e-5),
    (R + "norm_vjp", h_norm_vjp_3_keep, (uniform((1, 4)), uniform((1, 4), 0.5, 1.5), uniform((3, 4))),
     None, 1e-5),
    (R + "norm_vjp", h_norm_vjp_1, (uniform((3,)), uniform((3,), 0.5, 1.5), uniform((3, 4))), None, 1e-5),
    # ord inf: x only where the extremum sits (moving x off it leaves no extremum)
    (R + "norm_vjp", h_norm_vjp_inf, (uniform((3,)), np.max(np.abs(X34), axis=1), X34), (0,), 1e-5),
    (R + "norm_vjp", h_norm_vjp_fro, (uniform(None), uniform(None, 0.5, 1.5), uniform((3, 4))), None, 1e-5),
    (R + "norm_vjp", h_norm_vjp_m1, (uniform(None), uniform(None, 0.5, 1.5), uniform((3, 4))), None, 1e-5),
    (R + "norm_vjp", h_norm_vjp_nuc, (uniform(None), uniform(None, 0.5, 1.5), uniform((3, 4))), None, 1e-5),
    (R + "norm_vjp", h_norm_vjp_2, (uniform((2,)), uniform((2,), 0.5, 1.5), uniform((2, 3, 4))), None, 1e-5),
    (R + "norm_vjp", h_norm_vjp_m2, (uniform((1, 3, 1)), uniform((1, 3, 1), 0.5, 1.5), uniform((4, 3, 2))),
     None, 1e-5),
    (R + "vector_norm_vjp", h_vector_norm_vjp, (uniform((3,)), uniform((3,), 0.5, 1.5), uniform((3, 4))),
     None, 1e-5),
    (R + "matrix_norm_vjp", h_matrix_norm_vjp, (uniform((3,)), uniform((3,), 0.5, 1.5), uniform((2, 3, 4))),
     None, 1e-5),
    (R + "matrix_norm_vjp", h_matrix_norm_vjp_nuc, (uniform((4,)), uniform((4,), 0.5, 1.5), uniform((2, 3, 4))),
     None, 1e-5),
    # the pieces of the eigh, svd and qr templates: eigenvalue gaps kept apart, any matrix
    (R + "eigh_gaps", h_eigh_gaps, (np.array([0.1, 1.3, 2.9]),), None, 1e-5),
    (R + "eigh_gaps", h_eigh_gaps, (np.array([[0.1, 1.3, 2.9], [-1.0, 0.5, 1.7]]),), None, 1e-5),
    (R + "triangle_symmetric", h_triangle_symmetric, _u((3, 3)), None, 1e-5),
    (R + "triangle_symmetric", h_triangle_symmetric_upper, _u((2, 3, 3)), None, 1e-5),
    (R + "triangle_fold", h_triangle_fold, _u((3, 3)), None, 1e-5),
    (R + "triangle_fold", h_triangle_fold_upper, _u((2, 3, 3)), None, 1e-5),
    (R + "real_only", h_real_only, _u((3, 2)), None, 1e-5),
    (R + "svd_thin", h_svd_thin, _u((4, 3), (3, 3)), (0,), 1e-5),
    (R + "phase_free", h_phase_free, _u((3, 3), (3, 3)), (0,), 1e-5),
    (R + "svd_phase_free", h_svd_phase_free, _u((3, 3), (3, 3)), (0,), 1e-5),
    (R + "eig_similar", h_eig_similar, _u((3, 3), (3, 3)), None, 1e-5),
]

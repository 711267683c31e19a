"""Cases for the rules of the helpers of s2sgrad/runtime/linalg.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import uniform

R = "s2sgrad.runtime."
N3 = np.eye(3) * 2.0  # a well-conditioned shift


def _out(y):
    """A scalar of a helper's output that sees its second-order terms."""
    return np.sum(np.sin(y) * np.cos(np.arange(np.size(y)).reshape(np.shape(y)) + 0.5))


def h_trace_vjp(g, a): return _out(s2s.trace_vjp(g, a))
def h_trace_vjp_axes(g, a): return _out(s2s.trace_vjp(g, a, 1, axis1=0, axis2=2))
def h_solve_vjp_b(g, a, b): return _out(s2s.solve_vjp_b(g, a + N3, b))
def h_solve_vjp_a(g, ans, a, b): return _out(s2s.solve_vjp_a(g, ans, a + N3, b))
def h_cholesky_vjp(g, low): return _out(s2s.cholesky_vjp(g, low + N3))
def h_cholesky_vjp_upper(g, up): return _out(s2s.cholesky_vjp(g, up + N3, True))
def h_eigvalsh_vjp(g, a): return _out(s2s.eigvalsh_vjp(g, a + a.T + np.diag([0.0, 2.0, 4.0])))
def h_eigvalsh_vjp_raw(g, a): return _out(s2s.eigvalsh_vjp(g, a + np.diag([0.0, 2.0, 4.0])))
def h_eigvalsh_vjp_upper(g, a): return _out(s2s.eigvalsh_vjp(g, a + np.diag([0.0, 2.0, 4.0]), "U"))

def h_matrix_power_vjp(g, a): return _out(s2s.matrix_power_vjp(g, a, 3))
def h_matrix_power_vjp_1(g, a): return _out(s2s.matrix_power_vjp(g, a, 1))
def h_matrix_power_vjp_0(g, a): return _out(s2s.matrix_power_vjp(g, a, 0))
def h_matrix_power_vjp_neg(g, a): return _out(s2s.matrix_power_vjp(g, a + N3, -2))
def h_pinv_vjp(g, p, a): return _out(s2s.pinv_vjp(g, p, a))
def h_svdvals_vjp(g, a): return _out(s2s.svdvals_vjp(g, a))


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
]

"""One inverse per matrix in a backward sweep made for a call's shapes (differentiate/inverses.py):
where two or more adjoints read the inverse of one matrix (np.linalg.solve's, a Cholesky
factor's, slogdet's and det's; the matrix or its transpose), the sweep computes it once
(``inv_L = np.linalg.inv(L)``) and each reader takes it given. The gradients stay autograd's,
in every arrangement: the matrix transposed by ``.T``, by a name bound to its transpose, or
twice, a vector right-hand side, stacks of matrices; one reader alone, a matrix whose number of
axes is not known (an upper Cholesky factor) read transposed, and the code for any shape (which
grad of grad reads again), are left as they were."""

import re

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad import runtime

RNG = np.random.default_rng(34)


def chol_twice(A, X):
    S = A @ A.T + np.eye(A.shape[0])
    L = np.linalg.cholesky(S)
    alpha = np.linalg.solve(L.T, np.linalg.solve(L, X.T))
    return np.sum(X.T * alpha) + 2.0 * np.sum(np.log(np.diag(L)))


def chol_twice_ag(A, X):
    S = A @ A.T + anp.eye(A.shape[0])
    L = anp.linalg.cholesky(S)
    alpha = anp.linalg.solve(L.T, anp.linalg.solve(L, X.T))
    return anp.sum(X.T * alpha) + 2.0 * anp.sum(anp.log(anp.diag(L)))


def chol_upper(A, X):
    S = A @ A.T + np.eye(A.shape[0])
    U = np.linalg.cholesky(S, upper=True)
    Z = np.linalg.solve(U.T, X.T)
    return np.sum(Z * Z) + np.sum(np.log(np.abs(np.diag(U))))


def chol_upper_ag(A, X):
    S = A @ A.T + anp.eye(A.shape[0])
    U = anp.transpose(anp.linalg.cholesky(S))
    Z = anp.linalg.solve(U.T, X.T)
    return anp.sum(Z * Z) + anp.sum(anp.log(anp.abs(anp.diag(U))))


def chol_transposed(A, X):
    S = A @ A.T + np.eye(A.shape[0])
    U = np.linalg.cholesky(S).T
    Z = np.linalg.solve(U.T, X.T)
    return np.sum(Z * Z) + np.sum(np.linalg.solve(U, X.T))


def chol_transposed_ag(A, X):
    S = A @ A.T + anp.eye(A.shape[0])
    U = anp.linalg.cholesky(S).T
    Z = anp.linalg.solve(U.T, X.T)
    return anp.sum(Z * Z) + anp.sum(anp.linalg.solve(U, X.T))


def slogdet_solve(A, b):
    S = A @ A.T + np.eye(A.shape[0])
    logdet = np.linalg.slogdet(S)[1]
    return np.dot(b, np.linalg.solve(S, b)) + logdet


def slogdet_solve_ag(A, b):
    S = anp.dot(A, A.T) + anp.eye(A.shape[0])
    logdet = anp.linalg.slogdet(S)[1]
    return anp.dot(b, anp.linalg.solve(S, b)) + logdet


def named_transpose(A, B):
    S = A @ A.T + np.eye(A.shape[0])
    St = S.T
    return np.sum(np.linalg.solve(St, B) ** 2) + np.sum(np.linalg.solve(S, B)) + np.linalg.det(S)


def named_transpose_ag(A, B):
    S = anp.dot(A, A.T) + anp.eye(A.shape[0])
    St = S.T
    return anp.sum(anp.linalg.solve(St, B) ** 2) + anp.sum(anp.linalg.solve(S, B)) + anp.linalg.det(S)


def transpose_then_rebound(A, b):
    S = A @ A.T + 3.0 * np.eye(A.shape[0])
    St = S.T  # the transpose of this S, not of the one the loop leaves
    for _ in range(2):
        S = S + 0.5 * np.eye(A.shape[0])
    return np.sum(np.linalg.solve(St, b) ** 2) + np.linalg.slogdet(S)[1] + np.sum(np.linalg.solve(S, b))


def transpose_then_rebound_ag(A, b):
    S = anp.dot(A, A.T) + 3.0 * anp.eye(A.shape[0])
    St = S.T
    for _ in range(2):
        S = S + 0.5 * anp.eye(A.shape[0])
    return anp.sum(anp.linalg.solve(St, b) ** 2) + anp.linalg.slogdet(S)[1] + anp.sum(anp.linalg.solve(S, b))


def stacked(A, B):
    S = A @ np.swapaxes(A, -1, -2) + np.eye(A.shape[-1])
    return np.sum(np.linalg.solve(S, B) ** 2) + np.sum(np.linalg.slogdet(S)[1])


def stacked_ag(A, B):
    S = anp.matmul(A, anp.swapaxes(A, -1, -2)) + anp.eye(A.shape[-1])
    return anp.sum(anp.linalg.solve(S, B) ** 2) + anp.sum(anp.linalg.slogdet(S)[1])


def one_reader(A, B):
    S = A @ A.T + np.eye(A.shape[0])
    return np.sum(np.linalg.solve(S, B) ** 2)


def one_reader_ag(A, B):
    S = anp.dot(A, A.T) + anp.eye(A.shape[0])
    return anp.sum(anp.linalg.solve(S, B) ** 2)


CASES = [  # (function, autograd's, shapes, inverses in the code for the shapes)
    (chol_twice, chol_twice_ag, ((5, 5), (7, 5)), 1),
    # the upper factor's shape is not known (cholesky given upper=): read as two matrices
    (chol_upper, chol_upper_ag, ((4, 4), (6, 4)), 0),
    # U = L.T, then U.T: the inverse of L, transposed twice and once
    (chol_transposed, chol_transposed_ag, ((4, 4), (6, 4)), 1),
    (slogdet_solve, slogdet_solve_ag, ((5, 5), (5,)), 1),
    (named_transpose, named_transpose_ag, ((4, 4), (4, 3)), 1),
    (stacked, stacked_ag, ((3, 4, 4), (3, 4, 2)), 1),
    # St is the first S's transpose: the last S's inverse is shared, St's its own
    (transpose_then_rebound, transpose_then_rebound_ag, ((4, 4), (4,)), 1),
    (one_reader, one_reader_ag, ((4, 4), (4, 6)), 0),
]


@pytest.mark.parametrize("fn, oracle, shapes, shared", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradients_and_one_inverse_in_the_code_for_the_shapes(fn, oracle, shapes, shared):
    args = tuple(RNG.normal(size=s) for s in shapes)
    want = autograd.grad(oracle, (0, 1))(*args)
    vg = s2sgrad.value_and_grad(fn, argnums=(0, 1))
    for _ in range(3):  # the code for any shape, then the code for the shapes
        for got, expected in zip(vg(*args)[1], want):
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-11)
    made = s2sgrad.source(vg, like=args)
    backward = made[made.index(f"def {fn.__name__}_bwd"):]
    assert backward.count("np.linalg.inv(") == shared, backward
    assert ("_by_inverse(" in backward) == bool(shared), backward
    generic = s2sgrad.source(vg)  # read again by grad of grad: as the rules wrote it
    assert "_by_inverse(" not in generic and "inv_" not in generic, generic


def test_one_inverse_for_three_readers_of_a_factor_and_its_transpose():
    args = (RNG.normal(size=(5, 5)), RNG.normal(size=(7, 5)))
    made = s2sgrad.source(s2sgrad.value_and_grad(chol_twice, argnums=(0, 1)), like=args)
    backward = made[made.index("def chol_twice_bwd"):]
    assert backward.count("inv_L = np.linalg.inv(L)") == 1, backward
    assert sorted(re.findall(r"inverse=inv_L(\.T)?\b", backward)) == ["", "", ".T"], backward


def test_second_order_reads_the_rules_own_code():
    A, X = RNG.normal(size=(4, 4)), RNG.normal(size=(5, 4))
    want = autograd.hessian(chol_twice_ag)(A, X)
    hessian = s2sgrad.hessian(chol_twice)
    for _ in range(2):
        np.testing.assert_allclose(hessian(A, X), want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("vector", [False, True])
def test_solve_vjps_by_inverse_is_solve_vjps(vector):
    a = RNG.normal(size=(2, 5, 5)) + 5 * np.eye(5)
    b = RNG.normal(size=5) if vector else RNG.normal(size=(2, 5, 3))
    ans = np.linalg.solve(a, b[..., None])[..., 0] if vector else np.linalg.solve(a, b)
    g = RNG.normal(size=ans.shape)
    for got, want in zip(runtime.solve_vjps_by_inverse(g, ans, a, b, inverse=np.linalg.inv(a)),
                         runtime.solve_vjps(g, ans, a, b)):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_vjp_by_inverse_is_cholesky_vjp(upper):
    m = RNG.normal(size=(5, 5))
    factor = np.linalg.cholesky(m @ m.T + np.eye(5), upper=upper)
    g = RNG.normal(size=(5, 5))
    np.testing.assert_allclose(
        runtime.cholesky_vjp_by_inverse(g, factor, upper, inverse=np.linalg.inv(factor)),
        runtime.cholesky_vjp(g, factor, upper), rtol=1e-10, atol=1e-12)

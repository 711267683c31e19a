"""runtime._transposed_solve, the solve with the transposed matrix that np.linalg.solve's
adjoints run: by the inverse and one product where there are as many right-hand sides as
unknowns or more, else numpy's solve. Checked against exact rational solutions (Fractions) for
matrices of condition numbers 1e2 to 1e12: its error stays of the order of numpy's solve's."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from s2sgrad.runtime.linalg import _transposed_solve


def _exact_solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """solve(a, b) in exact rational arithmetic (Gauss-Jordan on the floats' exact values)."""
    n, k = a.shape[0], b.shape[1]
    rows = [[Fraction(float(v)) for v in a[i]] + [Fraction(float(v)) for v in b[i]] for i in range(n)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(rows[r][col]))
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(n):
            if r != col and rows[r][col]:
                f = rows[r][col] / rows[col][col]
                rows[r] = [x - f * y for x, y in zip(rows[r], rows[col])]
    return np.array([[float(rows[i][n + j] / rows[i][i]) for j in range(k)] for i in range(n)])


def _conditioned(rng, n: int, cond: float) -> np.ndarray:
    u, _ = np.linalg.qr(rng.normal(size=(n, n)))
    v, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return u @ np.diag(np.logspace(0, -np.log10(cond), n)) @ v.T


@pytest.mark.parametrize("cond", [1e2, 1e6, 1e10, 1e12])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_its_error_is_of_the_order_of_numpys_solve(cond, seed):
    rng = np.random.default_rng(seed)
    n = 6
    a = _conditioned(rng, n, cond)
    for k in (n, 2 * n):  # the inverse's path
        g = rng.normal(size=(n, k))
        exact = _exact_solve(a.T, g)
        scale = np.linalg.norm(exact)
        ours = np.linalg.norm(_transposed_solve(a, g) - exact) / scale
        numpys = np.linalg.norm(np.linalg.solve(a.T, g) - exact) / scale
        assert ours <= 20 * numpys + 4 * np.finfo(float).eps, (ours, numpys)
        assert ours <= 100 * cond * np.finfo(float).eps


def test_a_cholesky_factors_solve_stays_exact_to_rounding():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(6, 6))
    low = np.linalg.cholesky(x @ x.T + 1e-9 * np.eye(6))  # condition about 1e8 and more
    g = rng.normal(size=(6, 12))
    exact = _exact_solve(low.T, g)
    error = np.linalg.norm(_transposed_solve(low, g) - exact) / np.linalg.norm(exact)
    assert error < 1e-13


@pytest.mark.parametrize("a_shape, g_shape", [((4, 4), (4, 2)), ((4, 4), (4, 9)),
                                              ((3, 4, 4), (3, 4, 4)), ((4, 4), (2, 4, 5))])
def test_it_is_the_transposed_solve(a_shape, g_shape):
    rng = np.random.default_rng(7)
    a = rng.normal(size=a_shape) + 4.0 * np.eye(a_shape[-1])
    g = rng.normal(size=g_shape)
    np.testing.assert_allclose(_transposed_solve(a, g), np.linalg.solve(np.swapaxes(a, -1, -2), g),
                               rtol=1e-12, atol=1e-13)


def test_a_singular_matrix_raises_as_numpys_solve_does():
    a = np.ones((3, 3))
    with pytest.raises(np.linalg.LinAlgError):
        _transposed_solve(a, np.ones((3, 4)))

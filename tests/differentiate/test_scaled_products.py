"""Scaled operands of matrix products (differentiate/scales.py): in a backward sweep made for a
call's shapes, a number times an array that only matrix products with smaller results read
(``r_bar = g * 2.0 * r`` before ``w_bar += r_bar @ X``) scales their results instead
(``g * 2.0 * (r @ X)``). The gradients stay autograd's, with the weights on either side, in
every spelling of the product; where a product's result is not smaller, or the array is read
otherwise too, the code keeps the scaled array."""

import re

import numpy as np
import pytest
from conftest import autograd_grad

import s2sgrad
from s2sgrad.checks import numerical_grad

RNG = np.random.default_rng(35)


def squares_matmul(w, X, y):
    r = X @ w - y
    return np.sum(r ** 2)


def squares_dot_mean(w, X, y):
    r = np.dot(X, w) - y
    return np.mean(r * r)


def squares_left(w, X, y):
    r = w @ X.T - y  # the weights on the left
    return 0.5 * np.sum(r ** 2)


def squares_method(w, X, y):
    r = X.dot(w) - y
    return np.sum(r ** 2) + 0.1 * w.dot(w)


def squares_norm(w, X, y):
    return np.linalg.norm(np.dot(X, w) - y) ** 2  # its adjoint: g * 2.0 * s2s.complex_conj(r)


def squares_method_twin(w, X, y):  # what autograd runs for squares_method (no .dot on its boxes)
    r = X @ w - y
    return np.sum(r ** 2) + 0.1 * (w @ w)


def matrix_fit(W, A, T):
    E = A @ W - T
    return np.sum(E ** 2)


def read_otherwise(w, X, y):
    r = X @ w - y
    return np.sum(r ** 2) + np.sum(np.sin(r))


def _specialized(fn, args):
    vg = s2sgrad.value_and_grad(fn, argnums=0)
    vg(*args)
    text = s2sgrad.source(vg, like=args)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def _inputs(n=40, d=5):
    return RNG.normal(size=d), RNG.normal(size=(n, d)), RNG.normal(size=n)


@pytest.mark.parametrize("fn", [squares_matmul, squares_dot_mean, squares_left, squares_method])
def test_the_residual_is_scaled_after_the_product(fn):
    code = _specialized(fn, _inputs())
    bwd = code[code.index("_bwd("):]
    assert re.search(r"\* \(r @ X(_T\.T)?\)", bwd), bwd  # (X_T: the forward's X.T)
    assert "r_bar" not in bwd and "_minus_y_bar" not in bwd, bwd


def test_a_scaled_call_keeping_its_arguments_shape_moves_too():
    bwd = _specialized(squares_norm, _inputs())
    bwd = bwd[bwd.index("_bwd("):]
    assert re.search(r"\* \(s2s\.complex_conj\(\w+\) @ X\)", bwd), bwd


def test_a_product_of_matrices_is_scaled_where_its_result_is_smaller():
    A, W, T = RNG.normal(size=(30, 4)), RNG.normal(size=(4, 3)), RNG.normal(size=(30, 3))
    code = _specialized(matrix_fit, (W, A, T))
    bwd = code[code.index("_bwd("):]
    assert "E_bar" not in bwd and re.search(r"\* \(A\.T @ E\)|\* \(E\.T @ A\)", bwd), bwd


def test_no_scaling_moves_where_a_result_is_not_smaller_or_the_array_is_read_otherwise():
    square = (RNG.normal(size=6), RNG.normal(size=(6, 6)), RNG.normal(size=6))
    assert "r_bar" in _specialized(squares_matmul, square)
    assert "r_bar" in _specialized(read_otherwise, _inputs())


@pytest.mark.parametrize("fn", [squares_matmul, squares_dot_mean, squares_left, squares_method, squares_norm,
                                read_otherwise])
@pytest.mark.parametrize("shape", [(40, 5), (5, 40), (6, 6)])
def test_gradients(fn, shape):
    n, d = shape
    args = (RNG.normal(size=d), RNG.normal(size=(n, d)), RNG.normal(size=n))
    vg = s2sgrad.value_and_grad(fn, argnums=(0, 1))
    want = autograd_grad(squares_method_twin if fn is squares_method else fn, args, (0, 1))
    for _ in range(3):  # the code for any shape, then the code made for these shapes
        value, grads = vg(*args)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
        for got, expected in zip(grads, want):
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads[0], numerical_grad(fn, args, 0), rtol=1e-5, atol=1e-6)


def test_matrix_fit_gradients_and_hessian_vector_product():
    A, W, T = RNG.normal(size=(30, 4)), RNG.normal(size=(4, 3)), RNG.normal(size=(30, 3))
    vg = s2sgrad.value_and_grad(matrix_fit, argnums=(0, 1))
    want = autograd_grad(matrix_fit, (W, A, T), (0, 1))
    for _ in range(3):
        _, grads = vg(W, A, T)
        for got, expected in zip(grads, want):
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    V = RNG.normal(size=W.shape)
    g = s2sgrad.grad(matrix_fit)
    eps = 1e-5
    numeric = (g(W + eps * V, A, T) - g(W - eps * V, A, T)) / (2 * eps)
    got = s2sgrad.hvp(lambda W_: matrix_fit(W_, A, T), (W,), (V,))[0]
    np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6)

"""grad (and the other transformations made, then called) of a lambda closing over data and of a
functools.partial, as JAX users write them: the lambda is read as a def of its body, the
partial's fixed arguments are constants and argnums count past them (partials.py)."""

import functools

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad

RNG = np.random.default_rng(7)
X = RNG.normal(size=(6, 3))
Y = RNG.normal(size=6)
W = RNG.normal(size=3)


def loss(w, X, y):
    return np.mean(np.tanh(X @ w - y) ** 2)


def loss_autograd(w, X, y):
    return anp.mean(anp.tanh(anp.dot(X, w) - y) ** 2)


def test_a_lambda_closing_over_data_matches_autograd():
    got = s2sgrad.grad(lambda w: loss(w, X, Y))(W)
    np.testing.assert_allclose(got, autograd.grad(loss_autograd)(W, X, Y), rtol=1e-10)
    hess = s2sgrad.hessian(lambda w: loss(w, X, Y))(W)
    np.testing.assert_allclose(hess, autograd.hessian(loss_autograd)(W, X, Y), rtol=1e-8)


def test_a_lambda_with_its_own_arithmetic_and_argnums():
    got = s2sgrad.grad(lambda w, s: s * loss(w * 2.0, X, Y) + np.sum(w ** 3), argnums=(0, 1))(W, 0.5)
    expected = autograd.grad(lambda w, s: s * loss_autograd(w * 2.0, X, Y) + anp.sum(w ** 3), argnum=(0, 1))(W, 0.5)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-10)
    assert got[1] == pytest.approx(expected[1])


def test_two_lambdas_on_one_line_are_told_apart_by_their_parameters():
    f, g = (lambda a: np.sum(a ** 2)), (lambda b: np.sum(b ** 3))
    np.testing.assert_allclose(s2sgrad.grad(f)(W), 2 * W)
    np.testing.assert_allclose(s2sgrad.grad(g)(W), 3 * W ** 2)


def test_two_lambdas_with_the_same_parameters_on_one_line_are_refused():
    f, g = (lambda a: np.sum(a ** 2)), (lambda a: np.sum(a ** 3))
    with pytest.raises(s2sgrad.TransformError, match="which lambda on this line"):
        s2sgrad.grad(f)(W)


def test_a_partial_with_keywords_differentiates_the_rest():
    fixed = functools.partial(loss, X=X, y=Y)
    np.testing.assert_allclose(s2sgrad.grad(fixed)(W), autograd.grad(loss_autograd)(W, X, Y), rtol=1e-10)
    value, gradient = s2sgrad.value_and_grad(fixed)(W)
    assert value == pytest.approx(loss(W, X, Y))
    np.testing.assert_allclose(s2sgrad.hessian(fixed)(W), autograd.hessian(loss_autograd)(W, X, Y), rtol=1e-8)


def test_a_partial_with_fixed_positional_arguments_counts_argnums_past_them():
    fixed = functools.partial(loss, W)  # loss(W, X, y): argnums 0 is X
    got = s2sgrad.grad(fixed)(X, Y)
    np.testing.assert_allclose(got, autograd.grad(loss_autograd, 1)(W, X, Y), rtol=1e-10)
    jac = s2sgrad.jacrev(fixed, argnums=1)(X, Y)
    np.testing.assert_allclose(jac, autograd.grad(loss_autograd, 2)(W, X, Y), rtol=1e-10)


def test_transforming_a_partials_transformation_again_is_refused_not_misread():
    g = s2sgrad.grad(functools.partial(loss, W))  # its generated code takes w first
    with pytest.raises(s2sgrad.TransformError, match="cannot transform again"):
        s2sgrad.jacfwd(g)(X, Y)


def test_vjp_jvp_hvp_and_check_grads_of_a_partial_take_its_arguments_as_constants():
    fixed = functools.partial(loss, X=X, y=Y)
    t = RNG.normal(size=3)
    hess = autograd.hessian(loss_autograd)(W, X, Y)
    value, pullback = s2sgrad.vjp(fixed, W)
    assert value == pytest.approx(loss(W, X, Y))
    np.testing.assert_allclose(pullback(2.0)[0], 2.0 * autograd.grad(loss_autograd)(W, X, Y), rtol=1e-10)
    value, tangent = s2sgrad.jvp(fixed, (W,), (t,))
    assert tangent == pytest.approx(autograd.grad(loss_autograd)(W, X, Y) @ t, rel=1e-10)
    np.testing.assert_allclose(s2sgrad.hvp(fixed, (W,), (t,))[0], hess @ t, rtol=1e-8)
    s2sgrad.check_grads(fixed, (W,), order=2, modes=("rev", "fwd"))
    # fixed positional arguments: the primals are the parameters after them (here X and y)
    positional = functools.partial(loss, W)
    tx, ty = RNG.normal(size=X.shape), RNG.normal(size=Y.shape)
    gx, gy = autograd.grad(loss_autograd, 1)(W, X, Y), autograd.grad(loss_autograd, 2)(W, X, Y)
    _, tangent = s2sgrad.jvp(positional, (X, Y), (tx, ty))
    assert tangent == pytest.approx(np.sum(gx * tx) + gy @ ty, rel=1e-10)
    np.testing.assert_allclose(s2sgrad.vjp(positional, X, Y)[1](1.0)[1], gy, rtol=1e-10)

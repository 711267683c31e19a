"""Adjoint shares that need no array of their own: indexes that only add axes (``x[:, None]``,
``x[None]``, ``x[..., None, :]``) give ``x`` the upstream viewed without the new axes (no zeros
array, no scatter); a keepdims sum's upstream is added as it is to an adjoint its operand already
has (numpy broadcasts it), a keepdims mean's over one axis divided by its length; a number's
share of its product with a vector is one dot product. Gradients against central differences and autograd, the upstream a
full array or one number, each shape twice (the code for any shape, then the code made for it)."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad.checks import numerical_grad


def pairs(P, m):
    D = P[:, None, :] - P[None, :, :]
    w = m[:, None] * m[None]
    return np.sum(w[..., None] * D ** 2) + np.sum(np.tanh(P[..., None, :]))


def pairs_autograd(P, m):
    D = P[:, None, :] - P[None, :, :]
    w = m[:, None] * m[None]
    return anp.sum(w[..., None] * D ** 2) + anp.sum(anp.tanh(P[..., None, :]))


def whole(x):
    return np.sum(x[None, :]) * 3.0  # the upstream is one number standing for an array


def mixed(x):
    y = x[:, None] * x[None, :]  # (n, n)
    return np.sum(y[:, 0]) + np.sum(x[None] ** 2)


@pytest.mark.parametrize("fn", [whole, mixed])
def test_gradients_of_new_axes(fn):
    rng = np.random.default_rng(0)
    for n in (5, 1, 3):
        x = rng.normal(size=n)
        np.testing.assert_allclose(s2sgrad.grad(fn)(x), numerical_grad(fn, (x,), 0), rtol=1e-6, atol=1e-8)


def test_pairs_against_autograd_and_no_scatter():
    rng = np.random.default_rng(1)
    P, m = rng.normal(size=(6, 3)), rng.uniform(0.5, 2.0, size=6)
    grad = s2sgrad.grad(pairs, argnums=(0, 1))
    for got, want in zip(grad(P, m), autograd.grad(pairs_autograd, (0, 1))(P, m)):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    made = s2sgrad.source(grad, like=(P, m))
    # the new axes' adjoints are views (``w_bar[..., 0]``) and sums without them: no scatter
    assert "getitem_vjp" not in made and "[..., 0]" in made and "s2s.axis_sum(D_bar, axis=1)" in made, made
    made = s2sgrad.source(grad)  # code for any shape: the same views
    assert "getitem_vjp" not in made, made


def scaled_sum(x):
    return np.sum(x) * 3.0


@pytest.mark.parametrize("shape", [(1,), (1, 1), (2, 1), (3,)])
def test_a_full_sums_adjoint_for_parameters_with_length_one_axes(shape):
    x = np.random.default_rng(2).normal(size=shape)
    for fn in (scaled_sum, whole if len(shape) == 1 else scaled_sum):
        for _ in range(2):  # code for any shape, then code made for the shape
            np.testing.assert_allclose(s2sgrad.grad(fn)(x), np.full(shape, 3.0))


def softmax_loss(x, t):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)  # e's adjoint so far is p's share: the sum's adds to it
    return np.sum(p * t) + np.sum(np.sum(x * x, axis=0, keepdims=True) * t[:1])


def softmax_loss_autograd(x, t):
    e = anp.exp(x - anp.max(x, axis=1, keepdims=True))
    p = e / anp.sum(e, axis=1, keepdims=True)
    return anp.sum(p * t) + anp.sum(anp.sum(x * x, axis=0, keepdims=True) * t[:1])


def kept_first(x):
    s = np.sum(x, axis=0, keepdims=True)  # the first share of x's adjoint (read last): spread
    return np.sum(np.tanh(s)) + np.sum(x ** 2)


@pytest.mark.parametrize("shape", [(4, 3), (1, 3), (4, 1), (4, 3)])
def test_kept_sums_add_their_upstream_as_it_is(shape):
    rng = np.random.default_rng(3)
    x, t = rng.normal(size=shape), rng.normal(size=shape)
    grad = s2sgrad.grad(softmax_loss)
    for _ in range(2):
        np.testing.assert_allclose(grad(x, t), autograd.grad(softmax_loss_autograd)(x, t), rtol=1e-10)
        np.testing.assert_allclose(s2sgrad.grad(kept_first)(x), numerical_grad(kept_first, (x,), 0),
                                   rtol=1e-6, atol=1e-8)
    if shape[1] > 1:  # (over an axis of length 1 the sum is the array itself: other code)
        made = s2sgrad.source(grad, like=(x, t))
        assert "e_bar -= s2s.axis_sum(p_bar * p, axis=1, keepdims=True) / sum_e" in made, made


def standardized(x, gamma):
    xc = x - x.mean(axis=-1, keepdims=True)  # x's adjoint so far is xc's: the mean's adds to it
    var = np.mean(xc ** 2, axis=1, keepdims=True)
    return np.sum(np.tanh(gamma * xc / np.sqrt(var + 1e-3)))


def standardized_autograd(x, gamma):
    xc = x - anp.mean(x, axis=-1, keepdims=True)
    var = anp.mean(xc ** 2, axis=1, keepdims=True)
    return anp.sum(anp.tanh(gamma * xc / anp.sqrt(var + 1e-3)))


@pytest.mark.parametrize("shape", [(4, 3), (1, 3), (4, 1), (4, 3)])
def test_kept_means_add_their_upstream_over_the_length(shape):
    rng = np.random.default_rng(5)
    x, gamma = rng.normal(size=shape), rng.normal(size=shape[-1:])
    grad = s2sgrad.grad(standardized, argnums=(0, 1))
    want = autograd.grad(standardized_autograd, (0, 1))(x, gamma)
    for _ in range(2):
        for got, expected in zip(grad(x, gamma), want):
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    if shape[1] > 1:
        made = s2sgrad.source(grad, like=(x, gamma))
        assert "/ x.shape[-1]" in made and "mean_vjp(" in made, made  # (var's mean: the first share)


def taps(w, x):
    m = len(x) - len(w) + 1
    y = np.zeros(m)
    for k in range(len(w)):
        y = y + w[k] * x[k:k + m]  # w[k]'s share: np.dot(upstream, window)
    return np.sum(np.tanh(y)) + np.sum(w[0] * x) + np.sum(np.sin(w[1] * np.outer(x, x)))


def taps_autograd(w, x):
    m = len(x) - len(w) + 1
    y = anp.zeros(m)
    for k in range(len(w)):
        y = y + w[k] * x[k:k + m]
    return anp.sum(anp.tanh(y)) + anp.sum(w[0] * x) + anp.sum(anp.sin(w[1] * anp.outer(x, x)))


@pytest.mark.parametrize("n", [9, 4, 9])
def test_a_numbers_share_of_a_product_with_a_vector_is_a_dot_product(n):
    rng = np.random.default_rng(6)
    w, x = rng.normal(size=3), rng.normal(size=n)
    grad = s2sgrad.grad(taps, argnums=(0, 1))
    want = autograd.grad(taps_autograd, (0, 1))(w, x)
    for _ in range(2):
        for got, expected in zip(grad(w, x), want):
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    made = s2sgrad.source(grad, like=(w, x))
    assert "np.dot(y_bar, x_k_k_m)" in made and "w_1_bar = s2s.axis_sum(" in made, made  # not a matrix's

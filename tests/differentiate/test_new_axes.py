"""Indexes that only add axes (``x[:, None]``, ``x[None]``, ``x[..., None, :]``): the adjoint of
``x`` is the upstream viewed without the new axes, no zeros array and no scatter; gradients
against central differences and autograd, the upstream a full array or one number."""

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
    assert "getitem_vjp" not in made and "[:, 0]" in made, made
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

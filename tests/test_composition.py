"""Transformations compose: s2sgrad reads the code it generated. jvp of grad, grad of grad (to
third order), grad of a function that calls grad, jacfwd, jacrev and their nesting, checked against
analytic derivatives, autograd and central differences of s2sgrad's own gradients."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad

RNG = np.random.default_rng(2026)
W3 = RNG.uniform(-1.0, 1.0, 3)
M34 = RNG.uniform(-1.0, 1.0, (3, 4))


def chain(x):
    return np.sum(np.tanh(x) ** 2 * x + np.exp(-x * x))


def scalar(x):
    return np.sin(x) * x ** 3


def scalar_d2(x):
    return -np.sin(x) * x ** 3 + 6 * np.cos(x) * x ** 2 + 6 * np.sin(x) * x


def scalar_d3(x):
    return (-np.cos(x) * x ** 3 - 9 * np.sin(x) * x ** 2 + 18 * np.cos(x) * x + 6 * np.sin(x))


def vector_valued(x, w):
    return np.tanh(M34.T @ (x * w)) * np.sum(x ** 2)


def vector_valued_ag(x, w):
    return anp.tanh(anp.dot(M34.T, x * w)) * anp.sum(x ** 2)


chain_grad = s2sgrad.grad(chain)


def weighted_gradient(x):
    return np.sum(chain_grad(x) * W3)


def _difference(f, x, t, eps=1e-6):
    return (np.asarray(f(x + eps * t)) - np.asarray(f(x - eps * t))) / (2 * eps)


def test_jvp_of_grad_is_the_hessian_times_the_tangent():
    x, t = RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3)
    value, tangent = s2sgrad.jvp(chain_grad, (x,), (t,))
    np.testing.assert_allclose(value, chain_grad(x), rtol=1e-12)
    np.testing.assert_allclose(tangent, _difference(chain_grad, x, t), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tangent, autograd.hessian(lambda z: anp.sum(
        anp.tanh(z) ** 2 * z + anp.exp(-z * z)))(x) @ t, rtol=1e-10)


def test_grad_of_grad_to_third_order():
    d2 = s2sgrad.grad(s2sgrad.grad(scalar))
    d3 = s2sgrad.grad(d2)
    for x in (0.7, -1.3, 2.0):
        np.testing.assert_allclose(d2(x), scalar_d2(x), rtol=1e-12)
        np.testing.assert_allclose(d3(x), scalar_d3(x), rtol=1e-12)
    assert getattr(d3, "__s2sgrad_made__") == "s2sgrad.grad(s2sgrad.grad(s2sgrad.grad(scalar)))"


def test_grad_of_a_function_that_calls_grad():
    x = RNG.uniform(-1, 1, 3)
    got = s2sgrad.grad(weighted_gradient)(x)
    want = autograd.hessian(lambda z: anp.sum(anp.tanh(z) ** 2 * z + anp.exp(-z * z)))(x) @ W3
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_jacfwd_and_jacrev_match_autograd():
    x, w = RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3)
    want = [autograd.jacobian(vector_valued_ag, i)(x, w) for i in (0, 1)]
    for jac in (s2sgrad.jacfwd, s2sgrad.jacrev):
        got = jac(vector_valued, argnums=(0, 1))(x, w)
        assert got[0].shape == (4, 3) and got[1].shape == (4, 3)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(jac(vector_valued)(x, w), want[0], rtol=1e-10, atol=1e-12)


def test_nested_jacobians_give_the_hessian():
    x = RNG.uniform(-1, 1, 3)
    want = autograd.hessian(lambda z: anp.sum(anp.tanh(z) ** 2 * z + anp.exp(-z * z)))(x)
    np.testing.assert_allclose(s2sgrad.jacfwd(chain_grad)(x), want, rtol=1e-10)
    np.testing.assert_allclose(s2sgrad.jacrev(chain_grad)(x), want, rtol=1e-10)
    np.testing.assert_allclose(s2sgrad.hessian(chain)(x), want, rtol=1e-10)


def test_the_hessian_is_forward_over_reverse():
    text = s2sgrad.source(s2sgrad.hessian(chain))
    assert "forward mode (the functions after 'Second order') over its reverse-mode code" in text
    assert "def chain_grad_jvp(" in text


def test_a_function_s2sgrad_cannot_transform_again_is_refused_at_the_call():
    with pytest.raises(s2sgrad.TransformError, match="cannot transform again yet"):
        s2sgrad.grad(s2sgrad.value_and_grad(scalar))

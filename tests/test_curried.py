"""Transformations called where they are made, inside a differentiated function
(``s2sgrad.grad(f)(x)``, JAX's usual spelling): s2sgrad reads the generated code the inner
transformation made, checked against autograd at second and third order."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad

RNG = np.random.default_rng(77)
W = RNG.uniform(-1.0, 1.0, 3)


def chain(x):
    return np.sum(np.tanh(x) ** 2 * x + np.exp(-x * x))


def chain_ag(x):
    return anp.sum(anp.tanh(x) ** 2 * x + anp.exp(-x * x))


def pair(x, y):
    return np.sum(np.sin(x) * y ** 2)


def directional(x):
    return np.sum(s2sgrad.grad(chain)(x) * W)


def valued(x):
    value, gradient = s2sgrad.value_and_grad(chain)(x)
    return value + np.sum(gradient * W)


def second_argument(x):
    return np.sum(s2sgrad.grad(pair, argnums=1)(W, x) * W)


def hessian_trace(x):
    return np.trace(s2sgrad.hessian(chain)(x))


def scalar(t):
    return s2sgrad.grad(s2sgrad_grad_of_sin_cube)(t)


def s2sgrad_grad_of_sin_cube(t):
    return np.sin(t) * t ** 3


def test_grad_and_hessian_of_a_function_that_calls_a_transformation_it_makes():
    x = RNG.uniform(-1.0, 1.0, 3)
    h = autograd.hessian(chain_ag)(x)
    np.testing.assert_allclose(s2sgrad.grad(directional)(x), h @ W, rtol=1e-10)
    np.testing.assert_allclose(s2sgrad.grad(valued)(x), autograd.grad(chain_ag)(x) + h @ W,
                               rtol=1e-10)
    third = autograd.jacobian(lambda z: autograd.hessian(chain_ag)(z) @ W)(x)
    np.testing.assert_allclose(s2sgrad.hessian(directional)(x), third, rtol=1e-8, atol=1e-12)
    # d/dx of sum(d pair / dy (W, x) * W) = d/dx sum(2 sin(W) x W) = 2 sin(W) W
    np.testing.assert_allclose(s2sgrad.grad(second_argument)(x), 2 * np.sin(W) * W, rtol=1e-12)
    trace = autograd.grad(lambda z: anp.trace(autograd.hessian(chain_ag)(z)))(x)
    np.testing.assert_allclose(s2sgrad.grad(hessian_trace)(x), trace, rtol=1e-8)


def test_third_derivative_of_a_scalar_through_a_curried_grad():
    t = 0.7
    d3 = (-np.cos(t) * t ** 3 - 9 * np.sin(t) * t ** 2 + 18 * np.cos(t) * t + 6 * np.sin(t))
    np.testing.assert_allclose(s2sgrad.grad(s2sgrad.grad(scalar))(t), d3, rtol=1e-10)


def test_the_generated_code_calls_the_inner_transformations_code():
    code = s2sgrad.source(s2sgrad.grad(directional))
    lines = [line.strip() for line in code.splitlines()]
    assert "# return np.sum(s2sgrad.grad(chain)(x) * W)" in lines  # as the user wrote it
    assert not any("s2sgrad.grad(" in line for line in lines if not line.startswith("#"))
    assert any("= chain_grad_fwd(x)" in line for line in lines)


def not_literal(x, k=0):
    return np.sum(s2sgrad.grad(pair, argnums=k)(x, x))


def test_a_curried_transformation_with_computed_options_is_refused_where_it_is_called():
    with pytest.raises(s2sgrad.TransformError, match=r"test_curried.py:\d+:\d+: .*s2sgrad.grad"):
        s2sgrad.grad(not_literal)(W)


def curvature_along_w(x):
    (product,) = s2sgrad.hvp(chain, (x,), (W,))
    return np.sum(product * x)


def test_grad_and_jvp_of_a_function_that_calls_hvp():
    # third derivatives of chain: d/dx sum((H(x) @ W) * x) = (dH/dx . W) x + H W
    x, t = RNG.uniform(-1.0, 1.0, 3), RNG.uniform(-1.0, 1.0, 3)
    want = autograd.grad(lambda z: anp.sum(autograd.hessian(chain_ag)(z) @ W * z))(x)
    np.testing.assert_allclose(s2sgrad.grad(curvature_along_w)(x), want, rtol=1e-10)
    _, tangent = s2sgrad.jvp(curvature_along_w, (x,), (t,))
    np.testing.assert_allclose(tangent, want @ t, rtol=1e-10)
    code = s2sgrad.source(s2sgrad.grad(curvature_along_w))
    assert "# (product,) = s2sgrad.hvp(chain, (x,), (W,))" in code

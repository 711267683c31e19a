"""Second order on every surface: @differentiable(order=2), ``s2sgrad emit`` of order=2 functions
(and an emitted file read by s2sgrad again), and the custom_gradient contract at second order
(CUSTOM_GRADIENT.md, "Higher order": the seed's three examples)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from test_cli import run

SECOND = '''\
import numpy as np

from s2sgrad import differentiable


@differentiable(order=2, wrt=("x", "w"))
def loss(x, w):
    return np.sum(np.tanh(x * w) ** 2) + np.sum(x ** 3)
'''


def loss_ag(x, w):
    return anp.sum(anp.tanh(x * w) ** 2) + anp.sum(x ** 3)


X, W = np.array([0.3, -0.5, 0.8]), np.array([1.2, 0.7, -0.4])


def _import(monkeypatch, directory: Path, name: str):
    monkeypatch.syspath_prepend(str(directory))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return importlib.import_module(name)


def test_the_decorator_attaches_hessian_and_hvp(tmp_path, monkeypatch):
    (tmp_path / "second.py").write_text(SECOND)
    module = _import(monkeypatch, tmp_path, "second")
    H = module.loss.hessian(X, W)
    for i in (0, 1):
        for j in (0, 1):
            want = autograd.jacobian(autograd.grad(loss_ag, i), j)(X, W)
            np.testing.assert_allclose(H[i][j], want, rtol=1e-10, atol=1e-12)
    t = (np.ones(3), np.array([0.5, -1.0, 2.0]))
    hv = module.loss.hvp(X, W, tangents=t)
    np.testing.assert_allclose(hv[0], H[0][0] @ t[0] + H[0][1] @ t[1], rtol=1e-10)
    np.testing.assert_allclose(hv[1], H[1][0] @ t[0] + H[1][1] @ t[1], rtol=1e-10)
    assert "def loss_grad_jvp(" in module.loss.source


def test_emit_writes_second_order_functions_that_s2sgrad_reads_again(tmp_path, monkeypatch):
    (tmp_path / "second.py").write_text(SECOND)
    result = run(["emit", "second.py", "-o", "gen"], tmp_path)
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "gen" / "second_grad.py").read_text()
    assert "def loss_grad_jvp(x, w, loss_bar=1.0, *, x_dot, w_dot):" in text
    assert "# Second order: forward mode over the gradients above." in text
    assert run(["emit", "second.py", "-o", "gen", "--check"], tmp_path).returncode == 0
    monkeypatch.syspath_prepend(str(tmp_path))
    gen = _import(monkeypatch, tmp_path / "gen", "second_grad")
    t = (np.ones(3), np.zeros(3))
    grads, hv = gen.loss_grad_jvp(X, W, x_dot=t[0], w_dot=t[1])
    np.testing.assert_allclose(grads[0], autograd.grad(loss_ag, 0)(X, W), rtol=1e-12)
    np.testing.assert_allclose(hv[0], autograd.hessian(loss_ag, 0)(X, W) @ t[0], rtol=1e-10)
    # the emitted gradient is plain code s2sgrad differentiates again
    weighted = s2sgrad.grad(lambda_free_weighted(gen.loss_grad))
    want = autograd.hessian(loss_ag, 0)(X, W) @ np.arange(3.0)
    np.testing.assert_allclose(weighted(X, W), want, rtol=1e-10)


def lambda_free_weighted(loss_grad):
    def weighted(x, w):
        gx, gw = loss_grad(x, w)
        return np.sum(gx * np.arange(3.0))
    return weighted


# ----- custom_gradient at second order (the seed's examples) --------------------------------

@s2sgrad.custom_gradient
def log1pexp(x):
    e = np.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))
    return np.log(1 + e), grad


@s2sgrad.custom_gradient
def cube(x):
    def grad(dy):
        return dy * 3 * x ** 2
    return x ** 3, grad


def cube_squared(x):
    return cube(x) ** 2


def fused_op(x):
    return x ** 3, 3 * x ** 2


def second_order_for_x(x, ddy):
    return ddy * (6 * x + 1000)


@s2sgrad.custom_gradient
def op_with_fused_backprop(x):
    y, x_grad = fused_op(x)

    def first_order_gradient(dy):
        @s2sgrad.custom_gradient
        def first_order_custom(unused_x):
            def second_order_and_transpose(ddy):
                return second_order_for_x(x, ddy)
            return x_grad, second_order_and_transpose
        return dy * first_order_custom(x)
    return y, first_order_gradient


def fused(x):
    return op_with_fused_backprop(x)


def test_a_plain_grad_fn_is_differentiated_through_its_captured_values():
    assert s2sgrad.grad(s2sgrad.grad(log1pexp))(0.0) == pytest.approx(0.25, rel=1e-12)
    assert s2sgrad.grad(s2sgrad.grad(cube_squared))(2.0) == pytest.approx(480.0, rel=1e-12)
    x = np.array([0.0, 1.0, -2.0])
    sig = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(s2sgrad.hessian(lambda_free(log1pexp))(x), np.diag(sig * (1 - sig)),
                               rtol=1e-12, atol=1e-15)


def lambda_free(op):
    def total(x):
        return np.sum(op(x))
    return total


def test_the_fused_pattern_uses_the_users_second_derivative():
    # d2/dx2 x**3 is 12 at 2; the user's rule says 6x + 1000 = 1012, and it governs
    assert s2sgrad.grad(fused)(2.0) == pytest.approx(12.0)
    assert s2sgrad.grad(s2sgrad.grad(fused))(2.0) == pytest.approx(1012.0, rel=1e-12)
    # hessian and hvp take reverse mode over the gradient: forward mode has no tangent for the
    # nested custom_gradient; jvp and jacfwd of the gradient take reverse mode over its
    # gradient (s2sgrad/transpose.py), where the user's rule governs too
    assert s2sgrad.hessian(fused)(2.0) == pytest.approx(1012.0, rel=1e-12)
    assert s2sgrad.hvp(fused, (2.0,), (0.5,))[0] == pytest.approx(506.0, rel=1e-12)
    assert s2sgrad.jvp(s2sgrad.grad(fused), (2.0,), (1.0,)) == pytest.approx((12.0, 1012.0), rel=1e-12)
    assert s2sgrad.jacfwd(s2sgrad.grad(fused))(2.0) == pytest.approx(1012.0, rel=1e-12)


def test_the_second_order_code_says_what_a_nested_custom_gradient_differentiates():
    text = s2sgrad.source(s2sgrad.grad(s2sgrad.grad(fused)))
    assert ("# custom_gradient defined in op_with_fused_backprop_bwd: its rule is the gradient "
            "with respect to unused_x only; x, x_grad, which it captured, get no gradient "
            "through it") in text
    assert "s2sgrad.stop_gradient(x_grad)" in text
    first = s2sgrad.source(s2sgrad.grad(fused))
    assert "@s2sgrad.custom_gradient\n    def first_order_custom(unused_x):" in first


def scaled_with_clipped_gradient(x):
    w = x * 2.0

    @s2sgrad.custom_gradient
    def clip_grad(v):
        def grad(dy):
            return np.clip(dy, -0.1, 0.1)
        return v * w, grad
    return np.sum(clip_grad(x))


def test_a_custom_gradient_defined_in_a_function_governs_its_explicit_arguments_only():
    # w is captured: no gradient through clip_grad (only v's rule, clipped to 0.1)
    x = np.array([0.5, -2.0])
    np.testing.assert_allclose(s2sgrad.grad(scaled_with_clipped_gradient)(x), [0.1, 0.1])
    text = s2sgrad.source(s2sgrad.grad(scaled_with_clipped_gradient))
    assert "# return np.sum(clip_grad_in_scaled_with_clipped_gradient(x, w=s2sgrad.stop_gradient(w)))" in text
    assert "w, which it captured, gets no gradient through it" in text


def softplus_scaled(x):
    return log1pexp(x) * np.sum(x)


def softplus_pair(x):
    return log1pexp(x), x


def test_jvp_and_jacfwd_of_a_function_that_calls_a_custom_gradient_function():
    # Forward mode cannot read a custom_gradient function (its rule is a vjp); its tangent is
    # reverse mode over the generated gradient, seeded with the tangent (s2sgrad/transpose.py),
    # so the user's grad_fn governs it: J = diag(sigmoid(x) * sum(x)) + log1pexp(x) 1^T.
    x, t = np.array([0.3, -0.7, 1.1]), np.array([1.0, 2.0, -1.0])
    jacobian = np.diag(np.sum(x) / (1 + np.exp(-x))) + np.outer(np.log1p(np.exp(x)), np.ones(3))
    value, tangent = s2sgrad.jvp(softplus_scaled, (x,), (t,))
    np.testing.assert_allclose(value, softplus_scaled(x), rtol=1e-14)
    np.testing.assert_allclose(tangent, jacobian @ t, rtol=1e-12)
    np.testing.assert_allclose(s2sgrad.jacfwd(softplus_scaled)(x), jacobian, rtol=1e-12)
    value, tangent = s2sgrad.jvp(log1pexp, (30.0,), (2.0,))  # the user's rule, as written
    np.testing.assert_allclose((value, tangent), (np.log1p(np.exp(30.0)), 2.0 * (1 - 1 / (1 + np.exp(30.0)))),
                               rtol=1e-14)
    with pytest.raises(s2sgrad.GradientError, match="takes one array output, not a tuple"):
        s2sgrad.jvp(softplus_pair, (x,), (t,))

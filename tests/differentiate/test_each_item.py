"""Adjoints of some items of a ``*args`` list (``Rule.each``): ``np.einsum(s, X, W)`` with only
``W`` differentiated computes ``W``'s adjoint alone (``s2s.einsum_vjp(..., 1)``), not every
operand's; the gradients and second derivatives against autograd."""

from __future__ import annotations

import ast

import autograd
import autograd.numpy as anp
import numpy as np

import s2sgrad
import einsum_inputs as inputs

RNG = np.random.default_rng(5)
X, W = RNG.normal(size=(6, 4)), 0.5 * RNG.normal(size=(4, 3))
A, B, C = RNG.normal(size=(2, 3)), RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2))


def _projected(X, W):
    return anp.sum(anp.tanh(anp.einsum("td,de->te", X, W)) ** 2)


def _chain(A, B, C):
    return anp.sum(anp.sin(anp.einsum("ij,jk,kl->il", A, B, C)))


def _helpers_called(text: str) -> list:
    return [node.func.attr for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "s2s"]


def test_one_operand_differentiated_gets_its_adjoint_alone():
    g = s2sgrad.grad(inputs.projected, argnums=1)
    called = _helpers_called(s2sgrad.source(g))
    assert "einsum_vjp" in called and "einsum_vjps" not in called
    np.testing.assert_allclose(g(X, W), autograd.grad(_projected, 1)(X, W), rtol=1e-10)


def test_two_of_three_operands_each_alone_and_all_three_together():
    some = s2sgrad.grad(inputs.chain, argnums=(0, 2))
    called = _helpers_called(s2sgrad.source(some))
    assert called.count("einsum_vjp") == 2 and "einsum_vjps" not in called
    for got, want in zip(some(A, B, C), autograd.grad(_chain, (0, 2))(A, B, C)):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    every = s2sgrad.grad(inputs.chain, argnums=(0, 1, 2))
    assert "einsum_vjps" in _helpers_called(s2sgrad.source(every))
    for got, want in zip(every(A, B, C), autograd.grad(_chain, (0, 1, 2))(A, B, C)):
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_second_order_reads_the_one_operand_adjoint_again():
    want = autograd.hessian(_projected, 1)(X, W)
    np.testing.assert_allclose(s2sgrad.hessian(inputs.projected, argnums=1)(X, W), want,
                               rtol=1e-8, atol=1e-10)
    jac = s2sgrad.jacfwd(s2sgrad.grad(inputs.projected, argnums=1), argnums=1)(X, W)
    np.testing.assert_allclose(jac, want, rtol=1e-8, atol=1e-10)
    t = RNG.normal(size=W.shape)
    (hv,) = s2sgrad.hvp(lambda w: inputs.projected(X, w), (W,), (t,))
    np.testing.assert_allclose(hv, np.tensordot(want, t, axes=2), rtol=1e-8, atol=1e-10)

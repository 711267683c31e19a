"""Weight gradients of matrix products in loops: per-iteration ``a @ W`` contributions are
collected and added in one product after the backward loop. Gradients against finite differences
and autograd, for the shapes and control flow that path must handle."""

import numpy as np
import pytest
from conftest import assert_gradients

import s2sgrad


def rnn(W, U, xs, h):
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ W + h @ U)
    return np.sum(h**2)


def batched_rows(W, xs):
    total = 0.0
    for t in range(xs.shape[0]):
        total = total + np.sum(np.sin(xs[t] @ W))  # xs[t] is a matrix: rows of a batch
    return total


def mixed_uses(W, xs):
    total = 0.0
    for t in range(xs.shape[0]):
        y = xs[t] @ W
        total = total + np.sum(y * y) + np.sum(W * W) * 0.1  # W also read elementwise
    return total


def in_branch(W, xs):
    total = 0.0
    for t in range(xs.shape[0]):
        if t % 2 == 0:
            total = total + np.sum(np.tanh(xs[t] @ W))
    return total


def nested(W, xs):
    total = 0.0
    for i in range(2):
        for t in range(xs.shape[0]):
            total = total + np.sum(np.cos(xs[t] @ W)) * (i + 1.0)
    return total


def growing(W, x):
    total = 0.0
    for k in range(1, 4):
        total = total + np.sum(np.tanh(x[:k] @ W))  # the left operand grows per iteration
    return total


def mixed_ranks(W, x):
    total = 0.0
    for k in range(1, 4):
        total = total + np.sum(np.tanh(x[k - 1] @ W)) + np.sum(np.sin(x[:k] @ W))
    return total


def used_after_loop(W, xs):
    total = 0.0
    for t in range(xs.shape[0]):
        total = total + np.sum(np.tanh(xs[t] @ W))
    return total + np.sum(W**2)


RNG = np.random.default_rng(5)


@pytest.mark.parametrize("fn, args", [
    (rnn, (RNG.normal(size=(3, 4)), RNG.normal(size=(4, 4)) * 0.5, RNG.normal(size=(5, 3)),
           np.zeros(4))),
    (rnn, (RNG.normal(size=(3, 4)), RNG.normal(size=(4, 4)) * 0.5, RNG.normal(size=(0, 3)),
           np.ones(4))),
    (batched_rows, (RNG.normal(size=(3, 2)), RNG.normal(size=(4, 5, 3)))),
    (mixed_uses, (RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3)))),
    (in_branch, (RNG.normal(size=(3, 2)), RNG.normal(size=(5, 3)))),
    (nested, (RNG.normal(size=(3, 2)), RNG.normal(size=(3, 3)))),
    (growing, (RNG.normal(size=(3, 2)), RNG.normal(size=(3, 3)))),
    (mixed_ranks, (RNG.normal(size=(3, 2)), RNG.normal(size=(3, 3)))),
    (used_after_loop, (RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3)))),
])
@pytest.mark.filterwarnings("ignore:Output seems independent of input")
def test_loop_matmul_weight_gradients(fn, args):
    assert_gradients(fn, *args, argnums=(0, 1) if fn is rnn else (0,))


def test_rnn_weight_gradients_are_one_product_after_the_loop():
    code = s2sgrad.source(s2sgrad.grad(rnn, argnums=(0, 1)))
    loop_body = code.split("in reversed(")[1].split("return")[0]
    assert "matmul_vjp_b(" not in loop_body
    assert code.count("s2s.matmul_vjp_b_sum(") == 2

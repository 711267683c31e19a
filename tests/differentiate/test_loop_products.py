"""Weight gradients of matrix products in loops: per-iteration ``a @ W`` contributions are
collected and added in one product after the backward loop. Gradients against finite differences
and autograd, for the shapes and control flow that path must handle."""

import re

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
    assert "+= s2s.matmul_vjp_b(" not in code
    # U: per-step h @ U contributions collected; W: the input projection hoisted out of the loop
    assert code.count("s2s.matmul_vjp_b_sum(") == 1
    assert code.count("s2s.rows_matmul(") == 1 and code.count("s2s.rows_matmul_vjp_b(") == 1


def rnn_dot(W, U, xs, h):
    for t in range(xs.shape[0]):
        h = np.tanh(np.dot(xs[t], W) + np.dot(h, U))
    return np.sum(h**2)


def rnn_method(W, U, xs, h):
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t].dot(W) + h.dot(U))
    return np.sum(h**2)


def rnn_w_left(W, U, xs, h):
    for t in range(xs.shape[0]):
        h = np.tanh(W @ xs[t] + U @ h)  # the weights on the left (column vectors)
    return np.sum(h**2)


def rnn_matmul_fn(W, U, xs, h):
    for x in xs:
        h = np.tanh(np.matmul(x, W) + np.matmul(U, h))
    return np.sum(h**2)


def left_batches(W, xs):
    total = 0.0
    for t in range(xs.shape[0]):
        total = total + np.sum(np.sin(W @ xs[t]))  # xs[t] a matrix: W times a block of columns
    return total


def scalar_factor(w, xs):
    total = 0.0
    for t in range(xs.shape[0]):
        total = total + np.sum(np.dot(w, xs[t]) ** 2)  # np.dot of a number: a product, not @
    return total


_W, _U, _XS = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 4)) * 0.5, RNG.normal(size=(5, 3))


@pytest.mark.parametrize("fn, args, sums", [
    (rnn_dot, (_W, _U, _XS, np.zeros(4)), 2),
    (rnn_method, (_W, _U, _XS, np.zeros(4)), 2),
    (rnn_w_left, (_W.T.copy(), _U, _XS, np.zeros(4)), 2),
    (rnn_matmul_fn, (_W, _U, _XS, np.zeros(4)), 2),
    (left_batches, (RNG.normal(size=(2, 3)), RNG.normal(size=(4, 3, 5))), 1),
    (scalar_factor, (0.7, RNG.normal(size=(4, 3))), 1),
])
@pytest.mark.filterwarnings("ignore:Output seems independent of input")
def test_every_spelling_of_a_loop_product_is_summed_once(fn, args, sums):
    """The per-step contributions to a loop-invariant factor are one product after the loop,
    whichever side the factor is on and however the product is spelled: the loop's products with
    the rows of xs hoisted before it (the rule's row_products), the others summed after the
    backward loop (its step_sums)."""
    argnums = (0, 1) if len(args) == 4 else (0,)
    # autograd cannot run ndarray.dot on its boxes: finite differences alone for that spelling
    assert_gradients(fn, *args, argnums=argnums, autograd_oracle=fn is not rnn_method)
    code = s2sgrad.source(s2sgrad.grad(fn, argnums=argnums))
    after = code.count("_vjp_a_sum(") + code.count("_vjp_b_sum(") + len(re.findall(r"s2s\.rows_\w+_vjp_b\(", code))
    assert "_bar += s2s." not in code and after == sums, code


def rows_broadcast(W, xs, B):
    P = xs @ W
    total = 0.0
    for t in range(P.shape[0]):
        total = total + np.sum(np.sin(P[t] + B))  # a row (d,) broadcast against B (k, d)
    return total


def test_a_row_of_an_array_made_before_the_loop_takes_its_shape_from_that_array():
    # no per-iteration record of the row's shape: the array's shape less its first axis
    code = s2sgrad.source(s2sgrad.grad(rnn, argnums=(0, 1)))
    assert "s2s.unbroadcast(total_bar, xs_matmul_W_shape[1:])" in code
    assert "loop1_tape.append((h, h_2, h_matmul_U.shape))" in code
    rng = np.random.default_rng(7)
    args = (rng.normal(size=(3, 4)), rng.normal(size=(5, 3)), rng.normal(size=(2, 4)))
    assert "P_shape[1:]" in s2sgrad.source(s2sgrad.grad(rows_broadcast, argnums=(0, 2)))
    assert_gradients(rows_broadcast, *args, argnums=(0, 2))


# ----- per-step products hoisted out of the loop (s2sgrad.lower.hoist) -------------------------


def projected(W, xs):
    n = xs.shape[0]
    total = 0.0
    for t in range(n):
        total = total + np.sum(np.tanh(xs[t] @ W)) * (t + 1.0)
    return total


def with_break(W, xs):
    total = 0.0
    for t in range(len(xs)):
        y = xs[t] @ W
        if np.sum(y) > 1.0:
            break
        total = total + np.sum(y * y)
    return total


def too_many_steps(W, xs):
    total = 0.0
    for t in range(10):
        total = total + np.sum(xs[t] @ W)
    return total


def changes_its_input(W, xs):
    total = 0.0
    for t in range(3):
        total = total + np.sum(np.sin(xs[t] @ W))
        xs = xs * 0.5
    return total


def two_products_of_one_row(W, V, xs):
    total = 0.0
    for t in range(xs.shape[0]):
        row = xs[t]
        total = total + np.sum(np.sin(row @ W) * np.cos(row @ V)) + np.sum(row * row)
    return total


def over_rows(W, xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(np.tanh(x @ W))
    return total


def over_rows_enumerated(W, xs):
    total = 0.0
    for i, x in enumerate(xs):
        total = total + np.sum(np.tanh(x @ W)) * (i + 1.0)
    return total


def over_a_list(W, xs):
    total = 0.0
    for x in [xs[0], xs[1]]:
        total = total + np.sum(np.tanh(x @ W))  # a list's items: not rows of one array
    return total


@pytest.mark.parametrize("fn, args, hoisted", [
    (projected, (RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3))), True),
    (over_rows, (RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3))), True),
    (over_rows, (RNG.normal(size=(3, 2)), RNG.normal(size=(4, 5, 3))), True),
    (over_rows_enumerated, (RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3))), True),
    (over_a_list, (RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3))), False),
    (projected, (RNG.normal(size=(3, 2)), RNG.normal(size=(0, 3))), True),
    # break becomes a flag the body is guarded by: the product is no longer a plain loop statement
    (with_break, (RNG.normal(size=(3, 2)), RNG.normal(size=(6, 3))), False),
    (changes_its_input, (RNG.normal(size=(3, 2)), RNG.normal(size=(3, 3))), False),
    (two_products_of_one_row, (RNG.normal(size=(3, 2)), RNG.normal(size=(3, 2)),
                               RNG.normal(size=(5, 3))), True),
])
@pytest.mark.filterwarnings("ignore:Output seems independent of input")
def test_hoisted_products(fn, args, hoisted):
    argnums = tuple(range(len(args) - 1))
    code = s2sgrad.source(s2sgrad.grad(fn, argnums=argnums))
    assert ("s2s.rows_matmul(" in code) == hoisted
    value, _ = s2sgrad.value_and_grad(fn, argnums=argnums)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    assert_gradients(fn, *args, argnums=argnums)


def test_hoisted_products_fail_like_the_loop():
    W, xs = RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3))
    with pytest.raises(IndexError):
        too_many_steps(W, xs)
    with pytest.raises(IndexError):
        s2sgrad.grad(too_many_steps)(W, xs)
    flat = RNG.normal(size=4)  # xs[t] is a number: matmul refuses it, in the loop and hoisted
    with pytest.raises(ValueError):
        projected(W, flat)
    with pytest.raises(ValueError):
        s2sgrad.grad(projected)(W, flat)


# ----- rows read at the loop counter: their adjoints stacked once after the backward loop ------


def rows_of_input(xs, w):
    total = 0.0
    for t in range(xs.shape[0]):
        total = total + np.sum(np.tanh(xs[t] * w)) * (t + 1.0)
    return total


def fewer_steps_than_rows(xs, w):
    total = 0.0
    for t in range(2):
        total = total + np.sum(np.sin(xs[t] * w))
    return total


def row_read_twice(xs, w):
    total = 0.0
    for t in range(xs.shape[0]):
        total = total + np.sum(xs[t] * w) + np.sum(np.cos(xs[t]))
    return total


def enumerate_rows(xs, w):
    total = 0.0
    for i, row in enumerate(xs):
        total = total + np.sum(np.tanh(row * w)) * (i + 1.0)
    return total


def row_in_branch(xs, w):
    total = 0.0
    for t in range(xs.shape[0]):
        if t % 2 == 0:
            total = total + np.sum(np.sin(xs[t] * w))
    return total


def outer_counter(xs, w):
    total = 0.0
    for t in range(xs.shape[0]):
        for k in range(2):
            total = total + np.sum(np.sin(xs[t] * w)) * (k + 1.0)
    return total


def summed_row(xs, w):
    total = 0.0
    for t in range(xs.shape[0]):
        total = total + np.sum(xs[t]) * w[0]
    return total


@pytest.mark.parametrize("fn, collected", [
    (rows_of_input, True), (fewer_steps_than_rows, True), (row_read_twice, True),
    (enumerate_rows, True), (row_in_branch, False), (outer_counter, False), (summed_row, True),
])
@pytest.mark.parametrize("xs", [RNG.normal(size=(4, 3)), RNG.normal(size=(4, 2, 3)),
                                RNG.normal(size=(0, 3))])
@pytest.mark.filterwarnings("ignore:Output seems independent of input")
def test_row_adjoints_collected(fn, collected, xs):
    if fn is fewer_steps_than_rows and xs.shape[0] < 2:
        return  # the loop itself fails there
    code = s2sgrad.source(s2sgrad.grad(fn, argnums=(0, 1)))
    assert ("s2s.stack_rows(" in code) == collected
    assert_gradients(fn, xs, RNG.normal(size=3), argnums=(0, 1))

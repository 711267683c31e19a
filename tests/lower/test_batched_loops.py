"""Loops whose steps are independent sums, written batched in code made for a call's shapes
(lower/batched_loops.py): values and gradients equal to the loop's as written (autograd's),
no loop left in the code made for the shapes, tails laid out with their padding, and loops of
other structures kept as written."""

import autograd
import numpy as np
import pytest
from conftest import _rebind

import s2sgrad


def pairs(P, m):  # a softened n-body potential: each body's tail after it, 1 long or more
    energy = 0.0
    for i in range(len(m) - 1):
        diff = P[i + 1:] - P[i]
        dist = np.sqrt(np.sum(diff * diff, axis=1) + 0.01)
        energy = energy - m[i] * np.sum(m[i + 1:] / dist)
    return energy


def rows_two_sums(X, w):  # a loss per row: two sums, one written ``e + acc``
    loss = 0.0
    reg = 0.0
    for t in range(X.shape[0]):
        z = np.sum(X[t] * w)
        loss = np.log(1.0 + np.exp(-z)) + loss
        reg = reg + np.sum(X[t] * X[t]) * 0.01
    return loss + reg


def rows_product_chain(w, b, X, y):  # a sum of two terms a step, a row product (hoisted first)
    total = 0.0
    for t in range(X.shape[0]):
        margin = y[t] * (X[t] @ w) + b
        total = total + np.log1p(np.exp(-margin)) - 0.1 * margin
    return total


def rows_zipped(w, X, y):  # for x_i, y_i in zip(X, y): the rows of two arrays, a product of one
    loss = 0.0
    for x_i, y_i in zip(X, y):
        z = x_i @ w
        loss = loss + np.logaddexp(0.0, z) - y_i * z
    return loss


def rows_enumerated(W, X):  # enumerate, np.dot of a row and a matrix, @ of a part of it
    acc = 0.0
    for t, x in enumerate(X):
        acc = acc + np.sum(np.tanh(np.dot(x, W))) + np.sum((x @ W[:, :1]) ** 2)
    return acc


def mean_squares(W, X, Y):  # +=, a mean over a step's own axis
    loss = 0.0
    for x, y in zip(X, Y):
        r = np.tanh(x @ W) - y
        loss += np.mean(r ** 2)
    return loss


def tails_two_on(x):  # a 1-D array, tails two on, .sum(); a loop of no steps where len(x) is 2
    n = len(x)
    acc = 0.5 * np.sum(x)
    for k in range(n - 2):
        d = np.sin(x[k + 2:] - x[k] * 0.5)
        acc = acc - d.sum() * 0.25
    return acc * acc


def made_once_no_step(x):  # a value made in the step from neither, where the loop may run no
    n = len(x)  # step (computed once, before, it would be computed where the loop computes nothing)
    acc = 0.5 * np.sum(x)
    for k in range(n - 2):
        c = np.cos(x[0])
        d = np.sin(x[k + 2:] - x[k] * c)
        acc = acc - d.sum() * 0.25
    return acc * acc


def held_once_per_step(x, w):  # a column made before the loop broadcast against each step's
    acc = 0.0  # tail: batched, it would be held once per step: kept
    for i in range(len(x) - 1):
        d = w[:, None] * np.tanh(x[i + 1:] - x[i])
        acc = acc + np.sum(np.sum(d, axis=-1) * w)
    return acc


def vector_sum(P):  # a sum of vectors (the tail's axis summed), started from a parameter's row
    acc = P[0] * 0.5
    for i in range(P.shape[0] - 1):
        acc = acc + np.sum(np.cos(P[i + 1:]) * P[i], axis=0)
    return np.sum(acc * acc)


def matrix_times_row(W, X):  # W @ x: the row on the right (each step's product stacked first: hoist)
    acc = 0.0
    for x in X:
        acc = acc + np.sum(np.sin(W @ x))
    return acc


def zipped_unequal(X, y):  # zip of 6 rows and 5: the loop's count is not one length: kept
    acc = 0.0
    for x, v in zip(X, y[:-1]):
        acc = acc + np.sum(x * v)
    return acc


def two_tail_lengths(x, y):  # tails of two lengths, each summed by its own mask
    acc = 0.0
    for i in range(len(x) - 1):
        acc = acc + np.sum(np.sin(x[i + 1:] - x[i])) * np.sum(np.cos(y[i + 1:]) * y[i])
    return acc


def mean_over_tail(x):  # a mean over a tail (each step's count its own): kept
    acc = 0.0
    for i in range(len(x) - 1):
        acc = acc + np.mean(np.sin(x[i + 1:] - x[i]))
    return acc


def maybe_empty_tail(x):  # the last step's tail is empty: the loop stays
    acc = 0.0
    for i in range(len(x)):
        acc = acc + np.sum(np.sin(x[i + 1:] - x[i]))
    return acc


def counter_read_after(x):  # the counter read after the loop: the loop stays
    acc = 0.0
    for i in range(len(x) - 1):
        acc = acc + np.sum(x[i + 1:] * x[i])
    return acc * i


def sum_read_in_step(x):  # the sum read by another statement of the step: the loop stays
    acc = 0.0
    for i in range(len(x)):
        acc = acc + np.sum(np.tanh(x[i] * acc))
    return acc


def alternating(x):  # ``acc = e - acc``: no sum, the loop stays
    acc = 0.0
    for i in range(len(x)):
        acc = np.sin(x[i]) - acc
    return acc


def step_value_after(x):  # a value of the last step read after the loop: the loop stays
    acc = 0.0
    for i in range(len(x) - 1):
        d = np.sin(x[i + 1:] - x[i])
        acc = acc + np.sum(d)
    return acc + np.sum(d)


BATCHED = [(pairs, ((6, 3), (6,))), (rows_two_sums, ((7, 4), (4,))), (tails_two_on, ((7,),)),
           (rows_product_chain, ((3,), (), (8, 3), (8,))), (rows_zipped, ((3,), (7, 3), (7,))),
           (rows_enumerated, ((3, 2), (5, 3))), (matrix_times_row, ((2, 3), (5, 3))),
           (two_tail_lengths, ((5,), (7,))), (mean_squares, ((3, 2), (6, 3), (6, 2))),
           (vector_sum, ((5, 3),))]
KEPT = [(held_once_per_step, ((6,), (3,))), (made_once_no_step, ((7,),)), (mean_over_tail, ((6,),)),
        (zipped_unequal, ((6, 2), (6,))), (maybe_empty_tail, ((6,),)), (counter_read_after, ((6,),)),
        (sum_read_in_step, ((5,),)), (alternating, ((5,),)), (step_value_after, ((6,),))]
ALL = BATCHED + KEPT


def _args(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(float(rng.uniform(-1.0, 1.0)) if s == () else
                 rng.uniform(-1.0, 1.0, size=s) + (2.0 * np.arange(s[0])[:, None] if len(s) == 2 else 0.0)
                 for s in shapes)


def _code(text):
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("fn, shapes", ALL, ids=[c[0].__name__ for c in ALL])
def test_values_and_gradients_equal_the_loops(fn, shapes):
    args = _args(shapes)
    argnums = tuple(range(len(args)))
    value_and_grad = s2sgrad.value_and_grad(fn, argnums=argnums)
    expected = autograd.grad(_rebind(fn), argnums)(*args)
    for _ in range(3):  # the code for any shape, then the code made for these shapes, twice
        value, grads = value_and_grad(*args)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, shapes", ALL, ids=[c[0].__name__ for c in ALL])
def test_the_loop_is_batched_where_the_shapes_are_known(fn, shapes):
    args = _args(shapes)
    value_and_grad = s2sgrad.value_and_grad(fn, argnums=tuple(range(len(args))))
    value_and_grad(*args)
    generic = _code(s2sgrad.source(value_and_grad))
    made = _code(s2sgrad.source(value_and_grad, like=args))
    assert "for " in generic
    batched = (fn, shapes) in BATCHED
    assert ("for " not in made) == batched
    tails = fn in (pairs, tails_two_on, vector_sum, two_tail_lengths)
    assert ("s2s.tails(" in made and "np.tri(" in made) == (batched and tails)


def test_the_batched_code_reads_the_steps_at_once():
    args = _args(((6, 3), (6,)))
    value_and_grad = s2sgrad.value_and_grad(pairs, argnums=(0, 1))
    value_and_grad(*args)
    made = _code(s2sgrad.source(value_and_grad, like=args))
    assert "padded = np.tri(len(m) - 1, len(P) - 1, k=-1, dtype=bool)" in made
    assert "s2s.tails(P, 1, padded)" in made and "P[: len(m) - 1]" in made  # tails, rows
    assert "P_i[:, None]" in made  # the rows read with an axis inserted: the step's rank is 2
    # the step's axis 1, one further on (a sum over axes: the runtime's, lower/axis_sums.py)
    assert "s2s.axis_sum(diff_times_diff, axis=2)" in made
    assert "np.where(padded, 0, " in made  # the sum over the tails' axis: each step's entries
    assert "s2s.axis_sum(product, axis=0)" in made  # the steps' sum
    assert "s2s.tails_vjp(" in made and "tape" not in made


def test_coincident_padding_gives_no_nan():
    # the padded entries hold the last row: were they the step's own row, d would be 0 there,
    # 1 / r infinite and its adjoint (0 times it) nan
    P = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0], [1.0, 1.0, 1.0]])
    m = np.array([1.0, 2.0, 0.5, 1.5, 1.0])
    expected = autograd.grad(_rebind(pairs), (0, 1))(P, m)
    value_and_grad = s2sgrad.value_and_grad(pairs, argnums=(0, 1))
    with np.errstate(all="raise"):  # nothing divides by zero, even where masked
        for _ in range(3):
            value, grads = value_and_grad(P, m)
            for g, e in zip(grads, expected):
                np.testing.assert_allclose(g, e, rtol=1e-12)


def test_other_types_and_a_longer_first_array():
    # float32 rows: the sums keep their type; rows of an array longer than the loop runs
    X = np.linspace(-1.0, 1.0, 28, dtype=np.float32).reshape(7, 4)
    w = np.array([0.5, -0.25, 0.75, 0.1], dtype=np.float32)
    value_and_grad = s2sgrad.value_and_grad(rows_two_sums, argnums=(0, 1))
    for _ in range(3):
        value, (gX, gw) = value_and_grad(X, w)
        np.testing.assert_allclose(value, rows_two_sums(X, w), rtol=1e-5)
        assert gX.dtype == np.float32 and gw.dtype == np.float32

    def first_rows(x, w):
        acc = 0.0
        for t in range(len(w)):
            acc = acc + np.sum(np.tanh(x[t]) * w[t])
        return acc

    x, w = _args(((6, 2), (4,)))
    value_and_grad = s2sgrad.value_and_grad(first_rows, argnums=(0, 1))
    expected = autograd.grad(first_rows, (0, 1))(x, w)
    for _ in range(3):
        value, grads = value_and_grad(x, w)
        np.testing.assert_allclose(value, first_rows(x, w), rtol=1e-12)
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
    assert "x[: len(w)]" in _code(s2sgrad.source(value_and_grad, like=(x, w)))


def test_a_loop_of_no_steps():
    # x of 2: range(len(x) - 2) runs no step, in the code made for x of 7 (one signature)
    value_and_grad = s2sgrad.value_and_grad(tails_two_on)
    x7, x2 = _args(((7,),))[0], np.array([0.3, -0.6])
    for _ in range(2):
        value_and_grad(x7)
    assert "for " not in _code(s2sgrad.source(value_and_grad, like=(x2,)))
    for _ in range(2):
        value, g = value_and_grad(x2)
        np.testing.assert_allclose(value, tails_two_on(x2), rtol=1e-12)
        np.testing.assert_allclose(g, autograd.grad(tails_two_on)(x2), rtol=1e-12)

"""Loops over sequences in every spelling: zip (two or three sequences, slices of one array,
lists), enumerate (with a start), reversed, tuple element targets, checked in both modes and at
second order (third through a loop whose gradient collects per-step products). A plain ``zip`` loop once gave an all-zero gradient: zip and enumerate were listed as
functions without a derivative, so the loop was taken for one over constants."""

import numpy as np
import pytest
from conftest import assert_gradients

import s2sgrad


def zip_two(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s = s + a * b
    return s


def zip_three(xs, ys, zs):
    s = 0.0
    for a, b, c in zip(xs, ys, zs):
        s = s + np.sin(a) * b * c
    return s


def zip_shifted(pts):
    s = 0.0
    for a, b in zip(pts[:-1], pts[1:]):
        s = s + np.sum((a - b) ** 2)
    return s


def zip_lists(xs, ys):
    lx = [xs[0], xs[1] * 2.0]
    s = 0.0
    for a, b in zip(lx, [ys[0], ys[2]]):
        s = s + a * np.cos(b)
    return s


def zip_with_range(xs, ys):
    s = 0.0
    for i, y in zip(range(3), ys):
        s = s + (i + 1.0) * y * xs[i]
    return s


def enumerate_start(xs):
    s = 0.0
    for i, a in enumerate(xs, 1):
        s = s + i * np.tanh(a)
    return s


def enumerate_zip(xs, ys):
    s = 0.0
    for i, (a, b) in enumerate(zip(xs, ys)):
        s = s + i * a * b
    return s


def tuple_rows(pairs):
    s = 0.0
    for a, b in pairs:
        s = s + a * np.exp(-b * b)
    return s


def enumerate_tuple_rows(pairs):
    s = 0.0
    for i, (a, b) in enumerate(pairs, start=2):
        s = s + i * a * b
    return s


def zip_carried(xs, h):
    for x, w in zip(xs, xs * 0.5):
        h = np.tanh(h * w + x)
    return np.sum(h)


def reversed_carried(xs, h):
    for x in reversed(xs):
        h = np.tanh(h * x + 0.5)
    return np.sum(h)


def enumerate_reversed(xs):
    s = 0.0
    for i, a in enumerate(reversed(xs), 1):  # i counts up while a walks back
        s = s + i * np.tanh(a) * a
    return s


RNG = np.random.default_rng(3)
V3 = [RNG.normal(size=3) for _ in range(3)]
CASES = [
    (zip_two, (V3[0], V3[1])),
    (zip_three, tuple(V3)),
    (zip_shifted, (RNG.normal(size=(4, 2)),)),
    (zip_lists, (V3[0], V3[1])),
    (zip_with_range, (V3[0], V3[1])),
    (enumerate_start, (V3[0],)),
    (enumerate_zip, (V3[0], V3[1])),
    (tuple_rows, (RNG.normal(size=(3, 2)),)),
    (enumerate_tuple_rows, (RNG.normal(size=(3, 2)),)),
    (zip_carried, (RNG.normal(size=(3, 2)), RNG.normal(size=2))),
    (reversed_carried, (RNG.normal(size=(3, 2)), RNG.normal(size=2))),
    (enumerate_reversed, (RNG.normal(size=4),)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=[c[0].__name__ for c in CASES])
def test_reverse_mode(fn, args):
    got = assert_gradients(fn, *args)
    assert any(np.any(g != 0) for g in got)


FORWARD = [c for c in CASES if c[0] is not zip_lists]  # forward mode refuses list displays


@pytest.mark.parametrize("fn, args", FORWARD, ids=[c[0].__name__ for c in FORWARD])
def test_forward_mode_and_second_order(fn, args):
    s2sgrad.check_grads(fn, args, order=2, modes=("rev", "fwd"))


def test_zip_of_unequal_lengths_stops_at_the_shortest():
    xs, ys = np.arange(1.0, 5.0), np.arange(1.0, 3.0)
    gx, gy = s2sgrad.grad(zip_two, argnums=(0, 1))(xs, ys)
    np.testing.assert_allclose(gx, [1.0, 2.0, 0.0, 0.0])
    np.testing.assert_allclose(gy, [1.0, 2.0])


def list_made_in_a_loop_that_breaks(x):
    for row in x:
        parts = []  # bound only once the loop runs: the tape records None for the first entry
        for a in row:
            parts.append(np.sin(a) * row)
        if np.sum(row) > 5.0:
            break
    return np.sum(np.stack(parts))  # read after the loop: the last iteration's list


def test_a_list_first_made_inside_a_loop_with_break():
    # Regression (property seed 46): the zero adjoint of the list on the loop's first entry
    # was asked of None
    x = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    assert_gradients(list_made_in_a_loop_that_breaks, x)


def test_enumerate_reversed_counts_up_while_the_items_walk_back():
    xs = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(enumerate_reversed(xs), sum(
        i * np.tanh(a) * a for i, a in zip((1, 2, 3), (3.0, 2.0, 1.0))))
    d = lambda a: np.tanh(a) + a * (1.0 - np.tanh(a) ** 2)  # noqa: E731
    np.testing.assert_allclose(s2sgrad.grad(enumerate_reversed)(xs), [3 * d(1.0), 2 * d(2.0), d(3.0)])


def rnn_over_rows(W, xs):
    h = np.zeros(3)
    for x in xs:  # the gradient collects W's per-step products (a helper that empties its lists)
        h = np.tanh(W @ h + x)
    return np.sum(h ** 2)


def rnn_over_rows_ag(W, xs):
    import autograd.numpy as anp

    h = anp.zeros(3)
    for x in xs:
        h = anp.tanh(anp.dot(W, h) + x)
    return anp.sum(h ** 2)


def test_third_order_through_a_gradient_that_walks_its_tape_backwards():
    # Regression: forward mode of the gradient read `enumerate(reversed(tape))` and passed
    # `list(...)` copies to the per-step product sum; neither could be read again
    import autograd

    W, xs = RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(4, 3))
    want = autograd.jacobian(autograd.hessian(rnn_over_rows_ag))(W, xs)
    got = s2sgrad.jacrev(s2sgrad.jacfwd(s2sgrad.grad(rnn_over_rows)))(W, xs)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)

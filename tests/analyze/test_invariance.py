"""Stabilizing maxima (s2sgrad.analyze.invariance): a max that the output provably does not depend
on gets no adjoint; everything else keeps the max's derivative. Gradients against finite
differences and autograd either way."""

import numpy as np
import pytest
from conftest import assert_gradients

import s2sgrad


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def softmax_xent(logits, y):
    m = np.max(logits, axis=1, keepdims=True)
    z = logits - m
    lse = np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(y * (z - lse))


def softmax_weighted(x, w):
    m = x.max()
    e = np.exp(x - m)
    p = e / np.sum(e)
    return np.sum(p * w)


def not_cancelled(x):
    m = np.max(x)
    return 2.0 * m + np.log(np.sum(np.exp(x - m)))


def max_without_keepdims(x):
    m = np.max(x, axis=1)
    return np.sum(m) + np.sum(np.log(np.sum(np.exp(x - m[:, None]), axis=1)))


def other_axis(x):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    return np.sum(np.log(np.sum(e, axis=0, keepdims=True)))


def broadcast_to_higher_rank(x, y):
    m = np.max(y, axis=1, keepdims=True)
    e = np.exp(x - m)  # x is 3-D: axis 1 of e is not the axis m was reduced over
    return np.sum(np.log(np.sum(e, axis=1, keepdims=True)) + m)


def condition_on_the_max(x):
    m = np.max(x)
    s = np.log(np.sum(np.exp(x - m))) + m
    if m > 0.5:  # a condition is piecewise constant: no derivative flows through it
        s = s * 2.0
    return s


def read_in_branch(x, flag):
    m = np.max(x)
    s = np.log(np.sum(np.exp(x - m)))
    if flag > 0.0:
        s = s + m
    return s


def mean_is_not_a_sum(x):
    m = np.max(x)
    return m + np.log(np.mean(np.exp(x - m)))


RNG = np.random.default_rng(3)
X2 = RNG.normal(size=(4, 5))
Y2 = np.eye(5)[[0, 3, 1, 4]]


@pytest.mark.parametrize("fn, args, cut", [
    (logsumexp, (RNG.normal(size=7),), True),
    (softmax_xent, (X2, Y2), True),
    (softmax_weighted, (RNG.normal(size=6), RNG.normal(size=6)), True),
    (mean_is_not_a_sum, (RNG.normal(size=6),), True),
    (not_cancelled, (RNG.normal(size=6),), False),
    (max_without_keepdims, (X2,), False),
    (other_axis, (X2,), False),
    (broadcast_to_higher_rank, (RNG.normal(size=(2, 4, 5)), X2), False),
    (condition_on_the_max, (RNG.normal(size=6) + 1.0,), True),
    (condition_on_the_max, (RNG.normal(size=6) - 2.0,), True),
    (read_in_branch, (RNG.normal(size=6), 1.0), False),
    (read_in_branch, (RNG.normal(size=6), -1.0), False),
])
def test_stabilizing_max(fn, args, cut):
    argnums = tuple(i for i, a in enumerate(args) if np.ndim(a))
    code = s2sgrad.source(s2sgrad.grad(fn, argnums=argnums))
    assert ("extremum_vjp" not in code) == cut
    assert_gradients(fn, *args)

"""Functions reading module globals the tests rebind between calls (tests/read/test_live_globals.py):
generated code must read them when it runs, as Python does."""

import numpy as np

import live_globals_data as data
import s2sgrad

X = np.ones((4, 3))
Y = np.ones(4)
LAM = 0.5


def batch_loss(w):
    return np.sum((X @ w - Y) ** 2) + LAM * np.sum(w ** 2)


def method_loss(w):
    return np.sum(X.dot(w) ** 2) + X.sum() * np.sum(w)


def float_loss(t):
    return np.sum(np.sin(X * t))


def helper_a(w):
    return np.sum(np.sin(w) * w)


def helper_b(w):
    return np.sum(np.exp(w) * Y[:3])


helper = helper_a


def calls_helper(w):
    return helper(w) * 2.0 + np.sum(w)


def reads_x(w):
    return np.sum(np.cos(X @ w))


def helper_reads_global(w):
    return reads_x(w) + np.sum(w ** 3)


def other_module(w):
    return data.weighted(w) + np.sum(w)


@s2sgrad.differentiable(order=2)
def decorated(w):
    return np.sum(np.sin(X @ w) ** 2) + LAM * np.sum(w ** 4)


def make_closure(values):
    scale = values

    def loss(w):
        return np.sum(scale * w ** 2)

    def rebind(new):
        nonlocal scale
        scale = new

    return loss, rebind


def helper_refused(w):
    total = 0.0
    try:
        total = np.sum(w)
    finally:
        pass
    return total

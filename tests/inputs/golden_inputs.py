"""Inputs of the golden tests: each function's generated gradient is compared byte for byte."""

import math

import numpy as np

import s2sgrad

SCALE = 0.5


def mlp_loss(w1, b1, w2, x, labels):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(logp * labels, axis=1))


def smooth(v):
    return np.log1p(np.exp(-np.abs(v))) + np.maximum(v, 0.0)


def uses_helper(x, y):
    a, b = smooth(x), smooth(y * SCALE)
    return np.sum(a * b) + math.pi


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


@s2sgrad.custom_gradient
def log1pexp(x):
    e = np.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))

    return np.log(1 + e), grad


def rnn_loss(wh, wx, xs):
    h = np.zeros(wh.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(wh @ h + wx @ xs[t])
        if t == 0:
            continue
        h = h + 0.1 * log1pexp(h)
    return np.sum(h**2)


def damped(v):
    for _ in range(2):  # a loop: a function of its own in the generated code, not inlined
        v = np.tanh(v) * 0.5
    return v


def uses_looped_helper(x, y):
    return np.sum(damped(x) * y)

"""A subscript written in parentheses (``-(x[1, 2])``, a lambda's ``-(z[1, 2])`` inlined) keeps
its index: the parentheses are not part of the brackets the backward sweep writes the adjoint
into (a random program's ``x_barx[1, 2])`` was a syntax error of the generated code)."""

import autograd
import autograd.numpy as anp
import numpy as np

import s2sgrad


def parenthesized(x, s):
    t1 = np.sum(s) ** 2.0
    if np.mean(abs(s)) <= 0.0:
        with np.errstate(over="ignore", invalid="ignore"):
            fn = lambda z: np.divide(1.0, 1 + np.exp(-(z[1, 2])))  # noqa: E731
            t2 = fn(x)
            t1 *= np.tanh(np.maximum(0.3, (x[1, 2])))
    else:
        t2 = 0.0
    return np.sum(x * 2.0) + np.sum(t2) + t1 + np.sum(np.exp(-(x[0, 1])))


def parenthesized_ag(x, s):
    t2 = 1.0 / (1.0 + anp.exp(-x[1, 2]))
    t1 = s ** 2.0 * anp.tanh(anp.maximum(0.3, x[1, 2]))
    return anp.sum(x * 2.0) + t2 + t1 + anp.exp(-x[0, 1])


def test_gradients_through_parenthesized_subscripts():
    x = np.arange(12.0).reshape(3, 4) / 10.0
    want = autograd.grad(parenthesized_ag)(x, 0.0)  # s = 0: the branch with the lambda
    g = s2sgrad.grad(parenthesized)
    for _ in range(2):  # code for any shape, then for the shapes
        np.testing.assert_allclose(g(x, 0.0), want, rtol=1e-12)

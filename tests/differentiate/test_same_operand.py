"""An elementwise primitive whose two operands are one name (``a * a``, ``a + a``): its two equal
contributions are added once, doubled (differentiate/contributions.py), with the gradient of the
two added apart."""

import re

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad


def squares(x, w):
    a = x[:-1] * w
    b = x[1:] + x[1:]
    return np.sum(a * a) + np.sum(np.tanh(b) * b) + np.sum(np.maximum(a, a)) + np.sum(a / a * x[1:])


def _twin(fn):
    namespace = dict(fn.__globals__, np=anp)
    return type(fn)(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def _code(text):
    return [line.strip() for line in text.splitlines() if not line.lstrip().startswith("#")]


@pytest.mark.parametrize("shape_w", [(5,), ()])
def test_equal_contributions_are_added_once_doubled(shape_w):
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=6), rng.normal(size=shape_w)
    grad = s2sgrad.grad(squares, argnums=(0, 1))
    expected = autograd.grad(_twin(squares), (0, 1))(x, w)
    for _ in range(3):  # any shape, then the code made for these shapes
        for g, e in zip(grad(x, w), expected):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14)
    for text in (s2sgrad.source(grad), s2sgrad.source(grad, like=(x, w))):
        lines = _code(text)
        # a * a: one contribution, g * a doubled, not g * a added twice
        products = [line for line in lines if line.startswith("a_bar") and line.endswith("* a")]
        assert len(products) == 1 and re.search(r"\* 2(\.0)? \* a", products[0]), text

"""An adjoint that is one number standing for an array (the operand of a full sum) with a read's
adjoint added into one of its positions (``s2s.getitem_add(number, h, x, index)``: the sum is
an array of ``x``'s shape): differentiated again, the number's adjoint is the upstream summed back
to its shape. It was the upstream itself, an array where a number belongs: reverse mode over the
gradient (jvp where forward mode cannot read the function, a Hessian-vector product's third way)
gave a wrong tangent in silence (property seed 451 of the tree-loop runs)."""

import numpy as np
import pytest

import s2sgrad
from s2sgrad import jacobians
from s2sgrad.transpose import jvp_by_reverse

GB = np.linspace(-1.0, 1.0, 12).reshape(3, 4)


GS = 0.5


def summed_and_indexed(x, v):
    y = v * 1.0
    for _ in range(4):  # a loop before: the sums' number is an array of its own (owned_array)
        unused = x[-1]
    return np.sum(-y[-1] + np.zeros(3)) + np.sum(y) + GS * np.sum(GB * np.sin(x))


def squared_and_indexed(x, v):
    return np.sum(v ** 2) + np.sin(v[1]) * np.sum(x) + np.sum(np.cos(x) * v[-1])


RNG = np.random.default_rng(5)
X, V = RNG.normal(size=(3, 4)), RNG.normal(size=4)
DX, DV = RNG.normal(size=(3, 4)), RNG.normal(size=4)


def _differences_of_gradients(fn, eps=1e-6):
    g = s2sgrad.grad(fn, argnums=(0, 1))
    plus, minus = g(X + eps * DX, V + eps * DV), g(X - eps * DX, V - eps * DV)
    return [(a - b) / (2 * eps) for a, b in zip(plus, minus)]


@pytest.mark.parametrize("fn", [summed_and_indexed, squared_and_indexed])
def test_the_tangent_by_reverse_mode_over_the_gradient(fn):
    text, made, names = jvp_by_reverse(fn, ("x", "v"), (), 2)
    value, tangent = made(X, V, **dict(zip(names, (DX, DV))))
    g = s2sgrad.grad(fn, argnums=(0, 1))(X, V)
    np.testing.assert_allclose(tangent, np.sum(g[0] * DX) + np.sum(g[1] * DV), rtol=1e-10)
    np.testing.assert_allclose(value, fn(X, V), rtol=1e-12)


@pytest.mark.parametrize("fn", [summed_and_indexed, squared_and_indexed])
@pytest.mark.parametrize("way", range(len(jacobians._HVP_WAYS)))
def test_every_hvp_way(fn, way):
    made = jacobians._HVP_WAYS[way](fn, ("x", "v"), False, ())
    if made is None:
        pytest.skip("this way is not written for this function")
    got = made[1](X, V, tangents=(DX, DV))
    for a, b in zip(got, _differences_of_gradients(fn)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)

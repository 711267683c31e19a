"""Index writes that work in place written as plain numpy (``u[1:-1] = v``, ``u_bar[:-2] += h``)
in code made for a call's shapes, where every name of the write's group certainly holds a numpy
array (differentiate/writes_in_place.py, ``Plain``): the gradients of central differences in
every call (the code for any shape first, which keeps the helpers), and the helpers kept where
a name may hold something else."""

import numpy as np
import pytest

import s2sgrad
from s2sgrad.checks import numerical_grad


def stencil(u0, r):
    u = u0.copy()
    for _ in range(4):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def rows(x):
    out = np.empty_like(x)
    acc = np.ones(x.shape[1])
    for t in range(x.shape[0]):
        acc = np.tanh(acc * x[t])  # (a running product alone would be one np.cumprod: lower/scans.py)
        out[t] = acc
    return np.sum(out * out)


def corners(m):
    a = m * 1.0
    for k in range(2):
        a[0, ::2] = a[-1, ::2] * 0.5 + a[0, ::2]
        a[k, -1] = np.sin(a[k, 0])
    return np.sum(np.tanh(a))


def summed_whole(x):
    """The adjoint of ``u`` is one number standing for an array (a full sum's operand)."""
    u = x.copy()
    for _ in range(3):
        u[1:] = u[1:] * 0.5 + u[:-1]
    return np.sum(u)


def laplacian(u0, r):
    u = u0.copy()
    lap = np.zeros_like(u)
    for _ in range(3):
        lap[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u = u + r * lap
    return np.sum(u * u)


CASES = [
    (stencil, lambda rng: (rng.normal(size=9), 0.2), ("u[1:-1] = ", "_bar[:-2] +=")),
    (rows, lambda rng: (rng.uniform(0.5, 1.5, size=(5, 3)),), ("out[t] = acc", "_bar[t].copy()")),
    (corners, lambda rng: (rng.normal(size=(3, 5)),), ("a[0, ::2] = total", "[k, -1] = np.sin(a_2_k_0)", "a_2_bar[k, 0] +=")),
    (summed_whole, lambda rng: (rng.normal(size=6),), ()),
    (laplacian, lambda rng: (rng.normal(size=8), 0.1), ("lap[1:-1] = ", "_bar[1:-1].copy()",
                                                         "_bar[1:-1] = 0.0")),
]


def _code(text):
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("fn, make, plain", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_plain_writes_give_the_gradient_in_every_call(fn, make, plain):
    args = make(np.random.default_rng(5))
    grad = s2sgrad.grad(fn)
    expected = numerical_grad(fn, args, 0)
    for _ in range(3):  # any shape, then the code made for these shapes, twice
        np.testing.assert_allclose(grad(*args), expected, rtol=1e-6, atol=1e-8)
    assert np.all(args[0] == make(np.random.default_rng(5))[0])  # the argument unchanged
    generic, made = _code(s2sgrad.source(grad)), _code(s2sgrad.source(grad, like=args))
    for line in plain:
        assert line in made, made
        assert line not in generic, generic
    assert "setitem_value_vjp" not in made or fn is corners, made  # the written value's part copied


def test_code_for_any_shape_keeps_the_helpers_and_code_for_shapes_has_none():
    grad = s2sgrad.grad(stencil)
    made = _code(s2sgrad.source(grad, like=(np.ones(9), 0.2)))
    assert "setitem_into" not in made and "getitem_add" not in made
    assert "s2s.setitem_into(u, (slice(1, -1, None),)" in _code(s2sgrad.source(grad))

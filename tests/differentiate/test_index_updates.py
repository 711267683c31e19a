"""Index writes that add into what they read (differentiate/updates.py): ``x[I] += e`` and
``x[I] = x[I] + e`` with a basic index are ``x`` plus ``e`` scattered at ``I``, so the backward
sweep leaves ``x``'s adjoint as it is (no zeroing of ``[I]``, no adding the read's share back).
Gradients against central differences in every call (the first, the code made for the call's
shapes), in reverse and forward mode and at second order; writes that are no such update
(an index that may repeat, a read used elsewhere, a product) keep the general adjoint."""

import numpy as np
import pytest
from s2sgrad.checks import numerical_grad

import s2sgrad
from s2sgrad.lower.ir import flatten
from s2sgrad.pipeline import DEFAULT_TABLE, find_function, from_function, lower
from s2sgrad.differentiate.updates import index_updates
from s2sgrad.analyze.shapes import counters, shape_facts
from s2sgrad.specialize import shape_signature

W = np.linspace(-1.0, 1.3, 12)


def stencil(u0, r):
    u = u0.copy()
    for _ in range(4):
        u[1:-1] += r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2 * W)


def stencil_written_out(u0, r):
    u = u0.copy()
    for _ in range(4):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2 * W)


def added_first(u0, r):
    u = u0 * 1.0
    for t in range(3):
        u[t] = np.sin(u[t + 1]) * r + u[t]  # the read on the right, a counter as the index
        u[t + 4] -= u[t] * r  # a difference
    return np.sum(np.cos(u) * W)


def broadcast_value(x, s):
    y = x * 2.0
    y[2:5] += s * s  # one number added to a slice
    y[:, 1] += np.tanh(x[:, 0])  # an index with a slice and an int
    y[1] += np.cos(x[2, 0])  # one number added to a row: broadcast
    return np.sum(np.sin(y) * W.reshape(3, 4))


def read_twice(u0, r):
    u = u0.copy()
    u[1:-1] = u[1:-1] + u[1:-1] * r  # an update; the second read has an adjoint of its own
    return np.sum(u ** 2 * W)


def repeated_index(u, v):
    out = u.copy()
    idx = np.array([0, 3, 3, 5])
    out[idx] = out[idx] + v  # may repeat: the last write stays, no update
    return np.sum(np.sin(out) * W[:6])


def scaled(u0, r):
    u = u0.copy()
    u[2:] = u[2:] * r  # a product, not an update
    u[:3] = r - u[:3]  # the read subtracted: not an update
    return np.sum(u ** 2 * W)


CASES = [
    (stencil, lambda rng: (rng.normal(size=12), 0.2)),
    (stencil_written_out, lambda rng: (rng.normal(size=12), 0.2)),
    (added_first, lambda rng: (rng.normal(size=12), 0.7)),
    (broadcast_value, lambda rng: (rng.normal(size=(3, 4)), 0.6)),
    (read_twice, lambda rng: (rng.normal(size=12), 0.3)),
    (repeated_index, lambda rng: (rng.normal(size=6), rng.normal(size=4))),
    (scaled, lambda rng: (rng.normal(size=12), 0.3)),
]


@pytest.mark.parametrize("fn,make", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradients_in_every_call_and_mode(fn, make):
    rng = np.random.default_rng(5)
    args = make(rng)
    grad = s2sgrad.grad(fn, argnums=(0, 1))
    expected = [numerical_grad(fn, args, i) for i in (0, 1)]
    for _ in range(3):
        for g, e in zip(grad(*args), expected):
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)
    direction = tuple(rng.normal(size=np.shape(a)) if np.ndim(a) else 0.7 for a in args)
    _, tangent = s2sgrad.jvp(fn, args, direction)
    np.testing.assert_allclose(tangent, sum(np.sum(e * d) for e, d in zip(expected, direction)),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", [stencil, added_first])
def test_second_order_through_updates(fn):
    rng = np.random.default_rng(6)
    args = (rng.normal(size=12), 0.4)
    grad = s2sgrad.grad(fn)
    hvp = s2sgrad.grad(lambda u, r, v: np.sum(grad(u, r) * v))
    v = rng.normal(size=12)
    eps = 1e-5
    expected = (grad(args[0] + eps * v, args[1]) - grad(args[0] - eps * v, args[1])) / (2 * eps)
    for _ in range(2):
        np.testing.assert_allclose(hvp(args[0], args[1], v), expected, rtol=1e-5, atol=1e-7)


def test_the_adjoint_is_left_in_place():
    like = (np.zeros(12), 0.2)
    for fn in (stencil, stencil_written_out):
        made = s2sgrad.source(s2sgrad.grad(fn), like=like)
        backward = made[made.index("_bwd("):]
        assert "[1:-1] = 0.0" not in backward and "u_1_neg1_bar" not in backward, made
        written = [line for line in backward.splitlines() if "[1:-1] +=" in line and "#" not in line]
        assert len(written) == 1, made  # the other read of u[1:-1] only


def updates_of(fn, args):
    core = lower(find_function(from_function(fn)), DEFAULT_TABLE)
    params = [p.name for p in core.params]
    numbers = frozenset(p for p, a in zip(params, args) if isinstance(a, float))
    classes, scalars = shape_facts(core, DEFAULT_TABLE, numbers, dict(shape_signature(params, args)))
    arrays = frozenset(n for n, c in classes.items() if isinstance(c, tuple) and c)
    return set(index_updates(core, DEFAULT_TABLE, frozenset(scalars) | counters(core), arrays).values())


def test_which_writes_are_updates():
    rng = np.random.default_rng(0)
    found = {fn.__name__: updates_of(fn, make(rng)) for fn, make in CASES}
    assert found["stencil"] == found["stencil_written_out"] == {"u_1_neg1"}
    assert len(found["added_first"]) == 2
    assert len(found["broadcast_value"]) == 3
    assert len(found["read_twice"]) == 1
    assert found["repeated_index"] == found["scaled"] == set()
    core = lower(find_function(from_function(stencil)), DEFAULT_TABLE)
    assert index_updates(core, DEFAULT_TABLE, counters(core), frozenset()) == {}  # u not known an array

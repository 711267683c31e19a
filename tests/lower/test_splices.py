"""Joins that rebuild an array with parts replaced, written as index writes in code made for a
call's shapes (lower/splices.py): the values and types of numpy's join, gradients equal to
autograd's (of the join as written) in reverse mode, forward mode and second order, the caller's
arrays left as they were, and joins of other structures left as written."""

import autograd
import numpy as np
import pytest
from conftest import _rebind, autograd_hvp

import s2sgrad


def heat(u0, r):
    u = u0
    for _ in range(4):
        interior = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = np.concatenate([u[:1], interior, u[-1:]])
    return np.sum(u ** 2)


def heat_tuple_axis(u0, r):  # a tuple display, a start of 0 written
    u = u0
    for _ in range(3):
        u = np.concatenate((u[0:1], np.sin(u[1:-1]) * r, u[-1:]))
    return np.sum(u ** 3)


def two_parts(x, v, w):  # two parts replaced, the middle kept, on rows of a matrix
    y = np.concatenate([v, x[1:3], w * x[3:]])
    return np.sum(np.tanh(y) * x)


def read_after(x, v):  # the old array is read after the join: no write into it
    y = np.concatenate([x[:1], v * x[1:]])
    return np.sum(y * x) + np.sum(x[:1] ** 2)


def head_replaced(x, v):
    y = np.concatenate([v ** 2, x[1:]])
    return np.sum(np.cos(y)) * np.sum(x)


def not_in_place(x, v):  # the kept part at another place: written, as any other item
    y = np.concatenate([x[1:], v])
    return np.sum(np.sin(y) * x)


CASES = [
    (heat, ((12,), ()), (0, 1)),
    (heat_tuple_axis, ((9,), ()), (0, 1)),
    (two_parts, ((5, 3), (1, 3), ()), (0, 1, 2)),
    (read_after, ((5,), ()), (0, 1)),
    (head_replaced, ((7,), (1,)), (0, 1)),
    (not_in_place, ((4,), (1,)), (0, 1)),
]



def _args(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.normal(size=s) if s else float(rng.uniform(0.1, 0.3)) for s in shapes)


def _code(text):
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("fn, shapes, argnums", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradients_equal_autograds_and_the_arguments_stay(fn, shapes, argnums):
    args = _args(shapes)
    kept = [np.copy(a) for a in args]
    value_and_grad = s2sgrad.value_and_grad(fn, argnums=argnums)
    expected = autograd.grad(_rebind(fn), argnums)(*args)
    for _ in range(3):  # the code for any shape, then the code made for these shapes, twice
        value, grads = value_and_grad(*args)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
        for a, k in zip(args, kept):
            np.testing.assert_array_equal(a, k)


@pytest.mark.parametrize("fn, shapes, argnums", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_join_is_an_index_write_where_the_shapes_are_known(fn, shapes, argnums):
    args = _args(shapes)
    value_and_grad = s2sgrad.value_and_grad(fn, argnums=argnums)
    value_and_grad(*args)
    generic = _code(s2sgrad.source(value_and_grad))
    made = _code(s2sgrad.source(value_and_grad, like=args))
    assert "np.concatenate(" in generic
    if fn is not_in_place:
        assert "np.concatenate(" in made
    else:
        assert "np.concatenate(" not in made and "split_concatenate" not in made
        assert "s2s.promoted(" in made


def test_a_loop_of_joins_copies_its_argument_once():
    """The loop's array starts as the caller's argument: copied once where the loop's first
    value is bound (s2s.owned_array), then each step writes into it, where a step copying the
    array each time was the code before; and the join, an update of the part it replaces,
    passes its adjoint through."""
    args = _args(((9,), ()))
    value_and_grad = s2sgrad.value_and_grad(heat)
    value_and_grad(*args)
    made = _code(s2sgrad.source(value_and_grad, like=args))
    forward = made[:made.index("_bwd(")]
    assert "u = s2s.owned_array(u0)" in forward
    assert "s2s.setitem(" not in forward and "u_as[1:-1] = interior" in forward
    # interior = u[1:-1] + e is the update u[1:-1] += e (differentiate/updates.py): the backward
    # step passes the adjoint through, no copy of its part and no zeroing
    backward = made[made.index("_bwd("):]
    assert ".copy()" not in backward and "= 0.0" not in backward


@pytest.mark.parametrize("fn, shapes, argnums", CASES[:4], ids=[c[0].__name__ for c in CASES[:4]])
def test_forward_mode_and_second_order(fn, shapes, argnums):
    args = _args(shapes, seed=1)
    tangents = _args(tuple(s for s in shapes), seed=2)
    twin = _rebind(fn)
    value, tangent = s2sgrad.jvp(fn, args, tangents)
    grads = autograd.grad(twin, tuple(range(len(args))))(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    np.testing.assert_allclose(tangent, sum(np.sum(g * t) for g, t in zip(grads, tangents)),
                               rtol=1e-9, atol=1e-12)
    expected_hvp = autograd_hvp(fn, args, tangents)
    for _ in range(2):
        for got, want in zip(s2sgrad.hvp(fn, args, tangents), expected_hvp):
            np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


def test_the_join_keeps_numpys_type():
    def f(x, v):
        return np.sum(np.concatenate([x[:1], v, x[-1:]]) ** 2)

    def parts(x, v):
        return np.concatenate([x[:1], v, x[-1:]])

    x32 = np.linspace(0.5, 1.5, 6, dtype=np.float32)
    v64 = np.linspace(-1.0, 1.0, 4)
    for x, v in ((x32, v64), (x32, v64.astype(np.float32)), (x32.astype(np.float64), v64)):
        grad = s2sgrad.value_and_grad(f, argnums=(0, 1))
        expected_value = f(x, v)
        for _ in range(3):
            value, (gx, gv) = grad(x, v)
            assert np.asarray(value).dtype == np.asarray(expected_value).dtype
            np.testing.assert_allclose(value, expected_value, rtol=1e-6)
            whole = parts(x, v)
            np.testing.assert_allclose(gx, 2 * np.where(np.arange(6) % 5 == 0, x, 0), rtol=1e-6)
            np.testing.assert_allclose(gv, 2 * whole[1:-1], rtol=1e-6)
            assert gx.dtype == x.dtype and gv.dtype == v.dtype


def test_a_part_of_another_length_stays_a_join():
    def f(x, v):
        return np.sum(np.concatenate([x[:1], v, x[-1:]]) ** 2)

    grad = s2sgrad.grad(f, argnums=(0, 1))
    x, v = np.ones(6), np.arange(2.0)  # the join is shorter than x: no index write of x
    for _ in range(3):
        gx, gv = grad(x, v)
        np.testing.assert_allclose(gv, 2 * v)
        np.testing.assert_allclose(gx, [2, 0, 0, 0, 0, 2])

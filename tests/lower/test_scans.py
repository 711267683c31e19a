"""Loops that compute a running product or sum of an array's rows, written as one scan in code
made for a call's shapes (lower/scans.py): the loop's values and types, gradients equal to
autograd's (of the loop as written), second order, and loops of other structures left as
written."""

import autograd
import numpy as np
import pytest
from conftest import _rebind, autograd_hvp

import s2sgrad


def appended(x):
    acc = np.ones(x.shape[1])
    rows = []
    for t in range(x.shape[0]):
        acc = acc * x[t]
        rows.append(acc)
    return np.sum(np.stack(rows) ** 2)


def preallocated(x):
    out = np.empty_like(x)
    acc = np.ones(x.shape[1])
    for t in range(len(x)):
        acc = acc * x[t]
        out[t] = acc
    return np.sum(np.sin(out))


def over_rows(x, w):  # for row in x, the row on the left, a running sum from a parameter
    acc = w * 2.0
    rows = []
    for row in x:
        acc = row + acc
        rows.append(acc)
    return np.array(rows).sum() + np.sum(np.cos(np.array(rows)) * w)


def ufunc_spelled(x, w):  # np.multiply, rows of matrices, acc a parameter
    acc = w
    rows = []
    for t in range(x.shape[0]):
        acc = np.multiply(acc, x[t])
        rows.append(acc)
    return np.sum(np.tanh(np.stack(rows)))


def scalar_rows(x):  # a 1-D array: each row a number, acc a float
    acc = 1.0
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        acc = acc * x[t]
        out[t] = acc
    return np.sum(out * x)


def acc_read_after(x):  # acc read after the loop: the loop stays
    acc = np.ones(x.shape[1])
    rows = []
    for t in range(x.shape[0]):
        acc = acc * x[t]
        rows.append(acc)
    return np.sum(np.stack(rows)) + np.sum(acc)


def rows_read_twice(x):  # the list read again: the loop stays
    acc = np.ones(x.shape[1])
    rows = []
    for row in x:
        acc = acc * row
        rows.append(acc)
    return np.sum(np.stack(rows)) + np.sum(rows[0])


def part_of_the_rows(x):  # over the rows but the last: the loop stays
    acc = np.ones(x.shape[1])
    rows = []
    for t in range(x.shape[0] - 1):
        acc = acc * x[t]
        rows.append(acc)
    return np.sum(np.stack(rows))


def int_rows(w, counts):
    acc = w
    rows = []
    for row in counts:
        acc = acc * row
        rows.append(acc)
    return np.sum(np.stack(rows) ** 2)


SCANNED = [(appended, ((7, 3),)), (preallocated, ((6, 4),)), (over_rows, ((5, 3), (3,))),
           (ufunc_spelled, ((4, 2, 3), (2, 3))), (scalar_rows, ((8,),))]
KEPT = [(acc_read_after, ((5, 3),)), (rows_read_twice, ((5, 3),)), (part_of_the_rows, ((5, 3),))]
ALL = SCANNED + KEPT



def _expected(fn, args):
    """autograd's gradient, or central differences where autograd cannot run the function (an
    index write): ``(gradients, rtol)``."""
    argnums = tuple(range(len(args)))
    try:
        return autograd.grad(_rebind(fn), argnums)(*args), 1e-10
    except ValueError:
        grads = []
        for i, a in enumerate(args):
            g = np.zeros_like(a)
            for k in np.ndindex(a.shape):
                step = np.zeros_like(a)
                step[k] = 1e-6
                up = args[:i] + (a + step,) + args[i + 1:]
                down = args[:i] + (a - step,) + args[i + 1:]
                g[k] = (fn(*up) - fn(*down)) / 2e-6
            grads.append(g)
        return tuple(grads), 1e-6


def _args(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(0.8, 1.2, size=s) for s in shapes)


def _code(text):
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("fn, shapes", ALL, ids=[c[0].__name__ for c in ALL])
def test_gradients_equal_autograds(fn, shapes):
    args = _args(shapes)
    argnums = tuple(range(len(args)))
    value_and_grad = s2sgrad.value_and_grad(fn, argnums=argnums)
    expected, rtol = _expected(fn, args)
    for _ in range(3):  # the code for any shape, then the code made for these shapes, twice
        value, grads = value_and_grad(*args)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("fn, shapes", ALL, ids=[c[0].__name__ for c in ALL])
def test_the_loop_is_one_scan_where_the_shapes_are_known(fn, shapes):
    args = _args(shapes)
    value_and_grad = s2sgrad.value_and_grad(fn, argnums=tuple(range(len(args))))
    value_and_grad(*args)
    generic = _code(s2sgrad.source(value_and_grad))
    made = _code(s2sgrad.source(value_and_grad, like=args))
    assert "for " in generic
    scanned = (fn, shapes) in SCANNED
    assert ("for " not in made) == scanned
    assert (("np.cumprod(" in made) or ("np.cumsum(" in made)) == scanned


def test_zeros_in_the_rows_and_other_types():
    x = np.array([[1.5, 0.0, 2.0], [0.5, 3.0, 0.0], [2.0, 1.0, 1.0], [0.0, 2.0, 0.5]])
    grad = s2sgrad.value_and_grad(appended)
    expected = autograd.grad(_rebind(appended))(x)
    for _ in range(3):
        value, g = grad(x)
        np.testing.assert_allclose(value, appended(x))
        np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-12)
    counts = np.array([[2, 3], [4, 5], [6, 7], [1, 2]])  # an int array: float steps, as the loop's
    w = np.array([0.5, -0.25])
    expected = autograd.grad(_rebind(int_rows))(w, counts)
    vg = s2sgrad.value_and_grad(int_rows)
    for _ in range(3):
        value, g = vg(w, counts)
        np.testing.assert_allclose(value, int_rows(w, counts), rtol=1e-12)
        np.testing.assert_allclose(g, expected, rtol=1e-12)
    assert "np.cumprod(" in s2sgrad.source(vg, like=(w, counts))
    x32 = np.linspace(0.5, 1.5, 12, dtype=np.float32).reshape(4, 3)  # out's type: the loop's
    vg = s2sgrad.value_and_grad(preallocated)
    for _ in range(3):
        value, g = vg(x32)
        np.testing.assert_allclose(value, preallocated(x32), rtol=1e-6)
        assert g.dtype == np.float32


SECOND = [SCANNED[0], SCANNED[2], SCANNED[3]]  # (autograd runs no index write)


@pytest.mark.parametrize("fn, shapes", SECOND, ids=[c[0].__name__ for c in SECOND])
def test_second_order(fn, shapes):
    args = _args(shapes, seed=1)
    tangents = _args(shapes, seed=2)
    expected = autograd_hvp(fn, args, tangents)
    for _ in range(2):
        for got, want in zip(s2sgrad.hvp(fn, args, tangents), expected):
            np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


def from_twos(x):  # a start other than ones: the product with it stays
    acc = 2.0 * np.ones(x.shape[1])
    rows = []
    for t in range(x.shape[0]):
        acc = acc * x[t]
        rows.append(acc)
    return np.sum(np.stack(rows) ** 2)


@pytest.mark.parametrize("fn, x", [
    (appended, np.linspace(-1.3, 1.7, 21).reshape(7, 3)),
    (preallocated, np.linspace(0.5, 1.5, 12, dtype=np.float32).reshape(4, 3)),
    (scalar_rows, np.array([-0.0, 1.5, -2.0, 3.0])),
    (int_rows, None),
], ids=["float64", "float32", "signed_zero", "ints_from_a_parameter"])
def test_a_scan_from_ones_is_the_cumulative_product_itself(fn, x):
    # 1.0 * v is v bit for bit: the scan's start is not multiplied in (RuleTable.exact_identity);
    # one starting from a parameter (int_rows) multiplies it in
    args = (np.array([1.0, 1.0]), np.array([[2, 3], [4, 5], [6, 7]])) if x is None else (x,)
    vg = s2sgrad.value_and_grad(fn)
    for _ in range(3):
        value, _ = vg(*args)
    assert value == fn(*args)  # the loop's value exactly
    made = _code(s2sgrad.source(vg, like=args))
    assert "np.cumprod(" in made
    assert ("acc * " in made or "* acc" in made) == (fn is int_rows)


def test_a_scan_from_another_start_multiplies_it_in():
    x = np.linspace(0.5, 1.5, 12).reshape(4, 3)
    vg = s2sgrad.value_and_grad(from_twos)
    for _ in range(3):
        value, g = vg(x)
    np.testing.assert_allclose(value, from_twos(x), rtol=1e-14)
    np.testing.assert_allclose(g, autograd.grad(_rebind(from_twos))(x), rtol=1e-12)
    made = _code(s2sgrad.source(vg, like=(x,)))
    assert "np.cumprod(" in made and "acc * " in made

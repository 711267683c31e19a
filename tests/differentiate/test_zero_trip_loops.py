"""A loop that runs zero times binds nothing: the backward loop over its empty tape leaves every
name as it was before it (session 25, generator seed 1675).

The backward sweep's flow graph took a backward loop's header as binding its target names on
every way on, the way out of the loop included, so a value the header binds and code after the
loop reads for its value (the carried value's last binding) counted as read only for its shape:
the enclosing loop's tape kept a template of it (zeros), and where the inner loop ran zero times
the code after it read those zeros. The gradient of the generic code (a function's first call)
was wrong in silence; at second order the template's value was taken as a constant.
"""

import numpy as np
import pytest
from conftest import assert_gradients
from s2sgrad.checks import numerical_grad

import s2sgrad


def while_never_runs(x, n):
    for _ in range(3):
        acc = np.tanh(x * 1.2)
        steps = 0
        while steps < n:
            steps = steps + 1
            acc = np.sin(acc + x[0])  # a number added to an array: its shape is read back
    return np.sum(acc)


def range_of_zero(x, n):
    total = 0.0
    for i in range(2):
        acc = np.cos(x) * (i + 1.0)
        for _ in range(n):
            acc = np.sin(acc * x[1])
        total = total + np.sum(acc * acc)
    return total


def trips_by_the_outer_counter(x, n):
    total = 0.0
    for i in range(3):
        acc = np.tanh(x + i)
        for _ in range(i * n):  # zero trips first, then some
            acc = np.sin(acc + x[0])
        total = total + np.sum(acc ** 2)
    return total


def over_an_empty_list(x, n):
    out = 0.0
    for k in range(2):
        acc = np.exp(x * 0.5) + k
        for scale in [0.5, -1.0][:n]:
            acc = np.sin(acc * scale + x[2])
        out = out + np.sum(acc * x)
    return out


def number_carried(x, n):
    acc = 0.0
    for _ in range(2):
        acc = np.tanh(np.sum(x) * 0.3 + 0.1)
        steps = 0
        while steps < n:
            steps = steps + 1
            acc = np.sin(acc + min(x[0], 0.3))
    return acc * acc


FUNCTIONS = [while_never_runs, range_of_zero, trips_by_the_outer_counter, over_an_empty_list,
             number_carried]
X = np.array([0.31, -0.52, 0.77])


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [0, 1, 2])
def test_first_and_later_calls_agree_with_differences(fn, n):
    # the first call runs the generic code, the second the code made for its shapes
    for _ in range(2):
        assert_gradients(fn, X, n, argnums=(0,))


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_second_order_of_a_zero_trip_inner_loop(fn):
    hessian = s2sgrad.hessian(fn)(X, 0)
    gradient = s2sgrad.grad(fn)
    steps = np.eye(X.size) * 1e-5
    differences = np.stack([(gradient(X + e, 0) - gradient(X - e, 0)) / 2e-5 for e in steps], axis=1)
    np.testing.assert_allclose(hessian, differences, rtol=1e-6, atol=1e-8)
    # reverse mode over the generated gradient (forward mode refuses nothing here: both ways)
    np.testing.assert_allclose(s2sgrad.jacrev(gradient)(X, 0), hessian, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(s2sgrad.jacfwd(gradient)(X, 0), hessian, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(numerical_grad(lambda x: fn(x, 0), (X,), 0), gradient(X, 0),
                               rtol=1e-6, atol=1e-8)


def attribute_named_like_a_loop_local(x, n):
    if np.sum(x) > -10.0:
        for _ in range(n):
            cos = np.cos(x)
            x = x * cos
        y = (x * np.cos(x))[:, 0]  # `np.cos` beside the local `cos`: the index reads no `cos`
    else:
        y = x[:, 1]
    return np.sum(y * y)


def test_an_attribute_spelled_like_a_local_is_not_a_read():
    # lowering's Renamer listed the field of `np.cos` as a read of the local `cos` (it renamed
    # it back, but kept the read): the branch's record read `cos`, bound only by a loop that ran
    # zero times (UnboundLocalError; at second order, where generated code names its `np.cos`
    # values `cos`, generator seed 1606)
    x = np.array([[0.3, 0.4], [0.1, -0.2]])
    for n in (0, 1, 2):
        assert_gradients(attribute_named_like_a_loop_local, x, n, argnums=(0,))
        gradient = s2sgrad.grad(attribute_named_like_a_loop_local)
        hvp = s2sgrad.grad(lambda x: np.sum(gradient(x, n) * x))(x)  # grad over the gradient
        steps = [np.eye(4)[k].reshape(2, 2) * 1e-5 for k in range(4)]
        ways = [np.sum((gradient(x + e, n) - gradient(x - e, n)) * x) / 2e-5 for e in steps]
        np.testing.assert_allclose(hvp - gradient(x, n), np.reshape(ways, (2, 2)), rtol=1e-5, atol=1e-7)


def reuses_names_of_a_loop(x, n):
    acc = 0.0
    for i in range(n):
        t = np.sin(x * (i + 1.0))
        acc = acc + np.sum(t)
    for i, xi in enumerate(x, 1):  # `i` and `t` again: this loop carries them
        t = xi * i
        acc = acc + np.sin(t) * acc
    return acc


def test_names_a_zero_trip_loop_binds_and_a_later_loop_binds_again():
    # the later loop carried `i` and `t`, bound only by a loop that ran zero times: the
    # generated code recorded their values before it (UnboundLocalError at first order, and at
    # second order through a gradient called inside: generator seed 2974); each is now bound
    # to None before the first loop
    x = np.array([0.3, -0.2, 0.5])
    for n in (0, 2):
        assert_gradients(reuses_names_of_a_loop, x, n, argnums=(0,))
        gradient = s2sgrad.grad(reuses_names_of_a_loop)
        hessian = s2sgrad.hessian(reuses_names_of_a_loop)(x, n)
        steps = np.eye(3) * 1e-5
        differences = np.stack([(gradient(x + e, n) - gradient(x - e, n)) / 2e-5 for e in steps],
                               axis=1)
        np.testing.assert_allclose(hessian, differences, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(s2sgrad.jacrev(gradient)(x, n), hessian, rtol=1e-10, atol=1e-12)

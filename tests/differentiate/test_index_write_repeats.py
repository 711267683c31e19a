"""Index writes whose integer array index repeats a position (issue 24): numpy writes each
position once, the last write in C order staying (``out[idx] += w`` is ``out[idx] = out[idx] +
w``: it does not accumulate). The written values that were overwritten have no gradient, and the
one that stays has it once. Checked against central differences in reverse mode, forward mode and
at second order (autograd cannot write by index)."""

import numpy as np
import pytest
from s2sgrad.checks import numerical_grad

import s2sgrad
from s2sgrad import runtime as s2s

IDX = np.array([0, 3, 3, 5])
W6 = np.array([0.7, -1.1, 0.4, 1.3, -0.6, 0.9])
W34 = np.linspace(-1.0, 1.2, 12).reshape(3, 4)


def set_repeated(u, v):
    out = u.copy()
    out[IDX] = v * u[IDX]
    return np.sum(np.sin(out) * W6)


def add_repeated(u):
    out = u.copy()
    out[IDX] += u[IDX] ** 2
    return np.sum(np.sin(out) * W6)


def list_with_negative_alias(u, v):
    out = u * 1.0
    out[[1, -5, 2, 1]] = np.cos(v)  # -5 is position 1 of 6: written three times, v[3] stays
    return np.sum(np.sin(out) * W6)


def one_number_written_twice(u, s):
    out = u.copy()
    out[[2, 2]] = s * s
    return np.sum(np.sin(out) * W6)


def computed_index(u, v):
    k = np.arange(4) // 2  # [0, 0, 1, 1]: the repeats are known at run time only
    out = u.copy()
    out[k] += v * u[k]
    return np.sum(np.sin(out) * W6)


def columns_repeated(x, v):
    out = x.copy()
    out[:, [0, 0, 2]] += v * x[:, [1, 1, 1]]
    return np.sum(np.sin(out) * W34)


def pairs_repeated(x, v):
    out = x * 2.0
    out[[0, 0, 2], [1, 1, 3]] = np.tanh(v)
    out[(np.array([0, -3]), np.array([2, 2]))] -= v[:2] ** 2  # -3 is row 0 of 3
    return np.sum(np.sin(out) * W34)


def rows_in_a_loop(x, v):
    out = x.copy()
    for i in range(2):
        out[np.array([2, 0, 2])] = out[np.array([1, 1, 0])] * v[i]
    return np.sum(np.sin(out) * W34)


U6 = np.linspace(0.1, 0.6, 6)
X34 = np.linspace(-0.8, 0.9, 12).reshape(3, 4)
CASES = [
    (set_repeated, (U6, np.array([1.0, 2.0, 3.0, 4.0]))),
    (add_repeated, (U6,)),
    (list_with_negative_alias, (U6, np.array([0.3, -0.2, 0.5, 0.8]))),
    (one_number_written_twice, (U6, 0.7)),
    (computed_index, (U6, np.array([0.3, -0.2, 0.5, 0.8]))),
    (columns_repeated, (X34, np.linspace(0.2, 1.0, 9).reshape(3, 3))),
    (pairs_repeated, (X34, np.array([0.3, -0.4, 0.6]))),
    (rows_in_a_loop, (X34, np.array([0.8, -1.2]))),
]
IDS = [fn.__name__ for fn, _ in CASES]


@pytest.mark.parametrize("fn, args", CASES, ids=IDS)
def test_reverse_mode_gives_the_overwritten_writes_no_gradient(fn, args):
    argnums = tuple(range(len(args)))
    got = s2sgrad.grad(fn, argnums=argnums)(*args)
    for i in argnums:
        np.testing.assert_allclose(got[i], numerical_grad(fn, args, i), rtol=1e-6, atol=1e-8,
                                   err_msg=f"argument {i}")


@pytest.mark.parametrize("fn, args", CASES, ids=IDS)
def test_forward_mode_keeps_the_last_write(fn, args):
    rng = np.random.default_rng(24)
    tangents = tuple(rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal())
                     for a in args)
    _, got = s2sgrad.jvp(fn, args, tangents)
    eps = 1e-6
    up = fn(*(a + eps * t for a, t in zip(args, tangents)))
    down = fn(*(a - eps * t for a, t in zip(args, tangents)))
    np.testing.assert_allclose(got, (up - down) / (2 * eps), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn, args", CASES, ids=IDS)
def test_second_order_against_differences_of_the_gradient(fn, args):
    x = args[0]
    rest = args[1:]
    hessian = s2sgrad.hessian(fn)(*args)
    gradient = s2sgrad.grad(fn)
    eps = 1e-5
    want = np.zeros(np.shape(x) * 2)
    for k in range(np.size(x)):
        step = np.zeros(np.shape(x))
        step.flat[k] = eps
        column = (gradient(x + step, *rest) - gradient(x - step, *rest)) / (2 * eps)
        want.reshape(np.size(x), -1)[:, k] = column.reshape(-1)
    np.testing.assert_allclose(hessian, want, rtol=1e-5, atol=1e-7)
    s2sgrad.check_grads(fn, args, order=2, modes=("rev", "fwd"))


def test_setitem_writes_the_last_repeat_whatever_the_layouts():
    # numpy leaves the order of repeated writes open where the value is not C-ordered (a
    # Fortran-ordered value and index pick another write); s2s.setitem keeps the last in C order
    rows = np.asfortranarray(np.array([[0, 1], [0, 1]]))
    cols = np.asfortranarray(np.array([[2, 2], [2, 2]]))
    value = np.asfortranarray(np.arange(4.0).reshape(2, 2))
    got = s2s.setitem(np.zeros((2, 3)), (rows, cols), value)
    np.testing.assert_array_equal(got, [[0, 0, 2.0], [0, 0, 3.0]])
    adjoint = s2s.setitem_value_vjp(np.ones((2, 3)), (rows, cols), value)
    np.testing.assert_array_equal(adjoint, [[0, 0], [1.0, 1.0]])

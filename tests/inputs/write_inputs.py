"""Functions that write into an argument through numpy (tests/lower/test_writes.py)."""

import numpy as np

IDX = np.array([0, 3, 3, 5])
W6 = np.linspace(0.5, 1.5, 6)


def add_at(u):
    out = np.zeros(6)
    np.add.at(out, IDX, u)
    return np.sum(out ** 2 * W6)


def add_at_into_values(x, u):
    out = x * 1.0
    np.add.at(out, IDX, u * x[:4])
    return np.sum(np.sin(out) * W6)


def subtract_at(x, u):
    out = np.cos(x)
    np.subtract.at(out, [1, 1, 2, 0], u ** 2)
    return np.sum(out * out * W6)


def ufunc_out(x):
    y = np.zeros(6)
    np.exp(x, out=y)
    return np.sum(y * W6)


def ufunc_out_positional(x):
    y = x * 0.5
    z = np.tanh(x, y)
    return np.sum(y * z * W6)


def ufunc_out_binary(x, u):
    y = np.zeros(6)
    z = np.multiply(x, u[0], out=y)
    w = np.sum(z * W6)
    np.add(y, x ** 2, out=y)
    return w + np.sum(y * y)


def out_read_through_the_returned_name(x, u):
    y = np.zeros(6)
    z = np.multiply(x, u[0], out=y)  # z is y: numpy returns the array it wrote
    np.add(y, x ** 2, out=y)
    return np.sum(y * z * W6)


def reduction_out(x):
    y = np.zeros(3)
    np.sum(np.reshape(x, (2, 3)) ** 2, axis=0, out=y)
    return np.sum(y * W6[:3]) + np.sum(x)


def copyto(x, u):
    y = np.zeros(6)
    np.copyto(y, x * u[0])
    return np.sum(y * y * W6)


def copyto_where(x, u):
    y = np.cos(x)
    np.copyto(y, x * u[1], where=W6 > 1.0)
    return np.sum(y * y * W6)


def put(x, u):
    y = np.sin(x)
    np.put(y, [0, 2, 4, 2], u)
    return np.sum(y * y * W6)


def put_matrix(x, u):
    y = np.reshape(x * 1.0, (2, 3))
    np.put(y, [5, 0], u[:2])
    return np.sum(np.exp(y) * W6.reshape(2, 3))


def place(x, u):
    y = x * 2.0
    np.place(y, x > 0.0, u[0] * 3.0)
    return np.sum(y * y * W6)


def putmask(x, u):
    y = x * 2.0
    np.putmask(y, W6 > 1.0, x * u[0])
    return np.sum(np.sin(y) * W6)


def fill_diagonal(a):
    y = a * 2.0
    np.fill_diagonal(y, a[0, 1] * 5.0)
    return np.sum(y * np.arange(9.0).reshape(3, 3))


def fill_method(x, u):
    y = x * 1.0
    y.fill(u[0] ** 2)
    return np.sum(y * x)


def sort_method(x):
    y = np.sin(x)
    y.sort()
    return np.sum(y * W6)


def put_method(x, u):
    y = x * 1.0
    y.put([1, 4], u[:2] * 3.0)
    return np.sum(y * y * W6)


def shuffle(x):
    y = x * 1.0
    np.random.shuffle(y)
    return np.sum(y)


def multiply_at(x):
    y = x * 1.0
    np.multiply.at(y, [0, 0], 2.0)
    return np.sum(y)


def out_into_a_temporary(x):
    np.exp(x, out=x * 1.0)
    return np.sum(x)


def copyto_into_a_global(x):
    np.copyto(W6, x)
    return np.sum(W6)


def write_nested(x):
    y = np.zeros(6)
    return np.sum(np.exp(x, out=y) * 2.0)


def put_mode(x):
    y = x * 1.0
    np.put(y, [9], 1.0, mode="wrap")
    return np.sum(y)


def copyto_a_view(x):
    y = x * 1.0
    z = y[1:]
    np.copyto(y, x ** 2)
    return np.sum(z)


def putmask_repeating(x, u):
    y = np.reshape(x * 2.0, (2, 3))
    np.putmask(y, np.array([[True, False, True], [False, True, True]]), u[:2].reshape(2, 1))
    return np.sum(np.sin(y) * W6.reshape(2, 3))


def _scale_first(a):
    a[0] = a[0] * 3.0


def helper_writes_for_its_effect(x):
    y = x * 1.0
    _scale_first(y)
    return np.sum(y * y)


def _doubled(a):
    a *= 2.0
    return a


def helper_writes_and_returns(x):
    y = x * 1.0
    z = _doubled(y)
    return np.sum(y * z)


def _doubled_unused(a):
    a *= 2.0
    return np.sum(a)


def helper_writes_into_a_value_whose_result_is_dropped(x):
    y = x * 1.0
    unused = _doubled_unused(y)
    return np.sum(y * y)


def _copied_then_written(a):
    a = a.copy()
    a[0] = a[0] * 3.0
    return a


def helper_writes_into_its_own_copy(x):
    y = x * 1.0
    z = _copied_then_written(y)
    return np.sum(y * z)


def out_with_where(x):
    y = np.zeros(6)
    np.floor(x, out=y, where=x > 0.0)
    return np.sum(y * x)


def out_none(x):
    y = np.exp(x, out=None)
    return np.sum(y)

"""Ordinary Python inside differentiated functions (issue 26): statements that carry no
derivative, builtins on numbers and arrays, comprehensions, returns inside loops. Used by
tests/lower/test_python_constructs.py; every function here is also run by autograd."""

import logging
import warnings

import numpy as np

LOG = logging.getLogger("s2sgrad.tests.python_inputs")


def asserts_and_prints(x):
    """A docstring, kept where it is."""
    assert x.ndim == 1, "a vector"
    y = np.sin(x) * x
    print(f"{len(x)} values of {x.dtype}")
    return np.sum(y * y)


def logs_and_warns(x):
    y = np.exp(-x * x)
    LOG.debug("sum %s", np.sum(x))
    if np.sum(x) > 1.0e6:
        warnings.warn("very large input")
    return np.sum(y) * 2.0


def annotated(x: np.ndarray, scale: float = 1.5) -> float:
    y: np.ndarray = np.tanh(x) * scale
    total: float = np.sum(y * x)
    return total


def errstate_block(x):
    z = x * x
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(z)
        w = y * np.cos(x)
    return np.sum(w + z)


def nested_with_in_loop(x):
    total = 0.0
    for i in range(3):
        with np.errstate(over="ignore"), warnings.catch_warnings():
            total = total + np.sum(np.exp(x * (i + 1)))
    return total


def builtin_extrema(x, y):
    big = max(np.sum(x * x), np.sum(y) * 0.5)
    small = min(x[0], x[1] * 2.0, y[2], 0.8)
    clipped = max(min(x[3], 1.0), -1.0)
    return big * small + clipped


def builtin_numbers(x):
    n = len(x)
    mean = sum([x[0], x[1], x[2]], 0.5) / 3
    scale = float(np.sum(x * x)) + round(2.4) + int(n / 2)
    level = abs(np.sum(x) - 1.0) + np.sum(abs(x))
    first = np.sum(x[:1] * 3.0).item()
    return mean * scale + level * first


def builtin_sequences(x):
    values = [np.sum(x), np.sum(x * x), np.sum(np.sin(x))]
    total = 0.0
    for k, v in enumerate(reversed(values)):
        total = total * 0.5 + v * (k + 1)
    if isinstance(len(x), int) and not isinstance(total, str):
        total = total * 2.0
    return total


def powers_stacked(x, w):
    features = np.stack([x ** p for p in range(len(w))], axis=1)
    return np.sum(np.tanh(features @ w))


def generator_sum(xs, w):
    n = len(w)
    return sum(w[i] * xs[i] ** i for i in range(n)) + sum(np.sin(v) for v in xs)


def filtered_and_nested(x, w):
    pairs = [x[i] * w[j] for i in range(3) if i != 1 for j in range(2) if j <= i]
    rows = np.array([[x[i] * x[j] for j in range(3)] for i in range(3)])
    return sum(pairs) + np.sum(rows * w[0])


def comprehension_scope(x, w):
    p = 2.0
    ys = [np.sin(x * p) for p in range(3)]
    total = 0.0
    for v in [y * w[0] for y in ys]:
        total = total + np.sum(v)
    if sum([np.sum(y) for y in ys]) > -100.0:
        total = total * p
    return total + np.sum(np.array([np.cos(r) for r in np.reshape(x, (-1, 1))[:2]]))


def search_returns_early(x, w):
    total = 0.0
    for i in range(len(x)):
        total = total + x[i] ** 2 * w[i % 3]
        if total > 0.6:
            return total * np.sin(x[i])
    return total * 2.0


def nested_search(x, w):
    acc = 0.0
    for i in range(3):
        for j in range(3):
            acc = acc + x[i] * w[j]
            if acc > 0.5 + i:
                return acc * x[j]
        acc = acc * 0.5
    else:
        acc = acc + 1.0
    return np.tanh(acc)


def while_search(x, w):
    k = 0
    y = x * 1.0
    while k < 6:
        y = np.sin(y) * 1.2 + w[k % 3]
        if np.sum(y) > 2.0:
            return np.sum(y * y)
        k = k + 1
    return np.sum(y)


def comprehension_names_as_keywords(x):
    m = np.reshape(x[:4], (2, 2))
    parts = [np.sum(np.sin(m) * (axis + 1), axis=axis) for axis in range(2)]
    return sum(np.sum(p.T * x[axis]) for axis, p in enumerate(parts))


def sorted_numbers(x):
    ranked = sorted(x)
    values = [np.sum(x * x), np.sum(np.sin(x)), x[0] * 3.0]
    top = sorted(values, reverse=True)
    return ranked[0] * 2.0 + ranked[-1] * top[0] + sorted([x[1], x[2] * x[3]], key=abs)[1]


def returns_in_loop_else(x, w):
    acc = 0.0
    for i in range(3):
        acc = acc + np.sin(x[i]) * w[i]
    else:
        for j in range(3):
            acc = acc * np.cos(x[j] * w[j])
            if j == 2:
                return acc + np.sum(x)
    return acc * 2.0


def returns_in_else_after_break(x, w):
    total = 0.0
    for k in range(4):
        for i in range(3):
            total = total + x[i] * w[i] * (k + 1)
            if total > 0.85:
                break
        else:
            if total < -1.0:
                return total * 3.0
            continue
        total = np.tanh(total) + x[3]
    return total


def comprehension_in_conditions(x, w):
    y = np.sum(x) * w[0]
    if sum([v * 2.0 for v in x]) > 0.0 and y > -5.0:  # the left of `and` always runs
        y = y * 2.0
    return y * sum(v * v for v in x) + (np.sum(np.sin(x)) if x[0] > -9.0 else 1.0)


def dict_comprehension(x):
    d = {"a": x, "b": x * 2.0}
    e = {k: np.sin(v) * 2.0 for k, v in d.items() if k != "c"}
    return np.sum(e["a"] * e["b"])


def dict_built_in_a_loop(x):
    e = {}
    for i, name in enumerate(["p", "q"]):
        e[name] = np.sin(x) * (i + 1)
    e["p"] = e["p"] * 3.0  # a key written again
    return np.sum(e["p"] * np.cos(e["q"]))


def dict_comprehension_over_a_parameter(params, x):
    scaled = {name: value * x for name, value in params.items()}
    return np.sum(np.tanh(scaled["w"]) * scaled["b"])


def with_as_a_manager_of_constants(x):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = np.sin(x) * 2.0
        if np.sum(x) > 1.0e6:
            warnings.warn("very large input")
    assert isinstance(caught, list)
    with np.errstate(all="ignore") as _:
        z = np.log1p(np.exp(y))
    return np.sum(z * x)


def set_comprehension_of_constants(x):
    signs = {int(v > 0) for v in x}  # a set of numbers without derivative
    picked = sorted({k % 3 for k in range(len(x))})
    return np.sum(x[picked] ** 2) * len(signs) + np.sum(np.sin(x))


def local_function_in_a_while_test(x):
    small = lambda v: np.sum(v * v) < 6.0  # noqa: E731

    def grow(v):
        return v * 1.3 + 0.1 * np.sin(v)

    y = x
    while small(y):
        y = grow(y)
    return np.sum(y ** 2)

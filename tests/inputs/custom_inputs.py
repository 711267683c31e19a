"""custom_gradient functions for tests/differentiate/test_custom_gradient.py (module level, so their source is readable)."""

import numpy as np
import numpy as onp

import s2sgrad
from s2sgrad import custom_gradient as cg

CALLS = []


@s2sgrad.custom_gradient
def log1pexp(x):
    e = np.exp(x)

    def grad(dy):
        return dy * (1 - 1 / (1 + e))

    return np.log(1 + e), grad


def log1pexp_naive(x):
    return np.log(1 + np.exp(x))


@s2sgrad.custom_gradient
def scaled(x, k):
    def grad(dy):
        return dy * k, None

    return x * k, grad


def uses_scaled_keywords(x, k):
    return np.sum(scaled(k=k, x=x))


def uses_scaled_int(x):
    return np.sum(scaled(x, 3))


@s2sgrad.custom_gradient
def pair(x):
    a = np.sin(x)
    b = x * x

    def grad(da, db):
        return da * np.cos(x) + db * 2.0 * x

    return (a, b), grad


def uses_first_of_pair(x):
    a, b = pair(x)
    return np.sum(a)


def uses_both_of_pair(x):
    a, b = pair(x)
    return np.sum(a * 3.0 + b)


@s2sgrad.custom_gradient
def as_dict(x):
    def grad(d_cos, d_sin):  # one upstream per leaf, in sorted-key order: "cos", then "sin"
        return -d_cos * np.sin(x) + d_sin * np.cos(x)

    return {"sin": np.sin(x), "cos": np.cos(x)}, grad


def uses_dict_sin(x):
    d = as_dict(x)
    return np.sum(d["sin"] * 2.0)


def uses_dict_both(x):
    d = as_dict(x)
    return np.sum(d["sin"] * d["cos"])


@s2sgrad.custom_gradient
def wrong_count(x, y):
    def grad(dy):
        return dy

    return x * y, grad


@s2sgrad.custom_gradient
def summed_shape(x):
    def grad(dy):
        return np.ones((3,) + np.shape(x)) * dy

    return x * 1.0, grad


@s2sgrad.custom_gradient
def wrong_shape(x):
    def grad(dy):
        return np.ones(5)

    return x * 1.0, grad


def calls_wrong_count(x):
    return np.sum(wrong_count(x, 2.0))


@s2sgrad.custom_gradient
def two_for_one(x):
    def grad(dy):
        return dy * 2.0, dy * 3.0

    return x * 2.0, grad


def calls_two_for_one(x):
    return np.sum(two_for_one(x))


def calls_summed_shape(x):
    return np.sum(summed_shape(x))


def calls_wrong_shape(x):
    return np.sum(wrong_shape(x))


@s2sgrad.custom_gradient
def recorded(x):
    def grad(dy):
        CALLS.append(np.array(dy, copy=True))
        return dy * 2.0

    return x * 2.0, grad


def uses_recorded_twice(x):
    y = recorded(x)
    return np.sum(y * 3.0 + y)


def unused_recorded(x):
    y = recorded(x)
    return np.sum(x * 1.0)


@s2sgrad.custom_gradient
def late_binding(x):
    k = 2.0

    def grad(dy):
        return dy * k

    k = 3.0
    return x * 2.0, grad


@s2sgrad.custom_gradient
def cube(x):
    def grad(dy):
        return dy * 3.0 * x**2

    return x**3, grad


def cube_in_loop(x):
    total = 0.0
    for i in range(3):
        total = total + cube(x * (i + 1.0))
    return total


@s2sgrad.custom_gradient
def hygiene(x):
    dy = x * 2.0
    residuals = dy + 1.0
    grads = residuals * 0.0

    def grad(dy):
        x_bar = dy * 5.0
        return x_bar + grads

    return residuals, grad


def calls_hygiene(x, grad):
    residuals = hygiene(x) * grad
    x_bar = residuals + hygiene(x * 2.0)
    return np.sum(x_bar)


@s2sgrad.custom_gradient
def with_lambda(x):
    s = onp.sin(x)
    return s, lambda dy: dy * onp.cos(x) * 10.0


def helper_formula(x, dy):
    return dy * 7.0


@s2sgrad.custom_gradient
def calls_helper(x):
    def grad(dy):
        return helper_formula(x, dy)

    return x * 1.0, grad


@s2sgrad.custom_gradient
def clipped_gradient(x):
    def grad(dy):
        if np.all(dy > 1.0):
            return np.minimum(dy, 1.0)
        for _ in range(2):
            dy = dy * 0.5
        return dy

    return x * 1.0, grad


@cg
def inner_rule(x):
    def grad(dy):
        return dy * 100.0

    return x * 1.0, grad


@s2sgrad.custom_gradient
def outer_rule(x):
    y = inner_rule(x) * 2.0

    def grad(dy):
        return dy * 5.0

    return y, grad


def stopped(x):
    return np.sum(s2sgrad.stop_gradient(x * 3.0) * x)


def composite(x):
    return np.sum(log1pexp(x) * cube(x)) + np.sum(with_lambda(x))


# ----- refused definitions (each a located error) ----------------------------------------------


@s2sgrad.custom_gradient
def no_pair(x):
    return x * 2.0  # refused


@s2sgrad.custom_gradient
def not_a_function(x):
    k = 2.0
    return x, k  # refused


@s2sgrad.custom_gradient
def escapes(x):
    def grad(dy):
        return dy

    keep = [grad]  # refused
    return x, grad


@s2sgrad.custom_gradient
def writes_nonlocal(x):
    total = 0.0

    def grad(dy):
        nonlocal total  # refused
        total = dy
        return dy

    return x, grad


@s2sgrad.custom_gradient
def tf_variables(x):
    def grad(dy, variables=None):  # refused
        return dy

    return x, grad


@s2sgrad.custom_gradient
def generator(x):
    yield x  # refused

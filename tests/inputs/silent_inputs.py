"""Programs behind tests/differentiate/test_silent_failures.py: each once gave a wrong gradient in silence."""

import numpy as np

import s2sgrad


def first_plus_sine(xy):
    return np.sum(xy[0]) + np.sum(np.sin(xy[1]))


def tuple_to_helper(a, b):
    return first_plus_sine((a, b))


def list_to_helper(a, b):
    return first_plus_sine([a * 2.0, b])


def weighted_pair(xy, k=2.0):
    u, w = xy
    return np.sum(u * w) * k


def tuple_to_helper_with_keyword(a, b):
    return weighted_pair((a, b), k=3.0)


def nested_helper_tuple(a, b):
    return weighted_pair((a, np.tanh(b))) + first_plus_sine((b, a))


def unpacked_pair(ab):
    p1, p2 = ab  # the adjoint of ab: p2's, then p1's added in place
    return (p2 / (2.0 + np.cos(p2))) * (p1 + 0.75)


def active_then_constant(v, s):
    return np.sum(unpacked_pair((np.cos(np.sum(v[v > 0.2])), s)))  # seed 62165


def joined_twice(xy):
    return np.sum(np.concatenate(xy) ** 2) + np.sum(np.stack(xy) * 3.0) + np.sum(xy[0])


def tuple_joined_twice(a, b):
    return joined_twice((a, np.sin(b)))


def summed_list_twice(xs):
    return np.sum(sum(xs) ** 2) + np.sum(sum(xs))


def list_summed_twice(a, b):
    return summed_list_twice([a, b * 2.0])


def make_with_default(num):
    def scaled(x, y, num=num):
        return np.sum(x * y) * num

    return scaled


def make_calling_closures(c):
    def inner(z):
        return np.sin(z) * c

    def outer(x):
        return np.sum(inner(x) * x)

    return outer


def make_shadowing_closures(c):
    def inner(z, k=2.0):
        return np.sin(z) * c * k

    def outer(x):
        c = 10.0
        return np.sum(inner(x)) * c

    return outer


def same_twice(x):
    y = np.sin(x)
    return y, y


def uses_same_twice(x):
    a, b = same_twice(x)
    return np.sum(a * 2.0 + b * 3.0)


def pair_helper(a, b):
    return np.sum(a), (b[-1] + a[-1])


def indexes_a_pair(x):
    z = np.sin(x)
    return np.sum(pair_helper(x, z * z)[1])


def last_list_after_loop(x):
    for k in range(3):
        parts = []
        for j in range(k + 1):
            parts.append(np.sin(x * (j + 1.0)))
    return np.sum(sum(parts))


def last_slice_after_loop(x):
    for k in range(1, 4):
        head = np.tanh(x[:k]) * k
    return np.sum(head * head)


def break_in_a_loop_else(x):
    total = 0.0
    for a in x:
        total = total + a
    else:
        for b in x:
            if b > 0.5:
                break
            total = total * np.cos(b)
    return total


def row_at_break(x):
    for row in x:
        if np.sum(row) > 0.5:
            break
    return np.sum(np.sin(row))


def index_at_break(x):
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            break
    return x[i] * 2.0


def pair_at_break(x, y):
    total = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        if a > 0.5:
            break
        total = total + a * b
    return total + a * b * i


SCALE = 3.0


def make_shadowing_global(SCALE):
    def inner(z):
        return np.sin(z) * SCALE

    return inner


shadowing_inner = make_shadowing_global(0.5)


def reads_global_and_a_closure_of_the_same_name(x):
    return np.sum(shadowing_inner(x)) * SCALE


def loop_name_reused_in_a_branch(x, v):
    s = 0.0
    for p in x:
        s = s + np.sum(p * p)
    if np.sum(v) > 100.0:  # not taken: p stays the last row of x
        for p in v:
            s = s + p
    return s + np.sum(np.sin(p))


def constant_pair(a):
    b = a * 2.0
    return -0.75, -2.0


def uses_constant_pair(x):
    p, q = constant_pair(x)
    return np.sum(x * p) + q


def ragged_pair_in_a_branch(ab, b):
    if np.cos(ab[1][-1]) > 2.0:  # never: ab gets a zero adjoint here
        return np.sum(ab[0])
    return b ** 3


def passes_a_ragged_pair(x, v):
    return helper_of_pair((x, v), 0.5) * np.sum(x)


def helper_of_pair(ab, b):
    return ragged_pair_in_a_branch(ab, b)


def sine_cubed(x):
    return np.sum(np.sin(x) * x ** 2)


def calls_an_indexed_pullback(x):
    pullback = s2sgrad.vjp(sine_cubed, x)[1]
    return np.sum(pullback(1.0)[0])


def calls_a_computed_function(x, scale):
    fn = x.dot
    return np.sum(fn(scale))


def calls_a_function_variable(x):
    fn = np.sin
    return np.sum(fn(x))


def widened_in_a_loop(x):
    t = np.sum(x)
    y = t * x  # the scalar t: its adjoint sums down to ()
    for i in range(2):
        t = x * 2.0  # t is a vector from here on
    return np.sum(y * y) + np.sum(t * t)


def widened_by_a_loop_target(x):
    t = np.sum(x)
    y = t * x
    for t in [x * 2.0, x * 3.0]:
        y = y + t
    return np.sum(y * y)


def widened_in_a_while_loop(x):
    u = x[0]
    y = u + x
    k = 0
    while k < 2:
        u = np.cos(x) + k
        k = k + 1
    return np.sum(y * u)


def slices_a_list(x):
    lst = [x * 1.0, x * 2.0]
    lst.append(np.sin(x))
    head = lst[:-1]  # its adjoint's reverse indexes a list by (slice(None, -1),)
    return np.sum(head[0] * head[1]) + np.sum(lst[2] * x)


def direction_of_slices_a_list(x):
    value, g = s2sgrad.value_and_grad(slices_a_list)(x)
    return np.sum(g * np.cos(x))


def list_display_scaled(a, b):
    v = np.multiply([a, b], 2.0)
    return np.sum(v * a)


def tuple_display_added(a, b):
    v = np.add((a, b, a), b)
    return np.sum(v * v * a)


def underscore_and_a_constant_output(x):
    _ = np.sin(x)
    return np.sum(_ * x), 1.0


def underscore_read_after_an_unpack(x, y):
    _, b = np.sum(x * y), np.tanh(x)
    return np.sum(b * _) + np.sum(np.cos(_ * y))


def underscore_read_after_a_loop(x):
    _ = np.cos(x)
    y = _ * x
    for i in range(3):
        y = y * 0.5
    return np.sum(y)

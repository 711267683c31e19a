"""Functions whose lists grow in a loop (issue 28): tests/differentiate/test_list_growth.py
differentiates them; some may grow in place, some must keep copying."""

import numpy as np


def cumprod_loss(x, n):
    out = []
    acc = x[0]
    for i in range(n):
        acc = acc * x[i % x.shape[0]]
        out.append(acc)
    return np.sum(np.stack(out))


def last_item_read(x, n):
    out = [x[0]]
    for i in range(n):
        out.append(np.sin(out[-1]) * x[i % x.shape[0]])
    return np.sum(np.stack(out) ** 2)


def length_read(x, n):
    out = []
    for i in range(n):
        out.append(x[i % x.shape[0]] * len(out))
    return np.sum(np.stack(out))


def stacked_inside(x, n):
    out = [x[0]]
    total = 0.0
    for i in range(n):
        out.append(out[-1] * x[i % x.shape[0]])
        y = np.stack(out)
        total = total + np.sum(y * y)
    return total


def stacked_before_append(x, n):
    out = [x[0]]
    total = 0.0
    for i in range(n):
        y = np.stack(out)
        total = total + np.sum(np.sin(y))
        out.append(x[i % x.shape[0]] * 2.0)
    return total + np.sum(np.stack(out))


def _stack_sum(items):
    return np.sum(np.stack(items) ** 2)


def passed_to_function(x, n):
    out = [x[0]]
    total = 0.0
    for i in range(n):
        out.append(np.cos(x[i % x.shape[0]]) * out[-1])
        total = total + _stack_sum(out)
    return total


def alias_before_loop(x, n):
    out = []
    prev = out
    for i in range(n):
        out.append(x[i % x.shape[0]] ** 2)
    return np.sum(np.stack(out))


def lists_of_lists(x, n):
    rows = []
    for j in range(3):
        row = []
        for i in range(n):
            row.append(x[(i + j) % x.shape[0]] * (j + 1.0))
        rows.append(row)
    return np.sum(np.stack([np.stack(r) for r in rows]) ** 3)


def appended_in_branches(x, n):
    out = []
    for i in range(n):
        v = x[i % x.shape[0]]
        if v > 0:
            out.append(np.exp(v))
        else:
            out.append(v * v)
    return np.sum(np.stack(out))


def while_loop(x, n):
    out = []
    i = 0
    while i < n:
        out.append(np.tanh(x[i % x.shape[0]]) * (i + 1.0))
        i = i + 1
    return np.sum(np.stack(out) ** 2)


def nested_loops(x, n):
    out = []
    for j in range(2):
        for i in range(n):
            out.append(x[i % x.shape[0]] * x[j])
    return np.sum(np.stack(out) ** 2)


def comprehension(x, n):
    return np.sum(np.stack([np.sin(x[i % x.shape[0]]) * i for i in range(n)]))


def summed_list(x, n):
    out = []
    for i in range(n):
        out.append(x[i % x.shape[0]] * x[(i + 1) % x.shape[0]])
    return sum(out) + out[0] * out[-1]


def stored_then_appended(x, n):
    out = []
    rows = []
    for i in range(n):
        out.append(x[i % x.shape[0]] ** 2)
        rows.append(out)
    return np.sum(np.stack([np.sum(np.stack(r)) for r in rows]))


def alias_read_inside(x, n):
    out = [x[0]]
    total = 0.0
    for i in range(n):
        prev = out
        total = total + np.sum(np.stack(prev) * x[i % x.shape[0]])
        out.append(np.sin(x[i % x.shape[0]]))
    return total + np.sum(np.stack(out))


def alias_read_after(x, n):
    out = [x[0]]
    prev = out
    for i in range(n):
        out.append(x[i % x.shape[0]] * 3.0)
    return np.sum(np.stack(prev) ** 2)


def empty_alias_read_after(x, n):
    out = []
    prev = out
    for i in range(n):
        out.append(x[i % x.shape[0]] * 3.0)
    return np.sum(np.stack(prev) ** 2)


def _squares(a):
    return np.sin(a) ** 2


def unpacked_then_called_twice(x):
    got = []
    got.append(x)
    w, = got
    return np.sum(_squares(w)) + np.sum(_squares(w[w > 0.0]))


def two_loops_into_one_list(x, n):
    # the second loop's appends were refused: after a loop, what the list held was taken for
    # what it is (lower/aliasing.py), so the list seemed to share its array with the items
    parts = [x[:2], x[1:3] * 2.0, x[2:]]
    got = []
    for item in parts[:1]:
        got.append(item)
    for item in parts[1:]:
        got.append(np.sin(item) * n)
    return np.sum(np.stack(got) ** 2)


def list_made_in_a_loop(x):
    # the list is bound first in the loop's body: before it, its forward-mode tangent is a
    # number, whose adjoint reverse mode over the forward mode asked a list's zeros of
    for i in range(2):
        made = [np.cos(x[i]) * x]
        if i == 0:
            break
    return np.sum(made[0] * x)

"""Control flow in reverse mode: branches, loops, nesting, against finite differences and autograd."""

import numpy as np
import pytest
from conftest import assert_gradients

import s2sgrad


def branch(x):
    if np.sum(x) > 0:
        y = np.sin(x) * 2.0
    else:
        y = np.cos(x)
    return np.sum(y * x)


def branch_elif(x, k):
    if k > 2:
        y = x * 3.0
    elif k > 1:
        y = np.tanh(x)
        y = y * y
    else:
        y = x
    return np.sum(y)


def branch_without_else(x):
    y = x * 1.5
    if np.max(x) > 0.0:
        y = y * x
    return np.sum(y)


def conditions_with_and_or(x, flag):
    if np.sum(x) > -10.0 and (flag or np.min(x) < 0.0):
        y = np.exp(x)
    else:
        y = x
    if not flag:
        y = y * 2.0
    return np.sum(y)


def conditional_expression(x):
    y = x * 2.0 if np.max(x) > 0.5 else -x
    return np.sum(y**2)


def scalar_loop(x):
    for i in range(10):
        x = x * 0.9 + np.sin(x)
    return x


def rnn(wh, wx, xs):
    h = np.zeros(wh.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(wh @ h + wx @ xs[t])
    return np.sum(h**2)


def computed_bounds(x, n):
    total = 0.0
    for k in range(1, n * 2, 2):
        total = total + np.sum(x**k) / k
    return total


def while_on_computed_value(x):
    steps = 0
    while np.sum(x * x) > 0.05 and steps < 50:
        x = x * 0.7 + 0.01 * np.sin(x)
        steps = steps + 1
    return np.sum(x)


def loop_over_rows(m, w):
    total = 0.0
    for row in m:
        total = total + np.sum(np.tanh(row * w))
    return total


def loop_over_list(a, b):
    total = 0.0
    for v in [a, b, a * b]:
        total = total + np.sum(v**2)
    return total


def enumerate_zip(m, n):
    acc = 0.0
    for i, (a, b) in enumerate(zip(m, n)):
        acc = acc + np.sum(a * b) * (i + 1)
    return acc


def branch_in_loop(x):
    s = 0.0
    for i in range(4):
        if i % 2 == 0:
            s = s + np.sum(np.sin(x * i))
        else:
            s = s * 0.5 + np.sum(x**2)
    return s


def loop_in_branch(x, deep):
    if deep:
        for i in range(3):
            x = np.tanh(x) * 1.5
    else:
        x = x * 2.0
    return np.sum(x)


def nested_loops(x):
    for i in range(3):
        for j in range(2):
            x = np.tanh(x * (i + j + 1.0))
    return np.sum(x)


def augmented_in_loop(x):
    y = x * 1.0
    for k in range(3):
        y += np.sin(y)
        y *= 0.9
    return np.sum(y)


def helper_step(h, w):
    return np.tanh(h * w + 0.1)


def helper_in_loop(x, w):
    for i in range(4):
        x = helper_step(x, w)
    return np.sum(x)


def loop_in_helper(x):
    for i in range(3):
        x = np.sin(x) + x
    return x


def calls_loop_helper(x):
    return np.sum(loop_in_helper(x) ** 2)


def loop_else(x):
    for i in range(2):
        x = x * 1.5
    else:
        x = x + 1.0
    return np.sum(x**2)


def zero_iterations(x, n):
    y = x * 2.0
    for i in range(n):
        y = y * x
    return np.sum(y)


def loop_local_escapes(x):
    for i in range(3):
        y = x * (i + 1.0)
    return np.sum(y**2)


def list_of_states(wh, xs):
    h = np.zeros(3)
    hs = []
    for t in range(xs.shape[0]):
        h = np.tanh(wh @ h + xs[t])
        hs.append(h)
    return np.sum(np.stack(hs) ** 2) + np.sum(hs[-1]) + np.sum(sum(hs))


def list_iteration(a, b):
    parts = [a, b * 2.0]
    parts.append(a * b)
    total = 0.0
    for p in parts:
        total = total + np.sum(np.sin(p))
    return total + np.sum(np.concatenate(parts)) + np.sum(np.array(parts)[1])


def index_writes(x):
    y = np.zeros(4)
    for i in range(3):
        y[i] = np.sum(x * (i + 1.0)) ** 2
    y[1:3] += x[:2]
    y[3] = x[0] * x[1]
    return np.sum(y * y)


def index_write_keeps_input(x):
    y = x * 1.0
    y[0] = 0.0
    return np.sum(y * x)


def with_break(x):
    for i in range(10):
        x = x * 1.1 + np.sin(x)
        if np.sum(x) > 3.0:
            break
    else:
        x = x * 0.0
    return np.sum(x**2)


def with_continue(x):
    total = 0.0
    for i in range(5):
        if i % 2 == 1:
            continue
        total = total + np.sum(x ** (i + 1))
    return total


def early_returns(x):
    if np.sum(x) > 0:
        return np.sum(np.sin(x))
    y = x * 2.0
    if np.max(x) > -0.1:
        return np.sum(y**2)
    return np.sum(np.exp(y))


def while_with_break(x):
    n = 0
    while n < 100:
        x = x * 0.5 + 0.1
        n = n + 1
        if np.sum(x * x) < 0.5:
            break
    return np.sum(x)


def nested_break(x):
    for i in range(3):
        for j in range(4):
            if j > i:
                break
            x = np.sin(x) + 0.5 * x
    return np.sum(x)


def tuples_built_and_unpacked(a, b):
    t = (a * 2.0, b)
    u, v = t
    w = t[1] * t[0]
    return np.sum(w + u) + np.sum(v**2)


def value_from_the_breaking_iteration(x):
    for i in range(3):
        t = np.sin(x[:, i])
        if i == 1:
            break
        x = -0.5 * x
    return np.sum(t)


# Regressions found by the property test (tests/property/test_property.py).


def merged_value_read_in_a_loop(x, v):
    t = v * 1.0
    if np.sum(x) > 100.0:
        t = v * 2.0
    for i in range(2):
        x = x + t
    return np.sum(x)


def two_ifs_reassign(x, v):
    t = v * 1.0
    if np.sum(x) > 100.0:
        t = t * 2.0
    if np.sum(x) > -100.0:
        t = t + x[0]
    return np.sum(t)


def loop_value_read_in_next_loop(x, v):
    for i in range(2):
        t = v * 2.0
    for i in range(2):
        x = x + t
    return np.sum(x)


def overwritten_by_a_later_loop(x):
    a = np.exp(x)
    for j in range(2):
        a = 0.5 * a
    return np.sum(a)


def constant_changed_by_a_later_loop(x):
    n = 3.0
    y = x * n
    for j in range(2):
        n = n + 1.0
    return np.sum(y) + n


def bound_in_a_nested_arm_only(x):
    if np.sum(x) > -100.0:
        if np.sum(x) < -100.0:
            b = x * 3.0
    if np.sum(x) > 100.0:
        a = x * 2.0
    elif np.sum(x) > 50.0:
        c = x * 3.0
    return np.sum(x * x)


def early_return_after_reassigning_if(x, v):
    if np.sum(x) > -100.0:
        v = x[0] * 2.0
    if np.sum(x) > -100.0:
        return np.sum(np.cos(v))
    v = v + x[0]
    return np.sum(v)


def bound_in_one_arm_then_carried_with_break(x, v):
    if np.sum(x) < 100.0:
        t = v[0] * 1.0
    for i in range(2):
        if i == 1:
            break
        t = t * 2.0
    return t


def helper_of_constants(a):
    return a * 2.0


def returns_helper_of_constants(a):
    return helper_of_constants(0.1)


def helper_result_on_constants(x, v):
    return np.sum(returns_helper_of_constants(x)) + np.sum(x * v[0])


def loop_index_reused_after_untaken_arm(x, v):
    if np.sum(x) > 100.0:
        for i in range(3):
            v = v * x[0, i]
    for i in range(2):
        v = v * 2.0
    return np.sum(v)


def bound_on_some_paths_reassigned_later(x, v):
    if np.sum(x) < 100.0:
        t = np.sin(v[0])
    if np.sum(x) > 100.0:
        t = t * v[1]
    return np.sum(x) + t


R = np.random.default_rng(3)
X4 = R.normal(size=4)

CASES = [
    (branch, (X4,)),
    (branch, (-np.abs(X4),)),
    (branch_elif, (X4, 3)),
    (branch_elif, (X4, 2)),
    (branch_elif, (X4, 0)),
    (branch_without_else, (X4,)),
    (branch_without_else, (-np.abs(X4),)),
    (conditions_with_and_or, (X4, True)),
    (conditions_with_and_or, (X4, False)),
    (conditional_expression, (X4,)),
    (conditional_expression, (X4 * 0.1,)),
    (scalar_loop, (0.3,)),
    (rnn, (R.normal(size=(3, 3)) * 0.5, R.normal(size=(3, 2)), R.normal(size=(5, 2)))),
    (computed_bounds, (X4, 3)),
    (while_on_computed_value, (X4,)),
    (loop_over_rows, (R.normal(size=(3, 4)), X4)),
    (loop_over_list, (X4, X4 + 1.0)),
    (enumerate_zip, (R.normal(size=(3, 4)), R.normal(size=(3, 4)))),
    (branch_in_loop, (X4,)),
    (loop_in_branch, (X4, True)),
    (loop_in_branch, (X4, False)),
    (nested_loops, (X4,)),
    (augmented_in_loop, (X4,)),
    (helper_in_loop, (X4, X4 * 0.5)),
    (calls_loop_helper, (X4,)),
    (loop_else, (X4,)),
    (zero_iterations, (X4, 0)),
    (zero_iterations, (X4, 3)),
    (loop_local_escapes, (X4,)),
    (list_of_states, (R.normal(size=(3, 3)) * 0.5, R.normal(size=(4, 3)))),
    (list_iteration, (R.normal(size=3), R.normal(size=3))),
    (index_writes, (X4,)),
    (index_write_keeps_input, (X4,)),
    (with_break, (np.array([0.5, 0.2]),)),
    (with_break, (np.array([-0.5, -0.2]),)),
    (with_continue, (X4,)),
    (early_returns, (np.abs(X4),)),
    (early_returns, (np.array([-0.05, -0.02]),)),
    (early_returns, (-np.abs(X4) - 0.2,)),
    (while_with_break, (np.array([2.5, 1.2]),)),
    (nested_break, (X4,)),
    (tuples_built_and_unpacked, (X4, X4 * 0.5)),
    (value_from_the_breaking_iteration, (R.normal(size=(3, 4)),)),
    (merged_value_read_in_a_loop, (R.normal(size=(3, 4)), X4)),
    (two_ifs_reassign, (R.normal(size=(3, 4)), X4)),
    (loop_value_read_in_next_loop, (R.normal(size=(3, 4)), X4)),
    (overwritten_by_a_later_loop, (X4,)),
    (constant_changed_by_a_later_loop, (X4,)),
    (bound_in_a_nested_arm_only, (X4,)),
    (early_return_after_reassigning_if, (R.normal(size=(3, 4)), X4)),
    (bound_in_one_arm_then_carried_with_break, (R.normal(size=(3, 4)), X4)),
    (helper_result_on_constants, (R.normal(size=(3, 4)), X4)),
    (loop_index_reused_after_untaken_arm, (R.normal(size=(3, 4)), X4)),
    (bound_on_some_paths_reassigned_later, (R.normal(size=(3, 4)), X4)),
]

# autograd's arrays cannot be written by index (it has no setitem).
NO_AUTOGRAD = {index_writes, index_write_keeps_input}


@pytest.mark.parametrize("fn,args", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_gradient_matches_oracles(fn, args):
    assert_gradients(fn, *args, autograd_oracle=fn not in NO_AUTOGRAD)


def test_loop_generated_code_records_and_replays():
    text = s2sgrad.source(s2sgrad.grad(rnn, argnums=(0, 1)))
    assert "loop1_tape = []" in text
    assert "loop1_tape.append(" in text
    assert "in reversed(loop1_tape):" in text
    # Only what the backward sweep needs is recorded: not the pre-activation sum.
    record = next(line for line in text.splitlines() if "loop1_tape.append(" in line)
    assert "total" not in record


def test_branch_records_its_condition():
    text = s2sgrad.source(s2sgrad.grad(branch))
    assert "cond1 = " in text and "if cond1:" in text

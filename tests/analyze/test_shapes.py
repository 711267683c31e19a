"""Shape classes (s2sgrad.analyze.shapes): which values certainly share a shape, so the backward
sweep may skip unbroadcasting, and gradients where broadcasting does happen stay right."""

import numpy as np
import pytest
from conftest import assert_gradients, autograd_grad

import s2sgrad
from s2sgrad.checks import numerical_grad
from s2sgrad.analyze.scalars import known_scalars
from s2sgrad.analyze.shapes import shape_classes
from s2sgrad.pipeline import DEFAULT_TABLE, find_function, from_function, lower


def classes_of(fn):
    core = lower(find_function(from_function(fn)), DEFAULT_TABLE)
    return shape_classes(core, DEFAULT_TABLE, known_scalars(core, DEFAULT_TABLE))


def chain(x, y):
    a = np.sin(x) * 2.0
    b = a + np.cos(x)
    c = b * y
    return np.sum(c)


def carried(x):
    for i in range(3):
        x = x * 0.5 + np.sin(x)
    return x


def accumulator_from_scalar(x):
    total = 0.0
    for i in range(3):
        total = total + x * i
    return np.sum(total)


def slices(x):
    d = x[1:] - x[:-1] ** 2
    e = x[2:] + 1.0
    return np.sum(d * d) + np.sum(e)


def reassigned_in_branch(x, w):
    y = x * 2.0
    if np.sum(x) > 0.0:
        y = y * w
    return np.sum(y * x)


def broadcast_in_loop(x, b):
    for i in range(2):
        x = x + b
    return np.sum(x * x)


def test_elementwise_chain_shares_the_parameter_class():
    classes = classes_of(chain)
    assert classes["b"] == classes["x"] == "<x>"
    assert classes["c"] == "<c>"  # x and y may differ: c's shape is its own
    assert classes["y"] == "<y>"


def test_carried_value_keeps_its_class():
    classes = classes_of(carried)
    assert classes["x"] == "<x>"


def test_accumulator_started_from_a_scalar_has_no_class():
    assert "total" not in classes_of(accumulator_from_scalar)


def test_slices_of_one_length_share_a_class():
    classes = classes_of(slices)
    sliced = {name: cls for name, cls in classes.items() if "[" in cls}
    assert sorted(set(sliced.values())) == ["<x>[1:]", "<x>[2:]"]
    assert classes["d"] == "<x>[1:]"


def test_name_reassigned_with_a_broadcast_has_no_class():
    classes = classes_of(reassigned_in_branch)
    assert classes["y"] == "<x>"
    assert "y_3" not in classes  # the join of y (x's shape) and y * w (its own)


def test_no_unbroadcast_where_shapes_provably_match():
    code = s2sgrad.source(s2sgrad.grad(slices))
    assert "unbroadcast" not in code and "np.shape" not in code
    code = s2sgrad.source(s2sgrad.grad(carried))
    assert "unbroadcast" not in code


@pytest.mark.parametrize("fn, args", [
    (chain, (np.linspace(-1, 1, 5), np.linspace(0.5, 1.5, 3)[:, None])),
    (chain, (np.linspace(-1, 1, 5), 1.5)),
    (carried, (0.3,)),
    (accumulator_from_scalar, (np.linspace(-1, 1, 4),)),
    (slices, (np.linspace(-1, 1, 6),)),
    (slices, (np.linspace(-1, 1, 12).reshape(4, 3),)),
    (reassigned_in_branch, (np.linspace(0.1, 1, 3), np.linspace(0.5, 1.5, 6).reshape(2, 3))),
    (reassigned_in_branch, (np.linspace(-1, -0.1, 3), np.linspace(0.5, 1.5, 6).reshape(2, 3))),
    (broadcast_in_loop, (np.linspace(-1, 1, 3), np.linspace(0.5, 1.5, 6).reshape(2, 3))),
])
def test_gradients_where_broadcasting_happens(fn, args):
    assert_gradients(fn, *args)


def normalized(x):
    s = np.sum(x, axis=1, keepdims=True)
    p = x / s
    q = p - np.max(x, axis=0, keepdims=True)
    return np.sum(q * q)


def test_keepdims_reductions_broadcast_back_to_their_operand():
    classes = classes_of(normalized)
    assert classes["s"] == "<x>/kept"
    assert classes["p"] == classes["q"] == "<x>"
    code = s2sgrad.source(s2sgrad.grad(normalized))
    assert code.count("unbroadcast") == 2  # the two reductions' adjoints are summed back down
    assert_gradients(normalized, np.linspace(0.5, 2.0, 12).reshape(3, 4))


# ----- uniform adjoints: a full sum's adjoint stays one number while rules only scale it ---------


def chain_sum(x):
    return np.sum(np.tanh(x) * np.exp(-x**2) + np.sin(x) ** 2)


def sum_into_reshape(x):
    y = x * 3.0
    return np.sum(y) + np.sum(np.reshape(y, (-1,))[1:] ** 2)


def sum_then_loop(x):
    y = x * 2.0
    total = np.sum(y)
    for i in range(2):
        total = total * 1.5
    return total


def sum_in_branch(x, flag):
    y = x * 2.0
    if flag > 0.0:
        s = np.sum(y)
    else:
        s = np.sum(y * y)
    return s


def plain_sum(x):
    return np.sum(x)


def test_full_sum_adjoint_is_not_broadcast_when_rules_only_scale_it():
    code = s2sgrad.source(s2sgrad.grad(chain_sum))
    assert "sum_vjp" not in code and "s2s.broadcast" not in code


@pytest.mark.parametrize("fn, args", [
    (chain_sum, (np.linspace(-1, 1, 7),)),
    (chain_sum, (np.linspace(-1, 1, 6).reshape(2, 3),)),
    (sum_into_reshape, (np.linspace(-1, 1, 6).reshape(2, 3),)),
    (sum_then_loop, (np.linspace(-1, 1, 4),)),
    (sum_in_branch, (np.linspace(-1, 1, 4), 1.0)),
    (sum_in_branch, (np.linspace(-1, 1, 4), -1.0)),
    (slices, (np.linspace(-1, 1, 6),)),
])
def test_uniform_adjoints(fn, args):
    assert_gradients(fn, *args)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_of_a_sum_is_a_fresh_writable_array(dtype):
    x = np.linspace(-1, 1, 5).astype(dtype)
    for fn in (plain_sum, chain_sum):
        g = s2sgrad.grad(fn)(x)
        assert g.dtype == dtype and g.shape == x.shape and g.flags.writeable
        g *= 2.0  # the caller may scale it in place


def summed_helper(a):
    return np.tanh(np.sum(a / 1.5))


def calls_summed_helper(x):
    return summed_helper(x[0] + np.zeros((3, 4)))


def test_uniform_adjoint_leaves_a_helper_as_a_full_array():
    # Regression (property test, seed 1059): the helper's adjoint of `a` was the one number
    # standing for an array, and the caller's unbroadcast summed a scalar instead of 3 rows.
    assert_gradients(calls_summed_helper, np.linspace(-1, 1, 12).reshape(3, 4))


def mean_chain(x):
    return np.mean(np.sin(x) * 3.0) + np.mean(x**2)


def test_full_mean_keeps_only_the_size():
    code = s2sgrad.source(s2sgrad.grad(mean_chain))
    assert "mean_vjp" not in code and ("np.size(" in code or ".size" in code)
    for x in (np.linspace(-1, 1, 7), np.linspace(-1, 1, 6).reshape(2, 3)):
        assert_gradients(mean_chain, x)
    x32 = np.linspace(-1, 1, 5).astype(np.float32)
    g32 = s2sgrad.grad(mean_chain)(x32)
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, s2sgrad.grad(mean_chain)(x32.astype(np.float64)), rtol=1e-5)


# Copies, zeros_like and index writes keep their array's class, through loops.

def stencil_in_place(u0, r, n):
    u = u0.copy()
    for _ in range(n):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def laplacian_buffer(u0, r, n):
    u = u0.copy()
    lap = np.zeros_like(u)
    for _ in range(n):
        lap[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u = u + r * lap
    return np.sum(u * u)


def write_row_in_loop(x, w):
    out = np.zeros_like(x)
    for t in range(x.shape[0]):
        out[t] = x[t] * w  # w may broadcast the row: the write still keeps out's shape
    return np.sum(out * x)


def list_slice_grows(a, b):
    items = [a]
    items[0:1] = [a, b]  # a list's slice given a longer list: the list grows
    return np.sum(np.multiply(items, [a]))


def write_of_unknown_width(u0, v):
    u = u0.copy()
    for _ in range(2):
        u[1:] = v * u[1:]  # not of u[1:]'s class: only an array would keep u's shape
    return np.sum(u * u0)


def test_copies_and_index_writes_keep_the_class_through_a_loop():
    core = lower(find_function(from_function(stencil_in_place)), DEFAULT_TABLE)
    classes = shape_classes(core, DEFAULT_TABLE, known_scalars(core, DEFAULT_TABLE, frozenset({"r", "n"})))
    assert classes["u"] == classes["u0"] == "<u0>"
    core = lower(find_function(from_function(laplacian_buffer)), DEFAULT_TABLE)
    classes = shape_classes(core, DEFAULT_TABLE, known_scalars(core, DEFAULT_TABLE, frozenset({"r", "n"})))
    assert classes["lap"] == classes["u"] == "<u0>"


def test_a_write_of_unknown_width_or_into_a_list_keeps_no_class():
    assert "u" not in classes_of(write_of_unknown_width)  # carried through the loop
    classes = classes_of(list_slice_grows)
    assert classes.get("items_2", "?") != classes.get("items")


@pytest.mark.parametrize("fn", [stencil_in_place, laplacian_buffer])
def test_stencil_loops_record_no_shapes_and_unbroadcast_nothing(fn):
    text = s2sgrad.source(s2sgrad.value_and_grad(fn), numbers=("r", "n"))
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert "unbroadcast" not in code and "np.shape" not in code and "_shape" not in code
    u0 = np.sin(np.linspace(0.0, 3.0, 12))
    grad = s2sgrad.grad(fn)(u0, 0.25, 5)
    expected = s2sgrad.checks.numerical_grad(fn, (u0, 0.25, 5), 0)
    np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn, args", [
    (stencil_in_place, (np.sin(np.linspace(0.0, 3.0, 9)), 0.2, 4)),
    (stencil_in_place, (np.sin(np.linspace(0.0, 3.0, 9)), np.linspace(0.1, 0.3, 7), 3)),
    (laplacian_buffer, (np.sin(np.linspace(0.0, 3.0, 9)), 0.2, 4)),
    (laplacian_buffer, (np.sin(np.linspace(0.0, 3.0, 9)), np.linspace(0.1, 0.3, 9), 3)),
    (write_row_in_loop, (np.linspace(-1, 1, 6).reshape(2, 3), np.linspace(0.5, 1.5, 3))),
    (write_row_in_loop, (np.linspace(-1, 1, 6).reshape(2, 3), 1.5)),
    (write_of_unknown_width, (np.linspace(-1, 1, 4), 0.5)),
    (write_of_unknown_width, (np.linspace(-1, 1, 4), np.linspace(0.5, 1.5, 3))),
])
def test_gradients_through_writes_and_copies(fn, args):
    assert_gradients(fn, *args, autograd_oracle=False)  # autograd writes into no array


def test_second_order_through_the_stencil():
    u0 = np.sin(np.linspace(0.0, 3.0, 8))
    h = s2sgrad.hessian(laplacian_buffer)(u0, 0.2, 3)
    g = s2sgrad.grad(laplacian_buffer)
    numeric = np.array([(g(u0 + 1e-5 * e, 0.2, 3) - g(u0 - 1e-5 * e, 0.2, 3)) / 2e-5 for e in np.eye(8)])
    assert np.allclose(h, numeric, rtol=1e-5, atol=1e-7)


RATE = 0.5  # a module global


def bound_later_in_a_loop(a, b, n):
    for _ in range(n):
        if a > b:
            t = a * b  # t: None before the loop (the lowering's stand-in), then numbers
        else:
            t = b * RATE
        a = a + np.sum(t) * 0.5  # a reduction of a number
    return a


def test_known_scalars_take_none_stand_ins_reductions_of_numbers_and_assumed_globals():
    core = lower(find_function(from_function(bound_later_in_a_loop)), DEFAULT_TABLE)
    numbers = frozenset({"a", "b", "n"})
    plain = known_scalars(core, DEFAULT_TABLE, numbers, reductions=False)
    assumed = known_scalars(core, DEFAULT_TABLE, numbers, reductions=False, assumed=frozenset({"RATE"}))
    assert "t" not in plain and "a" not in plain  # b * RATE: RATE's type is not known
    assert {"t", "a", "b"} <= assumed  # t's None, np.sum of a number, RATE taken as a number
    assert "t" in known_scalars(core, DEFAULT_TABLE, numbers, assumed=frozenset({"RATE"}))


# ----- a name started from a number literal and widened to arrays of one class --------------------


def windows_from_zero(w, x):
    m = len(x) - len(w) + 1
    y = 0.0
    for k, wk in enumerate(w):
        y = y + wk * x[k:k + m]
    return np.sum(np.tanh(y))


def polynomial_from_zero(c, x):
    y = 0
    for ck in c:
        y = y * x + ck
    return np.sum(np.sin(y))


def started_from_a_parameter(b, x):
    y = b  # a number with an adjoint of its own: the sum of y's
    for k in range(3):
        y = y + x * k
    return np.sum(y * y)


def reset_in_each_step(x):
    total = 0.0
    for i in range(3):
        acc = 0.0
        for j in range(2):
            acc = acc + np.sin(x * (i + j + 1))
        total = total + np.sum(acc * acc)
    return total


def may_not_run(x, n):
    y = 0.0
    for k in range(n):
        y = y + x * (k + 1)
    return np.sum(y * x) + np.sum(np.cos(x))


def test_a_name_started_from_a_number_literal_is_widened_not_classed():
    classes = classes_of(accumulator_from_scalar)
    assert "total" not in classes  # a number in the first step, an array after
    assert classes.widened == {"total": "<x>"}
    assert classes_of(started_from_a_parameter).widened == {}  # b's adjoint is read


def _specialized_code(fn, args, argnums):
    vg = s2sgrad.value_and_grad(fn, argnums=argnums)
    vg(*args)
    text = s2sgrad.source(vg, like=args)
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


@pytest.mark.parametrize("fn, args", [
    (windows_from_zero, (np.linspace(-0.5, 0.5, 4), np.sin(np.linspace(0.0, 3.0, 11)))),
    (polynomial_from_zero, (np.linspace(-0.5, 0.5, 4), np.linspace(-1.0, 1.0, 7))),
])
def test_a_widened_accumulator_records_and_sums_no_shape(fn, args):
    code = _specialized_code(fn, args, (0, 1))
    assert "unbroadcast" not in code and "template" not in code and "np.shape" not in code, code


@pytest.mark.parametrize("fn, args", [
    (windows_from_zero, (np.linspace(-0.5, 0.5, 4), np.sin(np.linspace(0.0, 3.0, 11)))),
    (polynomial_from_zero, (np.linspace(-0.5, 0.5, 4), np.linspace(-1.0, 1.0, 7))),
    (polynomial_from_zero, (np.linspace(-0.5, 0.5, 4), 0.7)),
    (started_from_a_parameter, (0.3, np.linspace(-1.0, 1.0, 5))),
    (started_from_a_parameter, (np.linspace(0.1, 0.2, 5), np.linspace(-1.0, 1.0, 10).reshape(2, 5))),
    (reset_in_each_step, (np.linspace(-1.0, 1.0, 5),)),
    (accumulator_from_scalar, (np.linspace(-1.0, 1.0, 4),)),
])
def test_gradients_through_an_accumulator_started_from_a_number(fn, args):
    """The code for any shape, then the code made for the arguments' shapes (the second and
    third calls), against autograd and central differences."""
    argnums = tuple(range(len(args)))
    vg = s2sgrad.value_and_grad(fn, argnums=argnums)
    want = autograd_grad(fn, args, argnums)
    for _ in range(3):
        value, grads = vg(*args)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
        for got, expected in zip(grads, want):
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    for i in argnums:
        np.testing.assert_allclose(grads[i], numerical_grad(fn, args, i), rtol=1e-5, atol=1e-6)


def reset_in_a_branch(x, n):
    y = x * 1.5
    for k in range(n):
        if k == 1:
            y = 0.0  # the literal in a later step: the adjoint there stops at it
        y = y + np.sin(x) * (k + 1)
    return np.sum(y * y)


def reset_after_the_update(x, n):
    y = 0.0
    for k in range(n):
        y = y * 0.5 + x
        if k == 1:
            y = 0.0
    return np.sum(np.cos(x) * y) + np.sum(np.sin(y))


@pytest.mark.parametrize("fn", [may_not_run, reset_in_a_branch, reset_after_the_update])
@pytest.mark.parametrize("n", [0, 1, 2, 4])
def test_a_widened_accumulator_of_a_loop_that_may_not_run_or_is_reset(fn, n):
    x = np.linspace(-1.0, 1.0, 5)
    vg = s2sgrad.value_and_grad(fn)
    for _ in range(3):
        value, grad = vg(x, n)
        np.testing.assert_allclose(value, fn(x, n), rtol=1e-12)
        np.testing.assert_allclose(grad, numerical_grad(fn, (x, n), 0), rtol=1e-5, atol=1e-6)
    assert np.shape(grad) == x.shape

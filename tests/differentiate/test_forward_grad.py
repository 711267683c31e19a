"""Forward mode with one tangent per parameter side by side (differentiate/forward_grad.py):
``<f>_forward_grad`` against reverse mode and central differences, its code (no tape, one tangent
line per parameter that varies a value), and grad's use of it (compiled=True: test_compiled.py)."""

import math
import re

import number_inputs
import numpy as np
import pytest

import s2sgrad
from s2sgrad.checks import numerical_grad
from s2sgrad.errors import TransformError, UsageError
from s2sgrad.forward_code import build_jvp


def kepler(M, e, n):
    E = M
    for _ in range(n):
        E = E - (E - e * math.sin(E) - M) / (1.0 - e * math.cos(E))
    return E


def rebinds_in_place(x, y):
    i = 0
    while i < 4:
        x = math.sin(x) * y + 0.5 * x  # the tangents read the old x: they go first
        y = y * 0.9
        i += 1
    return x * y


def looped_helper(a, b):
    total = a
    for _ in range(3):
        total = total * b + 0.25
    return total, a * b


def calls_a_helper(x, y):
    t, u = looped_helper(x, y)  # a callee with a loop stays a call: its jvp per parameter
    z = looped_helper(t, 0.5)[0]
    return z * u + y


def one_ignored(x, y):
    return x ** 3 + 0.0 * math.floor(y)


def arrays_too(x, w):
    return np.sum(np.tanh(x * w) ** 2)


def _each(fun, wrt, args, seeds):
    """``(value, tangents)`` of the generated ``<f>_forward_grad``, and its text."""
    text, fn, names = build_jvp(fun, wrt, mode="fwd_grad")
    value, tangents = fn(*args, **dict(zip(names, seeds)))
    return value, tangents, text


@pytest.mark.parametrize("fun, args", [
    (kepler, (0.7, 0.3, 20)),
    (rebinds_in_place, (0.4, 1.3)),
    (calls_a_helper, (0.6, -0.8)),
    (one_ignored, (0.9, 2.5)),
])
def test_each_tangent_is_its_parameters_derivative(fun, args):
    wrt = ("M", "e") if fun is kepler else tuple(fun.__code__.co_varnames[:2])
    value, tangents, _ = _each(fun, wrt, args, (1.0, 1.0))
    assert value == pytest.approx(fun(*args), rel=1e-14)
    reverse = s2sgrad.grad(fun, argnums=(0, 1))
    for i, tangent in enumerate(tangents):
        assert tangent == pytest.approx(numerical_grad(fun, args, i), rel=1e-6, abs=1e-9)
    grads = s2sgrad.value_and_grad(fun, argnums=(0, 1))(*args)[1]  # reverse mode, code for numbers
    np.testing.assert_allclose(grads, tangents, rtol=1e-13)
    arrays = tuple(np.array(a) if i < 2 else a for i, a in enumerate(args))  # 0-d: reverse mode
    np.testing.assert_allclose(reverse(*arrays), tangents, rtol=1e-10)


def test_arrays_take_a_direction_each():
    rng = np.random.default_rng(3)
    x, w, dx, dw = rng.normal(size=(4, 5))
    _, (tx, tw), _ = _each(arrays_too, ("x", "w"), (x, w), (dx, dw))
    gx, gw = s2sgrad.grad(arrays_too, argnums=(0, 1))(x, w)
    assert tx == pytest.approx(np.sum(gx * dx), rel=1e-12)
    assert tw == pytest.approx(np.sum(gw * dw), rel=1e-12)


def test_the_code_keeps_no_tape_and_names_each_tangent_by_its_parameter():
    _, _, text = _each(kepler, ("M", "e"), (0.7, 0.3, 5), (1.0, 1.0))
    assert "def kepler_forward_grad(M, e, n, M_dM, e_de):" in text
    assert "append" not in text and "tape" not in text
    assert "E_dM = " in text and "E_de = " in text
    _, _, text = _each(one_ignored, ("x", "y"), (0.9, 2.5), (1.0, 1.0))
    assert "x_dy" not in text  # x's value does not depend on y: no line carries it


X_GLOBAL = np.linspace(0.2, 1.4, 7)


def floats_into_an_array(a, b):
    v = a * X_GLOBAL  # an array: each tangent line would be an array operation
    return np.sum(np.sin(v) * b)


def test_grad_of_two_floats_runs_forward_mode_where_every_tangent_is_a_number():
    grad2 = s2sgrad.grad(kepler, argnums=(0, 1))
    assert grad2(0.7, 0.3, 10) == pytest.approx(
        tuple(numerical_grad(kepler, (0.7, 0.3, 10), i) for i in (0, 1)), rel=1e-6)
    text = s2sgrad.source(grad2, mode="fwd", numbers=("M", "e"))
    assert "def kepler_forward_grad(M, e, n, M_dM, e_de):" in text and "append" not in text
    with pytest.raises(TransformError, match="`M` may hold an array"):
        s2sgrad.source(grad2, mode="fwd")  # made for arrays: M may be one
    assert "append" in s2sgrad.source(grad2, numbers=("M", "e"))  # the sweeps, still there

    grad_mixed = s2sgrad.grad(floats_into_an_array, argnums=(0, 1))
    expected = (np.sum(np.cos(0.3 * X_GLOBAL) * X_GLOBAL) * 1.5, np.sum(np.sin(0.3 * X_GLOBAL)))
    np.testing.assert_allclose(grad_mixed(0.3, 1.5), expected, rtol=1e-13)
    with pytest.raises(TransformError, match="`v` may hold an array"):
        s2sgrad.source(grad_mixed, mode="fwd", numbers=("a", "b"))  # the sweeps ran

    def three(a, b, c):
        return a * math.sin(b) * c

    grad3 = s2sgrad.grad(three, argnums=(0, 1, 2))  # three floats: the sweeps
    np.testing.assert_allclose(grad3(0.5, 0.4, 2.0), [math.sin(0.4) * 2.0, 0.5 * math.cos(0.4) * 2.0,
                                                      0.5 * math.sin(0.4)], rtol=1e-14)
    with pytest.raises(UsageError):
        s2sgrad.source(grad3, mode="fwd")


def test_second_order_through_a_function_of_two_floats():
    def f(x, y):
        return math.sin(x * y) + x ** 2 * y

    s2sgrad.check_grads(f, (0.4, 1.1), order=2, modes=("rev", "fwd"))
    hess = s2sgrad.hessian(f, argnums=(0, 1))(0.4, 1.1)
    c, s = math.cos(0.44), math.sin(0.44)
    np.testing.assert_allclose(np.array(hess, dtype=float),
                               [[-1.1 ** 2 * s + 2 * 1.1, c - 0.44 * s + 0.8], [c - 0.44 * s + 0.8, -0.16 * s]],
                               rtol=1e-12)


@s2sgrad.differentiable(wrt=("x", "y"))
def decorated(x, y, n):
    for _ in range(n):
        x = x - 0.1 * math.sin(x * y)
    return x * y


def test_the_decorator_runs_the_same_forward_mode_for_floats():
    value, grads = decorated.value_and_grad(0.8, 1.3, 7)
    assert value == pytest.approx(decorated(0.8, 1.3, 7), rel=1e-14)
    for i in (0, 1):
        assert grads[i] == pytest.approx(numerical_grad(decorated, (0.8, 1.3, 7), i), rel=1e-6)
    arrays = decorated.grad(np.array(0.8), np.array(1.3), 7)  # 0-d arrays: the reverse sweeps
    np.testing.assert_allclose(arrays, grads, rtol=1e-12)
    assert decorated.grad(0.8, 1.3, 7) == grads  # again, by the arguments' types


def newton_in_steps(M, e, n):
    E = M
    for _ in range(n):
        f = E - e * math.sin(E) - M  # cos(E) is computed after sin(E)'s tangent needs it
        fprime = 1.0 - e * math.cos(E)
        E -= f / fprime
    return E


@pytest.mark.parametrize("fun", [kepler, newton_in_steps])
def test_tangents_read_the_values_the_function_computes(fun):
    """Each step calls sin and cos once: the tangent lines read ``sin_E``/``cos_E`` (cos's
    statement goes before the first tangent line reading it), and a quotient's tangent divides
    once; the tangents still agree with differences and with reverse mode."""
    args = (0.7, 0.3, 20)
    text, fn, names = build_jvp(fun, ("M", "e"), numbers=("M", "e", "n"), mode="fwd_grad")
    value, tangents = fn(*args, 1.0, 1.0)
    step = "\n".join(line for line in text.split("for _ in range(n):", 1)[1].splitlines()
                     if not line.strip().startswith("#"))
    assert step.count("math.sin(") == 1 and step.count("math.cos(") == 1, text
    assert step.count("/") == 3, text  # the value's quotient and one per tangent
    assert "+ -" not in text
    assert value == pytest.approx(fun(*args), rel=1e-14)
    for i, tangent in enumerate(tangents):
        assert tangent == pytest.approx(numerical_grad(fun, args, i), rel=1e-6, abs=1e-9)
    np.testing.assert_allclose(s2sgrad.value_and_grad(fun, argnums=(0, 1))(*args)[1], tangents,
                               rtol=1e-12)
    text1, fn1, _ = build_jvp(fun, ("M",), numbers=("M", "e", "n"))  # one tangent: the same reads
    assert text1.split("for _ in range(n):", 1)[1].count("math.cos(") == 2  # the comment's too
    assert fn1(*args, 1.0)[1] == pytest.approx(tangents[0], rel=1e-13)


SCALE = 2.0


def scaled_root(x, y):
    return math.sqrt(x) * y * SCALE


def test_a_call_of_two_floats_made_before_reads_globals_now_and_fails_as_python_does():
    global SCALE
    grad2 = s2sgrad.grad(scaled_root, argnums=(0, 1))
    for _ in range(3):  # the first call makes forward mode, the next ones run it at once
        np.testing.assert_allclose(grad2(4.0, 3.0), (0.25 * 3.0 * 2.0, 2.0 * 2.0), rtol=1e-15)
    SCALE = 5.0
    try:
        np.testing.assert_allclose(grad2(4.0, 3.0), (0.25 * 3.0 * 5.0, 2.0 * 5.0), rtol=1e-15)
        with pytest.raises(ValueError, match="math domain error"):
            grad2(-1.0, 3.0)  # forward mode fails; the sweeps run the user's code, which raises
        np.testing.assert_allclose(grad2(9.0, 1.0), (5.0 / 6.0, 3.0 * 5.0), rtol=1e-15)
    finally:
        SCALE = 2.0


def numpy_on_a_float(x, n):
    for _ in range(n):
        x = x * 0.9 + np.sin(x)
    return np.sqrt(x) + np.log(x)


def exp_of_a_float(x):
    return np.exp(x) * 2.0


def test_numpy_functions_of_floats_run_as_math_and_fall_back_where_math_raises():
    vg = s2sgrad.value_and_grad(numpy_on_a_float)
    text = s2sgrad.source(vg, mode="fwd", numbers=("x", "n"))
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert "math.sin(x)" in code and "math.cos(x)" in code and "math.sqrt(" in code
    assert "np.sin" not in code and "np.sqrt" not in code
    for x in (0.7, 2.5):
        value, grad = vg(x, 3)
        assert value == pytest.approx(numpy_on_a_float(x, 3), rel=1e-14)
        assert grad == pytest.approx(numerical_grad(numpy_on_a_float, (x, 3), 0), rel=1e-6, abs=1e-9)
        assert grad == pytest.approx(float(s2sgrad.grad(numpy_on_a_float)(np.array(x), 3)), rel=1e-13)
        assert type(grad) is float
    with np.errstate(invalid="ignore", divide="ignore"):
        for _ in range(2):  # math.sqrt raises: this call runs the sweeps, numpy's values
            value, grad = vg(-4.0, 0)
            assert np.isnan(value) and np.isnan(grad)
    value, grad = vg(0.7, 3)  # forward mode again
    assert value == pytest.approx(numpy_on_a_float(0.7, 3), rel=1e-14)
    assert grad == pytest.approx(numerical_grad(numpy_on_a_float, (0.7, 3), 0), rel=1e-6)
    with np.errstate(over="ignore"):
        value, grad = s2sgrad.value_and_grad(exp_of_a_float)(1000.0)  # math.exp overflows
        assert value == np.inf and grad == np.inf
    assert "np.sin(x)" in s2sgrad.source(vg, mode="fwd")  # made for arrays: numpy's


DT = 0.1  # a module global: forward mode takes it as a number while it holds one


def euler(x, v, n):
    for _ in range(n):
        v = v - DT * np.sin(x)
        x = x + DT * v
    return np.sum(x * v)


def test_a_global_holding_a_float_counts_as_a_number_and_may_change():
    global DT
    grad2 = s2sgrad.grad(euler, argnums=(0, 1))
    args = (0.4, -0.3, 6)
    text = s2sgrad.source(grad2, mode="fwd", numbers=("x", "v", "n"))
    assert "def euler_forward_grad(" in text and "math.sin(x)" in text
    for _ in range(2):
        np.testing.assert_allclose(grad2(*args), [numerical_grad(euler, args, k) for k in (0, 1)],
                                   rtol=1e-6)
    DT = np.array([0.1, 0.05])  # now an array: math.sin of one raises, the sweeps run
    try:
        for _ in range(2):
            np.testing.assert_allclose(grad2(*args), [numerical_grad(euler, args, k) for k in (0, 1)],
                                       rtol=1e-6)
    finally:
        DT = 0.1


W32 = np.linspace(0.5, 1.5, 5, dtype=np.float32)


def through_a_float32_sum(x):
    s = np.sum(W32 * x)  # a float32 number
    return np.sin(s) * x


def test_a_reductions_number_keeps_numpys_function():
    vg = s2sgrad.value_and_grad(through_a_float32_sum)
    value, grad = vg(0.3)
    assert value == through_a_float32_sum(0.3)  # float32 arithmetic, as the user's
    assert grad == pytest.approx(numerical_grad(through_a_float32_sum, (0.3,), 0), rel=1e-3)
    assert "np.sin(s)" in s2sgrad.source(vg, mode="fwd", numbers=("x",))


def three_factors(a, b):
    s = math.sin(a)
    u = b * s * a  # (b * s) * a: no product of s and a of its own, read as the user wrote it
    v = s * a + b  # s * a itself: the shared product, bit for bit
    return u * v + (s * a) * b


@pytest.mark.parametrize("fun, args, shared", [
    (number_inputs.newton_in_place, (0.9, 0.3, 20), (("e", "sin_E"), ("e", "cos_E"))),
    (kepler, (0.9, 0.3, 20), (("e", "sin_E"), ("e", "cos_E"))),
    (three_factors, (0.7, 1.3), (("s", "a"),)),
])
def test_products_two_lines_hold_are_computed_once_in_code_for_numbers(fun, args, shared):
    grad2 = s2sgrad.value_and_grad(fun, argnums=(0, 1))
    value, got = grad2(*args)
    assert value == fun(*args)  # the primal's products as written: the value bit for bit
    value_again, again = grad2(*args)  # the recorded call
    assert value_again == value and again == got
    sweeps = s2sgrad.value_and_grad(fun, argnums=(0, 1))
    text = s2sgrad.source(sweeps, mode="fwd", numbers=tuple(fun.__code__.co_varnames[:len(args)]))
    code = "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))
    for x, y in shared:  # multiplied once (a step), the product read by the primal and the tangents
        products = re.findall(rf"(\w+) = (?:{x} \* {y}|{y} \* {x})\n", code)
        assert len(products) == 1 and len(re.findall(rf"\b{x} \* {y}\b|\b{y} \* {x}\b", code)) == 1, text
        assert len(re.findall(rf"\b{products[0]}\b", code)) >= 3, text  # bound, read twice or more
    numeric = tuple(numerical_grad(fun, args, i) for i in (0, 1))
    assert got == pytest.approx(numeric, rel=1e-6)
    _, by_sweeps = s2sgrad.value_and_grad(fun, argnums=(0, 1, 2) if len(args) == 3 else (0, 1, 0))(*args)
    np.testing.assert_allclose(got, by_sweeps[:2], rtol=1e-12)  # three floats: reverse mode

"""Code made for calls passing numbers (s2sgrad/specialize.py, pipeline.Options.numbers): the same
gradients as the code made for arrays, and none of its shape bookkeeping."""

import math
import types

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from conftest import assert_gradients
from s2sgrad.checks import numerical_grad

import number_inputs as ni
import s2sgrad
from s2sgrad.errors import UsageError


def _same_at_numbers_and_arrays(fn, args, argnums):
    """The gradient at Python numbers (specialized code) equals the one at 0-d arrays (the code
    made for arrays) and central differences; returns it."""
    at_numbers = s2sgrad.value_and_grad(fn, argnums=argnums)(*args)
    zero_d = tuple(np.array(a) if isinstance(a, float) else a for a in args)
    at_arrays = s2sgrad.value_and_grad(fn, argnums=argnums)(*zero_d)
    np.testing.assert_allclose(at_numbers[0], at_arrays[0], rtol=1e-13)
    for k, i in enumerate(argnums):
        np.testing.assert_allclose(at_numbers[1][k], at_arrays[1][k], rtol=1e-12)
        np.testing.assert_allclose(at_numbers[1][k], numerical_grad(fn, args, i), rtol=1e-6)
        assert np.shape(at_numbers[1][k]) == np.shape(args[i])
    return at_numbers[1]


@pytest.mark.parametrize("fn, args, argnums", [
    (ni.kepler, (0.7, 0.3, 30), (0, 1)),
    (ni.pendulum, (0.4, -0.2, 9.0, 0.01, 50), (0, 1, 2, 3)),
    (ni.scaled_sum, (0.8, np.linspace(-1, 1, 5)), (0, 1)),
    (ni.mixed_loop, (1.3, np.linspace(-1, 2, 4), 6), (0, 1)),
    (ni.trig, (0.3, 1.1), (0, 1)),
])
def test_gradients_at_numbers_equal_those_at_arrays(fn, args, argnums):
    grads = _same_at_numbers_and_arrays(fn, args, argnums)
    assert all(isinstance(grads[k], float) for k, i in enumerate(argnums)
               if isinstance(args[i], float))


def test_a_number_given_where_an_array_was_gets_its_own_code():
    # One gradient function called with an array, a number and an array again: each call runs
    # the code made for what it passes.
    g = s2sgrad.grad(ni.scaled_sum, argnums=(0, 1))
    x = np.linspace(-1, 1, 5)
    for a in (np.full(5, 0.8), 0.8, np.full(5, -0.3), -0.3):
        got = g(a, x)
        for k in range(2):
            np.testing.assert_allclose(got[k], numerical_grad(ni.scaled_sum, (a, x), k), rtol=1e-6)
            assert np.shape(got[k]) == np.shape((a, x)[k])


def test_numbers_by_keyword_and_numpy_scalars():
    x = np.linspace(0.1, 1.0, 4)
    for scale in (3.0, np.float64(3.0), np.float32(3.0), 3):
        got = s2sgrad.grad(ni.keyword_scale, argnums=(0, 1))(x, scale=scale)
        assert_gradients(ni.keyword_scale, x, float(scale), argnums=(0, 1))
        np.testing.assert_allclose(got[1], numerical_grad(ni.keyword_scale, (x, float(scale)), 1),
                                   rtol=1e-5)


def test_the_code_for_numbers_records_no_shapes():
    g = s2sgrad.value_and_grad(ni.kepler, argnums=(0, 1))
    g(0.7, 0.3, 10)
    text = s2sgrad.source(g, numbers=("M", "e", "n"))
    assert "np.shape" not in text and "unbroadcast" not in text
    assert "numbers=('M', 'e', 'n')" in text.splitlines()[0]
    generic = s2sgrad.source(g)
    assert "unbroadcast" in generic  # M, e may be arrays there
    # the backward sweep reads the forward sweep's sin and cos of E (reuse.py), recomputes none
    backward = "\n".join(line for line in text[text.index("def kepler_bwd"):].splitlines()
                         if not line.strip().startswith("#"))
    assert "math.cos" not in backward and "math.sin" not in backward and "np.cos" not in backward


def test_forward_mode_of_one_float_is_specialized_too():
    def loop(x, n):
        for _ in range(n):
            x = 0.9 * x + 0.3 * math.sin(x)
        return x

    g = s2sgrad.value_and_grad(loop)
    value, dx = g(0.5, 5)
    np.testing.assert_allclose(dx, numerical_grad(loop, (0.5, 5), 0), rtol=1e-6)
    text = s2sgrad.source(g, mode="fwd", numbers=("x", "n"))
    code = [line for line in text.split("def loop_jvp")[1].splitlines() if not line.strip().startswith("#")]
    assert any("math.cos(x)" in line for line in code) and not any("np." in line for line in code)


def test_source_with_numbers_checks_its_arguments():
    g = s2sgrad.grad(ni.kepler)
    with pytest.raises(UsageError, match="numbers names parameters of kepler"):
        s2sgrad.source(g, numbers=("E",))
    with pytest.raises(UsageError, match="grad or value_and_grad"):
        s2sgrad.source(s2sgrad.jacfwd(ni.kepler), numbers=("M",))


def test_math_derivatives_agree_with_autograd_at_second_order():
    def f(x, y):
        return math.sin(x) * math.cos(y) + math.tan(x * 0.5)

    def twin(x, y):
        return anp.sin(x) * anp.cos(y) + anp.tan(x * 0.5)

    np.testing.assert_allclose(s2sgrad.grad(f, argnums=(0, 1))(0.3, 1.2),
                               autograd.grad(twin, (0, 1))(0.3, 1.2), rtol=1e-13)
    np.testing.assert_allclose(s2sgrad.hessian(f, argnums=(0, 1))(0.3, 1.2),
                               autograd.hessian(lambda v: twin(v[0], v[1]))(np.array([0.3, 1.2])),
                               rtol=1e-12)


def test_the_decorator_runs_the_code_for_numbers():
    copy = types.FunctionType(ni.pendulum.__code__, ni.pendulum.__globals__, "pendulum")
    f = s2sgrad.differentiable(wrt=("theta", "omega", "k"))(copy)  # (attributes go on the copy)
    args = (0.4, -0.2, 9.0, 0.01, 40)
    value, grads = f.value_and_grad(*args)
    again = f.value_and_grad(*(np.array(a) if isinstance(a, float) else a for a in args))
    for k in range(3):
        np.testing.assert_allclose(grads[k], again[1][k], rtol=1e-12)
        np.testing.assert_allclose(grads[k], numerical_grad(ni.pendulum, args, k), rtol=1e-6)
        assert isinstance(grads[k], float)


def test_an_update_refused_for_arrays_runs_for_numbers():
    # `E = M; E -= d` would change M's array in place; a number is immutable, so the code made
    # for calls passing numbers runs, and a call with an array there is refused, located.
    args = (0.7, 0.3, 12)
    for transform in (s2sgrad.value_and_grad,
                      lambda f, argnums: s2sgrad.differentiable(wrt=("M", "e"))(
                          types.FunctionType(f.__code__, f.__globals__, f.__name__)).value_and_grad):
        g = transform(ni.newton_in_place, argnums=(0, 1))
        value, grads = g(*args)
        np.testing.assert_allclose(value, ni.kepler(*args), rtol=1e-14)
        for k in range(2):
            np.testing.assert_allclose(grads[k], numerical_grad(ni.newton_in_place, args, k), rtol=1e-6)
        with pytest.raises(s2sgrad.TransformError, match="may share its array with `M`") as info:
            g(np.array([0.7, 0.2]), 0.3, 12)
        assert "number_inputs.py" in str(info.value) and "E -= f / fprime" in str(info.value)


GLOBAL_FACTOR = 0.25  # a module global: its type is not known to the transform


def alias_of_a_number(a, b, n):
    t = a  # t is a's object, a number, which no update changes
    for _ in range(n):
        t -= b * GLOBAL_FACTOR  # t may be an array made here (the global's type is unknown)
        t = 0.5 * t + math.sin(t)
    return t * a


def test_an_update_of_a_name_that_may_be_a_number_shares_nothing_with_it():
    args = (0.7, 0.3, 5)
    grads = s2sgrad.grad(alias_of_a_number, argnums=(0, 1))(*args)
    for k in range(2):
        np.testing.assert_allclose(grads[k], numerical_grad(alias_of_a_number, args, k), rtol=1e-6)
    with pytest.raises(s2sgrad.TransformError, match="may share its array with `a`"):
        s2sgrad.grad(alias_of_a_number, argnums=(0, 1))(np.array([0.7, 0.2]), 0.3, 5)

"""The compiled option (s2sgrad/compiled.py): grad and value_and_grad with ``compiled=True`` run
the forward-mode code for float arguments compiled by numba; the results equal the Python code's
and central differences; code reading a global that may change, or that numba cannot compile,
runs as Python with a CompileWarning; arrays run reverse mode as before."""

import math
import warnings

import numpy as np
import pytest

import s2sgrad
from s2sgrad.checks import numerical_grad
from s2sgrad.compiled import call_compiled, changing_globals, compile_numba
from s2sgrad.errors import CompileWarning
from s2sgrad.returned import NUMBERS_ATTR

numba = pytest.importorskip("numba")

GAIN = 1.5


def kepler(M, e, n):
    E = M
    for _ in range(n):
        E = E - (E - e * math.sin(E) - M) / (1.0 - e * math.cos(E))
    return E


def pendulum(theta, omega, g_over_l, damping, dt, n):
    i = 0
    while i < n:
        omega -= dt * (g_over_l * math.sin(theta) + damping * omega)
        theta += dt * omega
        i += 1
    return theta * theta + 0.5 * omega * omega


def reads_a_global(x):
    return GAIN * math.exp(x)


def with_numpy(x, y):
    return np.sin(x) * np.exp(-y * y) + np.sqrt(x * x + 1.0)


def summed(x, y):
    return np.sum(np.sin(x) * np.exp(-y * y) + np.sqrt(x * x + 1.0))


def _compiled_forward(g):
    """The ForwardGradient a call with floats ran (the code made for numbers)."""
    (forward,) = getattr(g, NUMBERS_ATTR).forwards.values()
    return forward


@pytest.mark.parametrize("fun, args, argnums", [
    (kepler, (0.7, 0.3, 30), (0, 1)),
    (pendulum, (0.3, 0.1, 9.8, 0.2, 0.01, 50), (0, 1, 2, 3)),
    (with_numpy, (0.4, 0.8), (0, 1)),
])
def test_compiled_gradients_equal_python_and_differences(fun, args, argnums):
    compiled = s2sgrad.value_and_grad(fun, argnums, compiled=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        value, grads = compiled(*args)
    assert isinstance(_compiled_forward(compiled).fn, numba.core.dispatcher.Dispatcher)
    python_value, python_grads = s2sgrad.value_and_grad(fun, argnums)(*args)
    assert value == pytest.approx(python_value, rel=1e-13)
    np.testing.assert_allclose(grads, python_grads, rtol=1e-11)
    for k, i in enumerate(argnums):
        assert grads[k] == pytest.approx(numerical_grad(fun, args, i), rel=1e-6, abs=1e-9)
    assert compiled(*args)[1] == grads  # the compiled function again, no new compile
    names = tuple(param for param, arg in zip(fun.__code__.co_varnames, args) if isinstance(arg, (int, float)))
    if len(argnums) > 1:  # forward mode, one tangent per argument side by side
        assert f"{fun.__name__}_forward_grad" in s2sgrad.source(compiled, mode="fwd", numbers=names)


def test_arrays_run_reverse_mode_and_match():
    compiled = s2sgrad.grad(summed, (0, 1), compiled=True)
    x, y = np.array([0.4, 0.9]), np.array([0.8, -0.2])
    np.testing.assert_allclose(compiled(x, y), s2sgrad.grad(summed, (0, 1))(x, y), rtol=1e-14)


def test_a_global_keeps_the_code_python_with_a_warning():
    assert changing_globals(reads_a_global) == ["GAIN"]
    assert compile_numba(reads_a_global)[0] is None
    g = s2sgrad.grad(reads_a_global, compiled=True)
    with pytest.warns(CompileWarning, match="GAIN"):
        assert g(0.5) == pytest.approx(1.5 * math.exp(0.5), rel=1e-14)
    global GAIN
    GAIN = 2.0
    try:
        assert g(0.5) == pytest.approx(2.0 * math.exp(0.5), rel=1e-14)  # the value now, not a stale one
    finally:
        GAIN = 1.5


def test_code_calling_runtime_helpers_runs_as_python_with_a_warning():
    def joins(x, y):
        parts = [x, y]
        return x * sum(parts) + y  # the tangents of a list display call s2s.zeros_like

    g = s2sgrad.grad(joins, (0, 1), compiled=True)
    with pytest.warns(CompileWarning, match="s2s"):
        got = g(0.5, 1.5)
    np.testing.assert_allclose(got, [2.0 * 0.5 + 1.5, 0.5 + 1.0], rtol=1e-14)


def test_a_function_numba_cannot_type_runs_as_python():
    def makes_an_object(x):
        return object() is None or x

    result, compiled = call_compiled(numba.njit(makes_an_object), makes_an_object, (2.0,), {})
    assert result == 2.0 and compiled is None  # numba's TypingError: Python's result, then Python
    with pytest.raises(ZeroDivisionError):  # an error of the computation itself is raised
        call_compiled(numba.njit(lambda x: 1.0 / x), lambda x: 1.0 / x, (0.0,), {})


def test_compiled_needs_numba(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numba" else real(name, *a))
    with pytest.raises(s2sgrad.errors.UsageError, match=r"s2sgrad\[numba\]"):
        s2sgrad.grad(kepler, (0, 1), compiled=True)


def test_the_decorator_takes_compiled_too():
    @s2sgrad.differentiable(wrt=("M", "e"), compiled=True)
    def kepler_marked(M, e, n):
        E = M
        for _ in range(n):
            E = E - (E - e * math.sin(E) - M) / (1.0 - e * math.cos(E))
        return E

    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        value, grads = kepler_marked.value_and_grad(0.7, 0.3, 30)
    np.testing.assert_allclose(grads, s2sgrad.grad(kepler, (0, 1))(0.7, 0.3, 30), rtol=1e-11)
    assert value == pytest.approx(kepler(0.7, 0.3, 30), rel=1e-14)
    assert kepler_marked.grad(0.7, 0.3, 30) == grads  # again: the compiled function, by types

"""Chains read as one function of their operand (differentiate/compositions.py).

The log of one function's value (``np.log(np.cosh(r))``): gradients equal autograd's in every
spelling, the backward sweep reads the rule's log adjoint (``np.tanh``) and keeps no value of the
inner function, and the pairs whose inner value is read elsewhere, or whose operand is rebound
between, keep the chain. The logistic function spelled out (``1 / (1 + np.exp(-x))``): the same
in each spelling, the backward sweep reads only its value (``g * (1 - y) * y``), forward mode and
second order too, and a very negative ``x``, whose ``exp(-x)`` overflows, gets a gradient of 0
where the chain's own adjoint read ``0 * inf``."""

import autograd
import numpy as np
import pytest
from conftest import _rebind, autograd_hvp

import s2sgrad


def logcosh_mean(pred, target):
    r = pred - target
    return np.mean(np.log(np.cosh(r)))


def every_function(x):  # each inner function with a log adjoint, one term each
    return (np.sum(np.log(np.exp(x))) + np.sum(np.log(np.cosh(x))) + np.sum(np.log(np.sinh(x)))
            + np.sum(np.log(np.sin(x))) + np.sum(np.log(np.cos(x))) + np.sum(np.log(np.sqrt(x)))
            + np.sum(np.log(np.square(x))) + np.sum(np.log(np.reciprocal(x))))


def named_steps(x, w):  # the inner value bound to a name, in a loop's body
    total = 0.0
    for k in range(3):
        c = np.cosh(x * w[k])
        total = total + np.sum(np.log(c)) * w[k]
    return total


def in_a_branch(x):
    if np.sum(x) > 0:
        s = np.sqrt(x + 1.0)
        out = np.log(s)
    else:
        out = x
    return np.sum(out * x)


def inner_read_again(x):  # cosh(x) read by the log and by the sum: the log's adjoint, and the
    c = np.cosh(x)  # sum's through cosh
    return np.sum(np.log(c)) + np.sum(c)


def rebound_in_a_loop(x):  # c rebound each step, its operand too
    total = 0.0
    for k in range(3):
        c = np.cosh(x)
        x = x * 0.5
        total = total + np.sum(np.log(c) * x)
    return total


def rebound_in_a_branch(x):  # a branch between binds c (its join name): the log reads that value
    c = np.cosh(x)
    if np.sum(x) > 0.0:
        c = x * 0.0 + 2.0
    return np.sum(np.log(c)) + np.sum(x * x)


COMPOSED = [(logcosh_mean, ((50,), (50,))), (every_function, ((40,),)),
            (named_steps, ((6,), (3,))), (in_a_branch, ((5,),)), (rebound_in_a_loop, ((5,),)),
            (inner_read_again, ((5,),))]
KEPT = [(rebound_in_a_branch, ((5,),))]
ALL = COMPOSED + KEPT


def _args(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(0.2, 1.3, size=s) for s in shapes)  # sin, cos, sinh positive


def _code(text):
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def _backward(text):
    return text[text.index("_bwd("):]


@pytest.mark.parametrize("fn, shapes", ALL, ids=[c[0].__name__ for c in ALL])
def test_gradients_equal_autograds(fn, shapes):
    args = _args(shapes)
    argnums = tuple(range(len(args)))
    expected = autograd.grad(_rebind(fn), argnums)(*args)
    value_and_grad = s2sgrad.value_and_grad(fn, argnums=argnums)
    for _ in range(3):  # the code for any shape, then the code made for these shapes, twice
        value, grads = value_and_grad(*args)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
        for g, e in zip(grads, expected):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)
    for g, e in zip(s2sgrad.vjp(fn, *args)[1](1.0), expected):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


CHAINS = {"np.cosh(": "np.sinh(", "np.sqrt(": "0.5 / s"}  # the inner call, the chain's tell


@pytest.mark.parametrize("fn, shapes", ALL, ids=[c[0].__name__ for c in ALL])
def test_the_backward_sweep_reads_the_log_adjoint(fn, shapes):
    backward = _backward(_code(s2sgrad.source(s2sgrad.grad(fn))))
    composed = (fn, shapes) in COMPOSED
    if fn is in_a_branch:
        assert ("0.5 / s" in backward) != composed  # the chain's quotient by sqrt's value
        assert ("0.5 / x" in backward) == composed
    else:
        assert ("np.tanh(" in backward) == composed
        assert ("np.sinh(" in backward) != composed or fn is inner_read_again  # (the sum's)


def test_every_function_gives_its_own_adjoint():
    backward = _backward(_code(s2sgrad.source(s2sgrad.grad(every_function))))
    for call in ("np.tanh(", "np.tan("):
        assert call in backward
    for call in ("np.cos(", "np.sin(", "np.sinh(", "np.cosh(", "np.exp(", "np.sqrt("):
        assert call not in backward  # no derivative of an inner function: the log's adjoint


def test_forward_mode_and_second_order():
    args = _args(((40,),))
    tangents = _args(((40,),), seed=2)
    expected = autograd.grad(_rebind(every_function))(*args)
    value, tangent = s2sgrad.jvp(every_function, args, tangents)
    np.testing.assert_allclose(tangent, np.dot(expected, tangents[0]), rtol=1e-10)
    want = autograd_hvp(every_function, args, tangents)
    for _ in range(2):
        for got, w in zip(s2sgrad.hvp(every_function, args, tangents), want):
            np.testing.assert_allclose(got, w, rtol=1e-8, atol=1e-10)


def test_complex_operands():
    z = np.array([0.5 + 0.3j, 1.2 - 0.4j, 0.8 + 0.1j])

    def f(z):
        return np.real(np.sum(np.log(np.cosh(z)) * np.conj(z)))

    expected = autograd.grad(_rebind(f))(z)
    np.testing.assert_allclose(s2sgrad.grad(f)(z), expected, rtol=1e-10)


def test_where_the_inner_value_overflows():
    """cosh(800) overflows: the value is inf, as the user's code makes it, and the gradient is
    the log's adjoint, tanh, where the chain's quotient inf / inf gave nan."""
    x = np.array([800.0, 0.5])
    with np.errstate(over="ignore"):
        value, g = s2sgrad.value_and_grad(lambda x: np.sum(np.log(np.cosh(x))))(x)
    assert np.isinf(value)
    np.testing.assert_allclose(g, np.tanh(x))


# ----- the logistic function spelled out --------------------------------------------------------


def logistic_plain(x, w):
    return np.sum(1.0 / (1.0 + np.exp(-(x * w))) * x)


def logistic_spellings(x):  # ones as ints, the sum's operands either way, reciprocal, np.divide
    a = 1 / (np.exp(-x) + 1)
    b = np.reciprocal(1.0 + np.exp(-(2.0 * x)))
    c = np.divide(1.0, 1 + np.exp(-(x * x)))
    return np.sum(a * b + c * x)


def logistic_gates(a, h):  # an LSTM's gates: slices of one pre-activation, in a loop body
    H = h.shape[0]
    for _ in range(3):
        i = 1.0 / (1.0 + np.exp(-a[:H]))
        f = 1.0 / (1.0 + np.exp(-a[H:]))
        h = f * h + i * np.tanh(h)
    return np.sum(h * h)


def logistic_named_steps(x):  # each step bound to a name
    u = -x
    e = np.exp(u)
    t = 1.0 + e
    y = 1.0 / t
    return np.sum(y * y)


def logistic_exp_read_again(x):  # exp(-x) read by the sum too: the logistic's adjoint, and the
    e = np.exp(-x)  # sum's through exp
    y = 1.0 / (1.0 + e)
    return np.sum(y) + np.sum(e)


def logistic_operand_rebound(x):  # x rebound between the negation and the division (another
    # version of x: the chain's operand is the first)
    u = -x
    x = x * 2.0
    y = 1.0 / (1.0 + np.exp(u))
    return np.sum(y * x)


def not_a_logistic(x):  # 2 / (1 + exp(-x)), 1 / (2 + exp(-x)), 1 / (1 + exp(x)): no chain
    return np.sum(2.0 / (1.0 + np.exp(-x)) + 1.0 / (2.0 + np.exp(-x)) + 1.0 / (1.0 + np.exp(x)))


def logistic_shared_negation(x):  # one negation read by two chains (common values merged)
    return np.sum(1.0 / (1.0 + np.exp(-x)) * np.exp(-x))


LOGISTIC = [(logistic_plain, ((6,), (6,))), (logistic_spellings, ((5,),)),
            (logistic_gates, ((8,), (4,))), (logistic_named_steps, ((5,),)),
            (logistic_exp_read_again, ((5,),)), (logistic_shared_negation, ((5,),)),
            (logistic_operand_rebound, ((5,),))]
LOGISTIC_KEPT = [(not_a_logistic, ((5,),))]
READ_ELSEWHERE = (logistic_exp_read_again, logistic_shared_negation)  # exp(-x) kept for that read


@pytest.mark.parametrize("fn, shapes", LOGISTIC + LOGISTIC_KEPT,
                         ids=[c[0].__name__ for c in LOGISTIC + LOGISTIC_KEPT])
def test_the_backward_sweep_reads_the_logistic_value_only(fn, shapes):
    """Composed: no exp value kept (but for another read of it), the adjoint ``* (1.0 - y)``;
    kept: the chain's own adjoint, through exp's value."""
    backward = _backward(_code(s2sgrad.source(s2sgrad.grad(fn))))
    composed = (fn, shapes) in LOGISTIC
    assert ("exp" not in backward) == composed or fn in READ_ELSEWHERE, backward
    assert ("(1.0 - " in backward) == composed, backward


@pytest.mark.parametrize("fn, shapes", LOGISTIC, ids=[c[0].__name__ for c in LOGISTIC])
def test_logistic_forward_mode_and_second_order(fn, shapes):
    args = _args(shapes)
    tangents = _args(shapes, seed=3)
    argnums = tuple(range(len(args)))
    expected = autograd.grad(_rebind(fn), argnums)(*args)
    value, tangent = s2sgrad.jvp(fn, args, tangents)
    np.testing.assert_allclose(tangent, sum(np.dot(e, t) for e, t in zip(expected, tangents)),
                               rtol=1e-10)
    want = autograd_hvp(fn, args, tangents)
    for got, w in zip(s2sgrad.hvp(fn, args, tangents), want):
        np.testing.assert_allclose(got, w, rtol=1e-8, atol=1e-10)


def logistic_sum(x):
    return np.sum(1.0 / (1.0 + np.exp(-x)))


def test_where_the_logistic_exp_overflows():
    """exp(1000) overflows: the value is 0 there, as the user's code makes it, and the gradient
    and the Hessian's diagonal are 0 (the chain's own adjoint read 0 * inf: nan), in reverse
    mode, forward mode and second order alike."""
    x = np.array([-1000.0, -40.0, 0.0, 3.0, 800.0])
    with np.errstate(over="ignore"):
        y = 1.0 / (1.0 + np.exp(-x))
        slope = y * (1.0 - y)
        g = s2sgrad.grad(logistic_sum)(x)
        _, tangent = s2sgrad.jvp(logistic_sum, (x,), (np.ones_like(x),))
        hessian = s2sgrad.hessian(logistic_sum)(x)
    np.testing.assert_allclose(g, slope, rtol=1e-12, atol=0)
    np.testing.assert_allclose(tangent, np.sum(slope), rtol=1e-12)
    np.testing.assert_allclose(np.diag(hessian), slope * (1.0 - 2.0 * y), rtol=1e-12, atol=0)
    assert np.all(np.isfinite(hessian))


def test_logistic_float32_stays_float32():
    x = np.linspace(-3, 3, 7).astype(np.float32)
    g = s2sgrad.grad(logistic_sum)(x)
    assert g.dtype == np.float32
    y = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(g, y * (1.0 - y), rtol=1e-6)


# ----- the square of a norm: np.linalg.norm(x) ** 2 as the sum of |x|^2 ------------------------


def norm_squared(w, X, y):
    return np.linalg.norm(np.dot(X, w) - y) ** 2 + 0.1 * np.sum(w ** 2)


def norm_square_call(w, X, y):
    n = np.linalg.norm(X @ w - y)
    return np.square(n) + n  # n read elsewhere too: its own adjoint for that read


def norm_times_itself(A):  # a matrix: the norm of all of it (Frobenius)
    n = np.linalg.norm(A)
    return n * n


def norm_in_a_loop(w, X):
    total = 0.0
    for k in range(3):
        total = total + np.linalg.norm(X[k] * w) ** 2.0
    return total


def norm_with_an_order(w, X):  # ord given: the norm's own adjoint
    return np.linalg.norm(X @ w, ord=3) ** 2


SQUARED = [(norm_squared, ((6,), (20, 6), (20,))), (norm_square_call, ((6,), (20, 6), (20,))),
           (norm_times_itself, ((4, 5),)), (norm_in_a_loop, ((6,), (3, 6)))]
SQUARED_KEPT = [(norm_with_an_order, ((6,), (20, 6)))]


OTHER_CHAINS = LOGISTIC + LOGISTIC_KEPT + SQUARED + SQUARED_KEPT


@pytest.mark.parametrize("fn, shapes", OTHER_CHAINS, ids=[c[0].__name__ for c in OTHER_CHAINS])
def test_logistic_and_squared_norm_gradients_equal_autograds(fn, shapes):
    test_gradients_equal_autograds(fn, shapes)


@pytest.mark.parametrize("fn, shapes", SQUARED + SQUARED_KEPT,
                         ids=[c[0].__name__ for c in SQUARED + SQUARED_KEPT])
def test_the_backward_sweep_does_not_divide_by_the_norm(fn, shapes):
    backward = _backward(_code(s2sgrad.source(s2sgrad.grad(fn))))
    composed = (fn, shapes) in SQUARED
    assert ("2.0 * s2s.complex_conj(" in backward) == composed, backward
    assert ("norm_vjp" not in backward) == (composed and fn is not norm_square_call), backward


@pytest.mark.parametrize("fn, shapes", SQUARED[:1] + SQUARED[2:], ids=lambda c: getattr(c, "__name__", ""))
def test_squared_norm_second_order(fn, shapes):
    args = _args(shapes)
    tangents = _args(shapes, seed=3)
    want = autograd_hvp(fn, args, tangents)
    for got, w in zip(s2sgrad.hvp(fn, args, tangents), want):
        np.testing.assert_allclose(got, w, rtol=1e-8, atol=1e-10)


def test_a_zero_vector_has_a_zero_gradient_and_a_complex_one_its_conjugate():
    def f(x):
        return np.linalg.norm(x) ** 2

    np.testing.assert_array_equal(s2sgrad.grad(f)(np.zeros(4)), np.zeros(4))
    z = np.array([0.5 + 0.3j, 1.2 - 0.4j, -0.8 + 0.1j])
    np.testing.assert_allclose(s2sgrad.grad(f)(z), autograd.grad(_rebind(f))(z), rtol=1e-12)
    np.testing.assert_allclose(s2sgrad.grad(f)(z), 2.0 * np.conj(z), rtol=1e-12)

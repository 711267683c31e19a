"""Common subexpressions of the core form (s2sgrad/lower/common.py): a statement computing again
what an earlier one of its block computed becomes a copy of that one's target. The core form of
small programs shows what is merged and what must not be; the gradients stay right at first and
second order and in forward mode (central differences, autograd where it runs)."""

import autograd
import autograd.numpy as anp
import numpy as np

import s2sgrad
from s2sgrad.lower.ir import Loop, Stmt, flatten
from s2sgrad.pipeline import lower
from s2sgrad.read.capture import from_function
from s2sgrad.read.parse import find_function
from s2sgrad.rules import DEFAULT_TABLE

from conftest import assert_gradients

RNG = np.random.default_rng(11)


def _core(fn):
    return lower(find_function(from_function(fn)), DEFAULT_TABLE)


def _ops(fn) -> list:
    """The primitives of ``fn``'s core form, nested blocks included, in order."""
    return [stmt.prim.op for stmt in flatten(_core(fn).body)]


def layernorm(x, gamma, beta, T):
    mu = np.mean(x, axis=1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=1, keepdims=True)
    y = (x - mu) / np.sqrt(var + 1e-5) * gamma + beta
    return np.sum(y * T)


def squares_twice(x, mu):
    a = np.sum(np.exp(x - mu) ** 2)
    b = np.sum(np.exp(x - mu) ** 2, axis=0)
    return a * np.sum(b * b)


def across_a_loop(x, mu):
    a = np.tanh(x - mu)
    for _ in range(2):
        x = x * 1.5
    b = np.tanh(x - mu)  # x is another value here: not merged
    return np.sum(a * b)


def copy_then_loop(x):
    b = x  # x's value before the loop: a parameter a loop rebinds is not a copy's source
    for _ in range(2):
        x = x * 1.5
    return np.sum(np.sin(b) * np.sin(x))


def in_a_loop(x, mu):
    s = 0.0
    for _ in range(3):
        s = s + np.sum(np.sin(x * mu) * np.sin(x * mu))
        x = x * 0.9
    return s


def random_draws(x):
    a = x * np.random.normal(size=x.shape)
    b = x * np.random.normal(size=x.shape)
    return np.sum(a - b)


def slices_twice(x):
    return np.sum(x[1:] * x[:-1] - x[:-1] ** 2)


def products_of_views(x):
    a = np.tanh(0.3 * x[:, :3])
    b = np.tanh(0.3 * x[:, :3])  # its view stays; the product and the tanh of the equal views merge
    return np.sum(a * b) + np.sum(x[:, :3] * x[:, 1:])


def view_of_a_rebound_base(x):
    a = np.sin(x[:2])
    x = x * 2.0
    b = np.sin(x[:2])  # a view of another x: not read as the first
    return np.sum(a * b)


def written_after(x):
    a = x * 2.0
    b = x * 2.0
    b[0] = 5.0  # the copy b shares a's array: the write must not reach a
    return np.sum(a * np.sin(b))


def test_the_second_x_minus_mu_is_a_copy_and_the_gradient_is_right():
    ops = _ops(layernorm)
    assert ops.count("operator.sub") == 1 and "copy" in ops
    x, gamma, beta, T = (RNG.normal(size=(5, 4)), RNG.normal(size=4), RNG.normal(size=4),
                         RNG.normal(size=(5, 4)))
    assert_gradients(layernorm, x, gamma, beta, T, argnums=(0, 1, 2))
    forward = s2sgrad.source(s2sgrad.value_and_grad(layernorm, argnums=(0, 1, 2)))
    assert forward.count("= x - mu\n") == 1


def test_a_repeat_of_a_repeat_is_merged_whole():
    ops = _ops(squares_twice)
    assert ops.count("operator.sub") == 1 and ops.count("numpy.exp") == 1
    assert ops.count("operator.pow") == 1
    assert ops.count("numpy.sum") == 3  # the sums differ in their axis: both stay, and b * b's
    x, mu = RNG.normal(size=(3, 4)) * 0.3, RNG.normal(size=4) * 0.3
    assert_gradients(squares_twice, x, mu)


def test_an_operand_rebound_between_is_not_merged():
    assert _ops(across_a_loop).count("numpy.tanh") == 2
    assert_gradients(across_a_loop, RNG.normal(size=5), RNG.normal(size=5))


def test_a_copy_of_a_parameter_a_loop_rebinds_is_not_its_source():
    assert _ops(copy_then_loop).count("numpy.sin") == 2
    assert_gradients(copy_then_loop, RNG.normal(size=5))


def test_repeats_in_a_loop_body_are_merged_there():
    body = [item for item in _core(in_a_loop).body if isinstance(item, Loop)][0].body
    ops = [s.prim.op for s in body if isinstance(s, Stmt)]
    assert ops.count("numpy.sin") == 1 and ops.count("operator.mul") == 3
    assert_gradients(in_a_loop, RNG.normal(size=5), RNG.normal(size=5))


def test_random_draws_and_views_are_not_merged():
    ops = _ops(random_draws)  # a draw is kept verbatim (nondiff): each one its own
    assert ops.count("nondiff") == 2 and ops.count("operator.mul") == 2
    assert _ops(slices_twice).count("operator.getitem") == 3
    assert_gradients(slices_twice, RNG.normal(size=7))


def test_functions_of_equal_views_are_merged_the_views_kept():
    ops = _ops(products_of_views)
    assert ops.count("operator.getitem") == 4 and ops.count("numpy.tanh") == 1
    assert ops.count("operator.mul") == 3  # 0.3 * once, a * b, and the last product
    assert_gradients(products_of_views, RNG.normal(size=(3, 4)))
    assert _ops(view_of_a_rebound_base).count("numpy.sin") == 2
    assert_gradients(view_of_a_rebound_base, RNG.normal(size=5))


def test_a_merged_value_written_in_place_later_keeps_both_values():
    assert _ops(written_after)[:3] == ["operator.mul", "copy", "s2s.setitem"]
    x = RNG.normal(size=6)
    assert_gradients(written_after, x, autograd_oracle=False)  # autograd: no index writes
    value, _ = s2sgrad.value_and_grad(written_after)(x)
    b = x * 2.0
    b[0] = 5.0
    np.testing.assert_allclose(value, np.sum(x * 2.0 * np.sin(b)), rtol=1e-14)


def test_second_order_and_forward_mode_of_merged_code():
    x, gamma, beta, T = (RNG.normal(size=(3, 4)), RNG.normal(size=4), RNG.normal(size=4),
                         RNG.normal(size=(3, 4)))

    def ln_ag(x):
        mu = anp.mean(x, axis=1, keepdims=True)
        var = anp.mean((x - mu) ** 2, axis=1, keepdims=True)
        return anp.sum(((x - mu) / anp.sqrt(var + 1e-5) * gamma + beta) * T)

    want = autograd.hessian(ln_ag)(x)
    got = s2sgrad.hessian(layernorm)(x, gamma, beta, T)
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    t = RNG.normal(size=(3, 4))
    _, tangent = s2sgrad.jvp(layernorm, (x, gamma, beta, T), (t, 0 * gamma, 0 * beta, 0 * T))
    np.testing.assert_allclose(tangent, np.sum(autograd.grad(ln_ag)(x) * t), rtol=1e-10)

"""custom_gradient at second order (shared/CUSTOM_GRADIENT.md, "Higher order"; issue 24 item 4):
where a custom function's output reappears in the first-order gradient, the next transformation
uses the stated rule for it again, never the derivative of the forward body. Values by hand:
each stated rule differs from the true derivative of its forward body, so a wrong route shows."""

import numpy as np
import pytest

import s2sgrad
from s2sgrad.checks import numerical_grad


@s2sgrad.custom_gradient
def ste_round(x):
    def grad(dy):
        return dy
    return np.round(x), grad


def ste(x):
    return ste_round(x) * x  # gradient round(x) + x; d/dx of round(x) is the stated 1: 2


@s2sgrad.custom_gradient
def sq3(x):
    def grad(dy):
        return dy * 3.0 * x  # deliberately not 2x
    return x ** 2, grad


def sq3_twice(x):
    return sq3(sq3(x))  # gradient 9 u x, u = sq3(x) stated du/dx = 3x: 27x**2 + 9x**2 = 36x**2


def sq3_loop(x):
    for i in range(2):
        x = sq3(x)
    return x


@s2sgrad.custom_gradient
def two(x):
    def grad(dy1, dy2):
        return dy1 * 2.0 + dy2 * 3.0 * x
    return (2.0 * x, x ** 2), grad


def two_product(x):
    a, b = two(x)
    return a * b  # gradient 2b + 3x a: 2 (3x) + 3a + 3x (2) = 18x


@s2sgrad.custom_gradient
def two_dict(x):
    def grad(dys):
        return dys["a"] * 2.0 + dys["b"] * 3.0 * x
    return {"a": 2.0 * x, "b": x ** 2}, grad


def dict_product(x):
    d = two_dict(x)
    return d["a"] * d["b"]  # as two_product: 18x


@s2sgrad.custom_gradient
def branchy(x):
    def grad(dy):
        if dy > 0:
            return dy * 2.0 * x
        return dy * x
    return x ** 2, grad


def branchy_product(x):
    # x > 0: gradient x**2 + 2x x; the stated rule at seed 1 (2x) plus d/dx 2x**2 (4x): 6x
    # x < 0: gradient x**2 + x x; the stated rule at seed 1 (2x) plus d/dx x**2 (2x): 4x
    return branchy(x) * x


CASES = [
    (ste, 1.3, 2.0),
    (sq3_twice, 1.1, 36 * 1.1 ** 2),
    (sq3_loop, 1.1, 36 * 1.1 ** 2),
    (two_product, 1.1, 18 * 1.1),
    (dict_product, 1.1, 18 * 1.1),
    (branchy_product, 1.1, 6 * 1.1),
    (branchy_product, -1.1, 4 * -1.1),
]
IDS = [f"{fn.__name__}({x})" for fn, x, _ in CASES]


@pytest.mark.parametrize("fn, x, want", CASES, ids=IDS)
def test_grad_of_grad_uses_the_stated_rule(fn, x, want):
    assert s2sgrad.grad(s2sgrad.grad(fn))(x) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("fn, x, want", CASES, ids=IDS)
def test_hessian_hvp_and_jvp_of_grad_use_the_stated_rule(fn, x, want):
    assert s2sgrad.hessian(fn)(x) == pytest.approx(want, rel=1e-12)
    assert s2sgrad.hvp(fn, (x,), (1.0,))[0] == pytest.approx(want, rel=1e-12)
    assert s2sgrad.jvp(s2sgrad.grad(fn), (x,), (1.0,))[1] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("fn, x, want", CASES, ids=IDS)
def test_differentiable_order_2_uses_the_stated_rule(fn, x, want):
    marked = s2sgrad.differentiable(order=2)(lambda_free_copy(fn))
    assert marked.hessian(x) == pytest.approx(want, rel=1e-12)
    assert marked.hvp(x, tangents=1.0) == pytest.approx(want, rel=1e-12)


def lambda_free_copy(fn):
    """``fn`` itself: the decorator adds attributes, harmless to the module-level functions."""
    return fn


def test_first_order_code_marks_the_custom_output_with_its_rule():
    text = s2sgrad.source(s2sgrad.grad(ste))
    assert "s2s.stated(np.round(x), ste_round_bwd, (x,), (x,))" in text
    # a grad_fn with early returns is inlined with one exit (no nested def for the next reading)
    assert "def grad(" not in s2sgrad.source(s2sgrad.grad(branchy_product))


@s2sgrad.custom_gradient
def stable_square(x):
    """x**2 with its true derivative stated: differences of first-order gradients agree."""
    def grad(dy):
        return dy * (x + x)
    return x * x, grad


def chained(x):
    u = stable_square(x)
    return np.sum(stable_square(np.sin(u)) * x)


def test_array_hessian_of_chained_custom_outputs_matches_differences_of_gradients():
    x = np.array([0.3, -0.8, 1.1])
    gradient = s2sgrad.grad(chained)
    numeric = np.stack([numerical_grad(lambda v: gradient(v)[i], (x,), 0) for i in range(3)])
    np.testing.assert_allclose(s2sgrad.hessian(chained)(x), numeric, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2sgrad.grad(s2sgrad.grad(lambda_free_copy(chained)))(0.7),
                               numerical_grad(s2sgrad.grad(chained), (0.7,), 0), rtol=1e-6)


# s2sgrad.grad(f) called inside a differentiated function, f calling a custom_gradient function:
# the generated code passes <c>_bwd to s2s.stated as a value, which the outer module copies
# (pipeline._copy_generated); it was a NameError.
def test_grad_of_a_function_calling_grad_of_chained_custom_outputs():
    np.testing.assert_allclose(s2sgrad.grad(chained_scalar)(0.7),
                               numerical_grad(chained_scalar, (0.7,), 0), rtol=1e-6)


def chained_scalar(x):
    return np.sum(s2sgrad.grad(chained)(np.array([x, 2.0 * x])))

"""custom_gradient: the contract in shared/CUSTOM_GRADIENT.md, point by point, with hand-computed values."""

import inspect
import re

import numpy as np
import pytest
from conftest import assert_gradients

import custom_inputs as ci
import s2sgrad
from s2sgrad.checks import numerical_grad


def test_outside_differentiation_returns_only_the_value():
    assert ci.log1pexp(0.0) == pytest.approx(np.log(2.0))
    a, b = ci.pair(np.array([0.5]))
    np.testing.assert_allclose(a, np.sin([0.5]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_seed_example_log1pexp():
    g = s2sgrad.grad(ci.log1pexp)
    assert g(1000.0) == 1.0
    g32 = g(np.float32(100.0))
    assert g32 == 1.0 and g32.dtype == np.float32
    naive = s2sgrad.grad(ci.log1pexp_naive)
    assert np.isnan(naive(1000.0))
    assert np.isnan(naive(np.float32(100.0)))
    assert g(0.0) == pytest.approx(0.5)


def test_generated_code_shows_the_users_formula_fenced():
    text = s2sgrad.source(s2sgrad.grad(ci.log1pexp))
    assert "# >>> custom_gradient log1pexp (user code)" in text
    assert "dy * (1 - 1 / (1 + e))" in text
    assert "# <<< custom_gradient log1pexp" in text
    # The forward body is not differentiated: no adjoint of e or of the log.
    assert "e_bar" not in text


def test_none_is_a_zero_gradient_and_keyword_calls_count():
    x = np.array([1.0, 2.0])
    gx, gk = s2sgrad.grad(ci.uses_scaled_keywords, argnums=(0, 1))(x, 3.0)
    np.testing.assert_allclose(gx, [3.0, 3.0])
    assert gk == 0.0  # grad_fn said None for k


def test_integer_argument_takes_none():
    np.testing.assert_allclose(s2sgrad.grad(ci.uses_scaled_int)(np.ones(2)), [3.0, 3.0])


def test_tuple_output_unused_leaf_gets_zeros():
    x = np.array([0.3, -1.2])
    np.testing.assert_allclose(s2sgrad.grad(ci.uses_first_of_pair)(x), np.cos(x))
    np.testing.assert_allclose(s2sgrad.grad(ci.uses_both_of_pair)(x), 3.0 * np.cos(x) + 2.0 * x)


def test_dict_output_leaves_in_sorted_key_order():
    x = np.array([0.3, -1.2])
    np.testing.assert_allclose(s2sgrad.grad(ci.uses_dict_sin)(x), 2.0 * np.cos(x))
    np.testing.assert_allclose(s2sgrad.grad(ci.uses_dict_both)(x), np.cos(2 * x))


@pytest.mark.parametrize("x", [1.5, np.ones(2), np.ones((2, 3))])
def test_two_gradients_for_one_parameter_is_a_count_error(x):
    # TensorFlow: "expected to return 1 gradients, but returned 2"; they were once summed into one.
    with pytest.raises(s2sgrad.GradientError, match=r"two_for_one: grad_fn returned 2 gradients, "
                       r"but two_for_one has 1 positional parameter \(x\)"):
        s2sgrad.grad(ci.calls_two_for_one)(x)


def test_wrong_count_names_function_and_counts():
    with pytest.raises(s2sgrad.GradientError, match=r"wrong_count: grad_fn returned 1 gradient, "
                       r"but wrong_count has 2 positional parameters \(x, y\)"):
        s2sgrad.grad(ci.calls_wrong_count)(np.ones(2))


def test_broadcastable_gradient_is_summed_down():
    np.testing.assert_allclose(s2sgrad.grad(ci.calls_summed_shape)(np.ones(2)), [3.0, 3.0])


def test_wrong_shape_names_function_parameter_and_shapes():
    with pytest.raises(s2sgrad.GradientError, match=r"wrong_shape: the gradient for parameter `x` "
                       r"has shape \(5,\), but `x` has shape \(2,\)"):
        s2sgrad.grad(ci.calls_wrong_shape)(np.ones(2))


def test_grad_fn_runs_once_per_call_site_with_the_summed_upstream():
    ci.CALLS.clear()
    g = s2sgrad.grad(ci.uses_recorded_twice)(np.ones(2))
    assert len(ci.CALLS) == 1
    np.testing.assert_allclose(ci.CALLS[0], [4.0, 4.0])  # 3 + 1, summed before grad_fn
    np.testing.assert_allclose(g, [8.0, 8.0])


def test_grad_fn_never_runs_when_the_output_is_unused():
    ci.CALLS.clear()
    np.testing.assert_allclose(s2sgrad.grad(ci.unused_recorded)(np.ones(2)), [1.0, 1.0])
    assert ci.CALLS == []


def test_late_binding_of_captured_names():
    assert s2sgrad.grad(ci.late_binding)(1.0) == 3.0  # k as it is when the function returns


def test_each_loop_iteration_keeps_its_residuals():
    x = 0.7
    expected = sum(3.0 * (x * k) ** 2 * k for k in (1.0, 2.0, 3.0))
    assert s2sgrad.grad(ci.cube_in_loop)(x) == pytest.approx(expected)


def test_hygiene_of_user_and_generated_names():
    x = np.array([1.0, 2.0])
    gx, gg = s2sgrad.grad(ci.calls_hygiene, argnums=(0, 1))(x, 2.0)
    # d/dx [hygiene(x) * 2 + hygiene(2x)] with hygiene's stated gradient 5 (+0)
    np.testing.assert_allclose(gx, [5.0 * 2.0 + 5.0 * 2.0] * 2)
    assert gg == pytest.approx(np.sum(2.0 * x + 1.0))


def test_lambda_grad_fn_with_aliased_numpy():
    x = np.array([0.1, 0.2])
    np.testing.assert_allclose(s2sgrad.grad(lambda_user)(x), 10.0 * np.cos(x))


def lambda_user(x):
    return np.sum(ci.with_lambda(x))


def test_grad_fn_calls_module_helper():
    def f(x):
        return np.sum(ci.calls_helper(x))

    np.testing.assert_allclose(s2sgrad.grad(f)(np.ones(3)), [7.0] * 3)


def test_python_control_flow_on_dy():
    def small(x):
        return np.sum(ci.clipped_gradient(x))

    def large(x):
        return np.sum(ci.clipped_gradient(x) * 3.0)

    np.testing.assert_allclose(s2sgrad.grad(small)(np.ones(2)), [0.25, 0.25])
    np.testing.assert_allclose(s2sgrad.grad(large)(np.ones(2)), [1.0, 1.0])


def test_inner_custom_function_is_governed_by_the_outer_rule():
    def f(x):
        return np.sum(ci.outer_rule(x))

    np.testing.assert_allclose(s2sgrad.grad(f)(np.ones(2)), [5.0, 5.0])


def test_stop_gradient():
    x = np.array([1.0, -2.0])
    np.testing.assert_allclose(s2sgrad.grad(ci.stopped)(x), 3.0 * x)


def test_custom_rules_match_finite_differences_where_they_are_right():
    def f(x):
        return np.sum(ci.log1pexp(x) * ci.cube(x))

    assert_gradients(f, np.array([0.3, -0.8, 1.5]), autograd_oracle=False)


def test_composition_uses_each_stated_rule():
    x = np.array([0.3, -0.8, 1.5])
    np.testing.assert_allclose(s2sgrad.grad(ci.composite)(x),
                               numerical_grad(ci.composite, (x,), 0) + 9.0 * np.cos(x),
                               rtol=1e-5)  # with_lambda states 10 cos(x) where the truth is cos(x)


REFUSED = [
    ("no_pair", "must end with `return value, grad_fn`"),
    ("not_a_function", "`k` returned by not_a_function is not a function defined in"),
    ("escapes", "grad_fn `grad` escapes escapes"),
    ("writes_nonlocal", "writes `nonlocal` names"),
    ("tf_variables", "declares `variables`"),
    ("generator", "cannot be a generator"),
]


@pytest.mark.parametrize("name,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_refusals_are_located(name, message):
    fn = getattr(ci, name)
    with pytest.raises(s2sgrad.TransformError) as info:
        s2sgrad.grad(fn)
    text = str(info.value)
    lines, start = inspect.getsourcelines(fn.__wrapped__)
    line = start + next(i for i, t in enumerate(lines) if "# refused" in t)
    assert re.match(rf"^tests/inputs/custom_inputs\.py:{line}:\d+: ", text), text
    assert message in text.splitlines()[0], text

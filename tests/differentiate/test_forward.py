"""Forward mode: jvp against central differences along a random direction and against reverse mode
(for a scalar output, the tangent along v is <grad, v>); the generated code; grad's use of forward
mode for one float argument, and its fallback to reverse mode where forward mode refuses."""

import numpy as np
import pytest

import s2sgrad
from s2sgrad.errors import GradientError, TransformError, UsageError


def chain(x):
    return np.sum(np.tanh(x) * np.exp(-x**2) + np.sin(x) ** 2)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def mlp(W1, b1, W2, X):
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2
    m = np.max(logits, axis=1, keepdims=True)
    z = logits - m
    return np.mean(z - np.log(np.sum(np.exp(z), axis=1, keepdims=True)))


def rnn(Wx, Wh, xs, h):
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ Wx + h @ Wh)
    return np.sum(h**2)


def scalar_loop(x):
    for i in range(30):
        x = x * 0.9 + np.sin(x)
    return x


def branches(x, y):
    total = 0.0
    for i in range(4):
        if i % 2 == 0:
            total = total + np.sum(x * y)
        else:
            total = total - np.sum(np.cos(x)) * 0.5
    k = 0
    while k < 3:
        y = y * 1.1
        k += 1
    return total + np.sum(y**2)


def reductions(A):
    B = A.T @ A
    c = np.concatenate([np.sum(A, axis=0), np.ravel(A[1:, :2])])
    s = np.stack([A[0], A[1] * 2.0])
    return np.sum(B * B) + np.mean(c**2) + np.max(A) * np.min(s) + np.sum(np.max(A, axis=1))


def products(a, b):
    return np.sum(np.cross(a, b) ** 2) + np.sum(np.maximum(a, b) * np.where(a > 0, a, b)) + \
        np.sum(np.clip(a, -0.5, 0.5) * b)


def with_default(x, scale=2.0, *, shift=1.0):
    return np.sum(np.exp(x * scale) + shift)


def _direction(args, rng):
    return tuple(rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal()) for a in args)


def _cases(rng):
    A = rng.normal(size=(4, 3))
    return [
        (chain, (rng.uniform(-2, 2, size=20),)),
        (rosenbrock, (rng.uniform(-1.5, 1.5, size=12),)),
        (mlp, (rng.normal(size=(5, 4)) * 0.4, rng.normal(size=4) * 0.1, rng.normal(size=(4, 3)),
               rng.normal(size=(6, 5)))),
        (rnn, (rng.normal(size=(3, 4)) * 0.5, rng.normal(size=(4, 4)) * 0.4,
               rng.normal(size=(5, 3)), rng.normal(size=4))),
        (scalar_loop, (0.7,)),
        (branches, (rng.normal(size=5), rng.normal(size=5))),
        (reductions, (A,)),
        (products, (rng.normal(size=(4, 3)), rng.normal(size=(4, 3)))),
        (with_default, (rng.normal(size=4) * 0.3,)),
    ]


@pytest.mark.parametrize("index", range(9))
def test_jvp_matches_finite_differences_and_reverse_mode(index):
    rng = np.random.default_rng(10 + index)
    fn, args = _cases(rng)[index]
    tangents = _direction(args, rng)
    out, tangent = s2sgrad.jvp(fn, args, tangents)
    np.testing.assert_allclose(out, fn(*args), rtol=1e-13)
    eps = 1e-6
    plus = fn(*[a + eps * t for a, t in zip(args, tangents)])
    minus = fn(*[a - eps * t for a, t in zip(args, tangents)])
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-7)
    grads = s2sgrad.grad(fn, argnums=tuple(range(len(args))))(*args)
    expected = sum(np.sum(np.asarray(g) * np.asarray(t)) for g, t in zip(grads, tangents))
    np.testing.assert_allclose(tangent, expected, rtol=1e-9, atol=1e-12)


def test_jvp_along_some_parameters_only():
    rng = np.random.default_rng(5)
    args = (rng.normal(size=(5, 4)) * 0.4, rng.normal(size=4) * 0.1, rng.normal(size=(4, 3)),
            rng.normal(size=(6, 5)))
    v = rng.normal(size=(5, 4))

    def first_layer(W1):  # the other parameters are closure values: constants to forward mode
        return mlp(W1, args[1], args[2], args[3])

    _, tangent = s2sgrad.jvp(first_layer, (args[0],), (v,))
    g = s2sgrad.grad(mlp)(*args)
    np.testing.assert_allclose(tangent, np.sum(g * v), rtol=1e-9)


def test_the_generated_forward_code_records_nothing():
    vg = s2sgrad.value_and_grad(scalar_loop)
    text = s2sgrad.source(vg, mode="fwd")
    assert "def scalar_loop_jvp(x, x_dot):" in text
    assert "x_dot * (0.9 + np.cos(x))" in text
    assert "append" not in text and "tape" not in text
    assert "mode='fwd'" in text.splitlines()[0]  # the header says how to get it again


def test_grad_of_a_float_uses_forward_mode_and_agrees_with_reverse_mode():
    vg = s2sgrad.value_and_grad(scalar_loop)
    value, slope = vg(0.7)  # a float: forward mode
    assert type(slope) is float
    value_rev, slope_rev = vg(np.array(0.7))  # a 0-d array: reverse mode
    np.testing.assert_allclose(slope, slope_rev, rtol=1e-12)
    np.testing.assert_allclose(value, value_rev, rtol=1e-15)
    eps = 1e-6
    np.testing.assert_allclose(slope, (scalar_loop(0.7 + eps) - scalar_loop(0.7 - eps)) / (2 * eps),
                               rtol=1e-6, atol=1e-9)


def test_forward_mode_takes_tangents_after_defaults_by_keyword():
    x = np.linspace(0.0, 1.0, 3)
    g = s2sgrad.grad(with_default, argnums=1)
    np.testing.assert_allclose(g(x, 2.0), np.sum(x * np.exp(2.0 * x)), rtol=1e-12)
    assert "def with_default_jvp(x, scale=2.0, *, shift=1.0, scale_dot):" in \
        s2sgrad.source(g, mode="fwd")
    text = s2sgrad.source(s2sgrad.value_and_grad(with_default), mode="fwd")
    assert "def with_default_jvp(x, scale=2.0, *, shift=1.0, x_dot):" in text


def uses_inverse(x):
    return np.sum(np.linalg.eigvalsh(np.eye(2) * x + np.ones((2, 2))) ** 3)


def test_jvp_takes_reverse_mode_where_forward_mode_refuses_and_says_why():
    # eigvalsh has a reverse rule only: jvp is reverse mode over the generated gradient, seeded
    # with the tangent (s2sgrad/transpose.py); forward mode's own refusal stays located
    value, tangent = s2sgrad.jvp(uses_inverse, (0.5,), (1.0,))
    eps = 1e-6
    assert value == pytest.approx(uses_inverse(0.5), rel=1e-14)
    assert tangent == pytest.approx((uses_inverse(0.5 + eps) - uses_inverse(0.5 - eps)) / (2 * eps),
                                    rel=1e-6)
    with pytest.raises(TransformError) as info:
        s2sgrad.source(s2sgrad.grad(uses_inverse), mode="fwd")
    text = str(info.value)
    assert "test_forward.py" in text and "np.linalg.eigvalsh" in text
    assert "forward mode (jvp) does not support `numpy.linalg.eigvalsh` (a matrix function; " \
        "its tangent template is not written yet)" in text  # the rule's own reason
    assert "s2sgrad.grad" in text  # what to do instead


def solves(x):
    return np.sum(np.linalg.solve(np.eye(2) * x + 1.0, np.ones(2)))


def test_jvp_of_a_linear_solve():
    value, tangent = s2sgrad.jvp(solves, (0.5,), (1.0,))
    eps = 1e-6
    assert value == solves(0.5)
    np.testing.assert_allclose(tangent, (solves(0.5 + eps) - solves(0.5 - eps)) / (2 * eps), rtol=1e-6)


def test_grad_of_a_float_falls_back_to_reverse_mode_where_forward_mode_refuses():
    g = s2sgrad.grad(uses_inverse)
    eps = 1e-6
    np.testing.assert_allclose(g(0.5), (uses_inverse(0.5 + eps) - uses_inverse(0.5 - eps)) / (2 * eps),
                               rtol=1e-6)
    with pytest.raises(TransformError):
        s2sgrad.source(g, mode="fwd")


def test_jvp_usage_errors():
    with pytest.raises(UsageError, match="one tangent per primal"):
        s2sgrad.jvp(chain, (np.ones(3),), ())
    with pytest.raises(GradientError, match="`x` is a str"):
        s2sgrad.jvp(chain, ("abc",), (1.0,))
    with pytest.raises(UsageError, match="mode"):
        s2sgrad.source(s2sgrad.grad(chain), mode="backward")


def test_every_rule_has_a_tangent_route_or_says_why_not():
    import inspect

    from s2sgrad import runtime
    from s2sgrad.rules import DEFAULT_TABLE
    from s2sgrad.rules.table import validate

    for name, rule in DEFAULT_TABLE.rules.items():
        assert bool(rule.tangent_route) != bool(rule.reverse_only), name
    linear = {name for name, rule in DEFAULT_TABLE.rules.items() if rule.linear}
    assert {"numpy.sum", "ndarray.T", "operator.getitem", "operator.matmul", "numpy.dot",
            "ndarray.dot", "numpy.einsum", "numpy.concatenate"} <= linear
    own = {name for name, rule in DEFAULT_TABLE.rules.items() if rule.jvps}
    assert {"numpy.max", "ndarray.min", "numpy.linalg.inv", "numpy.linalg.det"} <= own
    for op in sorted(own):  # tangent templates read t, ans and the rule's parameters only
        validate(DEFAULT_TABLE.get(op))
    defaults = {n: p.default for n, p in inspect.signature(runtime.extremum_jvp).parameters.items()
                if p.default is not inspect.Parameter.empty}
    assert defaults == {"axis": None, "keepdims": False}  # the rule's defaults, which are left out


def test_extremum_tangent_is_the_mean_over_ties():
    from s2sgrad.runtime import extremum_jvp

    x = np.array([[1.0, 3.0, 3.0], [5.0, 0.0, 2.0]])
    t = np.array([[10.0, 20.0, 40.0], [1.0, 2.0, 3.0]])
    assert extremum_jvp(t, 5.0, x) == 1.0
    np.testing.assert_allclose(extremum_jvp(t, np.max(x, axis=1), x, 1), [30.0, 1.0])
    np.testing.assert_allclose(extremum_jvp(t, np.max(x, axis=1, keepdims=True), x, 1, True),
                               [[30.0], [1.0]])


def feeds_back(a, b):
    for i in range(3):
        b = b * np.cos(a)
        a = np.sin(a + b)  # a, given no tangent, varies from the second iteration on
    return np.sum(a)


def test_a_parameter_without_a_tangent_that_the_loop_makes_vary_starts_from_zero():
    a = np.linspace(0.1, 0.5, 3)
    g = s2sgrad.grad(feeds_back, argnums=1)
    forward = g(a, 0.3)  # b a float: forward mode with respect to b alone
    assert "a_dot = s2s.zeros_like(a)" in s2sgrad.source(g, mode="fwd")
    np.testing.assert_allclose(forward, g(a, np.array(0.3)), rtol=1e-12)


def scaled(a, c=0.5):
    return a * c


def constant_call_in_a_branch(x):
    y = x * 2.0
    if np.sum(x) > 100.0:
        y = scaled(np.ones(3))  # no varied operand, into a name that varies elsewhere
    return np.sum(y * y)


def test_a_call_with_constant_operands_gives_a_zero_tangent():
    x = np.linspace(0.0, 1.0, 3)
    for point in (x, x + 100.0):
        _, tangent = s2sgrad.jvp(constant_call_in_a_branch, (point,), (np.ones(3),))
        expected = np.sum(s2sgrad.grad(constant_call_in_a_branch)(point))
        np.testing.assert_allclose(tangent, expected, rtol=1e-12)


def bad_reshape(x):
    a = np.linspace(0.0, 1.0, 3) * x
    return np.sum(a.reshape(2, 2))  # numpy refuses: 3 elements into (2, 2)


def test_an_error_in_the_function_is_raised_as_numpy_raises_it_in_both_modes():
    g = s2sgrad.grad(bad_reshape)
    with pytest.raises(ValueError, match="cannot reshape"):
        g(0.5)  # a float: forward mode first, then reverse mode runs the code again and raises
    with pytest.raises(ValueError, match="cannot reshape"):
        g(np.array(0.5))


def linalg(A, b):
    return np.sum(np.linalg.inv(A) * 0.3) + np.linalg.det(A) + np.sum((np.linalg.inv(A) @ b) ** 2)


def test_linalg_in_forward_mode_and_second_order():
    rng = np.random.default_rng(8)
    A = rng.normal(size=(3, 3)) + 3.0 * np.eye(3)
    args_vec, args_mat = (A, rng.normal(size=3)), (A, rng.normal(size=(3, 2)))
    for args in (args_vec, args_mat):
        tangents = tuple(rng.normal(size=a.shape) for a in args)
        _, tangent = s2sgrad.jvp(linalg, args, tangents)
        grads = s2sgrad.grad(linalg, argnums=(0, 1))(*args)
        expected = sum(np.sum(g * t) for g, t in zip(grads, tangents))
        np.testing.assert_allclose(tangent, expected, rtol=1e-9)
        hv = s2sgrad.hvp(linalg, args, tangents)
        eps = 1e-6
        g = s2sgrad.grad(linalg, argnums=(0, 1))
        plus = g(*[a + eps * t for a, t in zip(args, tangents)])
        minus = g(*[a - eps * t for a, t in zip(args, tangents)])
        for k in range(2):
            np.testing.assert_allclose(hv[k], (plus[k] - minus[k]) / (2 * eps), rtol=1e-5, atol=1e-6)


def nested_join(x):
    return np.sum(np.stack([[x[0], x[1]], [x[1], x[2]]]))


def test_joins_of_nested_sequences_have_tangents():
    # a display nested in a display is a statement of its own (issue 25): the join reads named
    # lists, whose tangents are lists of their items' tangents
    x, t, eps = np.array([0.3, -0.2, 0.7]), np.array([1.0, 0.5, -2.0]), 1e-6
    _, tangent = s2sgrad.jvp(nested_join, (x,), (t,))
    np.testing.assert_allclose(tangent, (nested_join(x + eps * t) - nested_join(x - eps * t)) / (2 * eps),
                               rtol=1e-6)
    np.testing.assert_allclose(s2sgrad.grad(nested_join)(x), [1.0, 2.0, 1.0])


WEIGHTS = np.linspace(0.5, 2.0, 6).reshape(2, 3)


def scaled_by_weights(x):
    return np.sum(np.sin(x) * WEIGHTS)  # the tangent x_dot * cos(x) * WEIGHTS has WEIGHTS' shape


def shifted_by_weights(x):
    return np.sum(np.sin(x) + WEIGHTS)  # the tangent is x_dot * cos(x) alone: it must broadcast


@pytest.mark.parametrize("fn, stays", [(scaled_by_weights, False), (shifted_by_weights, True)])
def test_a_tangent_is_broadcast_only_where_its_template_does_not_cover_the_output(fn, stays):
    # The tangent of an elementwise op needs the output's shape (a later sum counts its
    # elements): a template that multiplies by the constant array already has it.
    code = s2sgrad.source(s2sgrad.value_and_grad(fn), mode="fwd")
    assert ("s2s.broadcast" in code) == stays
    for x in (0.3, np.array([0.3, -0.2, 0.1])):
        _, tangent = s2sgrad.jvp(fn, (x,), (np.ones_like(x),))
        eps = 1e-6
        np.testing.assert_allclose(tangent, (fn(x + eps) - fn(x - eps)) / (2 * eps), rtol=1e-6)

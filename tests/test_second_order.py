"""Second derivatives: hvp and hessian (forward mode over the generated reverse-mode code, else
reverse mode over the generated forward-mode code, else jacrev of the generated gradient; the
Hessian as one generated function) against autograd's Hessians and against central differences
of s2sgrad's own gradients."""

import itertools
import math

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
from conftest import _rebind

import s2sgrad
from s2sgrad.errors import GradientError, TransformError, UsageError
from s2sgrad.read.live import entry_of


def chain(x):
    return np.sum(np.tanh(x) * np.exp(-x**2) + np.sin(x) ** 2)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def layer(x, W):
    h = np.tanh(x @ W)
    return np.sum(h * h) + np.max(h) + np.mean(np.maximum(h, 0.1) ** 3)


def softmax_xent(z, y):
    m = np.max(z)
    return np.log(np.sum(np.exp(z - m))) + m - np.sum(y * z)


def scalar_loop(x):
    for i in range(20):
        x = x * 0.9 + np.sin(x)
    return x


def smooth(v):
    return np.log1p(np.exp(-np.abs(v))) + np.maximum(v, 0.0)


def with_helper(x, y):
    return np.sum(smooth(x) * smooth(y * 2.0)) + np.sum(x ** 3 * y)


def branchy(x):
    total = 0.0
    for i in range(3):
        if np.sum(x) > 0.0:
            total = total + np.sum(x ** 2) * (i + 1.0)
        else:
            total = total - np.sum(np.cos(x))
    return total


def _points(rng):
    return [
        (chain, (rng.uniform(-2, 2, size=5),), 0),
        (rosenbrock, (rng.uniform(-1.5, 1.5, size=6),), 0),
        (layer, (rng.normal(size=3), rng.normal(size=(3, 4))), (0, 1)),
        (softmax_xent, (rng.normal(size=5), np.eye(5)[2]), 0),
        (scalar_loop, (0.7,), 0),
        (with_helper, (rng.normal(size=4), rng.normal(size=4)), (0, 1)),
        (branchy, (rng.normal(size=4) + 0.5,), 0),
    ]


@pytest.mark.parametrize("index", range(7))
def test_hessian_matches_autograd(index):
    fn, args, argnums = _points(np.random.default_rng(20 + index))[index]
    got = s2sgrad.hessian(fn, argnums=argnums)(*args)
    if isinstance(argnums, int):
        expected = autograd.hessian(_rebind(fn), argnums)(*args)
        assert np.shape(got) == np.shape(args[argnums]) * 2
        np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-9)
        if np.ndim(args[argnums]) == 0:
            assert type(got) is float
        return
    for i, a in enumerate(argnums):
        for j, b in enumerate(argnums):
            # autograd: the derivative with respect to argument b of the gradient for argument a
            expected = autograd.jacobian(autograd.grad(_rebind(fn), a), b)(*args)
            assert got[i][j].shape == np.shape(args[a]) + np.shape(args[b])
            np.testing.assert_allclose(got[i][j], expected, rtol=1e-7, atol=1e-9,
                                       err_msg=f"block [{i}][{j}]")


def test_hvp_equals_differences_of_gradients():
    rng = np.random.default_rng(3)
    x, W = rng.normal(size=3), rng.normal(size=(3, 4))
    vx, vW = rng.normal(size=3), rng.normal(size=(3, 4))
    hx, hW = s2sgrad.hvp(layer, (x, W), (vx, vW))
    g = s2sgrad.grad(layer, argnums=(0, 1))
    eps = 1e-6
    plus, minus = g(x + eps * vx, W + eps * vW), g(x - eps * vx, W - eps * vW)
    np.testing.assert_allclose(hx, (plus[0] - minus[0]) / (2 * eps), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hW, (plus[1] - minus[1]) / (2 * eps), rtol=1e-5, atol=1e-7)


def test_the_second_order_code_is_readable_source():
    text = s2sgrad.source(s2sgrad.hessian(chain))
    assert "def chain_bwd(residuals, chain_bar=1.0):" in text  # the reverse sweep ...
    # ... in forward mode, inlined into one function with the forward sweep: no residual tuples
    jvp = text[text.index("def chain_grad_jvp(x, chain_bar=1.0, *, x_dot):"):]
    assert "residuals" not in jvp and "chain_fwd" not in jvp and "chain_bwd" not in jvp
    assert "forward mode (the functions after 'Second order') over its reverse-mode code" in text


@s2sgrad.custom_gradient
def gamma_of(x):
    def grad(dy):
        return dy * math.gamma(x) * 0.5  # a made-up rule that calls what has no derivative
    return math.gamma(x), grad


def gamma_loss(x):
    return gamma_of(x) * x


def padded_loss(x):
    return np.sum(np.pad(x, 1) ** 3)


def test_second_derivatives_refused_with_the_functions_location():
    # the gradient's code calls math.gamma (in a custom grad_fn), which has no derivative: no
    # route to second derivatives reads it
    assert s2sgrad.grad(gamma_loss)(2.5) == pytest.approx(math.gamma(2.5) * (0.5 * 2.5 + 1.0))
    with pytest.raises(TransformError) as info:
        s2sgrad.hessian(gamma_loss)
    text = str(info.value)
    assert "test_second_order.py" in text and "def gamma_loss(x):" in text
    assert "second derivatives of gamma_loss" in text


def test_a_hessian_forward_mode_cannot_read_takes_reverse_mode_over_the_gradient():
    # np.pad has no tangent yet: reverse mode over the generated gradient gives the Hessian
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(s2sgrad.hessian(padded_loss)(x), np.diag(6 * x), rtol=1e-12)
    assert "jacrev of its generated gradient" in s2sgrad.source(s2sgrad.hessian(padded_loss))


def test_second_order_usage_errors():
    with pytest.raises(UsageError, match="one tangent per primal"):
        s2sgrad.hvp(chain, (np.ones(3),), ())
    with pytest.raises(GradientError, match="`x` is a str"):
        s2sgrad.hvp(chain, ("abc",), (1.0,))

    def vector(x):
        return x * 2.0

    with pytest.raises(GradientError):
        s2sgrad.hvp(vector, (np.ones(2),), (np.ones(2),))


@pytest.mark.slow  # 6-10 s: the slow tier, which CI runs too
def test_returned_names_assigned_in_nested_branches_are_recorded():
    # Found by the program generator (seed 134): the reverse sweep over a forward-mode function
    # zeroed the adjoint of a returned name (`result_dot`) that only nested branches assign, with
    # `s2s.zeros_like(result_dot)`, but had not recorded it: a NameError. Returned names are now
    # always recordable at the end of the forward sweep.
    import seed134_program as module

    args = (np.array([[0.162, -0.395, -0.272, 0.408], [0.278, -0.899, 0.633, -0.495],
                      [-0.673, 0.353, -0.497, 0.458]]),
            np.array([-0.109, 0.691, -0.605, -0.514]), 0.191, False)
    direction = tuple(np.ones_like(a) if np.ndim(a) else 1.0 for a in args[:3])
    hv = s2sgrad.hvp(lambda x, v, s: module.f(x, v, s, args[3]), args[:3], direction)
    g = s2sgrad.grad(module.f, argnums=(0, 1, 2))
    eps = 1e-5
    plus = g(*[a + eps * d for a, d in zip(args[:3], direction)], args[3])
    minus = g(*[a - eps * d for a, d in zip(args[:3], direction)], args[3])
    for k in range(3):
        np.testing.assert_allclose(hv[k], (np.asarray(plus[k]) - np.asarray(minus[k])) / (2 * eps),
                                   rtol=1e-4, atol=1e-6)


def sine_of_norm(x):
    return np.sin(np.linalg.norm(x))


def sine_of_shifted_norm(c):
    return np.sin(np.linalg.norm(-c + np.zeros(4)))


def test_a_norm_at_zero_has_a_zero_derivative_at_every_order():
    # Seeds 63142 and 63294 of the property test: a norm of an all-zero vector made its adjoint
    # 0 / 0 (NaN), which spread through every gradient it reached. At 0 the norm has no
    # derivative; its adjoint is 0 there (a subgradient, and what central differences give).
    zero = np.zeros(3)
    np.testing.assert_array_equal(s2sgrad.grad(sine_of_norm)(zero), zero)
    np.testing.assert_array_equal(s2sgrad.hessian(sine_of_norm)(zero), np.zeros((3, 3)))
    d2 = s2sgrad.grad(s2sgrad.grad(sine_of_shifted_norm))
    assert d2(0.0) == 0.0
    np.testing.assert_allclose(d2(0.5), -4.0 * math.sin(1.0), rtol=1e-12)
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(s2sgrad.grad(sine_of_norm)(x),
                               math.cos(np.linalg.norm(x)) * x / np.linalg.norm(x), rtol=1e-12)


GLOBAL_A = np.random.default_rng(11).normal(size=(6, 4)) / 2.0


def through_global_methods(x):
    z = GLOBAL_A.dot(x)  # a method of a module-level array, not of a parameter
    return np.log(np.exp(z - z.max()).sum()) + GLOBAL_A.sum() * 0.0


def through_global_methods_ag(x):
    z = autograd.numpy.dot(GLOBAL_A, x)
    return autograd.numpy.log(autograd.numpy.sum(autograd.numpy.exp(z - autograd.numpy.max(z))))


def test_methods_of_a_global_array_are_array_methods_at_every_order():
    x = np.random.default_rng(12).normal(size=4)
    np.testing.assert_allclose(s2sgrad.grad(through_global_methods)(x),
                               autograd.grad(through_global_methods_ag)(x), rtol=1e-9)
    np.testing.assert_allclose(s2sgrad.hessian(through_global_methods)(x),
                               autograd.hessian(through_global_methods_ag)(x), rtol=1e-8, atol=1e-12)
    decorated = s2sgrad.differentiable(order=2)(through_global_methods)
    v = np.linspace(-1.0, 1.0, 4)
    np.testing.assert_allclose(decorated.hvp(x, tangents=v),
                               autograd.hessian(through_global_methods_ag)(x) @ v, rtol=1e-8)


_A = np.array([[3.2, 0.4, -0.3], [0.1, 2.7, 0.5], [-0.6, 0.2, 3.5]])
_W = np.array([0.7, -1.3, 0.4])
_W2 = np.array([[0.7, -0.2], [-1.3, 0.5], [0.4, 0.9]])


def solve_linear(b):
    return np.sum(np.linalg.solve(_A, b) * _W)


def solve_linear_2d(b):
    return np.sum(np.linalg.solve(_A, b) * _W2)


def solve_linear_in_b(b, a):
    return np.sum(np.linalg.solve(a, b) * _W)


def dot_linear(b):
    return np.sum(np.dot(_A, b) * _W)


def inverse_linear(b):
    return np.sum((np.linalg.inv(_A) @ b) * _W)


def solve_quadratic(b):
    return np.sum(np.linalg.solve(_A, b) * b) + np.sum(np.linalg.solve(_A, b) * _W)


@pytest.mark.parametrize("fn, args, argnums", [
    (solve_linear, (np.array([0.3, -1.1, 0.8]),), 0),
    (solve_linear_2d, (np.array([[0.3, 1.2], [-1.1, 0.4], [0.8, -0.5]]),), 0),
    (solve_linear_in_b, (np.array([0.3, -1.1, 0.8]), _A), 0),
    (solve_linear_in_b, (np.array([0.3, -1.1, 0.8]), _A), (0, 1)),
    (dot_linear, (np.array([0.3, -1.1, 0.8]),), 0),
    (inverse_linear, (np.array([0.3, -1.1, 0.8]),), 0),
    (solve_quadratic, (np.array([0.3, -1.1, 0.8]),), 0),
])
def test_a_rule_varied_only_where_it_is_constant_has_a_zero_tangent(fn, args, argnums):
    # The gradient of a function linear in b through solve(A, b) calls s2s.solve_vjp_b(g, A, b),
    # which reads b only for its shape (constant_in): forward mode of it summed no tangent
    # templates (IndexError) instead of giving the zero tangent, for every rule stating its own
    # tangents (rule.jvps) varied only in a parameter it is constant in.
    got = s2sgrad.hessian(fn, argnums=argnums)(*args)
    positions = (argnums,) if isinstance(argnums, int) else argnums
    for i, a in enumerate(positions):
        for j, b in enumerate(positions):
            expected = autograd.jacobian(autograd.grad(_rebind(fn), a), b)(*args)
            block = got if isinstance(argnums, int) else got[i][j]
            np.testing.assert_allclose(block, expected, rtol=1e-7, atol=1e-9,
                                       err_msg=f"block [{i}][{j}]")
    tangents = tuple(np.linspace(-1.0, 1.0, np.size(args[p])).reshape(np.shape(args[p]))
                     for p in positions)
    primals = tuple(args[p] for p in positions)
    others = args[len(primals):]
    products = s2sgrad.hvp(fn, primals + others, tangents + tuple(np.zeros_like(o) for o in others))
    g = s2sgrad.grad(fn, argnums=0)
    eps = 1e-6
    moved = [tuple(p + s * eps * t for p, t in zip(primals, tangents)) + others for s in (1, -1)]
    np.testing.assert_allclose(products[0], (g(*moved[0]) - g(*moved[1])) / (2 * eps),
                               rtol=1e-5, atol=1e-7)


# ----- the Hessian's generated function: the one implementation of s2sgrad.hessian ------------

def two_inputs(x, s):
    return np.sum(np.tanh(x) * s) + s ** 3 * np.sum(x * x)


def two_inputs_ag(x, s):
    return anp.sum(anp.tanh(x) * s) + s ** 3 * anp.sum(x * x)


def test_the_hessian_runs_its_generated_function():
    hessian = s2sgrad.hessian(two_inputs, argnums=(0, 1))
    made = entry_of(hessian)
    assert made.__name__ == "two_inputs_hessian"
    text = s2sgrad.source(hessian)
    body = text[text.index("def two_inputs_hessian(x, s):"):]
    assert "values = two_inputs_grad_jvp_values(x, s)[1]" in body  # the values once
    assert "for x_units in s2s.unit_chunks(x):" in body  # chunks of unit tangents
    x, s = np.linspace(-0.8, 0.9, 5), 0.7
    got, direct = hessian(x, s), made(x, s)
    for i, j in itertools.product(range(2), repeat=2):
        want = autograd.jacobian(autograd.grad(two_inputs_ag, i), j)(x, s)
        np.testing.assert_allclose(got[i][j], want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(direct[i][j], got[i][j], rtol=0, atol=0)
    assert type(got[1][1]) is float  # a float's block of a float


def axis_comprehension(x, s):
    m = np.reshape(x[:4], (2, 2))
    parts = [np.sum(np.sin(m) * (axis + 1), axis=axis) for axis in range(2)]
    return s * sum(np.sum(p.T * x[axis]) for axis, p in enumerate(parts)) + s ** 3


def axis_comprehension_ag(x, s):
    m = anp.reshape(x[:4], (2, 2))
    parts = [anp.sum(anp.sin(m) * (axis + 1), axis=axis) for axis in range(2)]
    return s * sum(anp.sum(p.T * x[axis]) for axis, p in enumerate(parts)) + s ** 3


def test_a_hessian_whose_gradient_forward_mode_cannot_read_is_reverse_over_forward():
    # the gradient calls s2s.sum_vjp with an axis a loop sets, which forward mode cannot read
    # (as of this test): the Hessian function is reverse mode over the forward-mode code
    hessian = s2sgrad.hessian(axis_comprehension, argnums=(0, 1))
    assert "reverse mode (the second module) over its forward-mode code" in s2sgrad.source(hessian)
    assert entry_of(hessian).__name__ == "axis_comprehension_hessian"
    x, s = np.array([0.3, -0.5, 0.7, 1.2, 0.9]), 0.8
    got = hessian(x, s)
    for i, j in itertools.product(range(2), repeat=2):
        want = autograd.jacobian(autograd.grad(axis_comprehension_ag, i), j)(x, s)
        np.testing.assert_allclose(got[i][j], want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(s2sgrad.hessian(axis_comprehension)(x, s),
                               autograd.hessian(axis_comprehension_ag)(x, s), rtol=1e-10, atol=1e-12)


def running_numbers(v):
    rows = []
    acc = 0.5 + 0.25 * np.cos(v[0])
    for t in range(v.shape[0]):
        acc = v[t] + acc
        rows.append(acc)
    y = np.array(rows)  # a list of numbers stacked, then indexed
    return np.sum(np.cos(y[None, :]))


def test_a_list_adjoint_given_an_array_turns_back_into_one_at_second_order():
    """The backward sweep hands an array's adjoint to the list the loop appended to (s2s.owned);
    differentiating that sweep gives the array its rows' adjoints stacked, not a list."""
    v = np.linspace(0.1, 0.9, 4)

    def outer(u):
        return np.sum(s2sgrad.grad(running_numbers)(u) ** 2)

    twin = _rebind(running_numbers)

    def outer_twin(u):
        return anp.sum(autograd.grad(twin)(u) ** 2)

    expected = autograd.grad(outer_twin)(v)
    for _ in range(3):
        np.testing.assert_allclose(s2sgrad.grad(outer)(v), expected, rtol=1e-10)

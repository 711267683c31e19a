"""Jacobians of tuple-valued functions and second-order attributes, at first order and
transformed again: jacrev of a tuple output (one block per item, JAX's layout), grad and
Jacobians of functions that call jacfwd/jacrev of tuple outputs, hessian with a tuple argnums,
and the decorator's .hvp and .hessian of several arguments. Checked against autograd and
central differences of s2sgrad's own values."""

import inspect

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad.errors import UsageError
from s2sgrad.read.live import entry_of

RNG = np.random.default_rng(1203)
V3 = RNG.uniform(-1.0, 1.0, 3)
X = RNG.uniform(-1.0, 1.0, 3)
Y = RNG.uniform(-1.0, 1.0, 3)


def pair(x, y):
    return np.sin(x) * y, np.cos(x[:2]) * np.sum(x * y)


def pair_ag(x, y, item):
    return (anp.sin(x) * y, anp.cos(x[:2]) * anp.sum(x * y))[item]


def pair_jacobian_ag(argnum, item):
    return autograd.jacobian(lambda x, y: pair_ag(x, y, item), argnum)


def two(x, y):
    return np.sum(np.sin(x) * y ** 2) + np.sum(x * y) ** 2


def two_ag(x, y):
    return anp.sum(anp.sin(x) * y ** 2) + anp.sum(x * y) ** 2


def _difference(f, x, eps=1e-6):
    """The gradient of scalar ``f`` at ``x`` by central differences."""
    out = np.zeros_like(x)
    for k in range(x.size):
        step = np.zeros_like(x)
        step[k] = eps
        out[k] = (f(x + step) - f(x - step)) / (2 * eps)
    return out


@pytest.mark.parametrize("jacobian", [s2sgrad.jacfwd, s2sgrad.jacrev])
def test_the_jacobian_of_a_tuple_output_is_one_block_per_item(jacobian):
    one = jacobian(pair)(X, Y)
    both = jacobian(pair, argnums=(0, 1))(X, Y)
    assert [b.shape for b in one] == [(3, 3), (2, 3)]
    for item in (0, 1):
        np.testing.assert_allclose(one[item], pair_jacobian_ag(0, item)(X, Y), rtol=1e-12)
        for argnum in (0, 1):
            np.testing.assert_allclose(both[item][argnum], pair_jacobian_ag(argnum, item)(X, Y),
                                       rtol=1e-12, atol=1e-15)


pair_jacfwd = s2sgrad.jacfwd(pair, argnums=(0, 1))
pair_jacrev = s2sgrad.jacrev(pair)


def uses_tuple_jacobians(x):
    forward = pair_jacfwd(x, Y)
    backward = pair_jacrev(x, Y)
    return np.sum(forward[1][0] * (forward[0][1] @ V3)) + np.sum(backward[1] ** 2)


def uses_tuple_jacobians_ag(x):
    forward = pair_jacobian_ag(0, 1)(x, Y), pair_jacobian_ag(1, 0)(x, Y)
    backward = pair_jacobian_ag(0, 1)(x, Y)
    return anp.sum(forward[0] * anp.dot(forward[1], V3)) + anp.sum(backward ** 2)


@pytest.mark.slow  # 12-18 s: the slow tier, which CI runs too
def test_grad_and_hessian_of_a_function_that_calls_jacobians_of_tuple_outputs():
    want = autograd.grad(uses_tuple_jacobians_ag)(X)
    np.testing.assert_allclose(s2sgrad.grad(uses_tuple_jacobians)(X), want, rtol=1e-9)
    np.testing.assert_allclose(s2sgrad.hessian(uses_tuple_jacobians)(X),
                               autograd.hessian(uses_tuple_jacobians_ag)(X), rtol=1e-8, atol=1e-10)


def test_jacobians_of_jacobians_of_a_tuple_output():
    for outer in (s2sgrad.jacfwd, s2sgrad.jacrev):
        got = outer(s2sgrad.jacrev(pair))(X, Y)
        for item in (0, 1):
            want = autograd.jacobian(pair_jacobian_ag(0, item))(X, Y)
            np.testing.assert_allclose(got[item], want, rtol=1e-9, atol=1e-12)


two_hessian = s2sgrad.hessian(two, argnums=(0, 1))


def uses_hessian_blocks(x):
    blocks = two_hessian(x, Y)
    return np.sum(blocks[0][1] * blocks[1][0].T) + np.sum(np.diag(blocks[0][0]) * x)


def uses_hessian_blocks_ag(x):
    hessian = autograd.hessian(lambda z: two_ag(z[:3], z[3:]))(anp.concatenate([x, Y]))
    return anp.sum(hessian[:3, 3:] * hessian[3:, :3].T) + anp.sum(anp.diag(hessian[:3, :3]) * x)


def test_grad_of_a_function_that_calls_hessian_with_a_tuple_argnums():
    np.testing.assert_allclose(s2sgrad.grad(uses_hessian_blocks)(X),
                               autograd.grad(uses_hessian_blocks_ag)(X), rtol=1e-9)
    third = s2sgrad.jacfwd(two_hessian, argnums=1)(X, Y)  # d/dy of each block [i][j]
    full = autograd.jacobian(autograd.hessian(lambda z: two_ag(z[:3], z[3:])))(
        np.concatenate([X, Y]))
    for i in (0, 1):
        for j in (0, 1):
            np.testing.assert_allclose(third[i][j], full[3 * i:3 * i + 3, 3 * j:3 * j + 3, 3:],
                                       rtol=1e-9, atol=1e-12)


@s2sgrad.differentiable(order=2)
def curved(x):
    return np.sum(np.tanh(x) ** 2 * x + np.exp(-x * x))


def curved_ag(x):
    return anp.sum(anp.tanh(x) ** 2 * x + anp.exp(-x * x))


@s2sgrad.differentiable(order=2, wrt=("x", "y"))
def curved_two(x, y):
    return np.sum(np.sin(x) * y ** 2) + np.sum(x * y) ** 2  # two's body


def uses_decorated_hvp(x):
    return np.sum(curved.hvp(x, tangents=V3) ** 2)


def uses_decorated_hvp_ag(x):
    return anp.sum(anp.dot(autograd.hessian(curved_ag)(x), V3) ** 2)


def hvp_along_v3(x):
    return curved.hvp(x, tangents=V3)


def uses_decorated_hvps(x):
    first, second = curved_two.hvp(x, 2.0 * x, tangents=(V3, V3 * V3))
    return np.sum(first * second)


def uses_decorated_hvps_ag(x):
    hessian = autograd.hessian(lambda z: two_ag(z[:3], z[3:]))(anp.concatenate([x, 2.0 * x]))
    product = anp.dot(hessian, anp.concatenate([V3, V3 * V3]))
    return anp.sum(product[:3] * product[3:])


def uses_decorated_hessians(x):
    blocks = curved_two.hessian(x, 2.0 * x)
    return np.sum(blocks[0][1] * blocks[1][1])


def test_the_decorators_hvp_is_transformed_again():
    np.testing.assert_allclose(s2sgrad.grad(uses_decorated_hvp)(X),
                               autograd.grad(uses_decorated_hvp_ag)(X), rtol=1e-9)
    np.testing.assert_allclose(s2sgrad.grad(uses_decorated_hvps)(X),
                               autograd.grad(uses_decorated_hvps_ag)(X), rtol=1e-9)
    third = autograd.jacobian(autograd.hessian(curved_ag))(X)
    np.testing.assert_allclose(s2sgrad.jacfwd(hvp_along_v3)(X), third @ V3, rtol=1e-9, atol=1e-12)


def test_the_decorators_hessian_of_several_arguments_is_transformed_again():
    got = s2sgrad.grad(uses_decorated_hessians)(X)
    np.testing.assert_allclose(got, _difference(uses_decorated_hessians, X), rtol=1e-6, atol=1e-8)


def test_the_generated_code_for_tuple_outputs_and_hvp_reads_as_written():
    text = inspect.getsource(entry_of(s2sgrad.jacfwd(pair)))
    assert "x_column_0, x_column_1 = pair_jvp(x, y, x_dot=x_unit)[1]" in text
    text = inspect.getsource(entry_of(pair_jacrev))
    assert "for seed in s2s.basis(value[1]):" in text
    assert "grads = pair_bwd(pair_fwd(x, y)[1], (s2s.zeros_like(value[0]), seed))" in text
    text = inspect.getsource(entry_of(curved_two.hvp))
    assert text.startswith("def curved_two_hvp(x, y, curved_two_bar=1.0, *, tangents):")
    assert "x, y, curved_two_bar, x_dot=tangents[0], y_dot=tangents[1]" in text
    for attribute in (curved.hvp, curved.hessian):
        assert "def curved_grad_jvp(" in s2sgrad.source(attribute)


pair_jacobian_of_jacobians = s2sgrad.jacfwd(s2sgrad.jacfwd(pair, argnums=(0, 1)))


def uses_nested_blocks(x):
    return np.sum(pair_jacobian_of_jacobians(x, Y)[0][1])


def test_jacobians_of_nested_tuples_at_first_order_and_refused_again():
    got = pair_jacobian_of_jacobians(X, Y)
    for item in (0, 1):
        for argnum in (0, 1):
            want = autograd.jacobian(pair_jacobian_ag(argnum, item))(X, Y)
            np.testing.assert_allclose(got[item][argnum], want, rtol=1e-9, atol=1e-12)
    with pytest.raises(s2sgrad.GradientError, match="one array output"):
        s2sgrad.grad(uses_nested_blocks)(X)


def scaled(x, y, scale=1.0):
    return np.sum(np.sin(x) * y) * scale


def scaled_ag(x, y, scale=1.0):
    return anp.sum(anp.sin(x) * y) * scale


@s2sgrad.differentiable(order=2)
def scaled_decorated(x, y, scale=1.0):
    return np.sum(np.sin(x) * y) * scale  # scaled's body


def test_keyword_arguments_pass_through_jacobians_and_hessians():
    want_grad = autograd.grad(scaled_ag)(X, Y, scale=2.5)
    np.testing.assert_allclose(s2sgrad.jacfwd(scaled)(X, Y, scale=2.5), want_grad, rtol=1e-12)
    np.testing.assert_allclose(s2sgrad.jacrev(scaled)(X, y=Y, scale=2.5), want_grad, rtol=1e-12)
    want = autograd.hessian(scaled_ag)(X, Y, scale=2.5)
    np.testing.assert_allclose(s2sgrad.hessian(scaled)(X, Y, scale=2.5), want, rtol=1e-12)
    np.testing.assert_allclose(scaled_decorated.hessian(X, Y, scale=2.5), want, rtol=1e-12)
    np.testing.assert_allclose(scaled_decorated.hvp(X, Y, tangents=V3, scale=2.5), want @ V3,
                               rtol=1e-12)
    with pytest.raises(UsageError, match="scaled: got an unexpected keyword argument 'scal'"):
        s2sgrad.hessian(scaled)(X, Y, scal=2.5)


def listed(x, y):
    parts = []
    for i in range(2):
        parts.append(np.sin(x[i]) * y[i] ** 2)
    return np.sum(np.stack(parts)) + np.prod(x * y)  # prod: forward mode cannot read the gradient


def listed_ag(z):
    x, y = z[:3], z[3:]
    return anp.sum(anp.stack([anp.sin(x[i]) * y[i] ** 2 for i in range(2)])) + anp.prod(x * y)


listed_hessian = s2sgrad.hessian(listed, argnums=(0, 1))


def uses_listed_blocks(x):
    blocks = listed_hessian(x, Y)
    return np.sum(blocks[0][1] * blocks[1][1])


def uses_listed_blocks_ag(x):
    full = autograd.hessian(listed_ag)(anp.concatenate([x, Y]))
    return anp.sum(full[:3, 3:] * full[3:, 3:])


@pytest.mark.slow  # 6-10 s: the slow tier, which CI runs too
def test_a_hessian_forward_mode_cannot_read_is_transformed_again_by_reverse_mode():
    # its generated function is jacrev of the gradient (one backward sweep per element)
    np.testing.assert_allclose(s2sgrad.grad(uses_listed_blocks)(X), autograd.grad(uses_listed_blocks_ag)(X),
                               rtol=1e-9, atol=1e-12)
    assert "_jacrev(" in inspect.getsource(entry_of(listed_hessian))


def nested_out(x, y):
    return np.sum(np.sin(x) * y), (x * y ** 2, np.cos(y[:2]) * np.sum(x))


def nested_out_ag(x, y, path):
    value = (anp.sum(anp.sin(x) * y), (x * y ** 2, anp.cos(y[:2]) * anp.sum(x)))
    for step in path:
        value = value[step]
    return value


@pytest.mark.parametrize("jacobian", [s2sgrad.jacfwd, s2sgrad.jacrev])
def test_an_output_tuple_nested_in_a_tuple_is_laid_out_output_first(jacobian):
    """Silent before: jacfwd laid out the blocks of a tuple item of a tuple output (the gradients
    of value_and_grad with a tuple argnums) per input first, so J[1][0][1] held d y1/d x0."""
    got = jacobian(nested_out, argnums=(0, 1))(X, Y)
    for path in ((0,), (1, 0), (1, 1)):
        item = got
        for step in path:
            item = item[step]
        for argnum in (0, 1):
            want = autograd.jacobian(lambda x, y: nested_out_ag(x, y, path), argnum)(X, Y)
            np.testing.assert_allclose(item[argnum], want, rtol=1e-9, atol=1e-12)
    vg = jacobian(s2sgrad.value_and_grad(two, argnums=(0, 1)), argnums=(0, 1))(X, Y)
    hessian = s2sgrad.hessian(two, argnums=(0, 1))(X, Y)
    for i in (0, 1):
        for j in (0, 1):
            np.testing.assert_allclose(vg[1][i][j], hessian[i][j], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(vg[0][i], autograd.grad(two_ag, i)(X, Y), rtol=1e-9)


def constant_loss(x, v, s):
    return np.sum(np.sin(np.zeros(3))) + 1.0


def constant_pair(x, v):
    return np.ones(2), 3.0


@pytest.mark.parametrize("jacobian", [s2sgrad.jacfwd, s2sgrad.jacrev])
def test_jacobians_of_a_gradient_that_does_not_vary_are_zero_blocks(jacobian):
    # the gradient (a tuple) does not depend on the arguments: its tangent is zeros of the
    # tuple's structure (seed 1363: a list of zeros, taken for one leaf, raised)
    x, v, s = np.ones((3, 4)), np.ones(4), 0.3
    blocks = jacobian(s2sgrad.grad(constant_loss, argnums=(0, 1, 2)), argnums=(0, 1, 2))(x, v, s)
    assert isinstance(blocks, tuple) and len(blocks) == 3
    for out, row in zip((x, v, s), blocks):
        assert isinstance(row, tuple) and len(row) == 3
        for arg, block in zip((x, v, s), row):
            assert np.shape(block) == np.shape(out) + np.shape(arg) and not np.any(block)
    value, tangent = s2sgrad.jvp(constant_pair, (x, v), (x, v))
    assert isinstance(tangent, tuple) and np.shape(tangent[0]) == (2,) and not np.any(tangent[0])
    assert tangent[1] == 0.0

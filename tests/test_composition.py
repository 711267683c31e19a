"""Transformations compose: s2sgrad reads the code it generated. jvp of grad, grad of grad (to
third order), grad of a function that calls grad, jacfwd, jacrev and their nesting, checked against
analytic derivatives, autograd and central differences of s2sgrad's own gradients."""

import types

import autograd
import autograd.numpy as anp
import autograd.scipy.stats as astats
import numpy as np
import pytest

import s2sgrad
from s2sgrad.checks import numerical_grad

RNG = np.random.default_rng(2026)
W3 = RNG.uniform(-1.0, 1.0, 3)
M34 = RNG.uniform(-1.0, 1.0, (3, 4))


def chain(x):
    return np.sum(np.tanh(x) ** 2 * x + np.exp(-x * x))


def scalar(x):
    return np.sin(x) * x ** 3


def scalar_d2(x):
    return -np.sin(x) * x ** 3 + 6 * np.cos(x) * x ** 2 + 6 * np.sin(x) * x


def scalar_d3(x):
    return (-np.cos(x) * x ** 3 - 9 * np.sin(x) * x ** 2 + 18 * np.cos(x) * x + 6 * np.sin(x))


def vector_valued(x, w):
    return np.tanh(M34.T @ (x * w)) * np.sum(x ** 2)


def vector_valued_ag(x, w):
    return anp.tanh(anp.dot(M34.T, x * w)) * anp.sum(x ** 2)


chain_grad = s2sgrad.grad(chain)


def weighted_gradient(x):
    return np.sum(chain_grad(x) * W3)


def _difference(f, x, t, eps=1e-6):
    return (np.asarray(f(x + eps * t)) - np.asarray(f(x - eps * t))) / (2 * eps)


def test_jvp_of_grad_is_the_hessian_times_the_tangent():
    x, t = RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3)
    value, tangent = s2sgrad.jvp(chain_grad, (x,), (t,))
    np.testing.assert_allclose(value, chain_grad(x), rtol=1e-12)
    np.testing.assert_allclose(tangent, _difference(chain_grad, x, t), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tangent, autograd.hessian(lambda z: anp.sum(
        anp.tanh(z) ** 2 * z + anp.exp(-z * z)))(x) @ t, rtol=1e-10)


def test_grad_of_grad_to_third_order():
    d2 = s2sgrad.grad(s2sgrad.grad(scalar))
    d3 = s2sgrad.grad(d2)
    for x in (0.7, -1.3, 2.0):
        np.testing.assert_allclose(d2(x), scalar_d2(x), rtol=1e-12)
        np.testing.assert_allclose(d3(x), scalar_d3(x), rtol=1e-12)
    assert getattr(d3, "__s2sgrad_made__") == "s2sgrad.grad(s2sgrad.grad(s2sgrad.grad(scalar)))"


def test_grad_of_a_function_that_calls_grad():
    x = RNG.uniform(-1, 1, 3)
    got = s2sgrad.grad(weighted_gradient)(x)
    want = autograd.hessian(lambda z: anp.sum(anp.tanh(z) ** 2 * z + anp.exp(-z * z)))(x) @ W3
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_jacfwd_and_jacrev_match_autograd():
    x, w = RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3)
    want = [autograd.jacobian(vector_valued_ag, i)(x, w) for i in (0, 1)]
    for jac in (s2sgrad.jacfwd, s2sgrad.jacrev):
        got = jac(vector_valued, argnums=(0, 1))(x, w)
        assert got[0].shape == (4, 3) and got[1].shape == (4, 3)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(jac(vector_valued)(x, w), want[0], rtol=1e-10, atol=1e-12)


def test_nested_jacobians_give_the_hessian():
    x = RNG.uniform(-1, 1, 3)
    want = autograd.hessian(lambda z: anp.sum(anp.tanh(z) ** 2 * z + anp.exp(-z * z)))(x)
    np.testing.assert_allclose(s2sgrad.jacfwd(chain_grad)(x), want, rtol=1e-10)
    np.testing.assert_allclose(s2sgrad.jacrev(chain_grad)(x), want, rtol=1e-10)
    np.testing.assert_allclose(s2sgrad.hessian(chain)(x), want, rtol=1e-10)


def test_the_hessian_is_forward_over_reverse():
    text = s2sgrad.source(s2sgrad.hessian(chain))
    assert "forward mode (the functions after 'Second order') over its reverse-mode code" in text
    assert "def chain_grad_jvp(" in text


def test_a_function_s2sgrad_cannot_transform_again_is_refused_at_the_call():
    _, pullback = s2sgrad.vjp(chain, W3)
    with pytest.raises(s2sgrad.TransformError, match="cannot transform again yet") as caught:
        s2sgrad.grad(pullback)
    assert caught.value.location.path.endswith("test_composition.py")
    assert "calls s2sgrad.vjp" in caught.value.hint


def chain_ag(z):
    return anp.sum(anp.tanh(z) ** 2 * z + anp.exp(-z * z))


def test_third_derivatives_through_jacobians_and_hessians():
    x = RNG.uniform(-1, 1, 3)
    want = autograd.jacobian(autograd.hessian(chain_ag))(x)
    hessian = s2sgrad.hessian(chain)
    for third in (s2sgrad.jacfwd(hessian), s2sgrad.jacrev(hessian),
                  s2sgrad.jacfwd(s2sgrad.jacfwd(chain_grad)), s2sgrad.jacrev(s2sgrad.jacfwd(chain_grad))):
        np.testing.assert_allclose(third(x), want, rtol=1e-9, atol=1e-12)

    def trace_of_hessian(z):
        return np.trace(hessian(z))

    np.testing.assert_allclose(s2sgrad.grad(trace_of_hessian)(x),
                               np.einsum("iik->k", want), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("inner", [s2sgrad.jacfwd, s2sgrad.jacrev])
def test_jacobians_of_jacobians_of_several_arguments(inner):
    x, w = RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3)
    got = s2sgrad.jacfwd(inner(vector_valued, argnums=(0, 1)), argnums=1)(x, w)
    for i in (0, 1):
        want = autograd.jacobian(autograd.jacobian(vector_valued_ag, i), 1)(x, w)
        assert got[i].shape == (4, 3, 3)
        np.testing.assert_allclose(got[i], want, rtol=1e-9, atol=1e-12)


@pytest.mark.slow  # 12-18 s: the slow tier, which CI runs too
def test_jacobians_of_reverse_mode_jacobians():
    x, w = RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3)
    # a Jacobian of a pytree output (here nested tuples the code does not show): blocks of its
    # structure, and its forward mode too; reverse mode over it refuses such outputs
    got = s2sgrad.jacfwd(s2sgrad.jacfwd(pair_value_and_grad))(x, w)
    jac = autograd.jacobian
    np.testing.assert_allclose(got[0], jac(jac(pair_loss_ag))(x, w), rtol=1e-9)
    for i in (0, 1):
        np.testing.assert_allclose(got[1][i], jac(jac(autograd.grad(pair_loss_ag, i)))(x, w),
                                   rtol=1e-9, atol=1e-12)
    with pytest.raises(s2sgrad.GradientError, match="needs a function with one array output"):
        s2sgrad.jacrev(s2sgrad.jacfwd(pair_value_and_grad))(x, w)
    want = autograd.jacobian(autograd.jacobian(vector_valued_ag))(x, w)
    np.testing.assert_allclose(s2sgrad.jacrev(s2sgrad.jacrev(vector_valued))(x, w), want,
                               rtol=1e-9, atol=1e-12)
    third = s2sgrad.jacrev(s2sgrad.jacrev(chain_grad))(x)
    np.testing.assert_allclose(third, autograd.jacobian(autograd.hessian(chain_ag))(x),
                               rtol=1e-9, atol=1e-12)


def test_the_jacobian_function_a_transformation_reads_is_generated_code():
    from s2sgrad.read.live import entry_of

    import inspect

    text = inspect.getsource(entry_of(s2sgrad.jacfwd(vector_valued, argnums=(0, 1))))
    assert text.startswith("def vector_valued_jacfwd(x, w):")
    # the values once, then the tangent part on chunks of unit tangents (compose.forward_parts)
    assert "values = vector_valued_jvp_values(x, w)[1]" in text
    assert "for x_units in s2s.unit_chunks(x):" in text and "for w_units in s2s.unit_chunks(w):" in text
    assert "vector_valued_jvp_tangents(values, x_units, s2s.batch_constant(s2s.zeros_like(w), " \
        "x_units))" in " ".join(text.split()).replace("( ", "(").replace(" )", ")")
    text = inspect.getsource(entry_of(s2sgrad.jacrev(vector_valued)))
    assert text.startswith("def vector_valued_jacrev(x, w):")
    # one array's value: a backward sweep per chunk of unit cotangents (batching.batch_backward);
    # a pytree's: one per element
    assert "for seed in s2s.unit_chunks(value):" in text
    assert "= vector_valued_bwd_rows(vector_valued_fwd(x, w)[1], seed)" in text
    assert "for seed in s2s.basis(value):" in text
    assert "grads = vector_valued_bwd(vector_valued_fwd(x, w)[1], seed)" in text


def test_grad_of_a_tuple_valued_transformation_names_it():
    with pytest.raises(s2sgrad.GradientError, match=r"s2sgrad\.value_and_grad\(scalar\) to return "
                       r"a real scalar, got a tuple of 2"):
        s2sgrad.grad(s2sgrad.value_and_grad(scalar))(0.5)
    # jacrev of a tuple output: one block per item (value and gradient: f', f'')
    first, second = s2sgrad.jacrev(s2sgrad.value_and_grad(scalar))(0.5)
    np.testing.assert_allclose(first, np.cos(0.5) * 0.5 ** 3 + 3 * np.sin(0.5) * 0.5 ** 2)
    np.testing.assert_allclose(second, scalar_d2(0.5), rtol=1e-12)


def pair_loss(x, y):
    return np.sum(np.sin(x) * y ** 2) + np.sum(x * y) ** 2


def pair_loss_ag(x, y):
    return anp.sum(anp.sin(x) * y ** 2) + anp.sum(x * y) ** 2


def with_aux(x, y):
    return pair_loss(x, y), x * y


pair_value_and_grad = s2sgrad.value_and_grad(pair_loss, argnums=(0, 1))


def value_times_gradient(x, y):
    value, (gx, gy) = pair_value_and_grad(x, y)
    return value * np.sum(gx * gy)


def value_times_gradient_ag(x, y):
    value, (gx, gy) = autograd.value_and_grad(pair_loss_ag, (0, 1))(x, y)
    return value * anp.sum(gx * gy)


def _ag_parts(x, y):
    """pair_loss's gradient and Hessian blocks, by autograd."""
    grads = [autograd.grad(pair_loss_ag, i)(x, y) for i in (0, 1)]
    blocks = [[autograd.jacobian(autograd.grad(pair_loss_ag, i), j)(x, y) for j in (0, 1)]
              for i in (0, 1)]
    return grads, blocks


def test_grad_and_hessian_of_a_function_that_calls_value_and_grad():
    x, y = RNG.uniform(-1, 1, 3), RNG.uniform(-1, 1, 3)
    got = s2sgrad.grad(value_times_gradient, argnums=(0, 1))(x, y)
    want = autograd.grad(value_times_gradient_ag, (0, 1))(x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(s2sgrad.hessian(value_times_gradient)(x, y),
                               autograd.hessian(value_times_gradient_ag)(x, y), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("make, returns", [
    (lambda: s2sgrad.value_and_grad(pair_loss), "value, g0"),
    (lambda: s2sgrad.value_and_grad(pair_loss, argnums=(0, 1)), "value, (g0, g1)"),
    (lambda: s2sgrad.grad(pair_loss, argnums=(0,)), "(g0,)"),
    (lambda: s2sgrad.grad(with_aux, has_aux=True), "g0, aux"),
    (lambda: s2sgrad.value_and_grad(with_aux, argnums=(1,), has_aux=True), "(value, aux), (g1,)"),
])
def test_jvp_of_what_grad_and_value_and_grad_return(make, returns):
    # jvp of each is its value and its derivative along the tangents: the gradient's tangent is
    # the Hessian times the tangents, the value's the gradient's inner product with them.
    x, y, tx, ty = (RNG.uniform(-1, 1, 3) for _ in range(4))
    fn = make()
    value, tangent = s2sgrad.jvp(fn, (x, y), (tx, ty))
    grads, blocks = _ag_parts(x, y)
    parts = {"value": pair_loss(x, y), "g0": grads[0], "g1": grads[1], "aux": x * y}
    dparts = {"value": grads[0] @ tx + grads[1] @ ty, "aux": tx * y + x * ty,
              **{f"g{i}": blocks[i][0] @ tx + blocks[i][1] @ ty for i in (0, 1)}}
    structure = eval(returns, {}, {k: k for k in parts})  # the names, nested as returned
    _assert_like(value, structure, parts)
    _assert_like(tangent, structure, dparts)
    _assert_like(fn(x, y), structure, parts)


def _assert_like(got, structure, values):
    if isinstance(structure, tuple):
        assert isinstance(got, tuple) and len(got) == len(structure), (got, structure)
        for g, s in zip(got, structure):
            _assert_like(g, s, values)
        return
    np.testing.assert_allclose(got, values[structure], rtol=1e-10, atol=1e-12)


def test_the_function_a_transformation_reads_for_value_and_grad_is_generated_code():
    from s2sgrad.read.live import entry_of

    import inspect

    fn = entry_of(s2sgrad.value_and_grad(with_aux, argnums=(1,), has_aux=True))
    text = inspect.getsource(fn)
    assert text.startswith("def with_aux_value_and_grad(x, y, with_aux_bar=1.0):")
    assert "value, residuals = with_aux_fwd(x, y)" in text
    assert "return value, with_aux_bwd(residuals, with_aux_bar)\n" in text


def sine_cubed(x, y):
    return np.sum(np.sin(x) * y ** 3)


def sine_cubed_ag(x, y):
    return anp.sum(anp.sin(x) * y ** 3)


def uses_a_pullback(x, y):
    out, pullback = s2sgrad.vjp(sine_cubed, x, y * 2.0)
    gx, gy = pullback(np.sum(x))  # an active cotangent
    x = x * 3.0  # rebinding a primal after the vjp: the pullback keeps the values it was made at
    again = pullback(2.0)[1]
    return out * np.sum(gx * y) + np.sum(gy * again * x)


def uses_a_pullback_ag(x, y):
    out = sine_cubed_ag(x, y * 2.0)
    grads = autograd.grad(lambda a, b, c: sine_cubed_ag(a, b) * c, (0, 1))
    gx, gy = grads(x, y * 2.0, anp.sum(x))
    x3 = x * 3.0
    again = grads(x, y * 2.0, 2.0)[1]
    return out * anp.sum(gx * y) + anp.sum(gy * again * x3)


def pullback_of_a_gradient(x):
    g, pullback = s2sgrad.vjp(chain_grad, x)
    return np.sum(pullback(W3)[0] * x) + np.sum(g)


@pytest.mark.slow  # 6-10 s: the slow tier, which CI runs too
def test_grad_jvp_and_hessian_of_a_function_that_calls_vjp():
    # The pullback's calls become calls of the generated gradient of sine_cubed seeded with the
    # cotangent (lower/inner.py): second derivatives of sine_cubed flow through them.
    x, y, tx, ty = (RNG.uniform(-1, 1, 3) for _ in range(4))
    got = s2sgrad.grad(uses_a_pullback, argnums=(0, 1))(x, y)
    want = autograd.grad(uses_a_pullback_ag, (0, 1))(x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    value, tangent = s2sgrad.jvp(uses_a_pullback, (x, y), (tx, ty))
    np.testing.assert_allclose(value, uses_a_pullback(x, y), rtol=1e-12)
    np.testing.assert_allclose(tangent, want[0] @ tx + want[1] @ ty, rtol=1e-10)
    np.testing.assert_allclose(s2sgrad.hessian(uses_a_pullback, argnums=1)(x, y),
                               autograd.hessian(uses_a_pullback_ag, 1)(x, y), rtol=1e-9, atol=1e-11)
    want = autograd.grad(lambda z: anp.sum(anp.dot(autograd.hessian(chain_ag)(z), W3) * z)
                         + anp.sum(autograd.grad(chain_ag)(z)))(x)
    np.testing.assert_allclose(s2sgrad.grad(pullback_of_a_gradient)(x), want, rtol=1e-9, atol=1e-11)


def test_a_pullback_used_otherwise_is_refused_where_it_is_made():
    def passes_the_pullback(x):
        out, pullback = s2sgrad.vjp(chain, x)
        return np.sum(apply(pullback, x))

    with pytest.raises(s2sgrad.TransformError, match=r"`fn\(\.\.\.\)` calls `fn`, a value "
                       r"this function computes(.|\n)*where it is only called, in the function"):
        s2sgrad.grad(passes_the_pullback)(W3)

    def pullback_in_a_branch(x):
        if np.sum(x) > 0:
            out, pullback = s2sgrad.vjp(chain, x)
            return np.sum(pullback(1.0)[0])
        return np.sum(x)

    with pytest.raises(s2sgrad.TransformError, match=r"no derivative rule for `s2sgrad\.vjp`"):
        s2sgrad.grad(pullback_in_a_branch)(W3)


def apply(fn, x):
    return fn(x)[0]


def uses_a_jvp(x, y):
    value, tangent = s2sgrad.jvp(sine_cubed, (x * 2.0, y), [np.ones_like(x), y])
    return value * tangent + s2sgrad.jvp(sine_cubed, (x, y), (y, x))[1]


def uses_a_jvp_ag(x, y):
    def directional(a, b, ta, tb):
        grads = autograd.grad(sine_cubed_ag, (0, 1))(a, b)
        return anp.sum(grads[0] * ta) + anp.sum(grads[1] * tb)

    return sine_cubed_ag(x * 2.0, y) * directional(x * 2.0, y, anp.ones_like(x), y) + \
        directional(x, y, y, x)


@pytest.mark.slow  # 6-10 s: the slow tier, which CI runs too
def test_grad_jvp_and_hessian_of_a_function_that_calls_jvp():
    # Each jvp call becomes a call of sine_cubed's generated forward mode (lower/inner.py).
    x, y, tx, ty = (RNG.uniform(-1, 1, 3) for _ in range(4))
    np.testing.assert_allclose(uses_a_jvp(x, y), uses_a_jvp_ag(x, y), rtol=1e-12)
    got = s2sgrad.grad(uses_a_jvp, argnums=(0, 1))(x, y)
    want = autograd.grad(uses_a_jvp_ag, (0, 1))(x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(s2sgrad.jvp(uses_a_jvp, (x, y), (tx, ty))[1],
                               want[0] @ tx + want[1] @ ty, rtol=1e-10)
    np.testing.assert_allclose(s2sgrad.hessian(uses_a_jvp)(x, y),
                               autograd.hessian(uses_a_jvp_ag)(x, y), rtol=1e-9, atol=1e-11)


def test_a_jvp_of_another_form_is_refused_with_advice():
    def tangents_from_a_name(x):
        along = (x,)
        return s2sgrad.jvp(chain, (x,), along)[1]

    with pytest.raises(s2sgrad.TransformError, match=r"no derivative rule for `s2sgrad\.jvp`(.|\n)*"
                       r"primals and tangents written as tuple displays"):
        s2sgrad.grad(tangents_from_a_name)(W3)


@s2sgrad.differentiable(order=2)
def decorated_chain(x):
    return np.sum(np.tanh(x) ** 2 * x + np.exp(-x * x))  # chain's body


def test_the_decorators_hessian_is_transformed_again():
    x = RNG.uniform(-1, 1, 3)
    third = autograd.jacobian(autograd.hessian(chain_ag))(x)
    np.testing.assert_allclose(s2sgrad.jacfwd(decorated_chain.hessian)(x), third, rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(s2sgrad.jacrev(decorated_chain.hessian)(x), third, rtol=1e-9,
                               atol=1e-12)


def negated_sum(v):
    return np.sum(-v) + 0.5  # its gradient is one number standing for the array (-1 everywhere)


negated_sum_grad = s2sgrad.grad(negated_sum)


def weighted_constant_gradient(v):
    return np.sum(negated_sum_grad(v) * v)


def test_grad_through_a_gradient_that_is_one_number_standing_for_an_array():
    # Regression (property seed 54): the adjoint of `like(v_bar, v)` spread a (4,) adjoint
    # into v_bar's () shape; it is summed (s2s.fit)
    v = np.linspace(-1.0, 1.0, 4)
    np.testing.assert_allclose(s2sgrad.grad(weighted_constant_gradient)(v), -np.ones(4))
    np.testing.assert_allclose(s2sgrad.hessian(weighted_constant_gradient)(v), np.zeros((4, 4)))


# an import inside try/else (as autograd's tests write theirs): the generated code does not copy
# it and reads `_special` through the user's globals, where `_special.logsumexp` is
# scipy.special._logsumexp.logsumexp, which is scipy.special.logsumexp
try:
    import scipy
except ImportError:  # pragma: no cover
    pass
else:
    from scipy import special as _special
    from scipy import stats as _stats


def _rows_logsumexp(a):
    return np.sum(_special.logsumexp(a, axis=1, keepdims=True) ** 2)


def _grad_of_rows_logsumexp(a):
    return s2sgrad.grad(_rows_logsumexp)(a)


def test_a_library_function_read_through_a_global_is_named_by_its_public_module():
    x = np.array([[0.3, -1.2, 0.5, 2.0, 0.1]])
    t = np.array([[1.0, 0.5, -0.25, 0.2, -1.0]])
    _, tangent = s2sgrad.jvp(_grad_of_rows_logsumexp, (x,), (t,))
    (row,) = s2sgrad.vjp(_grad_of_rows_logsumexp, x)[1](t)
    eps = 1e-6
    want = (_grad_of_rows_logsumexp(x + eps * t) - _grad_of_rows_logsumexp(x - eps * t)) / (2 * eps)
    np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(row, want, rtol=1e-6, atol=1e-9)  # the Hessian is symmetric


DIRICHLET_ALPHA = np.array([1.5, 2.0, 1.3, 2.5])


def _dirichlet_of_normalized(x):
    return _stats.dirichlet.logpdf(x / np.sum(x), DIRICHLET_ALPHA) * 2.0


def test_a_method_of_an_object_a_library_exports_is_named_by_that_object():
    # `_stats.dirichlet.logpdf` read through the globals is a bound method of the instance
    # scipy.stats exports as `dirichlet`: its rule is scipy.stats.dirichlet.logpdf's (the
    # generated gradient read again in forward mode, for the Hessian-vector product)
    x = np.array([0.2, 0.3, 0.1, 0.4])
    t = np.array([0.5, -1.0, 0.25, 0.3])
    (got,) = s2sgrad.hvp(_dirichlet_of_normalized, (x,), (t,))
    twin = types.FunctionType(_dirichlet_of_normalized.__code__, dict(globals(), np=anp, _stats=astats))
    np.testing.assert_allclose(got, autograd.hessian_vector_product(twin)(x, t), rtol=1e-10)


def rows_and_sum(x, v):
    rows = [np.cos(x[-1]), np.sin(v) + np.zeros(4)]
    rows.append(v[0] / 3.0 + np.zeros(4))
    # the list's adjoint is np.array(rows)'s (an array) plus sum(rows)'s (one per row)
    t = np.sin(v[0] / (1.5 + np.tanh(sum(rows))))
    return np.sum(np.exp(np.array(rows))) + np.sum(t)


def calls_grad_of_rows_and_sum(x, v):
    gx, gv = s2sgrad.grad(rows_and_sum, argnums=(0, 1))(x, v)
    return np.sum(gx * gx) + np.sum(gv)


def test_grad_of_a_gradient_adding_an_arrays_adjoint_to_a_lists():
    # the adjoint of s2s.add(array, list) is each operand's in its own form (generator seed 1425:
    # the array's was a list, multiplied by a number)
    x, v = M34.copy(), RNG.uniform(-1.0, 1.0, 4)
    grad = s2sgrad.grad(calls_grad_of_rows_and_sum, argnums=(0, 1))
    for _ in range(2):
        for k, got in enumerate(grad(x, v)):
            np.testing.assert_allclose(got, numerical_grad(calls_grad_of_rows_and_sum, (x, v), k),
                                       rtol=1e-5, atol=1e-7)

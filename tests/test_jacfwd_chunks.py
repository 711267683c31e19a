"""jacfwd by chunks of unit tangents (compose.forward_parts, write/entries.jacobian_entry): the
function's values once, then its tangent part carrying a chunk of unit tangents at a time,
where that part has a batched form; one forward sweep per element where it has not. Checked
against autograd's Jacobian and s2sgrad's jacrev, with one chunk and with several."""

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad import runtime as s2s

RNG = np.random.default_rng(25)
A = RNG.normal(size=(6, 5)) / 3


def layer(x):
    return np.tanh(A @ x) * np.sin(np.sum(x))


def layer_ag(x):
    return anp.tanh(anp.dot(A, x)) * anp.sin(anp.sum(x))


def pairwise(x, w):
    return np.exp(w[0]) * np.sum(np.tanh(x[:, None] * w[None, :] + np.sin(x)[:, None]), axis=1)


def pairwise_ag(x, w):
    return anp.exp(w[0]) * anp.sum(anp.tanh(x[:, None] * w[None, :] + anp.sin(x)[:, None]), axis=1)


def matrix_out(x):
    return np.outer(np.cos(x), x) / (1.0 + np.sum(x ** 2))


def matrix_out_ag(x):
    return anp.outer(anp.cos(x), x) / (1.0 + anp.sum(x ** 2))


def pair_out(x):  # a tuple display: one block per item, by columns
    return np.sin(x) * 2.0, np.sum(x ** 3)


def looped(x):  # a loop: its tangent part has no batched form (one sweep per element)
    y = x
    for _ in range(3):
        y = np.sin(y) * x
    return y


def looped_ag(x):
    y = x
    for _ in range(3):
        y = anp.sin(y) * x
    return y


X5 = RNG.normal(size=5)
W3 = RNG.normal(size=3)


@pytest.mark.parametrize("at_once", [256, 2])
@pytest.mark.parametrize("fn, fn_ag, args, argnums", [
    (layer, layer_ag, (X5,), 0),
    (pairwise, pairwise_ag, (X5, W3), (0, 1)),
    (matrix_out, matrix_out_ag, (X5,), 0),
    (looped, looped_ag, (X5,), 0),
], ids=["layer", "pairwise", "matrix_out", "looped"])
def test_jacfwd_matches_autograd_and_jacrev(fn, fn_ag, args, argnums, at_once, monkeypatch):
    monkeypatch.setattr(s2s.jacobians, "_AT_ONCE", at_once)  # one chunk, or several
    got = s2sgrad.jacfwd(fn, argnums=argnums)(*args)
    rev = s2sgrad.jacrev(fn, argnums=argnums)(*args)
    nums = (argnums,) if isinstance(argnums, int) else argnums
    for k, i in enumerate(nums):
        block = got if isinstance(argnums, int) else got[k]
        want = autograd.jacobian(fn_ag, i)(*args)
        assert np.shape(block) == np.shape(fn(*args)) + np.shape(args[i])
        np.testing.assert_allclose(block, want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(block, rev if isinstance(argnums, int) else rev[k],
                                   rtol=1e-10, atol=1e-12)


def test_the_chunked_jacobian_is_the_generated_code_and_a_loop_keeps_columns():
    text = s2sgrad.source(s2sgrad.jacfwd(pairwise, argnums=(0, 1)))
    assert "for x_units in s2s.unit_chunks(x):" in text and "s2s.chunks_block(w_chunks, w)" in text
    assert "for x_unit in s2s.basis(x):" in s2sgrad.source(s2sgrad.jacfwd(looped))


def test_a_tuple_output_gets_a_block_per_item():
    sin_block, cube_block = s2sgrad.jacfwd(pair_out)(X5)
    np.testing.assert_allclose(sin_block, np.diag(2.0 * np.cos(X5)), rtol=1e-12)
    np.testing.assert_allclose(cube_block, 3.0 * X5 ** 2, rtol=1e-12)


def scalar_loss(x, w):
    return np.sum(np.tanh(A @ x) ** 2) * np.exp(w[0]) + np.sum(np.sin(x) * w[1])


@pytest.mark.parametrize("at_once", [256, 3])
def test_jacfwd_of_a_generated_gradient_runs_its_inlined_sweeps_by_chunks(at_once, monkeypatch):
    # JAX's spelling of a Hessian, jacfwd(grad(f)): the gradient's sweeps inlined into one
    # function (flatten.py), split and batched as s2sgrad.hessian's code is
    monkeypatch.setattr(s2s.jacobians, "_AT_ONCE", at_once)
    gradient = s2sgrad.grad(scalar_loss, argnums=(0, 1))
    blocks = s2sgrad.jacfwd(gradient, argnums=(0, 1))(X5, W3)
    hessian = s2sgrad.hessian(scalar_loss, argnums=(0, 1))(X5, W3)
    for i in (0, 1):
        for j in (0, 1):
            np.testing.assert_allclose(blocks[i][j], hessian[i][j], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(
                blocks[i][j], autograd.jacobian(autograd.grad(scalar_loss_ag, i), j)(X5, W3),
                rtol=1e-9, atol=1e-12)
    # (a tuple of gradients is a tuple display: its Jacobian runs by columns, a block per item)
    text = s2sgrad.source(s2sgrad.jacfwd(s2sgrad.grad(scalar_loss)))
    assert "for x_units in s2s.unit_chunks(x):" in text


def scalar_loss_ag(x, w):
    return anp.sum(anp.tanh(anp.dot(A, x)) ** 2) * anp.exp(w[0]) + anp.sum(anp.sin(x) * w[1])


@s2sgrad.custom_gradient
def stated_square(x):
    def grad(dy):
        return dy * 3.0 * x  # deliberately not 2x: the stated derivative is what counts
    return x ** 2, grad


def through_custom(x):
    return np.sum(stated_square(np.sin(x)) * x)


def test_jacfwd_of_a_gradient_calling_a_custom_gradient():
    # the gradient's sweeps call the custom function's generated backward; inlined, they are
    # read with the generated module's names (a unit read from the text alone imported it from
    # a module that does not exist: generator seed 1009)
    # (the stated rule governs the output where it reappears in the gradient, at every order:
    # shared/CUSTOM_GRADIENT.md; differences of the gradient's values do not follow it)
    gradient = s2sgrad.grad(through_custom)
    got = s2sgrad.jacfwd(gradient)(X5)
    np.testing.assert_allclose(got, s2sgrad.hessian(through_custom)(X5), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got, s2sgrad.jacrev(gradient)(X5), rtol=1e-10, atol=1e-12)

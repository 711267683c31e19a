"""Code made for a call's shapes takes the function's own sums and means over literal axes, and
whole sums and means of arrays, as ``s2s.axis_sum`` and ``s2s.axis_mean`` (lower/axis_sums.py): the same values and gradients as
numpy's (autograd's, to rounding), in every spelling of a sum or mean over axes, and those it does
not take kept as written."""

import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from conftest import assert_agrees_with_oracle

RNG = np.random.default_rng(5)


def pairs(P):
    D = P[:, None, :] - P[None, :, :]
    return np.sum(np.sqrt(np.sum(D ** 2, axis=-1) + 1.0))


def pairs_ag(P):
    D = P[:, None, :] - P[None, :, :]
    return anp.sum(anp.sqrt(anp.sum(D ** 2, axis=-1) + 1.0))


def spellings(X, w):
    a = X.sum(axis=0) @ w
    b = np.sum(X * X, 1, keepdims=True)
    c = np.sum(np.tanh(X), axis=(0, 1))
    d = (X ** 2).sum(axis=-1, keepdims=False)
    e = X - np.mean(X, axis=1, keepdims=True)
    f = np.sin(X).mean(axis=0) @ w
    return a + np.sum(b * d[:, None]) + c + np.sum(e ** 3) + f


def spellings_ag(X, w):
    a = anp.sum(X, axis=0) @ w
    b = anp.sum(X * X, 1, keepdims=True)
    c = anp.sum(anp.tanh(X), axis=(0, 1))
    d = anp.sum(X ** 2, axis=-1)
    e = X - anp.mean(X, axis=1, keepdims=True)
    f = anp.mean(anp.sin(X), axis=0) @ w
    return a + anp.sum(b * d[:, None]) + c + anp.sum(e ** 3) + f


def kept(X):
    total = np.sum(X)  # a whole sum of an array: taken, numpy's own reduction (pairwise)
    wide = np.sum(X, axis=0, dtype=np.float64)  # a dtype given
    parts = [X, np.sin(X)]
    stacked = np.sum(parts, axis=0)  # a list's sum
    return total * np.sum(wide) + np.sum(stacked ** 2) + np.sum(np.sum([X, X * X], axis=0))


def kept_ag(X):
    stacked = X + anp.sin(X)
    return anp.sum(X) * anp.sum(anp.sum(X, axis=0)) + anp.sum(stacked ** 2) + anp.sum(X + X * X)


CASES = [(pairs, pairs_ag, lambda: (RNG.normal(size=(7, 3)),), 2),
         (spellings, spellings_ag, lambda: (RNG.normal(size=(6, 4)), RNG.normal(size=4)), 7),
         (kept, kept_ag, lambda: (RNG.normal(size=(5, 3)),), 1)]


@pytest.mark.parametrize("fn, oracle, make, taken", CASES, ids=[c[0].__name__ for c in CASES])
def test_values_gradients_and_which_sums_are_taken(fn, oracle, make, taken):
    args = make()
    vg = assert_agrees_with_oracle(fn, oracle, args)  # code for any shape, then for the shapes
    made = s2sgrad.source(vg, like=args)
    forward = made[made.index("_fwd("):made.index("_bwd(")]
    assert forward.count("s2s.axis_sum(") + forward.count("s2s.axis_mean(") == taken, forward
    assert "s2s.axis_" not in s2sgrad.source(vg).split("_bwd(")[0]  # code for any shape: as written


def test_a_float32_sum_stays_float32():
    X = RNG.normal(size=(6, 3)).astype(np.float32)
    vg = s2sgrad.value_and_grad(lambda X: np.sum(np.sum(X * X, axis=1) ** 2))
    for _ in range(2):
        value, grad = vg(X)
        assert grad.dtype == np.float32
        np.testing.assert_allclose(grad, 4.0 * np.sum(X * X, axis=1)[:, None] * X, rtol=1e-5)


def softmax_loss(S, T):
    S = S - np.max(S, axis=1, keepdims=True)
    P = np.exp(S)
    P = P / np.sum(P, axis=1, keepdims=True)
    return np.sum(P * T)


def test_a_stabilizing_maximum_stays_proven_with_the_runtimes_sum():
    """The maximum a softmax subtracts changes nothing (analyze/invariance.py): proven of the
    runtime's sum as of numpy's, so neither kind of code computes its adjoint."""
    S, T = RNG.normal(size=(5, 4)), RNG.normal(size=(5, 4))
    g = s2sgrad.grad(softmax_loss)
    first, second = g(S, T), g(S, T)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    want = P * (T - np.sum(P * T, axis=1, keepdims=True))
    np.testing.assert_allclose(first, want, rtol=1e-12)
    np.testing.assert_allclose(second, want, rtol=1e-12)
    for made in (s2sgrad.source(g), s2sgrad.source(g, like=(S, T))):
        assert "extremum_vjp" not in made and "max_S_bar" not in made, made
    assert "s2s.axis_sum(P, axis=1, keepdims=True)" in s2sgrad.source(g, like=(S, T))

"""Code made for a call's shapes writes variances and standard deviations over literal axes out as
numpy computes them (lower/variances.py): the same values and gradients as numpy's and autograd's
(to rounding) in every spelling, the centering shared with the function's own, second order, and
the calls it does not take kept as written."""

import re

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from conftest import assert_agrees_with_oracle

RNG = np.random.default_rng(11)


def layernorm(x, gamma):  # methods, the function's own centering: one centering
    xc = x - x.mean(axis=-1, keepdims=True)
    return np.sum(np.tanh(gamma * xc / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)))


def layernorm_ag(x, gamma):
    xc = x - anp.mean(x, axis=-1, keepdims=True)
    var = anp.mean(xc ** 2, axis=-1, keepdims=True)
    return anp.sum(anp.tanh(gamma * xc / anp.sqrt(var + 1e-5)))


def spellings(x, w):
    a = np.var(x, axis=0) @ w
    b = np.std(x, 1, keepdims=True)
    c = x.std(axis=(0, 1))
    d = np.var(np.sin(x), axis=-1, ddof=0, keepdims=False)
    return a + np.sum(b * d[:, None]) + c * np.sum(x.var(axis=1))


def _var_ag(x, axis, keepdims=False):
    return anp.mean((x - anp.mean(x, axis=axis, keepdims=True)) ** 2, axis=axis, keepdims=keepdims)


def spellings_ag(x, w):
    a = _var_ag(x, 0) @ w
    b = anp.sqrt(_var_ag(x, 1, True))
    c = anp.sqrt(_var_ag(x, (0, 1)))
    d = _var_ag(anp.sin(x), -1)
    return a + anp.sum(b * d[:, None]) + c * anp.sum(_var_ag(x, 1))


def kept(x):  # ddof=1, a dtype, no axis: as written
    return np.sum(np.var(x, axis=0, ddof=1)) + np.std(x, axis=1, dtype=np.float64).sum() + np.var(x)


def kept_ag(x):
    n0, n1 = x.shape
    return (anp.sum(_var_ag(x, 0)) * n0 / (n0 - 1) + anp.sum(anp.sqrt(_var_ag(x, 1)))
            + _var_ag(x, None))


def _code(text):
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


CASES = [(layernorm, layernorm_ag, lambda: (RNG.normal(size=(6, 5)) * 2.0 + 1.0, RNG.uniform(0.5, 1.5, 5)), 1),
         (spellings, spellings_ag, lambda: (RNG.normal(size=(6, 4)), RNG.normal(size=4)), 5),
         (kept, kept_ag, lambda: (RNG.normal(size=(5, 3)),), 0)]


@pytest.mark.parametrize("fn, oracle, make, written", CASES, ids=[c[0].__name__ for c in CASES])
def test_values_gradients_and_which_are_written_out(fn, oracle, make, written):
    args = make()
    vg = assert_agrees_with_oracle(fn, oracle, args)  # code for any shape, then for the shapes
    made = _code(s2sgrad.source(vg, like=args))
    forward = made[made.index("_fwd("):made.index("_bwd(")]
    assert len(re.findall(r"_squares(_\d+)? = ", forward)) == written, forward
    backward = made[made.index("_bwd("):]
    assert ("var_vjp" in backward or "std_vjp" in backward) == (written == 0), backward
    generic = s2sgrad.source(vg)
    assert "_squares = " not in generic  # code for any shape: as written


def test_one_centering_for_the_function_and_its_variances():
    """The layer norm's variance centers as the function does; a std and a var over one axis,
    spelled as a function and as a method, center once between them (lower/common.py reads a
    method as its function)."""
    x, gamma = CASES[0][2]()
    made = _code(s2sgrad.source(s2sgrad.grad(layernorm), like=(x, gamma)))
    forward = made[made.index("_fwd("):made.index("_bwd(")]
    assert len(re.findall(r" = x - ", forward)) == 1, forward  # the variance's centering is the function's
    assert ".var(" not in forward
    x, w = CASES[1][2]()
    made = _code(s2sgrad.source(s2sgrad.value_and_grad(spellings, argnums=(0, 1)), like=(x, w)))
    forward = made[made.index("_fwd("):made.index("_bwd(")]
    assert len(re.findall(r" = x - ", forward)) == 3, forward  # axes 0, 1 (twice), (0, 1)


def test_float32_stays_float32_and_matches_numpy():
    x = RNG.normal(size=(8, 6)).astype(np.float32)

    def f(x):
        return np.sum(x.std(axis=0) * np.var(x, axis=1, keepdims=True))

    vg = s2sgrad.value_and_grad(f)
    for _ in range(2):
        value, grad = vg(x)
        assert grad.dtype == np.float32
        np.testing.assert_allclose(value, f(x), rtol=1e-5)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(grad, s2sgrad.grad(f)(x64), rtol=1e-4, atol=1e-5)


def test_second_order_through_a_written_out_variance():
    x = RNG.normal(size=(4, 3))
    v = RNG.normal(size=(4, 3))

    def f(x):
        return np.sum(np.std(x, axis=1) ** 3)

    def f_ag(x):
        return anp.sum(anp.sqrt(_var_ag(x, 1)) ** 3)

    hvp_ag = autograd.grad(lambda x: anp.sum(autograd.grad(f_ag)(x) * v))(x)
    for _ in range(2):
        np.testing.assert_allclose(s2sgrad.hvp(f, (x,), (v,))[0], hvp_ag, rtol=1e-8, atol=1e-10)


def test_a_deviation_of_one_value_keeps_the_rules_zero():
    """Over an axis of length 1 a deviation is 0 and its adjoint 0 by the rule's convention (the
    written-out square root would divide 0 by 0): kept as written; a variance is written out."""
    x = RNG.normal(size=(4, 1))

    def f(x):
        return np.sum(np.std(x, axis=1) * 3.0) + np.sum(np.var(x, axis=1))

    g = s2sgrad.grad(f)
    for _ in range(3):
        np.testing.assert_array_equal(g(x), np.zeros_like(x))
    made = _code(s2sgrad.source(g, like=(x,)))
    forward = made[made.index("_fwd("):made.index("_bwd(")]
    assert "np.std(" in forward and len(re.findall(r"_squares(_\d+)? = ", forward)) == 1, forward

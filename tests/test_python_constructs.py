"""Ordinary Python in a differentiated function (issue 26), each construct in every mode: reverse
against central differences and autograd, forward (jvp) against autograd's gradient along a
tangent, second order (hessian) against autograd's Hessian."""

import autograd
import numpy as np
import pytest
from conftest import _rebind, assert_gradients

import python_inputs as pi
import s2sgrad

X = np.array([0.3, -0.5, 0.7, 1.2, 0.9])


def check_every_mode(fn, *args, rtol=1e-7):
    """``fn``'s gradient, jvp and Hessian in its first argument equal autograd's."""
    assert_gradients(fn, *args, argnums=(0,))
    twin = _rebind(fn)
    tangent = np.linspace(0.2, 1.1, np.size(args[0])).reshape(np.shape(args[0]))
    expected_grad = autograd.grad(twin, 0)(*args)
    value, derivative = s2sgrad.jvp(fn, args, (tangent,) + tuple(np.zeros_like(a) for a in args[1:]))
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    np.testing.assert_allclose(derivative, np.sum(expected_grad * tangent), rtol=rtol, atol=1e-10)
    hessian = s2sgrad.hessian(fn)(*args)
    np.testing.assert_allclose(hessian, autograd.hessian(twin, 0)(*args), rtol=rtol, atol=1e-10)


@pytest.mark.parametrize("fn", [pi.asserts_and_prints, pi.logs_and_warns, pi.annotated,
                                pi.errstate_block, pi.nested_with_in_loop])
def test_statements_without_derivative(fn, capsys):
    check_every_mode(fn, X)


def test_errstate_holds_around_the_forward_code_only():
    """The manager is entered and left where the user's block runs: no error escapes it in
    generated forward code (the value and its tangent lines), and the state is restored after
    the block (the backward sweep runs outside it: README)."""
    before = np.geterr()
    text = s2sgrad.source(s2sgrad.grad(pi.errstate_block))
    assert "# with np.errstate(divide=\"ignore\", invalid=\"ignore\"):" in text
    assert text.index("s2s.enter_context(") < text.index("np.log(") < text.index("s2s.exit_context(")
    with np.errstate(all="raise"):
        x = np.array([0.0, 1.0, 2.0])
        value, _ = s2sgrad.jvp(pi.errstate_block, (x,), (np.ones(3),))  # log(0) in the block
        assert value == -np.inf
        assert np.geterr()["divide"] == "raise"
    assert np.geterr() == before


def test_with_binding_a_name_is_refused_with_a_hint():
    def opens(x):
        with open("nothing") as handle:  # noqa: F841
            y = x * 2.0
        return np.sum(y)

    with pytest.raises(s2sgrad.TransformError, match=r"when they bind a name") as info:
        s2sgrad.grad(opens)
    assert "np.errstate" in str(info.value)

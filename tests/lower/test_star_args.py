"""``*args`` of arrays and keyword-only parameters (issue 26). The pipeline takes a ``*args``
parameter given the structure of what a call passed there (``Options.trees``: a tuple) as that
many positional parameters (lower/star_args.py, then lower/trees.py): checked here on the
generated functions against autograd, which takes the same positions."""

import types

import autograd
import numpy as np
import pytest
from conftest import _rebind

import s2sgrad
from s2sgrad.errors import UsageError
from s2sgrad.pipeline import Options, generate_for_function, generate_jvp
from s2sgrad.read.capture import from_function
from s2sgrad.trees import tree_flatten

X = np.array([0.3, -0.5, 0.7])


def star_sum(a, *xs, scale=2.0):
    return sum(np.sum(np.sin(x) * a) for x in xs) * scale + np.sum(a * xs[0])


def only_star(*xs):
    total = 0.0
    for i in range(len(xs)):
        total = total + np.sum(xs[i] ** (i + 1))
    return total


def _load(text):
    namespace: dict = {}
    exec(compile(text, "<generated>", "exec"), namespace)
    return namespace


def _star_tree(count):
    return tree_flatten(tuple(X for _ in range(count)))[1]


def test_star_args_are_positional_parameters_of_the_generated_code():
    args = (X * 0.5, X, X * 2.0, -X)
    made = generate_for_function(star_sum, Options(wrt=("a", "xs"), trees=(("xs", _star_tree(3)),)))
    assert "def star_sum_grad(a, xs_0, xs_1, xs_2, *, scale=2.0, star_sum_bar=1.0):" in made.text
    got = _load(made.text)["star_sum_grad"](*args, scale=3.0)
    expected = autograd.grad(lambda *v: _rebind(star_sum)(*v, scale=3.0), (0, 1, 2, 3))(*args)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10)


def test_only_star_args_in_both_modes():
    args = (X, X * 0.7)
    tree = (("xs", _star_tree(2)),)
    made = generate_for_function(only_star, Options(wrt=("xs",), trees=tree))
    got = _load(made.text)["only_star_grad"](*args)
    expected = autograd.grad(_rebind(only_star), (0, 1))(*args)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-10)
    forward = generate_jvp(from_function(only_star), ("xs",), trees=tree)
    tangents = (np.ones(3), np.linspace(0.1, 0.3, 3))
    value, tangent = _load(forward.text)[forward.names.fwd](*args, *tangents)
    assert np.isclose(value, only_star(*args))
    assert np.isclose(tangent, sum(np.sum(e * t) for e, t in zip(expected, tangents)))


def test_keyword_only_parameters_keep_their_defaults():
    def scaled(x, *, scale=2.0, shift=None):
        return np.sum(np.sin(x) * scale) + (0.0 if shift is None else np.sum(shift * x))

    np.testing.assert_allclose(s2sgrad.grad(scaled)(X), 2.0 * np.cos(X), rtol=1e-12)
    made = generate_for_function(scaled, Options(wrt=("x",)))
    grad = _load(made.text)["scaled_grad"]
    np.testing.assert_allclose(grad(X, scale=3.0, shift=X), 3.0 * np.cos(X) + X, rtol=1e-12)


def test_argnums_count_into_star_args_at_the_api():
    args = (X * 0.5, X, X * 2.0, -X)
    expected = autograd.grad(lambda *v: _rebind(star_sum)(*v, scale=3.0), (0, 1, 2, 3))(*args)
    got = s2sgrad.grad(star_sum, argnums=(0, 2, 3))(*args, scale=3.0)
    for g, e in zip(got, (expected[0], expected[2], expected[3])):
        np.testing.assert_allclose(g, e, rtol=1e-10)
    one = s2sgrad.grad(star_sum, argnums=2)(*args, scale=3.0)
    np.testing.assert_allclose(one, expected[2], rtol=1e-10)
    value, (first,) = s2sgrad.value_and_grad(only_star, argnums=(1,))(X, X * 0.7)
    assert value == pytest.approx(only_star(X, X * 0.7))
    np.testing.assert_allclose(first, 2 * X * 0.7, rtol=1e-12)
    for jacobian in (s2sgrad.jacfwd, s2sgrad.jacrev):
        np.testing.assert_allclose(jacobian(star_sum, argnums=3)(*args, scale=3.0), expected[3],
                                   rtol=1e-10)
    adjoints = s2sgrad.vjp(only_star, X, X * 0.7)[1](1.0)
    np.testing.assert_allclose(adjoints[1], 2 * X * 0.7, rtol=1e-12)
    s2sgrad.check_grads(only_star, (X, X * 0.7, X - 1.0))
    s2sgrad.check_grads(star_sum, (X, X * 0.7, X - 1.0), order=2, modes=("rev", "fwd"))
    s2sgrad.check_grads(star_sum, (X, X * 0.7, X - 1.0), order=2, modes=("rev", "fwd"),
                        argnums=(0, 2))
    # the parameters before *args alone (the code still made for the arrays passed there)
    np.testing.assert_allclose(s2sgrad.grad(star_sum, argnums=0)(*args, scale=3.0), expected[0],
                               rtol=1e-10)


def test_what_star_args_do_not_take_yet_is_refused_at_the_call():
    with pytest.raises(s2sgrad.TransformError, match="position counted from the end") as info:
        s2sgrad.grad(only_star, argnums=-1)
    assert "test_star_args.py:" in str(info.value).splitlines()[0]
    with pytest.raises(UsageError, match=r"do not fit a call with 2 argument"):
        s2sgrad.grad(only_star, argnums=(0, 2))(X, X)
    with pytest.raises(UsageError, match="pytree"):
        s2sgrad.grad(only_star, argnums=0)({"a": X}, X)


def scaled_loss(w, *, lam=0.1):
    return np.sum(np.sin(w) ** 2) * lam


def scaled_tree_loss(params, *, lam=0.1):
    return np.sum(np.sin(params["w"]) ** 2) * lam


def test_keyword_only_arguments_are_passed_on_by_grad_and_the_jacobians():
    w = np.array([0.3, -1.2, 0.7])
    want = 0.5 * 2 * np.sin(w) * np.cos(w)
    np.testing.assert_allclose(s2sgrad.grad(scaled_loss)(w, lam=0.5), want, rtol=1e-12)
    value, got = s2sgrad.value_and_grad(scaled_loss)(w, lam=0.5)
    assert value == pytest.approx(scaled_loss(w, lam=0.5))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(s2sgrad.grad(scaled_tree_loss)({"w": w}, lam=0.5)["w"], want, rtol=1e-12)
    for jacobian in (s2sgrad.jacfwd, s2sgrad.jacrev):
        np.testing.assert_allclose(jacobian(scaled_loss)(w, lam=0.5), want, rtol=1e-12)
        np.testing.assert_allclose(jacobian(scaled_tree_loss)({"w": w}, lam=0.5)["w"], want, rtol=1e-12)
    # the Hessian's routes do not pass them on yet: a clear refusal, never the default silently
    with pytest.raises(UsageError, match="keyword-only arguments \\['lam'\\]"):
        s2sgrad.hessian(scaled_loss)(w, lam=0.5)


def _copy(fn):
    """A fresh function object of ``fn``'s code (the decorator sets attributes on what it takes)."""
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    return copy


def _twin(fn):
    """``fn`` with ``np`` bound to autograd.numpy, its keyword-only defaults kept."""
    twin = _rebind(fn)
    twin.__kwdefaults__ = fn.__kwdefaults__
    return twin


def _autograd_blocks(fun, args, argnums):
    """autograd's Hessian blocks ``[i][j]`` of ``fun`` for the positions ``argnums``."""
    return [[autograd.jacobian(autograd.grad(fun, a), b)(*args) for b in argnums] for a in argnums]


@pytest.mark.parametrize("argnums", [(0, 1, 2, 3), (2, 0), (3, 1), 2, 0])
def test_hessian_counts_argnums_into_star_args(argnums):
    """The Hessian's code is made for the arrays a call passes to *args (all differentiated),
    the blocks of the positions asked for selected: Split.selected_blocks."""
    def star_loss(a, *xs):
        return sum(np.sum(np.sin(x) * a) * np.sum(x ** 2) for x in xs) + np.sum(a * xs[0] * xs[-1])

    args = (X * 0.5, X, X * 2.0, -X)
    got = s2sgrad.hessian(star_loss, argnums=argnums)(*args)
    positions = (argnums,) if isinstance(argnums, int) else argnums
    expected = _autograd_blocks(_rebind(star_loss), args, positions)
    if isinstance(argnums, int):
        np.testing.assert_allclose(got, expected[0][0], rtol=1e-10, atol=1e-12)
        return
    for i in range(len(positions)):
        for j in range(len(positions)):
            np.testing.assert_allclose(got[i][j], expected[i][j], rtol=1e-10, atol=1e-12)


def test_hvp_into_star_args():
    args, tangents = (X * 0.5, X, X * 2.0), (np.cos(X), X - 0.2, np.ones(3))
    got = s2sgrad.hvp(star_sum, args, tangents)
    blocks = _autograd_blocks(_twin(star_sum), args, (0, 1, 2))
    for i in range(3):
        np.testing.assert_allclose(got[i], sum(blocks[i][j] @ tangents[j] for j in range(3)),
                                   rtol=1e-10)


def test_the_decorator_takes_star_args_as_the_positions_a_call_passes():
    """``@differentiable`` naming *args (or defaulting to it) differentiates every array passed
    there, as argnums counting into it: a tuple of results, the code made per call."""
    loss = s2sgrad.differentiable(_copy(only_star), order=2)
    named = s2sgrad.differentiable(_copy(star_sum), wrt=("a", "xs"), order=2)
    for fun, args, plain in ((loss, (X, X * 0.7, X - 1.0), _rebind(only_star)),
                             (named, (X * 0.5, X, -X), _twin(star_sum))):
        positions = tuple(range(len(args)))
        for g, e in zip(fun.grad(*args), autograd.grad(plain, positions)(*args)):
            np.testing.assert_allclose(g, e, rtol=1e-10)
        blocks, hessian = _autograd_blocks(plain, args, positions), fun.hessian(*args)
        tangents = tuple(np.cos(a) for a in args)
        product = fun.hvp(*args, tangents=tangents)
        for i in positions:
            np.testing.assert_allclose(product[i], sum(blocks[i][j] @ tangents[j] for j in positions),
                                       rtol=1e-10)
            for j in positions:
                np.testing.assert_allclose(hessian[i][j], blocks[i][j], rtol=1e-10, atol=1e-12)

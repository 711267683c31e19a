"""Shared test oracles: central finite differences and autograd (a test-only dependency)."""

from __future__ import annotations

import os
import pathlib
import shutil
import sys
import tempfile
import types

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad.checks import numerical_grad

# The folders mirror the package (tests/read/, tests/lower/, ..., the public API's tests here);
# the modules of functions the tests differentiate (tests/inputs/: s2sgrad reads real source
# files) and the random-program generator (tests/property/) are imported by name from any folder.
for _folder in ("inputs", "property"):
    _path = str(pathlib.Path(__file__).resolve().parent / _folder)
    if _path not in sys.path:
        sys.path.insert(0, _path)

# The tests never write into the user's cache directory: unless S2SGRAD_CACHE_DIR is set (CI sets
# a fresh one; an empty value turns the cache off), this run's generated code is cached in a
# temporary directory of its own, removed at the end (subprocesses and xdist workers inherit it).
_OWN_CACHE = None
if "S2SGRAD_CACHE_DIR" not in os.environ:
    _OWN_CACHE = tempfile.mkdtemp(prefix="s2sgrad-test-cache-")
    os.environ["S2SGRAD_CACHE_DIR"] = _OWN_CACHE


def pytest_unconfigure(config):
    if _OWN_CACHE is not None:
        shutil.rmtree(_OWN_CACHE, ignore_errors=True)


def _rebind(fn, namespace=None):
    """A copy of ``fn`` (and the module functions it can reach) with ``np`` bound to autograd.numpy."""
    if namespace is None:
        namespace = dict(fn.__globals__)
        for key, value in list(namespace.items()):
            if value is np:
                namespace[key] = anp
        for key, value in list(namespace.items()):
            if isinstance(value, types.FunctionType) and value.__module__ == fn.__module__:
                namespace[key] = types.FunctionType(value.__code__, namespace, value.__name__,
                                                    value.__defaults__, value.__closure__)
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__, fn.__closure__)


def autograd_hvp(fn, args, tangents):
    """autograd's Hessian-vector products of scalar ``fn`` (rebound to autograd.numpy) at
    ``args`` along ``tangents``: one per argument."""
    twin = _rebind(fn)
    every = tuple(range(len(args)))

    def along(*a):
        return sum(anp.sum(g * t) for g, t in zip(autograd.grad(twin, every)(*a), tangents))

    return autograd.grad(along, every)(*args)


def autograd_grad(fn, args, argnums):
    return autograd.grad(_rebind(fn), argnums)(*args)


def assert_every_mode(fn, x, twin, tangent):
    """``fn``'s gradient at ``x`` against central differences (and autograd's of ``twin``, where
    given), its jvp along ``tangent`` against <gradient, tangent>, and its Hessian against
    autograd's and, times ``tangent``, against differences of gradients."""
    grad = s2sgrad.grad(fn)(x)
    np.testing.assert_allclose(grad, numerical_grad(fn, (x,), 0), rtol=1e-5, atol=1e-6)
    if twin is not None:
        np.testing.assert_allclose(grad, autograd.grad(twin)(x), rtol=1e-8, atol=1e-10)
    value, along = s2sgrad.jvp(fn, (x,), (tangent,))
    np.testing.assert_allclose(value, fn(x), rtol=1e-12)
    np.testing.assert_allclose(along, np.sum(grad * tangent), rtol=1e-8, atol=1e-10)
    hessian = s2sgrad.hessian(fn)(x)
    if twin is not None:
        np.testing.assert_allclose(hessian, autograd.hessian(twin)(x), rtol=1e-6, atol=1e-8)
    eps = 1e-5  # a Hessian-vector product against differences of gradients
    moved = (s2sgrad.grad(fn)(x + eps * tangent) - s2sgrad.grad(fn)(x - eps * tangent)) / (2 * eps)
    np.testing.assert_allclose(np.tensordot(hessian, tangent, tangent.ndim), moved, rtol=1e-4,
                               atol=1e-6)


def assert_gradients(fn, *args, argnums=None, autograd_oracle=True, rtol=1e-5, atol=1e-7):
    """s2sgrad's gradient of ``fn`` equals finite differences and (when it can run) autograd's."""
    if argnums is None:
        argnums = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    got = s2sgrad.grad(fn, argnums=argnums)(*args)
    for k, i in enumerate(argnums):
        assert np.shape(got[k]) == np.shape(args[i]), f"argument {i}: shape {np.shape(got[k])}"
        expected = numerical_grad(fn, args, i)
        np.testing.assert_allclose(got[k], expected, rtol=rtol, atol=max(atol, 1e-6),
                                   err_msg=f"argument {i} vs finite differences")
    if autograd_oracle:
        oracle = autograd_grad(fn, args, argnums)
        for k, i in enumerate(argnums):
            np.testing.assert_allclose(got[k], oracle[k], rtol=1e-7, atol=1e-10,
                                       err_msg=f"argument {i} vs autograd")
    return got


def assert_agrees_with_oracle(fn, oracle, args, calls=3):
    """``fn``'s value and gradients in every argument equal ``oracle``'s (an autograd.numpy twin)
    over ``calls`` calls of one value_and_grad: the first runs the code for any shape, the next
    ones the code made for the arguments' shapes. Returns that value_and_grad."""
    argnums = tuple(range(len(args)))
    vg = s2sgrad.value_and_grad(fn, argnums=argnums)
    want_value, want = oracle(*args), autograd.grad(oracle, argnums)(*args)
    for _ in range(calls):
        value, grads = vg(*args)
        np.testing.assert_allclose(value, want_value, rtol=1e-12)
        for got, expected in zip(grads, want):
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    return vg


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def assert_trees_close(got, expected, rtol=1e-6, atol=1e-8):
    """``got`` and ``expected`` have one structure and leaves close within ``rtol``/``atol``."""
    from s2sgrad.trees import tree_flatten

    got_leaves, got_structure = tree_flatten(got)
    expected_leaves, expected_structure = tree_flatten(expected)
    assert got_structure == expected_structure, (got_structure.describe(), expected_structure.describe())
    for a, b in zip(got_leaves, expected_leaves):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)

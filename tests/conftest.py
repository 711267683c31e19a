"""Shared test oracles: central finite differences and autograd (a test-only dependency)."""

from __future__ import annotations

import types

import autograd
import autograd.numpy as anp
import numpy as np
import pytest

import s2sgrad
from s2sgrad.checks import numerical_grad


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


def autograd_grad(fn, args, argnums):
    return autograd.grad(_rebind(fn), argnums)(*args)


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


@pytest.fixture
def rng():
    return np.random.default_rng(0)

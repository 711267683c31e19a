"""Gradients of CuPy arrays on a GPU (issue 29): the generated gradient runs on the device, its
results are CuPy arrays equal to numpy's gradient of the same data. Skips where CuPy or a GPU is
missing (CI has neither; tests/runtime/test_array_types.py's strict protocol-only array stands in for CuPy
there). Run on a GPU machine with ``python -m pytest tests/runtime/test_cupy.py``."""

from __future__ import annotations

import numpy as np
import pytest

import s2sgrad

cp = pytest.importorskip("cupy")
try:
    _DEVICES = cp.cuda.runtime.getDeviceCount()
except Exception:  # noqa: BLE001  (no driver, no device)
    _DEVICES = 0
pytestmark = pytest.mark.skipif(_DEVICES == 0, reason="no GPU")


def mlp(W1, b1, W2, X, y):
    h = np.tanh(X @ W1 + b1)
    return np.mean((h @ W2 - y) ** 2) + 1e-3 * np.sum(W1 ** 2)


def logreg(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(16, 32)) / 4, rng.normal(size=32) / 4, rng.normal(size=32) / 4,
            rng.normal(size=(256, 16)), rng.normal(size=256))


def test_the_gradient_of_cupy_arrays_is_cupy_arrays_equal_to_numpys():
    host = _data()
    device = tuple(cp.asarray(a) for a in host)
    got = s2sgrad.grad(mlp, argnums=(0, 1, 2))(*device)
    want = s2sgrad.grad(mlp, argnums=(0, 1, 2))(*host)
    for g, w in zip(got, want):
        assert isinstance(g, cp.ndarray)
        np.testing.assert_allclose(cp.asnumpy(g), w, rtol=1e-10, atol=1e-12)


def test_value_and_grad_jvp_and_hvp_on_cupy():
    rng = np.random.default_rng(1)
    w, X = rng.normal(size=8) / 3, rng.normal(size=(128, 8))
    y = (rng.uniform(size=128) > 0.5).astype(float)
    v = rng.normal(size=8)
    host, device = (w, X, y), tuple(cp.asarray(a) for a in (w, X, y))
    value, g = s2sgrad.value_and_grad(logreg)(*device)
    value_h, g_h = s2sgrad.value_and_grad(logreg)(*host)
    np.testing.assert_allclose(float(value), value_h, rtol=1e-12)
    np.testing.assert_allclose(cp.asnumpy(g), g_h, rtol=1e-10)
    zeros = (cp.zeros_like(device[1]), cp.zeros_like(device[2]))
    _, tangent = s2sgrad.jvp(logreg, device, (cp.asarray(v), *zeros))
    np.testing.assert_allclose(float(tangent), float(g_h @ v), rtol=1e-10)
    hv = s2sgrad.hvp(logreg, device, (cp.asarray(v), *zeros))[0]
    np.testing.assert_allclose(cp.asnumpy(hv), s2sgrad.hvp(logreg, host, (v, 0 * X, 0 * y))[0],
                               rtol=1e-9, atol=1e-12)

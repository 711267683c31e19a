"""The adjoints of mean and var along axes divide the reduced adjoint before broadcasting it
(one division per reduced element, not per element of x): the same values as the formulas."""

import numpy as np
import pytest

from s2sgrad import runtime as s2s

RNG = np.random.default_rng(3)
X = RNG.normal(size=(4, 5, 6))


@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [True, False])
def test_mean_and_var_adjoints_along_axes(axis, keepdims):
    g = RNG.normal(size=np.mean(X, axis=axis, keepdims=keepdims).shape)
    kept = g if keepdims else np.expand_dims(g, axis)
    n = X.size // np.mean(X, axis=axis, keepdims=True).size
    np.testing.assert_allclose(s2s.mean_vjp(g, X, axis, keepdims),
                               np.broadcast_to(kept, X.shape) / n, rtol=1e-14)
    centered = X - np.mean(X, axis=axis, keepdims=True)
    for ddof in (0, 1):
        np.testing.assert_allclose(s2s.var_vjp(g, X, axis, ddof=ddof, keepdims=keepdims),
                                   2.0 * kept * centered / (n - ddof), rtol=1e-13)


def test_a_float32_adjoint_stays_float32():
    g = np.ones((4, 1, 6), np.float32)
    assert s2s.mean_vjp(g, X.astype(np.float32), 1, True).dtype == np.float32

"""The functions of scipy's special module that its functions' derivatives call: the polygamma
family (``s2s.polygamma(n, x)``: digamma for ``n == 0``; ``s2s.multipolygamma``: its sum in
multigammaln), ``s2s.gammaln`` and the Bessel functions of any order (``s2s.iv``, ``ive``, ``jv``, ``yv``).

scipy is not a dependency of s2sgrad: generated code calls these only where the user's own code
called scipy.special, so scipy is imported (``importlib``, cached in ``sys.modules``) when a
helper first runs, never when s2sgrad is imported. Each keeps a float32 argument's dtype (scipy's
polygamma computes in float64) and gives a numpy scalar for scalars, as a ufunc does."""

from __future__ import annotations

import importlib

import numpy as np

__all__ = ["gammaln", "polygamma", "multipolygamma", "iv", "ive", "jv", "yv"]


def _special():
    """scipy's special module (the user's code that led here has imported it; scipy also loads
    its submodules when first read)."""
    return importlib.import_module("scipy").special


def _like(x, out):
    """``out`` in the floating dtype of ``x`` where ``x`` is a float array (float32 stays
    float32), a numpy scalar where it has no axes."""
    out = np.asarray(out)
    dtype = np.asarray(x).dtype
    if isinstance(x, np.ndarray) and dtype.kind == "f" and out.dtype.kind == "f" and dtype != out.dtype:
        out = out.astype(dtype)
    return out[()] if out.ndim == 0 else out


def gammaln(x):
    """The log of the absolute value of the gamma function (the densities in distribution
    functions' derivatives)."""
    return _like(x, _special().gammaln(x))


def polygamma(n, x):
    """The ``n``-th derivative of digamma at ``x`` (``n`` a whole number; digamma for 0)."""
    special = _special()
    out = special.digamma(x) if np.ndim(n) == 0 and n == 0 else special.polygamma(n, x)
    return _like(x, out)


def multipolygamma(n, a, d):
    """The ``n+1``-th derivative of ``scipy.special.multigammaln(a, d)`` in ``a``: the sum over
    ``j < d`` of ``polygamma(n, a - j / 2)``."""
    return _like(a, sum(polygamma(n, np.asarray(a) - 0.5 * j) for j in range(int(d))))


def iv(v, x):
    """The modified Bessel function of the first kind of order ``v``."""
    return _like(x, _special().iv(v, x))


def ive(v, x):
    """``iv(v, x) * exp(-|x|)``."""
    return _like(x, _special().ive(v, x))


def jv(v, x):
    """The Bessel function of the first kind of order ``v``."""
    return _like(x, _special().jv(v, x))


def yv(v, x):
    """The Bessel function of the second kind of order ``v``."""
    return _like(x, _special().yv(v, x))

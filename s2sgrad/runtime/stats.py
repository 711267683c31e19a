"""The parts of the multivariate densities of scipy's stats module that their derivatives read (numpy only):

- dirichlet: its quantiles with all K components along the first axis (``s2s.simplex_full``: scipy
  takes K - 1 of them and completes the last as 1 - their sum), that completion's tangent and its
  adjoint (``simplex_full_tangent``, ``simplex_full_vjp``);
- multivariate_normal: the deviations of the points from the mean, one row per point
  (``s2s.mvn_deviations``), the covariance matrix scipy reads (``s2s.mvn_covariance``: a number
  times the identity, a diagonal, or the symmetric matrix of a matrix's lower triangle) and its
  transpose (``mvn_covariance_vjp``), and ``mvn_regular``, the identity on a covariance that
  refuses a singular one where ``allow_singular`` let scipy take it (the density is not
  differentiable in such a covariance)."""

from __future__ import annotations

import numpy as np

from ..errors import GradientError
from .linalg import triangle_fold, triangle_symmetric

__all__ = ["simplex_full", "simplex_full_tangent", "simplex_full_vjp", "mvn_deviations", "mvn_covariance",
           "mvn_covariance_vjp", "mvn_regular"]


def simplex_full(x, k):
    """``x`` with its ``k`` components along the first axis: ``x`` itself, or, where it holds
    ``k - 1`` of them, with ``1 - sum(x, axis=0)`` appended (as scipy.stats.dirichlet reads it)."""
    x = np.asarray(x)
    if x.shape[0] == k:
        return x
    return np.concatenate([x, 1.0 - np.sum(x, axis=0, keepdims=True)])


def simplex_full_tangent(value, k):
    """The tangent of ``simplex_full(x, k)`` along ``value`` (linear): ``value``, or with minus
    its sum appended where it holds ``k - 1`` components."""
    value = np.asarray(value)
    if value.shape[0] == k:
        return value
    return np.concatenate([value, -np.sum(value, axis=0, keepdims=True)])


def simplex_full_vjp(value, x):
    """The adjoint of ``x`` from that of ``simplex_full(x, k)`` (``value``, k components): itself,
    or less its last component where ``x`` holds k - 1."""
    value = np.asarray(value)
    if np.shape(x)[0] == value.shape[0]:
        return value
    return value[:-1] - value[-1:]


def _dimension(mean, cov):
    """The dimension scipy.stats.multivariate_normal reads from ``mean`` and ``cov``."""
    if mean is not None:
        return int(np.size(mean))
    return 1 if np.ndim(cov) < 2 else int(np.shape(cov)[0])


def mvn_deviations(x, mean=None, cov=1):
    """The points ``x`` less ``mean``, one row per point (shape ``(n, dimension)``), as
    scipy.stats.multivariate_normal reads them (``cov`` for the dimension only)."""
    points = np.reshape(x, (-1, _dimension(mean, cov)))
    return points if mean is None else points - mean


def mvn_covariance(cov=1, mean=None):
    """The covariance matrix scipy.stats.multivariate_normal reads from ``cov`` (linear): a
    number times the identity, a vector's diagonal matrix, or the symmetric matrix of a matrix's
    lower triangle (``mean`` for the dimension only)."""
    if np.ndim(cov) == 0:
        return cov * np.eye(_dimension(mean, cov))
    if np.ndim(cov) == 1:
        return np.diag(cov)
    return triangle_symmetric(cov, "L")


def mvn_covariance_vjp(value, cov):
    """The transpose of ``mvn_covariance``: a matrix's adjoint ``value`` as the adjoint of
    ``cov`` (its trace, its diagonal, or folded onto the lower triangle)."""
    if np.ndim(cov) == 0:
        return np.trace(value)
    if np.ndim(cov) == 1:
        return np.diagonal(value).copy()
    return triangle_fold(value, "L")


def mvn_regular(c, allow_singular=False):
    """``c`` itself, after checking that it is not singular where ``allow_singular`` let scipy
    take a singular one (by scipy's own cutoff on its eigenvalues)."""
    if allow_singular:
        w = np.linalg.eigvalsh(c)
        cutoff = 1e6 * np.finfo(np.result_type(c, 0.0)).eps * np.max(np.abs(w))
        if np.min(w) <= cutoff:
            raise GradientError("multivariate_normal (scipy.stats) with allow_singular=True: the density is not "
                                "differentiable in a singular covariance matrix (in the points and the mean it "
                                "is, through the pseudo-inverse)")
    return c

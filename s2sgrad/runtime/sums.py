"""Sums and means over axes (numpy only), as generated gradients take them: ``s2s.axis_sum(x,
axis, keepdims)`` is ``np.sum(x, axis=axis, keepdims=keepdims)``, computed as a product with a
vector of ones where ``x`` is a C-contiguous float64 or float32 ndarray and its summed axes are
adjacent; ``s2s.axis_mean`` is ``np.mean``, that sum divided by the count there;
``s2s.sum_of_products(a, b)`` is ``np.sum(a * b)``, one dot product of the flat arrays where they
are C-contiguous float64 arrays of one shape and at most ``DOT_MOST`` terms (no product array, one
pass); ``s2s.sum_of_squares(r)`` is ``np.sum(r * r)``, ``sum_of_products(r, r)``.

numpy reduces one inner run of the kept axes at a time, so a sum whose kept axes are short
(the 3 coordinates of ``(n, n, 3)`` pairwise differences, the bias of a ``(1000, 20)`` batch, a
``(100000, 3)`` cloud of points) costs 5-25x a matrix-vector product with ones, which BLAS does in
one pass. The product's terms are added in another order than numpy's: over a kept inner run numpy
adds too one after another, and along the last axis numpy sums pairwise, so there the product is
taken only where the axis is at most ``PAIRWISE_MOST`` long (where numpy's pairwise sum is no more
accurate than the product's). Anything else (another type, dtype or layout, axes apart, no axis)
is numpy's own sum. The result is a new array, of ``x``'s dtype, as numpy's is.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["axis_sum", "axis_mean", "sum_of_products", "sum_of_squares"]

PAIRWISE_MOST = 128  # numpy's pairwise sum adds blocks of up to 128 terms in eight running sums
# The most terms a sum of products is taken as one dot product for: up to here its error against
# an exact sum measured of the order of numpy's pairwise sum's (2000 squares: 2.2e-16 against
# 1.7e-16 at most over 20 draws; 100000: 2.5e-16 against 2.1e-16); beyond, numpy's own.
DOT_MOST = 1 << 16
_F64 = np.dtype(np.float64)
_BLAS = (np.dtype(np.float64), np.dtype(np.float32))
_ndarray = np.ndarray
_add_reduce = np.add.reduce


@functools.lru_cache(maxsize=256)
def _ones(n: int, dtype: np.dtype) -> np.ndarray:
    """A read-only vector of ``n`` ones of ``dtype`` (shared)."""
    ones = np.ones(n, dtype)
    ones.setflags(write=False)
    return ones


@functools.lru_cache(maxsize=1024)
def _plan(shape: tuple, axis, keepdims: bool):
    """``(lead, n, trail, result shape)`` of summing an array of ``shape`` over ``axis`` as a
    product with ones (the lengths before, of and after the summed axes), or None where numpy's
    own sum is taken."""
    ndim = len(shape)
    given = (axis,) if isinstance(axis, int) else tuple(axis)
    if not ndim or any(type(a) is not int or not -ndim <= a < ndim for a in given):
        return None  # (numpy's sum raises, or takes an integer of numpy's)
    axes = sorted({a % ndim for a in given})
    if len(axes) != len(given) or axes != list(range(axes[0], axes[-1] + 1)) or 0 in shape:
        return None
    lead = math.prod(shape[:axes[0]])
    n = math.prod(shape[axes[0]:axes[-1] + 1])
    trail = math.prod(shape[axes[-1] + 1:])
    if trail == 1 and n > PAIRWISE_MOST or lead * trail == 1:
        return None  # numpy's pairwise sum (the more accurate), or a whole sum
    kept = tuple(1 if i in axes else length for i, length in enumerate(shape)) if keepdims else \
        tuple(length for i, length in enumerate(shape) if i not in axes)
    return lead, n, trail, kept


def _by_product(x, axis, keepdims):
    """``x`` summed over ``axis`` as a product with ones, and the count of terms summed; None
    where numpy's own sum is the one to take."""
    if type(x) is not _ndarray or x.dtype not in _BLAS or axis is None or not x.flags.c_contiguous:
        return None
    try:
        plan = _plan(x.shape, axis, keepdims)
    except TypeError:  # an unhashable axis (a list): numpy's sum, and its checks
        return None
    if plan is None:
        return None
    lead, n, trail, kept = plan
    ones = _ones(n, x.dtype)
    if trail == 1:
        return (x.reshape(lead, n) @ ones).reshape(kept), n
    return (ones @ (x.reshape(n, trail) if lead == 1 else x.reshape(lead, n, trail))).reshape(kept), n


def axis_sum(x, axis=None, keepdims=False):
    """``np.sum(x, axis=axis, keepdims=keepdims)`` (module docstring: a product with ones where
    that is the faster)."""
    if axis is None and type(x) is _ndarray:  # a whole sum: numpy's, less its wrapping
        return _add_reduce(x, None, None, None, keepdims)
    found = _by_product(x, axis, keepdims)
    if found is not None:
        return found[0]
    if type(x) is _ndarray and (axis is None or type(axis) in (int, tuple)):
        return _add_reduce(x, axis, None, None, keepdims)  # (what np.sum calls, less its wrapping)
    return np.sum(x, axis=axis, keepdims=keepdims)  # a number, a list, another library's array


def axis_mean(x, axis=None, keepdims=False):
    """``np.mean(x, axis=axis, keepdims=keepdims)``: where ``axis_sum`` takes the product, that
    sum divided by the count (as numpy's mean divides its sum, in ``x``'s dtype)."""
    if axis is None and type(x) is _ndarray and x.dtype in _BLAS and x.size:
        return _add_reduce(x, None, None, None, keepdims) / x.size  # a whole mean, as numpy's
    found = _by_product(x, axis, keepdims)
    if found is None:
        return np.mean(x, axis=axis, keepdims=keepdims)
    total, n = found
    total /= n
    return total


def sum_of_products(a, b):
    """``np.sum(a * b)`` (module docstring: one dot product where that is as accurate)."""
    if type(a) is _ndarray and type(b) is _ndarray and a.dtype is _F64 and b.dtype is _F64 and \
            a.shape == b.shape and 0 < a.size <= DOT_MOST and a.flags.c_contiguous and \
            b.flags.c_contiguous:
        flat = a.reshape(-1)
        return flat @ (flat if b is a else b.reshape(-1))
    return np.sum(a * b)


def sum_of_squares(x):
    """``np.sum(x * x)``: ``sum_of_products(x, x)``."""
    return sum_of_products(x, x)

"""Cases for the rules of the helpers of s2sgrad/runtime/sums.py (see __init__.py): ``axis_sum``
and ``axis_mean`` over one axis and adjacent axes, kept or dropped, on the path of a product with
ones and on numpy's own (a last axis longer than PAIRWISE_MOST); ``sum_of_products`` of two
arrays, ``sum_of_squares`` of one."""

import numpy as np

from s2sgrad import runtime as s2s

from . import uniform

R = "s2sgrad.runtime."


def _out(y):
    """A scalar of a helper's output that sees its second-order terms."""
    return np.sum(np.sin(y) * np.cos(np.arange(np.size(y)).reshape(np.shape(y)) + 0.5))


def h_axis_sum_0(x): return _out(s2s.axis_sum(x, 0))
def h_axis_sum_1(x): return _out(s2s.axis_sum(x, axis=1))
def h_axis_sum_last_kept(x): return _out(s2s.axis_sum(x, axis=-1, keepdims=True))
def h_axis_sum_leading(x): return _out(s2s.axis_sum(x, axis=(0, 1)))
def h_axis_mean_1(x): return _out(s2s.axis_mean(x, axis=1))
def h_axis_mean_last_kept(x): return _out(s2s.axis_mean(x, -1, True))
def h_sum_of_products(a, b): return np.sin(s2s.sum_of_products(a, b)) * s2s.sum_of_products(a, a)
def h_sum_of_squares(a): return np.cos(s2s.sum_of_squares(a)) * s2s.sum_of_products(a, np.sin(a))


CASES = [
    *((R + "axis_sum", h_axis_sum_0, (uniform(s),), None, 1e-5) for s in ((5, 3), (4, 3, 2))),
    *((R + "axis_sum", h_axis_sum_1, (uniform(s),), None, 1e-5) for s in ((5, 3), (4, 3, 2))),
    *((R + "axis_sum", h_axis_sum_last_kept, (uniform(s),), None, 1e-5) for s in ((5, 3), (2, 130))),
    (R + "axis_sum", h_axis_sum_leading, (uniform((4, 3, 2)),), None, 1e-5),
    *((R + "axis_mean", h_axis_mean_1, (uniform(s),), None, 1e-5) for s in ((5, 3), (4, 3, 2))),
    *((R + "axis_mean", h_axis_mean_last_kept, (uniform(s),), None, 1e-5) for s in ((5, 3), (2, 130))),
    *((R + "sum_of_products", h_sum_of_products, (uniform(s), uniform(s)), None, 1e-5) for s in ((7,), (4, 3))),
    (R + "sum_of_squares", h_sum_of_squares, (uniform((5, 2)),), None, 1e-5),
]

"""Cases for the rules of the helpers of s2sgrad/runtime/sorting.py (see __init__.py): the
tangents or adjoints moved by the order of fixed values, in a list and in an array."""

import numpy as np

from s2sgrad import runtime as s2s

from . import V4, uniform

XS = [0.3, -0.7, 0.1, 0.9]  # the values whose order moves the items
X4 = uniform((4,))


def h_sorted_jvp(t0, t1): return np.sum(np.sin(s2s.sorted_jvp([t0, t1, 0.5 * t0, t1 * t1], XS)[0:3]) * V4[:3])
def h_sorted_jvp_reverse(t): return np.sum(np.cos(np.stack(s2s.sorted_jvp(t, X4, None, True))) * V4)
def h_sorted_vjp(g0, g1): return np.sum(np.sin(s2s.sorted_vjp([g0, g1, g0 * g1, 0.25], X4)) * V4)
def h_sorted_vjp_list(g): return np.sin(s2s.sorted_vjp([g, 2.0 * g, g * g, 0.1], XS)[1])


CASES = [
    (("s2sgrad.runtime.sorted_jvp",), h_sorted_jvp, (0.4, -0.6), (0, 1), 1e-5),
    (("s2sgrad.runtime.sorted_jvp",), h_sorted_jvp_reverse, (uniform((4,)),), (0,), 1e-5),
    (("s2sgrad.runtime.sorted_vjp",), h_sorted_vjp, (0.4, -0.6), (0, 1), 1e-5),
    (("s2sgrad.runtime.sorted_vjp",), h_sorted_vjp_list, (0.7,), (0,), 1e-5),
]

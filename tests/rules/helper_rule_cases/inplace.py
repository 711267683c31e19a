"""Cases for the rules of the helpers of s2sgrad/runtime/inplace.py (see __init__.py): index writes
and index adjoints written into an array generated code owns. The helpers write into their first
argument, so each case passes them a new array (``x * 1.0``), as generated code does."""

import numpy as np

from s2sgrad import runtime as s2s

from . import V4, W, uniform

X4 = uniform((4,))
X34 = uniform((3, 4))
REPEATS = np.array([0, 2, 2, -4])  # positions 0 and 2 twice


def h_setitem_into(x, v): return np.sum(np.sin(s2s.setitem_into(x * 1.0, 1, v)) * V4)
def h_setitem_into_slice(x, v): return np.sum(np.sin(s2s.setitem_into(x * 1.0, slice(1, 3), v)) * V4)
def h_setitem_into_rows(x, v): return np.sum(np.cos(s2s.setitem_into(x * 1.0, (slice(None), 2), v)) * W)
def h_setitem_into_repeats(x, v): return np.sum(np.sin(s2s.setitem_into(x * 1.0, REPEATS, v)) * V4)
def h_getitem_add(a, v): return np.sum(np.sin(s2s.getitem_add(a * 1.0, v, X4, 1)) * V4)
def h_getitem_add_slice(a, v): return np.sum(np.sin(s2s.getitem_add(a * 1.0, v, X34, (slice(None), 1))) * W)
def h_getitem_add_repeats(a, v): return np.sum(np.sin(s2s.getitem_add(a * 1.0, v, X4, REPEATS)) * V4)
def h_owned_array(x): return np.sum(np.sin(s2s.owned_array(x)) * V4)


CASES = [
    ("s2sgrad.runtime.setitem_into", h_setitem_into, (uniform((4,)), uniform(None)), None, 1e-5),
    ("s2sgrad.runtime.setitem_into", h_setitem_into_slice, (uniform((4,)), uniform((2,))), None, 1e-5),
    ("s2sgrad.runtime.setitem_into", h_setitem_into_rows, (uniform((3, 4)), uniform((3,))), None, 1e-5),
    ("s2sgrad.runtime.setitem_into", h_setitem_into_repeats, (uniform((4,)), uniform((4,))), None, 1e-5),
    ("s2sgrad.runtime.getitem_add", h_getitem_add, (uniform((4,)), uniform(None)), None, 1e-5),
    ("s2sgrad.runtime.getitem_add", h_getitem_add_slice, (uniform((3, 4)), uniform((3,))), None, 1e-5),
    ("s2sgrad.runtime.getitem_add", h_getitem_add_repeats, (uniform((4,)), uniform((4,))), None, 1e-5),
    ("s2sgrad.runtime.owned_array", h_owned_array, (uniform((4,)),), None, 1e-5),
]

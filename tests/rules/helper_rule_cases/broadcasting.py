"""Cases for the rules of the helpers of s2sgrad/runtime/broadcasting.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import V4, W, uniform


def h_unbroadcast(g): return np.sum(np.sin(s2s.unbroadcast(g, V4)) * V4)
def h_unbroadcast_shape(g): return np.sum(np.sin(s2s.unbroadcast(g, (3, 1))) * W)
def h_unbroadcast_same(g): return np.sum(np.sin(s2s.unbroadcast(g, W)) * W)
def h_like(g, x): return np.sum(np.sin(s2s.like(g, x)) * W)
def h_like_float(g): return np.sin(s2s.like(g, 0.5))
def h_like_spread(g, x): return np.sum(np.sin(s2s.like(np.sum(g), x)) * W)  # one number: an array
def h_fit(g): return np.sum(np.sin(s2s.fit(g, W)) * W)
def h_fit_down(g): return np.sum(np.sin(s2s.fit(g, (3, 1))) * V4[:3, None])


# (rules, function, args, argnums or None for every float argument, rtol)
CASES = [
    ("s2sgrad.runtime.unbroadcast", h_unbroadcast, (uniform((3, 4)),), None, 1e-5),
    ("s2sgrad.runtime.unbroadcast", h_unbroadcast_shape, (uniform((3, 4)),), None, 1e-5),
    ("s2sgrad.runtime.unbroadcast", h_unbroadcast_same, (uniform((3, 4)),), None, 1e-5),
    ("s2sgrad.runtime.like", h_like, (uniform((3, 4)), uniform((3, 4))), None, 1e-5),
    ("s2sgrad.runtime.like", h_like, (uniform((2, 3, 4)), uniform((3, 4))), None, 1e-5),
    ("s2sgrad.runtime.like", h_like_float, (uniform((2, 3)),), None, 1e-5),
    ("s2sgrad.runtime.like", h_like_spread, (uniform((2,)), uniform((3, 4))), None, 1e-5),
    ("s2sgrad.runtime.fit", h_fit, (uniform((4,)),), None, 1e-5),
    ("s2sgrad.runtime.fit", h_fit, (uniform((3, 4)),), None, 1e-5),
    ("s2sgrad.runtime.fit", h_fit_down, (uniform((3, 4)),), None, 1e-5),
]

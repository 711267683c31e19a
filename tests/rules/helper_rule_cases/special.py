"""Cases for the rules of the helpers of s2sgrad/runtime/special.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import W, uniform


def h_polygamma(x): return np.sum((s2s.polygamma(0, x) + s2s.polygamma(1, x) * 0.5 + s2s.polygamma(3, x) * 0.1) * W)
def h_polygamma_float(x): return np.sin(s2s.polygamma(1, x))
def h_multipolygamma(a): return np.sum((s2s.multipolygamma(0, a, 3) + s2s.multipolygamma(1, a, 2)) * W)
def h_bessel(x):
    return np.sum((s2s.iv(1, x) + s2s.iv(2.5, x) + s2s.jv(0, x) + s2s.jv(1.5, x) + s2s.yv(1, x)
                   + s2s.yv(2.5, x)) * W)
def h_gammaln(x): return np.sum(np.sin(s2s.gammaln(x)) * W)
def h_ive(x): return np.sum((s2s.ive(0, x) + s2s.ive(1, x) * 2.0) * W)


R = "s2sgrad.runtime."
# (rules, function, args, argnums or None for every float argument, rtol)
CASES = [
    (R + "polygamma", h_polygamma, (uniform((3, 4), 0.5, 3.0),), None, 1e-5),
    (R + "polygamma", h_polygamma_float, (uniform(None, 0.5, 3.0),), None, 1e-5),
    (R + "multipolygamma", h_multipolygamma, (uniform((3, 4), 1.5, 4.0),), None, 1e-5),
    ((R + "iv", R + "jv", R + "yv"), h_bessel, (uniform((3, 4), 0.5, 4.0),), None, 1e-5),
    (R + "gammaln", h_gammaln, (uniform((3, 4), 0.5, 3.0),), None, 1e-5),
    (R + "ive", h_ive, (uniform((3, 4), -3.0, 3.0),), None, 1e-5),
]

"""Cases for the rules of the helpers of s2sgrad/runtime/scans.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import V4, W, uniform

X34 = uniform((3, 4))
NANS = uniform((3, 4))
NANS[0, 1] = NANS[2, 3] = np.nan
W12 = uniform((12,), -1.0, 1.0)
PRE = uniform((3, 2))
W35 = uniform((3, 5), -1.0, 1.0)


def h_cumsum_vjp(g, x): return np.sum(np.sin(s2s.cumsum_vjp(g, x, 1)) * W) + np.sum(x * W)
def h_cumsum_vjp_flat(g): return np.sum(np.sin(s2s.cumsum_vjp(g, X34)) * W)
def h_cumsum_vjp_0(g): return np.sum(np.sin(s2s.cumsum_vjp(g, X34, 0)) * W)
def h_cumprod_vjp(g, c, x): return np.sum(np.sin(s2s.cumprod_vjp(g, c, x, 1)) * W)
def h_cumprod_vjp_flat(g, c, x): return np.sum(np.sin(s2s.cumprod_vjp(g, c, x)) * W)
def h_nancumsum_vjp(g): return np.sum(np.sin(s2s.nancumsum_vjp(g, NANS, 1)) * W)
def h_nancumsum_vjp_flat(g): return np.sum(np.sin(s2s.nancumsum_vjp(g, NANS)) * W)
def h_split_diff(g): return np.sum(np.sin(s2s.split_diff(g, X34)[1]) * W)
def h_split_diff_2(g): return np.sum(np.sin(s2s.split_diff(g, X34, n=2, axis=0)[1]) * W)


def h_split_diff_extras(g):
    parts = s2s.split_diff(g, X34, n=2, axis=1, prepend=PRE, append=0.5)
    return np.sum(np.sin(parts[1]) * W) + np.sum(np.sin(parts[0]) * PRE) + np.sin(parts[2])


def h_join_diff(p0, p1, p2):
    return np.sum(np.sin(s2s.join_diff([p0, p1, p2], 2, 1, PRE, 0.5)) * W35)


def h_join_diff_x(p0, p1, p2): return np.sum(np.sin(s2s.join_diff([p0, p1, p2], 1, 0)) * W[:2])


def h_diff_parts(g, p0):
    parts = s2s.diff_parts(g, [p0, X34, 0.5], 2, 1, PRE, 0.5)
    return np.sum(np.sin(parts[1]) * W) + np.sum(np.sin(parts[0]) * p0) + np.sin(parts[2])


def h_diff_parts_x(g): return np.sum(np.sin(s2s.diff_parts(g, [V4, X34, V4], 1, 0)[1]) * W)


F45 = uniform((4, 5))  # the differentiated array, read for its shape
def h_gradient_vjp(g): return np.sum(np.sin(s2s.gradient_vjp(g, F45, (0.5,), 1, 2)))
def h_gradient_vjp_axes(gy, gx): return np.sum(s2s.gradient_vjp([gy, gx], F45) ** 2)


R = "s2sgrad.runtime."
POS34 = uniform((3, 4), 0.5, 1.5)
# (rules, function, args, argnums or None for every float argument, rtol)
CASES = [
    (R + "cumsum_vjp", h_cumsum_vjp, (uniform((3, 4)), uniform((3, 4))), None, 1e-5),
    (R + "cumsum_vjp", h_cumsum_vjp_flat, (uniform((12,)),), None, 1e-5),
    (R + "cumsum_vjp", h_cumsum_vjp_0, (uniform((3, 4)),), None, 1e-5),
    (R + "cumprod_vjp", h_cumprod_vjp, (uniform((3, 4)), uniform((3, 4)), POS34), None, 1e-5),
    (R + "cumprod_vjp", h_cumprod_vjp_flat, (uniform((12,)), uniform((12,)), POS34), None, 1e-5),
    (R + "nancumsum_vjp", h_nancumsum_vjp, (uniform((3, 4)),), None, 1e-5),
    (R + "nancumsum_vjp", h_nancumsum_vjp_flat, (uniform((12,)),), None, 1e-5),
    (R + "split_diff", h_split_diff, (uniform((3, 3)),), None, 1e-5),
    (R + "split_diff", h_split_diff_2, (uniform((1, 4)),), None, 1e-5),
    (R + "split_diff", h_split_diff_extras, (uniform((3, 5)),), None, 1e-5),
    (R + "join_diff", h_join_diff, (uniform((3, 2)), uniform((3, 4)), uniform(None)), None, 1e-5),
    (R + "diff_parts", h_diff_parts, (uniform((3, 5)), uniform((3, 2))), None, 1e-5),
    (R + "diff_parts", h_diff_parts_x, (uniform((2, 4)),), None, 1e-5),
    (R + "join_diff", h_join_diff_x,
     (uniform((1, 4)), uniform((3, 4)), uniform((1, 4))), None, 1e-5),
    (R + "gradient_vjp", h_gradient_vjp, (uniform((4, 5)),), None, 1e-5),
    (R + "gradient_vjp", h_gradient_vjp_axes, (uniform((4, 5)), uniform((4, 5))), None, 1e-5),
]

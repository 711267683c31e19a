"""Cases for the rules of the helpers of s2sgrad/runtime/elementwise.py (see __init__.py)."""

import math

import numpy as np

from s2sgrad import runtime as s2s

from . import W, uniform


def h_log_vjp(g, x): return np.sum(np.sin(s2s.log_vjp(g, x)) * W)
def h_log_vjp_base(g, x, base): return np.sin(s2s.log_vjp(g, x, base)) * 2.0
def h_log_vjp_float(g, x): return math.sin(s2s.log_vjp(g, x, 2.0))
def h_log_vjp_wide(g, x): return np.sum(np.sin(s2s.log_vjp(g, x, 10.0)) * W)
def h_sinc_slope(x): return np.sum(np.sin(s2s.sinc_slope(x)) * W)
def h_sinc_slope_float(x): return np.sin(s2s.sinc_slope(x)) * 3.0
def h_exponent_slope(v, x, ans): return np.sum(np.sin(s2s.exponent_slope(v, x, ans)) * W)
def h_exponent_slope_wide(v, x): return np.sum(np.sin(s2s.exponent_slope(v, x, x * x)) * W)

def h_select(v, c): return np.sum(np.sin(s2s.select(c > 0.0, v)) * W)
def h_select_other(v, c): return np.sum(np.sin(s2s.select(c > 0.0, v * v, False)) * W)
def h_select_float(v, c): return np.sum(np.sin(s2s.select(c > 0.0, v * 2.0)) * W)


R = "s2sgrad.runtime."
# (rules, function, args, argnums or None for every float argument, rtol)
CASES = [
    (R + "log_vjp", h_log_vjp, (uniform((3, 4)), uniform((3, 4), 0.5, 2.0)), None, 1e-5),
    (R + "log_vjp", h_log_vjp_base,
     (uniform(None), uniform(None, 0.5, 2.0), uniform(None, 1.5, 3.0)), None, 1e-5),
    (R + "log_vjp", h_log_vjp_float, (uniform(None), uniform(None, 0.5, 2.0)), None, 1e-5),
    (R + "log_vjp", h_log_vjp_wide, (uniform((4,)), uniform((3, 4), 0.5, 2.0)), None, 1e-5),
    (R + "sinc_slope", h_sinc_slope, (uniform((3, 4), -1.5, 1.5),), None, 1e-5),
    (R + "sinc_slope", h_sinc_slope, (np.array([0.05, 0.3, -0.7, 1.2]),), None, 1e-5),
    (R + "sinc_slope", h_sinc_slope_float, (uniform(None, 0.2, 1.5),), None, 1e-5),
    (R + "exponent_slope", h_exponent_slope,
     (uniform((3, 4)), uniform((3, 4), 0.5, 2.0), uniform((3, 4))), None, 1e-5),
    (R + "exponent_slope", h_exponent_slope_wide, (uniform((4,)), uniform((3, 4), 0.5, 2.0)), None,
     1e-5),
    (R + "select", h_select, (uniform((3, 4)), uniform((3, 4))), (0,), 1e-5),
    (R + "select", h_select_other, (uniform((4,)), uniform((3, 4))), (0,), 1e-5),
    (R + "select", h_select_float, (uniform(None), uniform((3, 4))), (0,), 1e-5),
]

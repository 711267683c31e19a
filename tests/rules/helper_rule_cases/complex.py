"""Cases for the rules of the helpers of s2sgrad/runtime/complex.py (see __init__.py): real
values (tests/rules/helpers/test_helpers_reductions.py checks the complex transposes)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import W, uniform


def h_match_complex(x, g): return np.sum(np.sin(s2s.match_complex(x, g)) * W)
def h_match_complex_float(g): return np.sin(s2s.match_complex(0.5, g)) * 2.0
def h_match_complex_spread(x, g): return np.sum(np.sin(s2s.match_complex(x, g * 1.5)) * W)  # g one number
def h_complex_conj(x): return np.sum(np.sin(s2s.complex_conj(x)) * W)
def h_abs_slope_vjp(g, x): return np.sum(np.sin(s2s.abs_slope_vjp(g, x) + g) * W)
def h_angle_slope_vjp(g, x): return np.sum(np.sin(s2s.angle_slope_vjp(g, x, True) + g * x) * W)
def h_slope_vjps_float(g, x): return np.sin(s2s.abs_slope_vjp(g, x) + s2s.angle_slope_vjp(g, x) + g)


R = "s2sgrad.runtime."
# (rules, function, args, argnums or None for every float argument, rtol)
CASES = [
    (R + "match_complex", h_match_complex, (uniform((3, 4)), uniform((3, 4))), None, 1e-5),
    (R + "match_complex", h_match_complex_float, (uniform(None),), None, 1e-5),
    (R + "match_complex", h_match_complex_spread, (uniform((3, 4)), uniform(None)), None, 1e-5),
    # (fixed values: a draw from the shared generator would move every later case's)
    (R + "complex_conj", h_complex_conj, (np.linspace(-0.8, 0.9, 12).reshape(3, 4),), None, 1e-5),
    (R + "abs_slope_vjp", h_abs_slope_vjp, (uniform((3, 4)), uniform((3, 4))), None, 1e-5),
    (R + "angle_slope_vjp", h_angle_slope_vjp, (uniform((3, 4)), uniform((3, 4))), None, 1e-5),
    ((R + "abs_slope_vjp", R + "angle_slope_vjp"), h_slope_vjps_float,
     (uniform(None), uniform(None)), None, 1e-5),
]

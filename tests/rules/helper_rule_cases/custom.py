"""Cases for the rules of the helpers of s2sgrad/runtime/custom.py (see __init__.py): called as
generated backward code calls custom_result, its result indexed (not unpacked, which forward mode
refuses for now)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import V3, V4, W, uniform

X3 = uniform((3,))
X4 = uniform((4,))


def _two(parts, w0, w1):
    """A scalar that reads two adjoints, nonlinearly."""
    return np.sum(np.sin(parts[0]) * w0) + np.sum(np.cos(parts[1]) * w1)


def h_custom_one(g): return np.sum(np.sin(s2s.custom_result("f", g, (X4,), ("x",))[0]) * V4)
def h_custom_float(g): return np.sin(s2s.custom_result("f", g, (0.5,), ("x",))[0])
def h_custom_two(g0, g1): return _two(s2s.custom_result("f", (g0, g1), (X4, X3), ("x", "y")), V4, V3)
def h_custom_primal(g, x): return np.sum(np.sin(s2s.custom_result("f", g, (x,), ("x",))[0]) * V4)


def h_custom_vjp_one(v): return np.sum(np.sin(s2s.custom_result_vjp([v], W, ("x",))) * W)
def h_custom_vjp_two(v0, v1): return _two(s2s.custom_result_vjp([v0, v1], (V4, W), ("x", "y")), V4, W)


def h_custom_vjp_none(v0, v1):
    return np.sum(np.sin(s2s.custom_result_vjp([v0, v1], (W, None), ("x", "y"))[0]) * W)


def h_custom_tangent(t0, t1):
    parts = s2s.custom_result_tangent("f", (t0, t1), (X4, None), (X4, X3), ("x", "y"))
    return _two(parts, V4, V3)


def h_custom_tangent_one(t):
    return np.sum(np.sin(s2s.custom_result_tangent("f", t, X4, (X4,), ("x",))[0]) * V4)


# h_custom_none (a None gradient) is checked in reverse mode only, in
# tests/rules/helpers/test_helpers_indexing_containers.py: forward mode's tangent of the tuple ``(g0, None)``
# holds s2s.zeros_like(None), a 0-d zero, which custom_result rejects for a (3,) parameter.
CR = "s2sgrad.runtime.custom_result"
CV = "s2sgrad.runtime.custom_result_vjp"
CT = "s2sgrad.runtime.custom_result_tangent"
# (rules, function, args, argnums or None for every float argument, rtol)
CASES = [
    (CR, h_custom_one, (uniform((4,)),), None, 1e-5),
    (CR, h_custom_one, (uniform((3, 4)),), None, 1e-5),
    (CR, h_custom_float, (uniform(None),), None, 1e-5),
    (CR, h_custom_two, (uniform((4,)), uniform((2, 3))), None, 1e-5),
    (CR, h_custom_primal, (uniform((4,)), uniform((4,))), None, 1e-5),
    (CV, h_custom_vjp_one, (uniform((4,)),), None, 1e-5),
    (CV, h_custom_vjp_two, (uniform((4,)), uniform((4,))), None, 1e-5),
    (CV, h_custom_vjp_none, (uniform((4,)), uniform((3,))), None, 1e-5),
    (CT, h_custom_tangent, (uniform((4,)), uniform(None)), None, 1e-5),
    (CT, h_custom_tangent_one, (uniform((2, 4)),), None, 1e-5),
]


# stated: a custom_gradient's output in generated code, its rule the stated one (here the true
# vector-Jacobian product of sin, so differences check it); stated_jvp: that rule transposed
def _sin_bwd(residuals, g):
    (x,) = residuals
    return (g * np.cos(x),)


def _pair_bwd(residuals, upstream):
    """The stated rule of (x * y, x + y): one adjoint per argument, from one per output."""
    x, y = residuals
    g0, g1 = s2s.leaves(upstream)
    return (g0 * y + g1, g0 * x + g1)


def h_stated(x): return np.sum(np.sin(s2s.stated(np.sin(x), _sin_bwd, (x,), (x,))) * V4)


def h_stated_pair(x, y):
    pair = s2s.stated((x * y, x + y), _pair_bwd, (x, y), (x, y))
    return np.sum(np.sin(pair[0]) * V4) + np.sum(np.cos(pair[1]) * V4)


def h_stated_jvp(t): return np.sum(np.sin(s2s.stated_jvp(np.sin(X4), _sin_bwd, (X4,), (t,))) * V4)


def h_stated_jvp_pair(t, u):
    pair = s2s.stated_jvp((X4 * V4, X4 + V4), _pair_bwd, (X4, V4), (t, u))
    return np.sum(np.sin(pair[0]) * V4) + np.sum(np.cos(pair[1]) * V4)


CASES += [
    ("s2sgrad.runtime.stated", h_stated, (uniform((4,)),), None, 1e-5),
    ("s2sgrad.runtime.stated", h_stated_pair, (uniform((4,)), uniform((4,))), None, 1e-5),
    ("s2sgrad.runtime.stated_jvp", h_stated_jvp, (uniform((4,)),), None, 1e-5),
    ("s2sgrad.runtime.stated_jvp", h_stated_jvp_pair, (uniform((4,)), uniform((4,))), None, 1e-5),
]

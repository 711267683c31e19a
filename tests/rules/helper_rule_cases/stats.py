"""Cases for the rules of the helpers of s2sgrad/runtime/stats.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import V3, V4, W, uniform

SPD = np.array([[2.0, 0.3, 0.1, 0.0], [0.3, 1.5, 0.2, 0.1], [0.1, 0.2, 1.8, 0.4], [0.0, 0.1, 0.4, 2.2]])


def h_simplex_full(x): return np.sum(np.sin(s2s.simplex_full(x, 3)) * W[:, :2])
def h_simplex_full_whole(x): return np.sum(np.sin(s2s.simplex_full(x, 3)) * W[:, :2])
def h_simplex_full_tangent(t): return np.sum(np.sin(s2s.simplex_full_tangent(t, 4)) * W.T[:, :3])
def h_simplex_full_vjp(g): return np.sum(np.sin(s2s.simplex_full_vjp(g, W[:2])) * W[:2])
def h_mvn_deviations(x, mean): return np.sum(np.sin(s2s.mvn_deviations(x, mean, None)) * W)
def h_mvn_deviations_scalar(x, mean): return np.sum(np.sin(s2s.mvn_deviations(x, mean, SPD)) * W[:, :1].T)
def h_mvn_covariance(c): return np.sum(np.sin(s2s.mvn_covariance(c, None)) * SPD)
def h_mvn_covariance_forms(d, s):
    return np.sum(np.sin(s2s.mvn_covariance(d, None) + s2s.mvn_covariance(s, V4)) * SPD)
def h_mvn_covariance_vjp(g): return np.sum(np.sin(s2s.mvn_covariance_vjp(g, SPD)) * SPD) \
    + np.sum(np.cos(s2s.mvn_covariance_vjp(g, V4)) * V4) + np.sin(s2s.mvn_covariance_vjp(g, 2.0))
def h_mvn_regular(c): return np.sum(np.sin(s2s.mvn_regular(c * SPD, True)) * SPD)


R = "s2sgrad.runtime."
CASES = [
    (R + "simplex_full", h_simplex_full, (uniform((2, 2), 0.1, 0.4),), None, 1e-5),
    (R + "simplex_full", h_simplex_full_whole, (uniform((3, 2), 0.1, 0.4),), None, 1e-5),
    (R + "simplex_full_tangent", h_simplex_full_tangent, (uniform((3, 3)),), None, 1e-5),
    (R + "simplex_full_vjp", h_simplex_full_vjp, (uniform((3, 4)),), None, 1e-5),
    (R + "mvn_deviations", h_mvn_deviations, (uniform((3, 4)), uniform((4,))), None, 1e-5),
    (R + "mvn_deviations", h_mvn_deviations_scalar, (uniform((4,)), uniform(None)), None, 1e-5),
    (R + "mvn_covariance", h_mvn_covariance, (uniform((4, 4)),), None, 1e-5),
    (R + "mvn_covariance", h_mvn_covariance_forms, (uniform((4,)), uniform(None)), None, 1e-5),
    (R + "mvn_covariance_vjp", h_mvn_covariance_vjp, (uniform((4, 4)),), None, 1e-5),
    (R + "mvn_regular", h_mvn_regular, (uniform(None, 0.5, 1.5),), None, 1e-5),
]

"""Cases for the rules of the helpers of s2sgrad/runtime/signal.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import W, uniform

FIVE = uniform((5, 5))


def h_signal_convolve(a, b):
    return np.sum(np.sin(s2s.signal_convolve(a, b)) * W[:2, :4]) + np.sum(s2s.signal_convolve(a, b, "same") ** 2)
def h_signal_window(full): return np.sum(np.sin(s2s.signal_window(full, (3, 4), (2, 2), "same")) * W)
def h_signal_embed(g): return np.sum(np.sin(s2s.signal_embed(g, (4, 3), (2, 3), "valid")) * FIVE)


def h_sylvester(a, q): return np.sum(np.sin(s2s.sylvester(a + 3.0 * np.eye(3), a[:2, :2].T + 2.0 * np.eye(2), q)))
def h_solve_triangular(a, b):
    return np.sum(np.sin(s2s.solve_triangular(a + 3.0 * np.eye(3), b, s2s.adjoint_trans(1), True)))
def h_triangle_part(x):
    return np.sum(np.sin(s2s.triangle_part(x, True) + s2s.triangle_part(x * 2.0, False, True)) * W[:, :3])

def h_banded_dense(ab): return np.sum(np.sin(s2s.banded_dense((1, 2), ab)) * FIVE)
def h_dense_band(a): return np.sum(np.sin(s2s.dense_band((2, 1), a)) * FIVE[:4] * 2.0) + np.sum(s2s.dense_band((0, 0), a) ** 2)


R = "s2sgrad.runtime."
CASES = [
    (R + "signal_convolve", h_signal_convolve, (uniform((1, 3)), uniform((2, 2))), None, 1e-5),
    (R + "signal_window", h_signal_window, (uniform((4, 5)),), None, 1e-5),
    (R + "signal_embed", h_signal_embed, (uniform((3, 1)),), None, 1e-5),
    (R + "sylvester", h_sylvester, (uniform((3, 3)), uniform((3, 2))), None, 1e-5),
    (R + "solve_triangular", h_solve_triangular, (uniform((3, 3)), uniform((3, 2))), None, 1e-5),
    (R + "triangle_part", h_triangle_part, (uniform((3, 3)),), None, 1e-5),
    (R + "banded_dense", h_banded_dense, (uniform((4, 5)),), None, 1e-5),
    (R + "dense_band", h_dense_band, (uniform((5, 5)),), None, 1e-5),
]

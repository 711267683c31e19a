"""A module whose global a helper of tests/inputs/live_globals_inputs.py reads (tests/read/test_live_globals.py)."""

import numpy as np

W = np.array([1.0, -2.0, 0.5])


def weighted(x):
    return np.sum(W * x ** 2)

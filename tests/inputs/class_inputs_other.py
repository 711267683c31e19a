"""A class of another file than the functions calling its methods (tests/inputs/class_inputs.py)."""

import numpy as np


class Elsewhere:
    def scale(self, x):
        return np.sin(x) * 2.0

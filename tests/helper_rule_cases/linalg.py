"""Cases for the rules of the helpers of s2sgrad/runtime/linalg.py (see __init__.py)."""

import numpy as np  # noqa: F401

from s2sgrad import runtime as s2s  # noqa: F401

from . import V3, V4, W, uniform  # noqa: F401

# (rules, function, args, argnums or None for every float argument, rtol)
CASES = []

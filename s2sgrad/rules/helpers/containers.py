"""Rules of the helpers of s2sgrad/runtime/containers.py."""

from ..table import defvjp  # noqa: F401

RULES = ()

# Piecewise constant: no derivative.
NONDIFF = ("s2sgrad.runtime.zeros_like",)

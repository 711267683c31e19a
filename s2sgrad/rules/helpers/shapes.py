"""Rules of the helpers of s2sgrad/runtime/shapes.py."""

from ..table import defvjp  # noqa: F401

RULES = ()

"""Rules of the helpers of s2sgrad/runtime/custom.py."""

from ..table import defvjp  # noqa: F401

RULES = ()

"""Rules of the helpers of s2sgrad/runtime/scans.py."""

from ..table import defvjp  # noqa: F401

RULES = ()

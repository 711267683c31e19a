"""Rules of the helpers of s2sgrad/runtime/indexing.py."""

from ..table import defvjp  # noqa: F401

RULES = ()

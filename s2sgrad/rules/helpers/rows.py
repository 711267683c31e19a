"""Rules of the helpers of s2sgrad/runtime/rows.py: a loop's per-step products, at once."""

from ..linalg import ROW_PRODUCTS as _ROW_PRODUCTS
from ..table import alias, defvjp  # noqa: F401

RULES = (*(alias(f"s2sgrad.runtime.{rule.name[len('s2s.'):]}", rule) for rule in _ROW_PRODUCTS),)

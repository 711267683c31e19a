"""Rules of the helpers of s2sgrad/runtime/contexts.py: entering and leaving a ``with`` block's
manager carries no derivative."""

RULES = ()

NONDIFF = ("s2sgrad.runtime.enter_context", "s2sgrad.runtime.entered", "s2sgrad.runtime.exit_context")

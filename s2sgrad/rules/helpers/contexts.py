"""Rules of the helpers of s2sgrad/runtime/contexts.py: entering and leaving a ``with`` block's
manager, and checking an argument's class, carry no derivative."""

RULES = ()

NONDIFF = ("s2sgrad.runtime.check_class", "s2sgrad.runtime.enter_context", "s2sgrad.runtime.entered", "s2sgrad.runtime.exit_context")

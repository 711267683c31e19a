"""Rules of the helpers of s2sgrad/runtime/signal.py: scipy.signal.convolve's own rule for
``signal_convolve`` (rules/linalg.py), and a mode's window of the full result and its transpose,
each the other's adjoint."""

from ..table import defvjp

RULES = (
    defvjp("s2sgrad.runtime.signal_window(value, shape1, shape2, mode='full')", linear=("value",),
           constant_in=("shape1", "shape2", "mode"), value="s2s.signal_embed(g, shape1, shape2, mode)"),
    defvjp("s2sgrad.runtime.signal_embed(value, shape1, shape2, mode='full')", linear=("value",),
           constant_in=("shape1", "shape2", "mode"), value="s2s.signal_window(g, shape1, shape2, mode)"),
)
